"""`leanindex search`, `inspect` and `exists` with `$LEANINDEX_URL` set ask the running server
there (issue 30, fast start): the same `--json` output and exit statuses as on the catalog itself,
the server's error objects, its bearer token from `$LEANINDEX_TOKEN`. The remote runs are given an
empty `--root`, so an answer can only have come from the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, Outcome
from leanindex.sample import sample_stream_path
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from service_support import live_server

TOKEN = "remote-query-token"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("remote-root")
    done = CliRunner().invoke(main, ["catalog", "build", "--profile", "sample", "--input", str(sample_stream_path()), "--root", str(built)])
    assert done.exit_code == 0, done.output
    return built


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[str]:
    engine = Engine(root)
    try:
        with live_server(create_app(engine, ServiceConfig(token=TOKEN))) as url:
            yield url
    finally:
        engine.close()


QUERIES = [
    ["search", "-e", "sample", "-n", "add", "--namespace", "Nat", "--kind", "theorem", "--limit", "3"],
    ["search", "-e", "SAMPLE", "-c", "HAdd.hAdd", "--flag", "instance=false", "--order", "relevance", "--text", "comm"],
    ["inspect", "-e", "sample", "Nat.add_comm"],
    ["inspect", "-e", "sample", "Nat.add_comm", "Nat.add_comn", "Nat.add_zero"],
    ["exists", "-e", "sample", "Nat.add_comm", "Nat.nothing"],
    ["inspect", "-e", "sample", "Nat.add_comn"],
    ["search", "-e", "nosuch", "-n", "add"],
    ["search", "-e", "sample", "--text", "the"],
]


@pytest.mark.parametrize("args", QUERIES, ids=lambda args: " ".join(args[:1] + args[3:5]))
def test_a_query_through_the_server_prints_what_the_catalog_gives(args: list[str], root: Path, server: str, tmp_path: Path) -> None:
    runner = CliRunner()
    local = runner.invoke(main, [*args, "--root", str(root), "--json"], env={"LEANINDEX_URL": None})
    remote = runner.invoke(main, [*args, "--root", str(tmp_path), "--json"], env={"LEANINDEX_URL": server, "LEANINDEX_TOKEN": TOKEN})
    assert remote.stdout == local.stdout
    assert remote.exit_code == local.exit_code
    assert local.exit_code in (0, OUTCOME_EXIT[Outcome.ITEM_ERRORS], *EXIT_STATUS.values()), local.output


def test_the_readable_output_is_the_same_too(root: Path, server: str, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["search", "-e", "sample", "-n", "add", "--limit", "4"]
    local = runner.invoke(main, [*args, "--root", str(root)], env={"LEANINDEX_URL": None})
    remote = runner.invoke(main, [*args, "--root", str(tmp_path)], env={"LEANINDEX_URL": server, "LEANINDEX_TOKEN": TOKEN})
    assert local.exit_code == remote.exit_code == 0
    assert remote.stdout == local.stdout and "Nat.add_comm" in remote.stdout


def test_without_the_token_the_server_refuses_and_the_exit_status_says_so(server: str, tmp_path: Path) -> None:
    refused = CliRunner().invoke(
        main, ["exists", "-e", "sample", "Nat.add_comm", "--root", str(tmp_path), "--json"], env={"LEANINDEX_URL": server, "LEANINDEX_TOKEN": None}
    )
    assert refused.exit_code == EXIT_STATUS[ErrorCode.UNAUTHORIZED]
    assert '"code": "unauthorized"' in refused.stdout


def test_no_server_at_the_url_is_a_backend_error(tmp_path: Path) -> None:
    from service_support import free_port

    down = CliRunner().invoke(
        main, ["search", "-e", "sample", "-n", "add", "--root", str(tmp_path), "--json"],
        env={"LEANINDEX_URL": f"http://127.0.0.1:{free_port()}", "LEANINDEX_TOKEN": None},
    )
    assert down.exit_code == EXIT_STATUS[ErrorCode.BACKEND_ERROR]
    assert '"code": "backend_error"' in down.stdout
