"""Fast start (issue 30): `leanindex --help` and every command's `--help` load none of the engine,
pyarrow, DuckDB, NumPy, FastAPI or MCP, nor pydantic and the models built with it; the top-level listing shows each command's own summary;
the option values copied for `--help` (`cli/shown.py`) match their homes; long commands print
progress lines when stderr is not a terminal. A local query (issue 31) loads only what it uses
(no bm25s for a search without words, no rich for `--json`, no rapidfuzz without suggestions),
starts OpenBLAS with one thread and runs with the cycle collector off. Start-up figures are a
benchmark (`benchmarks/startup_bench.py`), never timed assertions here."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import leanindex.cli as cli
from leanindex.cli import progress, query, shown
from leanindex.sample import sample_stream_path
from service_support import sample_root  # noqa: F401  (fixture)

#: Module prefixes a `--help` must not import: the engine and what it stands on, and the servers.
HEAVY = ("leanindex.engine", "pyarrow", "duckdb", "numpy", "fastapi", "starlette", "mcp", "uvicorn", "leanindex.checker", "leanindex.service.mcp")
#: Nor pydantic: building the models of `leanindex.errors`, `leanindex.models` and the others at
#: import was most of a command's `--help` (exit statuses come from the pydantic-free `codes`).
MODELS = ("pydantic", "leanindex.base", "leanindex.errors", "leanindex.models", "leanindex.records", "leanindex.identity", "leanindex.validation")


def _all_commands() -> list[tuple[str, ...]]:
    """Every command path of `main` ((), ("search",), ("catalog", "build"), ...)."""
    for modules in cli.COMMAND_MODULES.values():
        for module in modules:
            __import__(f"leanindex.cli.{module}")

    def walk(command: click.Command, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = [path]
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            found += walk(sub, (*path, name))
        return found

    return walk(cli.main, ())


_PROBE = (
    "import json, sys\n"
    "from leanindex.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:], prog_name='leanindex')\n"
    "except SystemExit as done:\n"
    "    code = done.code\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}), file=sys.stderr)\n"
)


@pytest.mark.parametrize("path", _all_commands(), ids=lambda path: " ".join(path) or "leanindex")
def test_help_loads_neither_the_engine_nor_the_servers(path: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE, *path, "--help"], capture_output=True, text=True, check=True)
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0
    assert "Usage: leanindex" in done.stdout
    loaded = [module for module in probe["modules"] if module.startswith(HEAVY)]
    assert loaded == [], f"`leanindex {' '.join(path)} --help` imported {loaded[:8]}"
    models = [module for module in probe["modules"] if module.startswith(MODELS)]
    assert models == [], f"`leanindex {' '.join(path)} --help` imported {models[:8]}"


def test_importtime_of_help_names_no_heavy_module() -> None:
    # The same check through `python -X importtime`, as a user would measure it.
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "leanindex", "--help"], capture_output=True, text=True, check=True)
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "leanindex.cli" in imported
    assert [module for module in imported if module.startswith(HEAVY)] == []


def test_the_listing_shows_what_each_commands_own_help_would() -> None:
    assert set(cli.COMMAND_SUMMARIES) == set(cli.COMMAND_MODULES)
    listing = "import sys\nfrom leanindex.cli import main\nmain(['--help'], prog_name='leanindex')\n"
    loading = "import importlib, leanindex.cli as cli\n" + "".join(
        f"importlib.import_module('leanindex.cli.{module}')\n" for modules in cli.COMMAND_MODULES.values() for module in modules
    )
    lazy, loaded = (
        subprocess.run([sys.executable, "-c", code + listing], capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"}).stdout
        for code in ("", loading)
    )
    assert "search" in lazy and lazy == loaded
    _all_commands()
    for name, summary in cli.COMMAND_SUMMARIES.items():
        assert cli.main.commands[name].get_short_help_str(limit=10**6) == summary, name


def test_values_shown_in_help_match_their_homes() -> None:
    from leanindex.catalog.pack import DEFAULT_MAX_BYTES, PACK_SUFFIX
    from leanindex.checker.cluster import ON_ACTOR_DEATH
    from leanindex.checker.models import MAX_TIMEOUT_S
    from leanindex.docgen.links import DEFAULT_DOC_BASE
    from leanindex.engine.diff import DIFF_CATEGORIES
    from leanindex.models import SearchRequest
    from leanindex.records import Kind
    from leanindex.tools import TOOL_NAMINGS

    assert shown.DIFF_CATEGORIES == DIFF_CATEGORIES
    assert shown.ON_ACTOR_DEATH == ON_ACTOR_DEATH
    assert shown.MAX_TIMEOUT_S == MAX_TIMEOUT_S
    assert shown.DEFAULT_DOC_BASE == DEFAULT_DOC_BASE
    assert shown.PACK_SUFFIX == PACK_SUFFIX
    assert shown.DEFAULT_MAX_BYTES == DEFAULT_MAX_BYTES
    assert shown.TOOL_NAMINGS == TOOL_NAMINGS
    assert shown.KINDS == tuple(kind.value for kind in Kind)
    assert shown.SEARCH_FIELDS == tuple(SearchRequest.model_fields)
    # Each field `search` derives an option for: its value's JSON Schema type and description.
    schema = SearchRequest.model_json_schema()["properties"]
    derived = {}
    for name in shown.SEARCH_DERIVED:
        value = [option for option in schema[name].get("anyOf", [schema[name]]) if option.get("type") != "null"]
        assert len(value) == 1 and (value[0]["type"] != "array" or value[0]["items"]["type"] == "string"), name
        derived[name] = (value[0]["type"], SearchRequest.model_fields[name].description)
    assert shown.SEARCH_DERIVED == derived


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_come_every_few_seconds_with_counts(capsys: pytest.CaptureFixture[str]) -> None:
    clock = _Clock()
    lines = progress.ProgressLines("building core", "constants", 1000, every_s=5.0, clock=clock)
    for done in range(0, 1001, 100):
        clock.now = done / 50  # 50 constants a second, counted every 2 s: lines at 6 s, 12 s, 18 s
        lines.update(done)
    lines.finish(always=False)
    printed = capsys.readouterr().err.splitlines()
    assert printed[0] == "building core: 300/1,000 constants (30%), 50 constants/s, 0:00:06, ETA 0:00:14"
    assert len(printed) == 4  # three on the way, one at the end
    assert printed[-1].startswith("building core: 1,000/1,000 constants (100%)")


def test_a_short_run_prints_no_line_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    clock = _Clock()
    quiet = progress.ProgressLines("checking", "requests", None, rate_unit="checks", clock=clock)
    quiet.update(3, rated=2)
    quiet.finish(always=False)
    assert capsys.readouterr().err == ""
    quiet.finish(always=True)
    assert capsys.readouterr().err == "checking: 3 requests, 0 checks/s, 0:00:00\n"


def test_a_build_off_a_terminal_prints_progress_lines(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Not on a terminal (CliRunner), no --progress: lines, since every line is "a few seconds" late.
    monkeypatch.setattr(progress, "LINE_EVERY_S", 0.0)
    monkeypatch.setattr(progress, "UPDATE_EVERY_LINES", 8)
    result = CliRunner().invoke(
        cli.main, ["catalog", "build", "--profile", "sample", "--input", str(sample_stream_path()), "--root", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("building sample: ")]
    assert len(lines) >= 2 and "constants/s" in lines[0]
    assert lines[-1].startswith("building sample: 76 constants")
    quiet = CliRunner().invoke(
        cli.main, ["catalog", "build", "--profile", "sample", "--input", str(sample_stream_path()), "--root", str(tmp_path), "--no-progress"]
    )
    assert quiet.exit_code == 0 and "building sample:" not in quiet.stderr


#: Modules a local search by name and namespace with `--json` has no use for: the text search's
#: bm25s (and its tqdm), the people's rendering (rich), suggestions' rapidfuzz, the builder's
#: process pool.
#: The build's libraries (pyarrow, suffix sorting, DuckDB) and those of other kinds of query.
NOT_FOR_A_NAME_SEARCH = ("bm25s", "tqdm", "rich", "rapidfuzz", "multiprocessing", "pyarrow", "pydivsufsort", "duckdb")


def _local_query(root: Path, args: list[str], env: dict[str, str] | None = None) -> dict:
    """`leanindex ARGS --root ROOT` run in a fresh process on the catalogs under `root` (no
    server): its exit code, stdout, loaded modules and `$OPENBLAS_NUM_THREADS` at the end."""
    probe = _PROBE.replace("'modules': sorted(sys.modules)", "'modules': sorted(sys.modules), 'blas': os.environ.get('OPENBLAS_NUM_THREADS')")
    child = {key: value for key, value in os.environ.items() if key not in ("LEANINDEX_URL", "OPENBLAS_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", "import os\n" + probe, *args, "--root", str(root)], capture_output=True, text=True,
                          env={**child, **(env or {})})
    return {**json.loads(done.stderr.strip().splitlines()[-1]), "stdout": done.stdout}


def test_a_local_name_search_loads_only_what_it_uses(sample_root: Path) -> None:  # noqa: F811
    args = ["search", "-e", "sample", "-n", "add", "--namespace", "Nat", "--json"]
    # The first open verifies every file (pyarrow reads the Parquet footer's count); the next
    # finds them as its verification record says.
    assert _local_query(sample_root, args)["code"] == 0
    found = _local_query(sample_root, args)
    assert found["code"] == 0 and json.loads(found["stdout"])["results"]
    assert "leanindex.engine" in found["modules"]
    assert [module for module in found["modules"] if module.split(".")[0] in NOT_FOR_A_NAME_SEARCH] == []
    # What it skipped comes when asked for: words, and a table for people.
    worded = _local_query(sample_root, ["search", "-e", "sample", "--text", "addition commutative"])
    assert worded["code"] == 0 and "Nat.add_comm" in worded["stdout"]
    assert "bm25s" in worded["modules"] and "rich" in worded["modules"]


def test_a_local_query_starts_openblas_with_one_thread_unless_told(sample_root: Path) -> None:  # noqa: F811
    # NumPy's OpenBLAS reads the variable once, when the engine loads NumPy.
    args = ["exists", "-e", "sample", "Nat.add_comm", "--json"]
    assert _local_query(sample_root, args)["blas"] == "1"
    assert _local_query(sample_root, args, {"OPENBLAS_NUM_THREADS": "2"})["blas"] == "2"


def test_a_local_query_runs_with_the_cycle_collector_off(sample_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    seen: list[bool] = []
    engine = query.Engine

    def watched(root: str) -> object:
        seen.append(gc.isenabled())
        return engine(root)

    monkeypatch.setattr(query, "Engine", watched)
    monkeypatch.delenv("LEANINDEX_URL", raising=False)
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    for args in (["search", "-e", "sample", "-n", "add"], ["inspect", "-e", "sample", "Nat.add_comm"], ["exists", "-e", "sample", "Nat.add_comn"]):
        result = CliRunner().invoke(cli.main, [*args, "--root", str(sample_root)])
        assert result.exit_code in (0, 19), result.output
        assert "Nat.add_comm" in result.output
    assert seen == [False, False, False]
    assert gc.isenabled()  # on again after each command
    assert gc.get_freeze_count() == frozen  # a caller's process goes on: nothing is frozen for good


def test_a_local_query_that_ends_the_process_freezes_what_it_made(sample_root: Path) -> None:  # noqa: F811
    # Run on the process's own command line (`main()`, as the `leanindex` script does), the
    # command freezes its objects: the collection at the interpreter's exit skips them.
    probe = (
        "import gc, sys\n"
        "from leanindex.cli import main\n"
        "own = sys.argv.pop(1) == 'own'\n"
        "try:\n"
        "    main() if own else main(sys.argv[1:])\n"
        "except SystemExit as done:\n"
        "    code = done.code\n"
        "print(code, gc.get_freeze_count(), gc.isenabled(), file=sys.stderr)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "LEANINDEX_URL"}
    args = ["search", "-e", "sample", "-n", "add", "--json", "--root", str(sample_root)]
    ended = {}
    for how in ("own", "given"):
        done = subprocess.run([sys.executable, "-c", probe, how, *args], capture_output=True, text=True, env=env)
        code, frozen, enabled = done.stderr.split()[-3:]
        assert code == "0" and enabled == "True" and "Nat.add_comm" in done.stdout, done.stderr[-2000:]
        ended[how] = int(frozen)
    assert ended["given"] == 0 and ended["own"] > 10_000


def test_a_name_search_reads_no_constant_or_module_names(sample_root: Path) -> None:  # noqa: F811
    from leanindex.engine import Engine
    from leanindex.models import SearchRequest

    engine = Engine(sample_root)
    try:
        assert engine.search(SearchRequest(environment="sample", name_contains="add", namespace_prefixes=["Nat"])).results
        catalog = engine.catalog("sample")
        lazy = {"constant_names", "constant_ids", "modules"}
        assert lazy.isdisjoint(vars(catalog))  # read from the maps on first use only
        assert engine.search(SearchRequest(environment="sample", type_pattern={"constants": ["Nat"]}, module_prefixes=["Init"])).environment
        assert lazy <= set(vars(catalog)) and catalog.constant_ids["Nat"] == catalog.constant_names.index("Nat")
    finally:
        engine.close()
