"""Ranked text search (issue 29) on every surface: `text_match` ("any", the default, or "all")
taken by the CLI (`--text-match`), `GET /v1/declarations/search`, MCP and `Client.search` with the
engine's totals, and the answer's `unmatched_words` said on the CLI, in the MCP text and on the
search page. The sample catalog (profile SAMPLE) for exact answers; the embedded Lean core
catalog (`leanindex demo`) for the CLI's totals on real data."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import anyio
import click
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client as McpClient
from pydantic import ValidationError

import leanindex
from embedded_support import DemoRun
from leanindex.cli import main
from leanindex.cli.query import URL_ENV
from leanindex.cli.query import search as search_command
from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.service.http import create_app
from service_support import engine_search, live_server, sample_root  # noqa: F401  (fixture)

#: On the sample catalog: three declarations have both words, more have one (engine_search says how many).
BOTH = "list length"
#: One word the sample catalog has, one it has not.
HALF_KNOWN = "addition zzqqxx"


@pytest.fixture(autouse=True)
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI answers from the catalogs under --root, never from a server named in the environment."""
    monkeypatch.delenv(URL_ENV, raising=False)


@pytest.fixture(scope="module")
def pages(sample_root: Path) -> Iterator[TestClient]:  # noqa: F811
    engine = Engine(sample_root)
    try:
        yield TestClient(create_app(engine), base_url="http://127.0.0.1")
    finally:
        engine.close()


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, ["search", *args])


def _cli_json(*args: str) -> dict[str, Any]:
    ran = _cli(*args, "--json")
    assert ran.exit_code == 0, ran.output
    return json.loads(ran.output)


def _text_words(result: dict[str, Any]) -> set[str]:
    """The typed words a result's `text` match reasons name (`"list", "length" in the type`)."""
    return {word for reason in result["match_reasons"] if reason["filter"] == "text" for word in re.findall(r'"([^"]+)"', reason["value"])}


# --- the command line ------------------------------------------------------------------------------


def test_the_cli_option_offers_the_models_values_and_default() -> None:
    option = next(p for p in search_command.params if p.name == "text_match")
    field = SearchRequest.model_fields["text_match"]
    literal = next(a for a in get_args(field.annotation) if a is not type(None))
    assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == get_args(literal)
    # Left out, both mean "any" (the engine's reading of no text_match).
    assert option.default in (None, click.core.UNSET) and field.default is None
    assert "--text-match" in option.opts


def test_text_match_without_text_is_refused() -> None:
    """`text_match` alone would be ignored: refused, on every surface (the model's rule)."""
    with pytest.raises(ValidationError, match="text_match applies to text"):
        SearchRequest(environment="X", name_contains="add", text_match="all")
    assert SearchRequest(environment="X", name_contains="add").text_match is None


def test_cli_text_match_all_keeps_only_results_with_every_word(embedded_demo: DemoRun) -> None:
    """On Lean core: `length append` matches every declaration with either word by default, and
    with `--text-match all` only those with both, fewer and each naming both words."""
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    common = ("-e", EMBEDDED_PROFILE.upper(), "--text", "length append", "--limit", "20", "--root", str(embedded_demo.root))
    default = _cli_json(*common)
    spelled = _cli_json(*common, "--text-match", "any")
    every = _cli_json(*common, "--text-match", "all")
    assert default == spelled
    assert default["total_matches"] > every["total_matches"] > len(every["results"]) > 0
    assert all(_text_words(result) == {"length", "append"} for result in every["results"])
    assert any(_text_words(result) != {"length", "append"} for result in default["results"] + _cli_json(*common, "--after", default["next_cursor"])["results"])
    assert default["unmatched_words"] == every["unmatched_words"] == []
    refused = _cli(*common, "--text-match", "some")
    assert refused.exit_code == 2 and "'some' is not one of 'any', 'all'" in refused.output


def test_cli_says_the_words_no_declaration_has(sample_root: Path) -> None:  # noqa: F811
    root = ("-e", "SAMPLE", "--root", str(sample_root))
    half = _cli(*root, "--text", HALF_KNOWN)
    assert half.exit_code == 0, half.output
    assert 'no declaration has: "zzqqxx"' in half.output.splitlines()
    assert "Add" in half.output  # the known word still finds its declarations
    whole = _cli(*root, "--text", BOTH)
    assert whole.exit_code == 0 and "no declaration has" not in whole.output
    # Every word unknown: nothing matched, and the answer says which words.
    none = _cli(*root, "--text", "zzqqxx qqzzyy", "--text-match", "all")
    assert none.exit_code == 0 and 'no declaration has: "zzqqxx", "qqzzyy"' in none.output


# --- HTTP, MCP and the client ------------------------------------------------------------------------


def test_get_search_takes_text_match(pages: TestClient, sample_root: Path) -> None:  # noqa: F811
    every = pages.get("/v1/declarations/search", params={"environment": "SAMPLE", "text": BOTH, "text_match": "all"})
    default = pages.get("/v1/declarations/search", params={"environment": "SAMPLE", "text": BOTH})
    assert every.status_code == default.status_code == 200
    expected_all = engine_search(sample_root, environment="SAMPLE", text=BOTH, text_match="all")
    expected_any = engine_search(sample_root, environment="SAMPLE", text=BOTH)
    assert every.json()["total_matches"] == expected_all.total_matches
    assert default.json()["total_matches"] == expected_any.total_matches > expected_all.total_matches > 0
    assert [r["name"] for r in every.json()["results"]] == [r.name for r in expected_all.results]
    half = pages.get("/v1/declarations/search", params={"environment": "SAMPLE", "text": HALF_KNOWN})
    assert half.status_code == 200 and half.json()["unmatched_words"] == ["zzqqxx"] and half.json()["total_matches"] > 0
    wrong = pages.get("/v1/declarations/search", params={"environment": "SAMPLE", "text": BOTH, "text_match": "some"})
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == ErrorCode.INVALID_REQUEST.value


def test_mcp_search_takes_text_match_and_says_the_unmatched_words(sample_root: Path) -> None:  # noqa: F811
    answers: dict[str, Any] = {}

    async def ask(url: str) -> None:
        async with McpClient(f"{url}/mcp", cache=None) as client:
            for label, arguments in {
                "all": {"environment": "SAMPLE", "text": BOTH, "text_match": "all"},
                "any": {"environment": "SAMPLE", "text": BOTH},
                "half": {"environment": "SAMPLE", "text": HALF_KNOWN, "text_match": "any"},
            }.items():
                result = await client.call_tool("lean.declaration.search", arguments)
                assert not result.is_error, result
                answers[label] = (result.structured_content, "\n".join(c.text for c in result.content))

    engine = Engine(sample_root)
    try:
        with live_server(create_app(engine)) as url:
            anyio.run(ask, url)
    finally:
        engine.close()
    expected_all = engine_search(sample_root, environment="SAMPLE", text=BOTH, text_match="all")
    assert answers["all"][0]["total_matches"] == expected_all.total_matches
    assert answers["any"][0]["total_matches"] == engine_search(sample_root, environment="SAMPLE", text=BOTH).total_matches
    assert answers["any"][0]["total_matches"] > answers["all"][0]["total_matches"] > 0
    structured, text = answers["half"]
    assert structured["unmatched_words"] == ["zzqqxx"]
    assert 'no declaration has: "zzqqxx"' in text.splitlines()
    assert "no declaration has" not in answers["all"][1]


@pytest.mark.parametrize("mode", ["http", "local"])
def test_client_search_takes_text_match(mode: str, sample_root: Path) -> None:  # noqa: F811
    engine = Engine(sample_root)
    try:
        with live_server(create_app(engine)) as url:
            with leanindex.Client(url) if mode == "http" else leanindex.Client.local(sample_root) as client:
                every = client.search("SAMPLE", text=BOTH, text_match="all")
                default = client.search("SAMPLE", text=BOTH)
                half = client.search("SAMPLE", text=HALF_KNOWN)
                with pytest.raises(LeanIndexError) as refused:
                    client.search("SAMPLE", text=BOTH, text_match="some")
    finally:
        engine.close()
    expected = engine_search(sample_root, environment="SAMPLE", text=BOTH, text_match="all")
    assert [r.name for r in every.results] == [r.name for r in expected.results] and every.total_matches == expected.total_matches
    assert default.total_matches > every.total_matches > 0
    assert half.unmatched_words == ["zzqqxx"]
    assert refused.value.code is ErrorCode.INVALID_REQUEST


# --- the search page ---------------------------------------------------------------------------------


def test_the_page_names_the_words_no_declaration_has(pages: TestClient) -> None:
    half = pages.get("/", params={"env": "SAMPLE", "text": HALF_KNOWN})
    assert half.status_code == 200
    note = re.search(r'<p class="note" id="unmatched">(.*?)</p>', half.text)
    assert note and re.sub(r"<[^>]+>", "", note.group(1)) == "No declaration has “zzqqxx”.", note
    assert ">Add</a><span class=\"kind\">" in half.text  # the known word's declarations are listed
    whole = pages.get("/", params={"env": "SAMPLE", "text": BOTH})
    assert whole.status_code == 200 and 'id="unmatched"' not in whole.text


def test_the_page_answers_words_in_any_order_ranked(pages: TestClient, sample_root: Path) -> None:  # noqa: F811
    """The words box is `text` with its default: any word, ranked, as the API answers it."""
    page = pages.get("/", params={"env": "SAMPLE", "text": "length list", "limit": "50"})
    expected = engine_search(sample_root, environment="SAMPLE", text="length list", result_limit=50)
    assert page.status_code == 200
    assert f"of {expected.total_matches:,} · complete" in page.text
    assert expected.total_matches > engine_search(sample_root, environment="SAMPLE", text="length list", text_match="all").total_matches
