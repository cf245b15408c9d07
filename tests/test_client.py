"""`leanindex.Client` against a live server and in local mode: same answers as the engine,
cursor iteration, DataFrames, errors rebuilt from the error object; and the notebook example."""

from __future__ import annotations

import json
import runpy
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_support import HARD_NAMES, engine_inspect, engine_search, free_port, live_server, sample_root  # noqa: F401
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import leanindex
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import StopReason
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "notebook.py"


@pytest.fixture(scope="module")
def served_url(sample_root: Path) -> Iterator[str]:
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(token="t0ken"))) as url:
        yield url
    engine.close()


@pytest.fixture(params=["http", "local"])
def client(request: pytest.FixtureRequest, sample_root: Path) -> Iterator[leanindex.Client]:
    if request.param == "http":
        made = leanindex.Client(request.getfixturevalue("served_url"), token="t0ken")
    else:
        made = leanindex.Client.local(sample_root)
    with made:
        yield made


def test_environments(client: leanindex.Client, sample_root: Path) -> None:
    engine = Engine(sample_root)
    assert client.environments() == engine.environments()
    engine.close()


def test_search_matches_the_engine_and_gives_a_dataframe(client: leanindex.Client, sample_root: Path) -> None:
    response = client.search("sample", "add", kinds=["theorem"], namespace_prefixes=["Nat"], result_limit=3)
    assert response == engine_search(
        sample_root, environment="sample", name_contains="add", kinds=["theorem"], namespace_prefixes=["Nat"], result_limit=3
    )
    frame = response.to_pandas()
    assert list(frame["name"]) == [r.name for r in response.results]
    assert set(frame["kind"]) == {"theorem"}
    assert list(frame["source_url"]) == [r.source_url for r in response.results] and all(frame["source_url"])
    assert response.to_arrow().num_rows == 3


def test_type_pattern_as_a_list_of_constants(client: leanindex.Client, sample_root: Path) -> None:
    response = client.search("SAMPLE", type_pattern=["List.length", "HAppend.hAppend"])
    assert response == engine_search(sample_root, environment="SAMPLE", type_pattern={"constants": ["List.length", "HAppend.hAppend"]})
    assert [r.name for r in response.results] == ["List.length_append"]


def test_iter_search_follows_the_cursor_to_the_end(client: leanindex.Client, sample_root: Path) -> None:
    pages = list(client.iter_search("SAMPLE", "a", result_limit=7))
    whole = engine_search(sample_root, environment="SAMPLE", name_contains="a", result_limit=50)
    assert whole.stop_reason is StopReason.EXHAUSTED
    assert [r.name for page in pages for r in page.results] == [r.name for r in whole.results]
    assert [p.stop_reason for p in pages] == [StopReason.RESULT_LIMIT] * (len(pages) - 1) + [StopReason.EXHAUSTED]
    assert len(pages) == -(-whole.total_matches // 7)
    with pytest.raises(TypeError):
        next(client.iter_search("SAMPLE", "a", after="x"))


def test_inspect_hard_names(client: leanindex.Client, sample_root: Path) -> None:
    for name in HARD_NAMES:
        answer = client.inspect("SAMPLE", name)
        assert answer == engine_inspect(sample_root, "SAMPLE", name)
        assert answer.source_url is not None and answer.source_url.startswith("https://github.com/leanprover/lean4/blob/")


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda c: c.inspect("SAMPLE", "Nat.add_com"), ErrorCode.NOT_FOUND),
        (lambda c: c.search("MATHLIB", "a"), ErrorCode.UNKNOWN_ENVIRONMENT),
        (lambda c: c.search("SAMPLE"), ErrorCode.INVALID_REQUEST),
        (lambda c: c.search("SAMPLE", "a", result_limit=51), ErrorCode.INVALID_REQUEST),
        (lambda c: c.search("SAMPLE", "a", kinds=["lemma"]), ErrorCode.INVALID_REQUEST),
        (lambda c: c.search("SAMPLE", "a", after="not-a-cursor"), ErrorCode.INVALID_REQUEST),
        (lambda c: c.inspect("SAMPLE", ""), ErrorCode.INVALID_REQUEST),
    ],
)
def test_errors_raise_the_shared_error(client: leanindex.Client, call, code: ErrorCode) -> None:
    with pytest.raises(LeanIndexError) as raised:
        call(client)
    assert raised.value.code is code


def test_not_found_keeps_its_details_over_http(served_url: str) -> None:
    with leanindex.Client(served_url, token="t0ken") as client, pytest.raises(LeanIndexError) as raised:
        client.inspect("SAMPLE", "Nat.add_com")
    assert "Nat.add_comm" in raised.value.details["suggestions"]


def test_missing_token_is_unauthorized(served_url: str) -> None:
    with leanindex.Client(served_url) as client, pytest.raises(LeanIndexError) as raised:
        client.environments()
    assert raised.value.code is ErrorCode.UNAUTHORIZED


def test_unreachable_server_is_a_backend_error() -> None:
    with leanindex.Client(f"http://127.0.0.1:{free_port()}", timeout=5) as client, pytest.raises(LeanIndexError) as raised:
        client.environments()
    assert raised.value.code is ErrorCode.BACKEND_ERROR


def test_an_answer_that_is_not_an_error_object_is_a_backend_error() -> None:
    proxy = Starlette(routes=[Route("/v1/environments", lambda request: PlainTextResponse("bad gateway", status_code=502), methods=["POST"])])
    with live_server(proxy) as url, leanindex.Client(url) as client, pytest.raises(LeanIndexError) as raised:
        client.environments()
    assert raised.value.code is ErrorCode.BACKEND_ERROR
    assert raised.value.details == {"status": 502, "body": "bad gateway"}


def test_notebook_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    theorems = namespace["theorems"]
    assert "Nat.add_comm" in set(theorems["name"])
    assert set(theorems["kind"]) == {"theorem"}
    assert namespace["pages"][-1].stop_reason is StopReason.EXHAUSTED
    assert len(namespace["everything"]) == namespace["pages"][0].total_matches
    assert "Nat.add_comm : ∀ (n m : Nat), n + m = m + n" in capsys.readouterr().out


@pytest.mark.parametrize("filters", [{"name_contains": "a", "order": "relevance"}, {"text": "list length"}])
def test_relevance_and_text_pages_match_the_engine(client: leanindex.Client, sample_root: Path, filters: dict) -> None:
    """Relevance order and text search through the client (HTTP and in process): the pages
    followed by cursor are the engine's one-page answer, in the same order."""
    pages = list(client.iter_search("SAMPLE", result_limit=2, **filters))
    whole = engine_search(sample_root, environment="SAMPLE", result_limit=50, **filters)
    assert whole.stop_reason is StopReason.EXHAUSTED and whole.total_matches > 2
    assert [r.name for page in pages for r in page.results] == [r.name for r in whole.results]
    assert [r.name for r in whole.results] != sorted(r.name for r in whole.results) or "text" in filters


def test_get_search_and_the_cli_take_order_and_text(served_url: str, sample_root: Path) -> None:
    from click.testing import CliRunner

    from leanindex.cli import main

    expected = engine_search(sample_root, environment="SAMPLE", text="list length", order="name", result_limit=5)
    got = httpx.get(
        f"{served_url}/v1/declarations/search",
        params={"environment": "SAMPLE", "text": "list length", "order": "name", "result_limit": 5},
        headers={"Authorization": "Bearer t0ken"},
    )
    assert got.status_code == 200 and got.json() == expected.model_dump(mode="json")
    ran = CliRunner().invoke(main, ["search", "-e", "SAMPLE", "--text", "list length", "--order", "name", "--limit", "5", "--json", "--root", str(sample_root)])
    assert ran.exit_code == 0 and json.loads(ran.stdout) == expected.model_dump(mode="json")


def test_cli_text_answers_show_the_links(sample_root: Path) -> None:
    from click.testing import CliRunner

    from leanindex.cli import main

    expected = engine_search(sample_root, environment="SAMPLE", name_contains="add_comm")
    ran = CliRunner().invoke(main, ["search", "-e", "SAMPLE", "-n", "add_comm", "--root", str(sample_root)])
    assert ran.exit_code == 0, ran.output
    # One whole line per link (a URL folded into a table cell could not be copied back).
    assert expected.results and all(f"source {r.name} {r.source_url}\n" in ran.stdout for r in expected.results)
    inspected = CliRunner().invoke(main, ["inspect", "-e", "SAMPLE", "Nat.add_comm", "--root", str(sample_root)])
    answer = engine_inspect(sample_root, "SAMPLE", "Nat.add_comm")
    assert inspected.exit_code == 0 and f"\nsource {answer.source_url}\n" in inspected.stdout


def test_a_local_client_answers_through_the_servers_tools_and_gate(sample_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """`Client.local` calls the same tools as a server (so the same call gate): with the gate's
    one slot taken, a search is `busy` as over HTTP, and the check tools say `check_disabled`
    as on a server started without a checker."""
    from leanindex.service import gate as gate_module

    client = leanindex.Client.local(sample_root)
    try:
        with pytest.raises(LeanIndexError) as disabled:
            client.check("SAMPLE", "theorem t : True := trivial")
        assert disabled.value.code is ErrorCode.CHECK_DISABLED
        real_run = gate_module.CallGate.run

        async def refuse(self, fn, *args):  # a full gate answers busy before running anything
            raise LeanIndexError(ErrorCode.BUSY, "server busy", {})

        monkeypatch.setattr(gate_module.CallGate, "run", refuse)
        with pytest.raises(LeanIndexError) as busy:
            client.search("SAMPLE", name_contains="add")
        assert busy.value.code is ErrorCode.BUSY
        monkeypatch.setattr(gate_module.CallGate, "run", real_run)
        assert client.search("SAMPLE", name_contains="add").total_matches > 0
    finally:
        client.close()


def test_any_tool_answers_by_name_as_its_method_does(client: leanindex.Client) -> None:
    """`Client.call` takes a tool's dotted name or alias and its request fields, over HTTP (the
    tool's POST route) and in process alike, and answers as the tool's method."""
    by_method = client.inspect("SAMPLE", "Nat.add_comm")
    assert client.call("lean.declaration.inspect", environment="SAMPLE", declaration_name="Nat.add_comm") == by_method
    assert client.call("lean_declaration_inspect", environment="SAMPLE", declaration_name="Nat.add_comm") == by_method
    assert client.call("lean.environments") == client.environments()
    assert client.call("lean.catalog.diff", older="SAMPLE", newer="SAMPLE").counts == client.diff("SAMPLE", "SAMPLE").counts
    with pytest.raises(LeanIndexError) as raised:
        client.call("lean.declaration.inspect", environment="SAMPLE", name="Nat.add_comm")
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    with pytest.raises(LeanIndexError) as raised:
        client.call("lean.declaration.serch", environment="SAMPLE")
    assert raised.value.code is ErrorCode.INVALID_REQUEST and "lean.declaration.search" in raised.value.message


def test_a_tool_without_a_written_method_gets_one_from_its_spec(client: leanindex.Client) -> None:
    """`lean.proof.tree` has no method written in `client.py`: its generated method takes the
    request fields as keywords, documents the tool, and answers through `Client.call` (here a
    server without a checker: `check_disabled`)."""
    import inspect

    signature = inspect.signature(leanindex.Client.proof_tree)
    assert {"environment", "code", "theorem", "include_theorems"} <= set(signature.parameters)
    assert "lean.proof.tree" in (leanindex.Client.proof_tree.__doc__ or "")
    with pytest.raises(LeanIndexError) as raised:
        client.proof_tree(environment="SAMPLE", code="theorem t : True := by trivial")
    assert raised.value.code is ErrorCode.CHECK_DISABLED
