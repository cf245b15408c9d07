"""The MCP tools through the SDK's own client, over stdio (`leanindex mcp` as a subprocess) and
over streamable HTTP (`/mcp` of a live loopback server): tool list and schemas, every tool with
valid and invalid input, every structured result validated against the tool's output schema."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import INVALID_PARAMS
from service_support import (
    HARD_NAMES,
    GatedEngine,
    engine_inspect,
    engine_search,
    live_server,
    sample_root,  # noqa: F401  (fixture)
)

from leanindex.engine.diff import DeclarationDiff, DiffRequest
from leanindex.engine import Engine
from leanindex.models import EnvironmentsRequest, EnvironmentsResponse, ErrorResponse, InspectRequest, InspectResponse, SearchRequest, SearchResponse
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from leanindex.service.mcp import compact_output_schema, compact_schema
from leanindex.tools import tool_named

MODELS = {
    "lean.declaration.search": (SearchRequest, SearchResponse),
    "lean.declaration.inspect": (InspectRequest, InspectResponse),
    "lean.environments": (EnvironmentsRequest, EnvironmentsResponse),
    "lean.catalog.diff": (DiffRequest, DeclarationDiff),
}
ERROR_SCHEMA = ErrorResponse.model_json_schema()


def validate(instance: Any, schema: dict) -> None:
    """Raise unless `instance` satisfies `schema` (JSON Schema 2020-12, as pydantic writes it)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(instance)


async def call(client: Client, name: str, arguments: dict, schemas: dict[str, dict]) -> Any:
    """Call a tool; check the result's structured content against the output schema (or the
    error object's schema when it is an error) and return the result."""
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    if result.is_error:
        validate(result.structured_content, ERROR_SCHEMA)
        code = result.structured_content["error"]["code"]
        assert result.content[0].text.startswith(f"error {code}: ")
    else:
        validate(result.structured_content, schemas[name])
    return result


async def exercise(client: Client, root: Path) -> None:
    """The whole conversation both transports must hold."""
    listed = [tool for tool in (await client.list_tools()).tools if tool.name in MODELS]
    # Each tool once, under its dotted name (the default naming).
    assert [t.name for t in listed] == ["lean.declaration.search", "lean.declaration.inspect", "lean.environments", "lean.catalog.diff"]
    schemas = {}
    for tool in listed:
        request_model, response_model = MODELS[tool.name]
        assert tool.input_schema == compact_schema(request_model.model_json_schema())
        spec = tool_named(tool.name)
        assert tool.output_schema == compact_output_schema(response_model.model_json_schema(mode="serialization"), spec.output_levels)
        assert tool.annotations.read_only_hint is True and tool.annotations.open_world_hint is False
        # Meaningful only for tools that change state: left out here.
        assert tool.annotations.destructive_hint is None and tool.annotations.idempotent_hint is None
        schemas[tool.name] = tool.output_schema

    for environments in ("lean.environments",):
        result = await call(client, environments, {}, schemas)
        assert not result.is_error
        served = result.structured_content["environments"]
        assert [e["environment"] for e in served] == ["SAMPLE"] and served[0]["verified"] is True
        assert result.content[0].text.startswith(f"SAMPLE: {served[0]['visible_count']} visible of {served[0]['declaration_count']} declarations")

    for diff in ("lean.catalog.diff",):
        result = await call(client, diff, {"older": "SAMPLE", "newer": "sample"}, schemas)
        assert not result.is_error and result.structured_content["counts"] == dict.fromkeys(
            ("added", "removed", "retyped", "reprinted", "deprecated", "renamed"), 0)
        refused = await call(client, diff, {"older": "SAMPLE", "newer": "SAMPLE", "after": "!"}, schemas)
        assert refused.is_error and refused.structured_content["error"]["details"] == {"field": "after"}

    for search in ("lean.declaration.search",):
        filters = {"name_contains": "add", "kinds": ["theorem"], "result_limit": 2}
        result = await call(client, search, {"environment": "SAMPLE", **filters}, schemas)
        assert not result.is_error
        expected = engine_search(root, environment="SAMPLE", **filters)
        assert result.structured_content == expected.model_dump(mode="json")
        lines = result.content[0].text.splitlines()
        assert lines[0].startswith(f"RESULT_LIMIT PARTIAL: 2 shown, total_matches {expected.total_matches},")
        # Extractor-style catalog: a source link, no doc page.
        assert all(r.source_url and r.doc_url is None for r in expected.results)
        assert lines[1:3] == [f"{r.name} | theorem | {r.type} | {r.module} | {r.source_url} | -" for r in expected.results]
        assert lines[-1] == f"next_cursor {expected.next_cursor}"
        # The cursor continues the scan through the tool as well.
        following = await call(client, search, {"environment": "SAMPLE", **filters, "after": expected.next_cursor}, schemas)
        assert following.structured_content["results"][0]["name"] not in {r.name for r in expected.results}

        # Relevance order and text search answer through the tool exactly as the engine does.
        for ranked in ({"name_contains": "add", "order": "relevance", "result_limit": 3}, {"text": "addition", "result_limit": 3}):
            answer = await call(client, search, {"environment": "SAMPLE", **ranked}, schemas)
            assert answer.structured_content == engine_search(root, environment="SAMPLE", **ranked).model_dump(mode="json")
        misspelt = await call(client, search, {"environment": "SAMPLE", "type_pattern": {"constants": ["List.lenght"]}}, schemas)
        assert misspelt.structured_content["unknown_constants"][0]["name"] == "List.lenght"
        assert "no declaration's type mentions List.lenght; close names: List.length" in misspelt.content[0].text

    for inspect in ("lean.declaration.inspect",):
        for name in HARD_NAMES:
            result = await call(client, inspect, {"environment": "sample", "declaration_name": name}, schemas)
            assert not result.is_error
            assert result.structured_content == engine_inspect(root, "sample", name).model_dump(mode="json")
            assert result.content[0].text.startswith(f"{name} : ")
            source_url = result.structured_content["source_url"]
            assert source_url.startswith("https://github.com/leanprover/lean4/blob/")
            assert f"\nsource {source_url}\n" in result.content[0].text

    refusals = [
        ("lean.declaration.search", {"environment": "SAMPLE"}, "invalid_request"),
        ("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "a", "result_limit": "many"}, "invalid_request"),
        ("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "a", "colour": "red"}, "invalid_request"),
        ("lean.declaration.search", {"name_contains": "a"}, "invalid_request"),
        ("lean.declaration.search", {"environment": "MATHLIB", "name_contains": "a"}, "unknown_environment"),
        ("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "a", "after": "bogus"}, "invalid_request"),
        ("lean.declaration.search", {"environment": "SAMPLE", "text": "of the"}, "invalid_request"),
        ("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "a", "order": "best"}, "invalid_request"),
        ("lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": "Nat.add_com"}, "not_found"),
        ("lean.declaration.inspect", {"environment": "SAMPLE"}, "invalid_request"),
        ("lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": ""}, "invalid_request"),
    ]
    for name, arguments, code in refusals:
        result = await call(client, name, arguments, schemas)
        assert result.is_error, (name, arguments)
        assert result.structured_content["error"]["code"] == code, result.structured_content
    not_found = await call(client, "lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": "Nat.add_com"}, schemas)
    assert "Nat.add_comm" in not_found.structured_content["error"]["details"]["suggestions"]

    # An unknown tool is a protocol error, not a tool result.
    with pytest.raises(MCPError) as raised:
        await client.call_tool("lean.declaration.find", {"environment": "SAMPLE"})
    assert raised.value.code == INVALID_PARAMS


def test_stdio_transport(sample_root: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "leanindex", "mcp", "--root", str(sample_root)])

    async def main() -> None:
        async with Client(params, cache=None) as client:
            assert client.server_info.name == "leanindex"
            await exercise(client, sample_root)

    anyio.run(main)


def test_stdio_stdout_carries_only_protocol_frames(sample_root: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "lean.declaration.inspect", "arguments": {"environment": "SAMPLE", "declaration_name": "Nope"}}},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "mcp", "--root", str(sample_root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        frames = []
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                frames.append(json.loads(process.stdout.readline()))
        process.stdin.close()
        rest = process.stdout.read()
        process.wait(timeout=30)
        stderr = process.stderr.read().decode()
    finally:
        process.kill()
    assert rest == b""
    assert [f["id"] for f in frames] == [1, 2] and all(f["jsonrpc"] == "2.0" for f in frames)
    assert frames[0]["result"]["serverInfo"]["name"] == "leanindex"
    assert frames[1]["result"]["isError"] is True
    assert frames[1]["result"]["structuredContent"]["error"]["code"] == "not_found"
    # Logs went to stderr, as JSON lines.
    logged = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert any(entry["message"].startswith("serving profiles SAMPLE") for entry in logged)


def test_streamable_http_transport(sample_root: Path) -> None:
    engine = Engine(sample_root)
    with live_server(create_app(engine)) as url:

        async def main() -> None:
            async with Client(f"{url}/mcp", cache=None) as client:
                await exercise(client, sample_root)

        anyio.run(main)
    engine.close()


def test_streamable_http_needs_the_token_when_set(sample_root: Path) -> None:
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(token="s3cret"))) as url:
        refused = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401

        async def main() -> None:
            async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=30) as http:
                async with Client(streamable_http_client(f"{url}/mcp", http_client=http), cache=None) as client:
                    result = await client.call_tool("lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": "Nat.succ"})
                    assert not result.is_error
                    assert result.structured_content["name"] == "Nat.succ"

        anyio.run(main)
    engine.close()


def test_timeout_and_busy_are_tool_errors(sample_root: Path) -> None:
    engine = GatedEngine(sample_root)
    app = create_app(engine, ServiceConfig(max_concurrent=2, time_budget_s=0.5))
    with live_server(app) as url:
        # Slot 1: an HTTP search stuck in the engine (its caller gets 504; the work goes on).
        held = threading.Thread(
            target=lambda: httpx.post(f"{url}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a"}, timeout=60)
        )
        held.start()
        assert engine.entered.wait(30)

        async def main() -> None:
            async with Client(f"{url}/mcp", cache=None) as client:
                # Slot 2: a tool search stuck the same way, past the time budget.
                late = await client.call_tool("lean.declaration.search", {"environment": "SAMPLE", "name_contains": "b"})
                assert late.is_error
                validate(late.structured_content, ERROR_SCHEMA)
                assert late.structured_content["error"]["code"] == "timeout"
                # Both slots are still held by running work: refused at once.
                busy = await client.call_tool("lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": "Nat.succ"})
                assert busy.is_error
                validate(busy.structured_content, ERROR_SCHEMA)
                assert busy.structured_content["error"]["code"] == "busy"
                assert busy.content[0].text.startswith("error busy: ")

        anyio.run(main)
        engine.release.set()
        held.join(30)
    engine.close()


QUERY_TOOLS = ["lean.declaration.search", "lean.declaration.inspect", "lean.environments", "lean.catalog.diff"]


@pytest.mark.parametrize(
    ("naming", "names"),
    [
        ("dotted", QUERY_TOOLS),
        ("underscore", [name.replace(".", "_") for name in QUERY_TOOLS]),
        ("both", [spelling for name in QUERY_TOOLS for spelling in (name, name.replace(".", "_"))]),
    ],
)
def test_tool_names_option_lists_the_spellings_asked_for(sample_root: Path, naming: str, names: list[str]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "leanindex", "mcp", "--root", str(sample_root), "--tool-names", naming])

    async def main() -> None:
        async with Client(params, cache=None) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed if tool_named(t.name).name in QUERY_TOOLS] == names
            # Every spelling listed answers, with the same output schema; another is unknown.
            for name in names[:2]:
                result = await client.call_tool(name, {"environment": "SAMPLE", "name_contains": "add"} if "search" in name else {"environment": "SAMPLE", "declaration_name": "Nat.succ"})
                assert not result.is_error, result.content
            if naming != "both":
                other = names[0].replace(".", "_") if naming == "dotted" else "lean.declaration.search"
                with pytest.raises(Exception, match="unknown tool"):
                    await client.call_tool(other, {"environment": "SAMPLE", "name_contains": "add"})

    anyio.run(main)
