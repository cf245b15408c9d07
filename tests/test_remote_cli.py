"""The command line through a running server (`LEANINDEX_URL`, issue 30): a remote `search`,
`inspect` or `exists` imports neither the engine (pyarrow, DuckDB, NumPy) nor the checker nor the
servers (FastAPI, MCP), checked with `python -X importtime` as a user would measure it (the
figures are `benchmarks/startup_bench.py`'s, never asserted); and an error about the catalogs
names the server that was asked, not the local root folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from service_support import live_server, sample_root  # noqa: F401  (fixture)

#: Module prefixes a remote query must not import: the engine and what it stands on, the
#: checker (whose package loads lean-interact), and the servers.
HEAVY = (
    "leanindex.engine", "leanindex.catalog", "leanindex.checker", "leanindex.service.http", "leanindex.service.mcp",
    "pyarrow", "duckdb", "numpy", "fastapi", "starlette", "mcp", "uvicorn", "lean_interact",
)


@pytest.fixture(scope="module")
def server(sample_root: Path) -> Iterator[str]:  # noqa: F811
    engine = Engine(sample_root)
    try:
        with live_server(create_app(engine, ServiceConfig())) as url:
            yield url
    finally:
        engine.close()


REMOTE_QUERIES = [
    ["search", "-e", "sample", "-n", "add", "--namespace", "Nat", "--limit", "3"],
    ["search", "-e", "sample", "-n", "add", "--json"],
    ["inspect", "-e", "sample", "Nat.add_comm"],
    ["inspect", "-e", "sample", "Nat.add_comm", "Nat.add_zero"],
    ["exists", "-e", "sample", "Nat.add_comm", "Nat.add_comn"],
]


@pytest.mark.parametrize("args", REMOTE_QUERIES, ids=" ".join)
def test_a_remote_query_imports_neither_the_engine_nor_the_servers(args: list[str], server: str, tmp_path: Path) -> None:
    env = {**os.environ, "LEANINDEX_URL": server, "LEANINDEX_ROOT": str(tmp_path), "COLUMNS": "200"}
    env.pop("LEANINDEX_TOKEN", None)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "leanindex", *args], capture_output=True, text=True, env=env)
    assert done.returncode in (0, 19), done.stderr[-2000:]  # 19: `exists` of a name that is not there
    assert "Nat.add_comm" in done.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "leanindex.client" in imported
    assert [module for module in imported if module.startswith(HEAVY)] == []


def test_the_tool_list_copies_the_batch_limit_from_the_checker() -> None:
    from leanindex.checker.models import MAX_BATCH_ITEMS
    from leanindex.tools import CHECK_BATCH, tool_named
    from leanindex.tools import MAX_BATCH_ITEMS as copied

    assert copied == MAX_BATCH_ITEMS and f"up to {MAX_BATCH_ITEMS} complete" in tool_named(CHECK_BATCH).description


def test_every_tool_model_loads_from_its_reference() -> None:
    from pydantic import BaseModel

    from leanindex.tools import TOOLS

    for spec in TOOLS:
        assert issubclass(spec.request_model, BaseModel) and issubclass(spec.response_model, BaseModel), spec.name


def test_an_unknown_environment_names_the_server_asked(server: str, tmp_path: Path) -> None:
    # The user and password of the URL are not shown.
    asked = server.replace("http://", "http://someone:secret@")
    remote = CliRunner().invoke(main, ["search", "-e", "nosuch", "-n", "add", "--root", str(tmp_path)], env={"LEANINDEX_URL": asked})
    assert remote.exit_code == EXIT_STATUS[ErrorCode.UNKNOWN_ENVIRONMENT]
    assert "unknown environment 'nosuch'" in remote.stderr
    assert f"server: {server} (from $LEANINDEX_URL" in remote.stderr and f"GET {server}/v1/environments" in remote.stderr
    assert "root:" not in remote.stderr and str(tmp_path) not in remote.stderr and "secret" not in remote.stderr
    local = CliRunner().invoke(main, ["search", "-e", "nosuch", "-n", "add", "--root", str(tmp_path)], env={"LEANINDEX_URL": None})
    assert local.exit_code == EXIT_STATUS[ErrorCode.UNKNOWN_ENVIRONMENT]
    assert f"root: {tmp_path}" in local.stderr and "server:" not in local.stderr
