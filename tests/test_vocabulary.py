"""One vocabulary (issue 30, item 1): a request field has one name on every surface (the CLI flag
is the field's name in kebab case, with today's short spellings as aliases listed in `--help`),
and every surface answers a misspelt field, parameter or flag with its close names, found by the
one rule (`validation.close_names`): `limit` gets `result_limit`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import click
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client as McpClient
from service_support import live_server, sample_root  # noqa: F401

import leanindex
from leanindex.cli import main
from leanindex.cli.output import FieldCommand
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.models import QUERY_PARAMETERS, SearchRequest
from leanindex.service.http import create_app
from leanindex.validation import close_names, parse_request


@pytest.fixture(scope="module")
def served(sample_root: Path) -> Iterator[str]:  # noqa: F811
    engine = Engine(sample_root)
    with live_server(create_app(engine)) as url:
        yield url
    engine.close()


def search_command() -> click.Command:
    command = main.get_command(click.Context(main), "search")
    assert command is not None
    return command


# --- the rule ---------------------------------------------------------------------------------


def test_close_names_finds_the_field_a_short_or_misspelt_name_means() -> None:
    fields = list(SearchRequest.model_fields)
    assert close_names("limit", fields) == ["result_limit"]
    assert close_names("namespace", fields) == ["namespace_prefixes"]
    assert close_names("kind", fields) == ["kinds"]
    assert close_names("env", fields) == ["environment"]
    assert close_names("--Result-Limit", fields) == ["result_limit"]  # case, dashes and `-` for `_` do not count
    assert close_names("prefixes", fields) == ["namespace_prefixes", "module_prefixes"]  # ties in the fields' order
    assert close_names("zzz", fields) == []
    # Aliases map to the name suggested for them.
    assert close_names("--limits", {"--limit": "--result-limit", "--result-limit": "--result-limit"}) == ["--result-limit"]


# --- CLI --------------------------------------------------------------------------------------


def test_every_search_field_has_its_own_name_as_a_flag() -> None:
    """The first long flag of each option is its field's name in kebab case; the object fields
    (`type_pattern`, `flags`) are given by the query parameters that fill them."""
    options = {param.name: param for param in search_command().params if isinstance(param, click.Option)}
    for name in SearchRequest.model_fields:
        if name in {path[0] for path in QUERY_PARAMETERS.values()}:
            continue
        assert next(flag for flag in options[name].opts if flag.startswith("--")) == "--" + name.replace("_", "-"), name
    spelled = {flag for param in options.values() for flag in param.opts}
    assert {f"--{key}" for key in QUERY_PARAMETERS} <= spelled


def test_search_help_lists_the_aliases() -> None:
    ran = CliRunner().invoke(main, ["search", "--help"], terminal_width=200)
    assert ran.exit_code == 0, ran.output
    for listed in (
        "--result-limit, --limit INTEGER",
        "--kinds, --kind",
        "--namespace-prefixes, --namespace TEXT",
        "--module-prefixes, --module TEXT",
        "-n, --name-contains TEXT",
        "-c, --constant TEXT",
        "-e, --environment TEXT",
        "--case-sensitive / -i, --ignore-case",
    ):
        assert listed in ran.output, listed


def test_the_old_flags_and_the_field_flags_ask_the_same(sample_root: Path) -> None:  # noqa: F811
    runner = CliRunner()
    common = ["search", "-e", "SAMPLE", "--root", str(sample_root), "--json"]
    old = runner.invoke(main, [*common, "-n", "ADD", "-i", "--kind", "theorem", "--namespace", "Nat", "--module", "Init", "--limit", "2"])
    new = runner.invoke(
        main,
        [*common, "--name-contains", "ADD", "--ignore-case", "--kinds", "theorem", "--namespace-prefixes", "Nat",
         "--module-prefixes", "Init", "--result-limit", "2"],
    )
    assert old.exit_code == 0 and new.exit_code == 0, (old.output, new.output)
    assert old.stdout == new.stdout and '"RESULT_LIMIT"' in old.stdout


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("--limits", "--result-limit"),
        ("--result_limit", "--result-limit"),
        ("--lim", "--result-limit"),
        ("--namespaces", "--namespace-prefixes"),
        ("--env", "--environment"),
        ("--ignore_case", "--ignore-case"),
    ],
)
def test_an_unknown_flag_gets_the_fields_flag(given: str, suggested: str) -> None:
    ran = CliRunner().invoke(main, ["search", "-e", "SAMPLE", given, "3"])
    assert ran.exit_code == 2
    assert f"No such option '{given}'. Did you mean {suggested}" in ran.output, ran.output  # first of the close names


def test_the_search_command_is_a_field_command() -> None:
    assert isinstance(search_command(), FieldCommand)


# --- HTTP -------------------------------------------------------------------------------------


def refused(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    return error


def test_http_json_bodies_get_the_close_field_names(served: str) -> None:
    error = refused(httpx.post(f"{served}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "add", "limit": 3}))
    assert error["message"] == "limit: unknown field; did you mean result_limit?"
    assert error["details"]["suggestions"] == ["result_limit"]
    assert error["details"]["errors"] == [{"loc": ["limit"], "msg": "unknown field; did you mean result_limit?", "suggestions": ["result_limit"]}]
    # A nested field, and inspect's `declaration_name` (the misspelling leaves it missing too: the message names the misspelling).
    nested = refused(httpx.post(f"{served}/v1/declarations/search", json={"environment": "SAMPLE", "type_pattern": {"constant": ["Nat"]}}))
    assert nested["details"]["suggestions"] == ["constants"] and nested["message"].startswith("type_pattern.constant: unknown field")
    named = refused(httpx.post(f"{served}/v1/declarations/inspect", json={"environment": "SAMPLE", "name": "Nat.add_comm"}))
    assert named["message"] == "name: unknown field; did you mean declaration_name?"
    assert named["details"]["suggestions"] == ["declaration_name"]


def test_http_query_parameters_get_the_close_names(served: str) -> None:
    search = refused(httpx.get(f"{served}/v1/declarations/search", params={"environment": "SAMPLE", "name_contains": "add", "limit": "3"}))
    assert search["message"] == "unknown query parameter 'limit'; did you mean result_limit?"
    assert search["details"] == {"field": "limit", "suggestions": ["result_limit"]}
    assert refused(httpx.get(f"{served}/v1/declarations/search", params={"environment": "SAMPLE", "type_pattern": "Nat"}))["details"][
        "suggestions"
    ] == ["constant", "conclusion"]
    # `env` is answered before the missing `environment` is.
    inspect = refused(httpx.get(f"{served}/v1/declarations/Nat.add_comm", params={"env": "SAMPLE"}))
    assert inspect["details"] == {"field": "env", "suggestions": ["environment"]}
    diff = refused(httpx.get(f"{served}/v1/environments/SAMPLE/diff/SAMPLE", params={"categorys": "added"}))
    assert diff["details"] == {"field": "categorys", "suggestions": ["categories"]}
    # The diff route takes its field's own name, `categories`, as well as `category`.
    for key in ("categories", "category"):
        answer = httpx.get(f"{served}/v1/environments/SAMPLE/diff/SAMPLE", params={key: "added"})
        assert answer.status_code == 200, answer.text


# --- MCP and Client ---------------------------------------------------------------------------


def test_mcp_tool_arguments_get_the_close_field_names(served: str) -> None:
    async def run() -> Any:
        async with McpClient(f"{served}/mcp", cache=None) as client:
            return await client.call_tool("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "add", "limit": 3})

    result = anyio.run(run)
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "invalid_request" and error["details"]["suggestions"] == ["result_limit"]
    assert result.content[0].text.startswith("error invalid_request: limit: unknown field; did you mean result_limit?")


@pytest.mark.parametrize("mode", ["local", "http"])
def test_client_keywords_get_the_close_field_names(mode: str, sample_root: Path, served: str) -> None:  # noqa: F811
    client = leanindex.Client.local(sample_root) if mode == "local" else leanindex.Client(served)
    with client, pytest.raises(LeanIndexError) as raised:
        client.search("SAMPLE", "add", limit=5)
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.message == "limit: unknown field; did you mean result_limit?"
    assert raised.value.details["suggestions"] == ["result_limit"]


def test_parse_request_lists_the_fields_when_none_is_close() -> None:
    with pytest.raises(LeanIndexError) as raised:
        parse_request(SearchRequest, {"environment": "SAMPLE", "zzz": 1})
    assert raised.value.message.startswith("zzz: unknown field; the fields are environment, name_contains,")
    assert "suggestions" not in raised.value.details


# --- the batch look-ups and inspect (found by a review) ---------------------------------------


def test_the_batch_field_written_as_the_single_fields_plural_gets_names(served: str) -> None:
    for route in ("/v1/declarations/exists", "/v1/declarations/inspect_many"):
        error = refused(httpx.post(f"{served}{route}", json={"environment": "SAMPLE", "declaration_names": ["Nat.add_comm"]}))
        assert error["message"] == "declaration_names: unknown field; did you mean names?", error


@pytest.mark.parametrize("mode", ["local", "http"])
def test_client_inspect_and_exists_refuse_a_misspelt_keyword_with_its_name(mode: str, sample_root: Path, served: str) -> None:  # noqa: F811
    client = leanindex.Client.local(sample_root) if mode == "local" else leanindex.Client(served)
    with client:
        for call, keywords, right in [
            (client.inspect, {"name": "Nat.add_comm"}, "declaration_name"),
            (client.exists, {"declaration_names": ["Nat.add_comm"]}, "names"),
            (client.inspect_many, {"declaration_names": ["Nat.add_comm"]}, "names"),
        ]:
            with pytest.raises(LeanIndexError) as raised:
                call("SAMPLE", **keywords)
            assert raised.value.code is ErrorCode.INVALID_REQUEST and raised.value.details["suggestions"] == [right]


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (["inspect", "-e", "SAMPLE", "--name", "Nat.add_comm"], "DECLARATIONS (given without a flag)"),
        (["exists", "-e", "SAMPLE", "--nmes", "x"], "NAMES (given without a flag)"),
        (["exists", "-e", "SAMPLE", "--enviroment", "SAMPLE", "x"], "--environment"),
    ],
)
def test_inspect_and_exists_flags_get_the_close_names(args: list[str], suggested: str) -> None:
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 2 and f"Did you mean {suggested}" in ran.output, ran.output


def test_the_environment_list_refuses_a_query_parameter(served: str) -> None:
    error = refused(httpx.get(f"{served}/v1/environments", params={"foo": "1"}))
    assert error["details"]["field"] == "foo"
    assert httpx.get(f"{served}/v1/environments").status_code == 200
