"""The MCP tool list an agent pays for: each tool listed once by default, within its size
budget, and every tool's `structuredContent` valid against its `outputSchema`.

Calls go through the `mcp` SDK's own client (which validates `structuredContent` against the
listed `outputSchema` itself on every successful call) and are validated again here with
`jsonschema`: every query tool over stdio (`leanindex mcp`), every checker tool over streamable
HTTP on a real `Checker` driving the stand-in REPL (recorded transcripts when
../shared/fixtures/repl-transcripts is present, the instant stand-in always). Sizes are measured
as `service.mcp.listing_size` says (the JSON text of the `tools` array as `tools/list` sends it)
and checked against `api/mcp-tools.json`, `api/tools.md` and the raw frame on the wire.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Tool

from checker_support import STANDIN, make_layout, transcripts_dir
from leanindex.checker import Checker, CheckerConfig
from leanindex.engine import Engine
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from leanindex.service.mcp import ENTRY_BUDGETS, LISTING_BUDGET, listing_report, listing_size
from leanindex.tools import SEARCH, TOOLS, tool_named
from service_support import (
    live_server,
    sample_root,  # noqa: F401  (fixture)
)

REPO = Path(__file__).resolve().parents[1]
API = REPO / "api"
TRANSCRIPTS = transcripts_dir()

#: One real call (or more) of each query tool, on the sample catalog (profile SAMPLE).
QUERY_CALLS: dict[str, list[dict[str, Any]]] = {
    "lean.declaration.search": [
        {"environment": "SAMPLE", "name_contains": "add", "kinds": ["theorem"], "result_limit": 3},
        {"environment": "SAMPLE", "text": "addition", "result_limit": 3},
        {"environment": "SAMPLE", "text": "list length zzqqxx", "text_match": "all"},  # unmatched_words, no result
        {"environment": "SAMPLE", "type_pattern": {"constants": ["List.lenght"]}},
    ],
    "lean.declaration.inspect": [{"environment": "SAMPLE", "declaration_name": "Nat.add_comm"}],
    "lean.environments": [{}],
    "lean.catalog.diff": [{"older": "SAMPLE", "newer": "SAMPLE"}],
    "lean.declaration.inspect_many": [{"environment": "SAMPLE", "names": ["Nat.add_comm", "Nat.add_com", "Nat.succ"]}],
    "lean.declaration.exists": [{"environment": "SAMPLE", "names": ["Nat.add_comm", "Nat.add_com"]}],
}


def wire(tools: list[Tool]) -> list[dict[str, Any]]:
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def validate(instance: Any, schema: dict[str, Any]) -> None:
    """Raise unless `instance` satisfies `schema` (a valid JSON Schema 2020-12), and unless every
    object the schema lists properties of carries each of them (the listing's promise:
    every field listed is always present, null when it has no value)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(instance)
    carries_every_listed_field(instance, schema, schema.get("$defs", {}), "")


def carries_every_listed_field(instance: Any, schema: Any, definitions: dict[str, Any], where: str) -> None:
    if not isinstance(schema, dict):
        return
    if "$ref" in schema:
        schema = definitions[schema["$ref"].rsplit("/", 1)[1]]
    if isinstance(instance, dict) and "properties" in schema:
        missing = set(schema["properties"]) - set(instance)
        assert not missing, f"{where or '/'} lacks {sorted(missing)}"
        for name, value in instance.items():
            carries_every_listed_field(value, schema["properties"].get(name), definitions, f"{where}/{name}")
    if isinstance(instance, list) and "items" in schema:
        for index, value in enumerate(instance):
            carries_every_listed_field(value, schema["items"], definitions, f"{where}/{index}")
    for option in schema.get("anyOf", []):
        if jsonschema.Draft202012Validator({**option, "$defs": definitions}).is_valid(instance):
            carries_every_listed_field(instance, option, definitions, where)


def exported() -> list[dict[str, Any]]:
    return json.loads((API / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]


# One name per tool.


def assert_each_tool_once(names: list[str]) -> None:
    tools = [tool_named(name).name for name in names]
    twice = sorted({name for name in tools if tools.count(name) > 1})
    assert not twice, f"listed twice (dotted and underscore names?): {twice}"


def test_the_exported_list_has_each_tool_once_under_its_dotted_name() -> None:
    names = [tool["name"] for tool in exported()]
    assert_each_tool_once(names)
    assert names == [spec.name for spec in TOOLS]


def test_a_default_server_lists_each_tool_once_and_both_only_on_request(sample_root: Path) -> None:
    async def listed(*extra: str) -> list[str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "leanindex", "mcp", "--root", str(sample_root), *extra])
        async with Client(params, cache=None) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    default = anyio.run(listed)
    assert_each_tool_once(default)
    assert default == [spec.name for spec in TOOLS if spec.tag == "declarations"]
    both = anyio.run(listed, "--tool-names", "both")
    assert both == [name for spec in TOOLS if spec.tag == "declarations" for name in (spec.name, spec.alias)]
    with pytest.raises(AssertionError, match="listed twice"):
        assert_each_tool_once(both)


def test_the_servers_and_the_cli_share_one_default_naming() -> None:
    from click.testing import CliRunner

    from leanindex.cli import main
    from leanindex.tool_naming import DEFAULT_TOOL_NAMING

    assert DEFAULT_TOOL_NAMING == "dotted" and ServiceConfig().tool_names == DEFAULT_TOOL_NAMING
    for command in ("mcp", "serve"):
        shown = CliRunner().invoke(main, [command, "--help"], terminal_width=200).output
        assert f"[default: {DEFAULT_TOOL_NAMING}]" in " ".join(shown.split()), command


# Sizes.


def test_the_exported_list_is_within_its_budgets_and_its_sizes_are_recorded() -> None:
    tools = [Tool.model_validate(tool) for tool in exported()]
    report = listing_report(tools)
    whole = listing_size(tools)
    assert whole == len(json.dumps(exported(), ensure_ascii=False, separators=(",", ":")))
    print("\n".join(f"{name}: {size}" for name, size, _budget in report))
    assert report[-1] == ("all tools", whole, LISTING_BUDGET)
    assert whole <= LISTING_BUDGET == 40_000
    assert ENTRY_BUDGETS[SEARCH] == 2_500
    for name, size, budget in report[:-1]:
        assert budget is None or size <= budget, (name, size, budget)
    # api/tools.md records every size (generated; tests/test_api_files.py fails when it drifts).
    table = (API / "tools.md").read_text(encoding="utf-8")
    for name, size, _budget in report[:-1]:
        assert f"| `{name}` |" in table and table.split(f"| `{name}` |", 1)[1].split("\n", 1)[0].endswith(f" {size:,} |")
    assert f"take {whole:,} (budget {LISTING_BUDGET:,}" in table


def test_every_tool_lists_a_compact_output_schema() -> None:
    for tool in exported():
        schema = tool["outputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["properties"], tool["name"]
        text = json.dumps(schema)
        assert '"description"' not in text and '"title"' not in text, tool["name"]


def test_the_size_measured_is_the_text_sent(sample_root: Path) -> None:
    """The `tools` array of a raw `tools/list` frame is, character for character, the JSON text
    `listing_size` measures."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "mcp", "--root", str(sample_root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        lines = []
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                lines.append(process.stdout.readline().decode())
        process.stdin.close()
        process.wait(timeout=30)
    finally:
        process.kill()
    sent = json.loads(lines[1])["result"]["tools"]
    text = json.dumps(sent, ensure_ascii=False, separators=(",", ":"))
    assert text in lines[1]
    assert listing_size([Tool.model_validate(tool) for tool in sent]) == len(text)
    assert sent == [tool for tool in exported() if tool_named(tool["name"]).tag == "declarations"]


# Every answer validates against its output schema.


def test_every_query_tool_answer_validates_against_its_output_schema(sample_root: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "leanindex", "mcp", "--root", str(sample_root)])

    async def main() -> None:
        async with Client(params, cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == set(QUERY_CALLS), "give each query tool a call in QUERY_CALLS"
            for name, calls in QUERY_CALLS.items():
                for arguments in calls:
                    # The SDK's client has validated structuredContent against outputSchema already.
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, (name, result.content)
                    validate(result.structured_content, tools[name].output_schema)

    anyio.run(main)


def checker_calls() -> dict[str, list[dict[str, Any]]]:
    """Calls of every checker tool on profile TEST whose answers the recorded transcripts (and
    the scripted stand-in answers) give: verdicts of each kind, a fence, suggestions, proofs."""
    sys.path.insert(0, str(STANDIN))
    import scripted

    from test_service_target import BRANCHING_PROOF, DEF_F, FILE, SHOW_P, SORRY

    changed = {"theorems": [{"name": "show_p", "statement": "(p q : Prop) (h : p) : p ∨ q"}]}
    unknown = "theorem bar : 1 = 1 := byrfl"
    return {
        "lean.check": [
            {"environment": "TEST", "code": SHOW_P},
            {"environment": "TEST", "code": SHOW_P, "reference": changed},
            {"environment": "TEST", "code": unknown},
        ],
        "lean.check.batch": [{"items": [{"id": "a", "environment": "TEST", "code": SHOW_P}, {"id": "b", "environment": "TEST", "code": "import Mathlib\n" + SHOW_P}]}],
        "lean.check.target": [
            {"environment": "TEST", "code": FILE, "target": "show_p", "candidates": [SORRY, SHOW_P]},
            {"environment": "TEST", "code": FILE, "mode": "sequential"},
        ],
        "lean.audit": [{"environment": "TEST", "code": scripted.AUDIT_FILE}],
        "lean.proof.state": [{"environment": "TEST", "code": DEF_F, "session": "schemas"}],
        "lean.proof.step": [],  # on the state just opened (below)
        "lean.proof.close": [],
        "lean.proof.steps": [{"environment": "TEST", "code": BRANCHING_PROOF, "include_theorems": True}],
        "lean.proof.tree": [{"environment": "TEST", "code": BRANCHING_PROOF}],
    }


def call_every_checker_tool(tmp_path: Path, *, instant: bool) -> dict[str, int]:
    """Serve profile TEST with a checker on the stand-in, call every checker tool through the SDK's
    client over streamable HTTP and validate each successful answer; return the successful
    answers per tool."""
    from test_service_check import build_test_profile

    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, instant=instant, transcripts=None if instant else TRANSCRIPTS)
    config = CheckerConfig.for_profile(root, "TEST", project_dir=project, repl_dir=repl, lake_path=STANDIN / "lake")
    engine = Engine(root)
    calls = checker_calls()
    answered: dict[str, int] = dict.fromkeys(calls, 0)

    async def main(url: str) -> None:
        async with Client(f"{url}/mcp", cache=None) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {spec.name for spec in TOOLS if spec.tag == "check"} == set(calls)

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    return None
                validate(result.structured_content, tools[name].output_schema)
                answered[name] += 1
                return result.structured_content

            for name, arguments_list in calls.items():
                for arguments in arguments_list:
                    opened = await call(name, arguments)
                    if name == "lean.proof.state" and opened is not None:
                        state = {"environment": "TEST", "state_id": opened["state_id"], "session": "schemas"}
                        await call("lean.proof.step", {**state, "tactic": "have t : Nat := 42"})
                        await call("lean.proof.close", state)

    with live_server(create_app(engine, ServiceConfig(), Checker(config, close_names=engine.close_names))) as url:
        anyio.run(main, url)
    engine.close()
    return answered


@pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")
def test_every_checker_tool_answer_validates_against_its_output_schema(tmp_path: Path) -> None:
    answered = call_every_checker_tool(tmp_path, instant=False)
    assert all(answered.values()), answered


def test_checker_answers_of_the_instant_standin_validate(tmp_path: Path) -> None:
    """Without the recorded transcripts: the instant stand-in's answers (empty successes, one
    proof state per sorry) of the tools it can answer still validate."""
    answered = call_every_checker_tool(tmp_path, instant=True)
    assert answered["lean.check"] and answered["lean.check.batch"] and answered["lean.audit"], answered
