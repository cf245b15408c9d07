"""Where a doc-gen4 import spends its time and memory, stage by stage, with and without the text
index (issues 29 and 31).

Usage: `python benchmarks/import_stages.py [--archive PATH] [--work DIR] [--out PATH]` (defaults:
`../shared/realdata/docgen-mathlib-0cc1f97.tar.xz`, a temporary folder,
`benchmarks/results/import_stages.json`). Imports the archive twice, each in a fresh child
process into an empty root: as `leanindex catalog import-docgen` does, and once with
`catalog.builder.write_text_index` replaced by a no-op (a measuring device only: the catalog it
leaves is not whole). In each, a thread samples every 50 ms the resident set of the importing
process and of every descendant (the conversion's and the text index's workers; started with
`spawn`, since the sampler is a second thread, so no page is shared between them and the sum is
what the tree holds) and records per stage (`collect_docgen`, then the builder's `_write_tables`,
`_write_database`, `write_index_from` — every index array and the text index; the stages inside
it, `write_ranking`, `write_result_rows`, `write_records`, `_write_served_database` (the
catalog's `catalog.duckdb` copied from the build database), `write_text_index`, are listed on their
own and their memory is theirs, not `write_index_from`'s — and `_manifest`; `other`: outside
these) its wall and CPU seconds (this process's and its finished children's) and the
largest sum it saw, in MiB, with each process's share at that moment. A peak between two samples
is missed. Writes the JSON with the run's date, commit and load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "py"))

import runinfo  # noqa: E402  (at the start: it records the run's start)

DEFAULT_ARCHIVE = HERE.parents[1] / "shared" / "realdata" / "docgen-mathlib-0cc1f97.tar.xz"
RESULTS = HERE / "results" / "import_stages.json"
SAMPLE_S = 0.05
#: (module, function) of each stage timed, in the order an import runs them.
STAGES = (
    ("leanindex.docgen.importer", "collect_docgen"),
    ("leanindex.catalog.builder", "_write_tables"),
    ("leanindex.catalog.builder", "_write_database"),
    ("leanindex.catalog.builder", "write_index_from"),
    ("leanindex.catalog.index", "write_ranking"),
    ("leanindex.catalog.index", "write_result_rows"),
    ("leanindex.catalog.index", "write_records"),
    ("leanindex.catalog.builder", "_write_served_database"),
    ("leanindex.catalog.builder", "write_text_index"),
    ("leanindex.catalog.builder", "_manifest"),
)


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_here(archive: Path, root: Path, text_index: bool) -> dict:
    """Import `archive` into `root` in this process with every stage timed and the tree sampled
    (see the module docstring); return the figures."""
    import importlib

    import psutil

    from leanindex.docgen.importer import import_docgen

    me = psutil.Process()
    current = ["other"]
    peaks: dict[str, dict] = {}
    whole = {"mib": 0.0, "stage": ""}

    def sample() -> None:
        while True:
            try:
                each = [me.memory_info().rss] + [child.memory_info().rss for child in me.children(recursive=True)]
            except psutil.Error:
                continue
            total = sum(each) / 2**20
            stage = current[0]
            if total > peaks.get(stage, {}).get("tree_mib", 0):
                peaks[stage] = {"tree_mib": round(total, 1), "processes_mib": [round(x / 2**20, 1) for x in each]}
            if total > whole["mib"]:
                whole.update(mib=round(total, 1), stage=stage)
            time.sleep(SAMPLE_S)

    threading.Thread(target=sample, daemon=True).start()
    timings: dict[str, dict] = {}
    for module_name, function in STAGES:
        module = importlib.import_module(module_name)
        original = getattr(module, function)

        def timed(*args, _original=original, _name=function, **kwargs):
            before, current[0] = current[0], _name
            wall, cpu = time.perf_counter(), _cpu_s()
            try:
                return _original(*args, **kwargs)
            finally:
                timings[_name] = {"wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(_cpu_s() - cpu, 2)}
                current[0] = before

        setattr(module, function, timed)
    if not text_index:
        importlib.import_module("leanindex.catalog.builder").write_text_index = lambda build_dir: []
    wall, cpu = time.perf_counter(), _cpu_s()
    import_docgen(archive, root, "mathlib")
    return {
        "wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(_cpu_s() - cpu, 1),
        "tree_peak_mib": whole["mib"], "peak_stage": whole["stage"],
        "stages": {name: {**timings.get(name, {}), **peaks.get(name, {})} for name in [*(n for _, n in STAGES), "other"] if name in timings or name in peaks},
    }


def measured(archive: Path, root: Path, text_index: bool) -> dict:
    """`measure_here` in a fresh child process (so nothing of an earlier import is held)."""
    script = (
        f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from import_stages import measure_here; from pathlib import Path; "
        f"print(json.dumps(measure_here(Path({str(archive)!r}), Path({str(root)!r}), {text_index!r})))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--work", type=Path, default=None, help="Keep the imported roots here (default: a temporary folder).")
    parser.add_argument("--out", type=Path, default=RESULTS)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="import-stages-"))
    runs = {}
    for label, text_index in (("with_text_index", True), ("without_text_index", False)):
        root = work / label
        shutil.rmtree(root, ignore_errors=True)
        runs[label] = measured(options.archive, root, text_index)
        row = runs[label]
        print(f"{label:<20} wall {row['wall_s']:>6} s  cpu {row['cpu_s']:>6} s  whole tree peak {row['tree_peak_mib']:>7} MiB in {row['peak_stage']}")
        for stage, figures in row["stages"].items():
            print(f"  {stage:<18} wall {figures.get('wall_s', 0):>6} s  cpu {figures.get('cpu_s', 0):>6} s  tree {figures.get('tree_mib', 0):>7} MiB  {figures.get('processes_mib', [])}")
        if options.work is None:
            shutil.rmtree(root, ignore_errors=True)
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps({
        "what": "a Mathlib doc-gen4 import per stage, with and without the text index: wall and CPU seconds, and the whole process "
                "tree's peak resident set (sum over processes, sampled every 50 ms; workers spawned, so no page is counted twice)",
        "archive": options.archive.name,
        "runs": runs,
        "run": runinfo.run_info(),
    }, indent=2) + "\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
