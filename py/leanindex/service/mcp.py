"""The MCP server `leanindex`: tools from `ToolSpec`s on the SDK's low-level `Server`.

The low-level server (mcp 2.3.0, `mcp.server.Server`) is used rather than `MCPServer` because
the input schema of each tool must be exactly its shared request model and each error result
must carry the shared error object, which `MCPServer` (schemas from function signatures, errors
as text) does not allow.

Each tool is listed under its dotted name, its underscore alias or both (`--tool-names`), with its
input schema (the request model's JSON Schema, compacted), its output schema (the response
model's; the query tools leave it out) and annotations.
A call validates the arguments with the request model, strictly as JSON
(`validation.parse_request`, the rule of every surface), and answers with `structuredContent` =
the response model and one text block = the compact rendering. A request the library refuses or
a service failure (`LeanIndexError`, or arguments the model rejects) is a tool result with
`isError: true`, `structuredContent` = the shared error object `{"error": {...}}` and its text
rendering; so is an unexpected exception (`internal_error`, its text in the log only). Protocol
errors stay protocol errors: an unknown tool name is JSON-RPC `INVALID_PARAMS` (-32602).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from ..errors import ErrorCode, LeanIndexError
from ..render import render_error
from ..tools import ToolNaming, ToolSpec
from ..validation import parse_request
from ..version import __version__
from .stdio import checked_stdio_server
from .tools import ServedTool

SERVER_NAME = "leanindex"

INSTRUCTIONS = (
    "Search and inspect the declarations of pinned Lean 4 environments. Every answer names the "
    "environment it came from (environment_digest, lean_version, mathlib_commit). A search says "
    "whether it is complete: follow next_cursor while stop_reason is RESULT_LIMIT."
)

log = logging.getLogger("leanindex.mcp")


def compact_schema(schema: Any) -> Any:
    """`schema` as agents are shown it: titles, descriptions, string patterns and lengths (the
    name grammar and its bounds; the request model checks them) and null defaults left out, and
    `null` dropped from a field's options and "not null" constraints (leaving a field out means
    the same). The tool's
    description says what the fields mean; the request model still validates every call."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: compact_schema(value)
        for key, value in schema.items()
        if key not in ("title", "description", "pattern", "minLength", "maxLength") and not (key == "default" and value is None)
    }
    # "not null" constraints go with the null options: a property is left out, never null.
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: value for name, value in out["properties"].items() if value != {"not": {"type": "null"}}}
        if not out["properties"]:
            del out["properties"]
    options = out.get("anyOf")
    if options is not None:
        rest = [option for option in options if option != {"type": "null"}]
        if len(rest) == 1:
            del out["anyOf"]
            out.update(rest[0])
        else:
            out["anyOf"] = rest
    return out


def tool_definitions(tools: Sequence[ToolSpec], naming: ToolNaming = "both") -> list[types.Tool]:
    """The `tools/list` entries: each tool under the names `naming` gives (`ToolSpec.names`),
    with its compact input schema, and its output schema when the tool lists one."""
    listed = []
    for spec in tools:
        for name in spec.names(naming):
            listed.append(
                types.Tool(
                    name=name,
                    title=spec.title,
                    description=spec.description,
                    input_schema=compact_schema(spec.request_model.model_json_schema(mode="validation")),
                    output_schema=spec.response_model.model_json_schema(mode="serialization") if spec.lists_output_schema else None,
                    annotations=types.ToolAnnotations(
                        title=spec.title,
                        read_only_hint=spec.read_only,
                        destructive_hint=False,
                        idempotent_hint=spec.idempotent,
                        open_world_hint=False,
                    ),
                )
            )
    return listed


def error_result(error: LeanIndexError) -> types.CallToolResult:
    """A tool error: `isError`, the shared error object as structured content, and its text."""
    return types.CallToolResult(
        content=[types.TextContent(text=render_error(error))],
        structured_content=error.to_dict(),
        is_error=True,
    )


async def call_tool(spec: ServedTool, arguments: dict[str, Any]) -> types.CallToolResult:
    """Validate `arguments` with the tool's request model (`validation.parse_request`: strict,
    `"10"` is no integer), run it, and build the result.

    Never raises: a refusal or a service failure is its error result, and an unexpected
    exception is logged with its traceback and answered as `internal_error` (its text, which may
    name server paths, is not sent; the SDK would send it as the JSON-RPC error's message).
    """
    try:
        request = parse_request(spec.request_model, arguments)
        response = await spec.call(request)
        # Rendered inside the guard: a renderer's defect is answered like the call's own.
        return types.CallToolResult(
            content=[types.TextContent(text=spec.render(response))],
            structured_content=response.model_dump(mode="json"),
        )
    except LeanIndexError as error:
        failure = error
    except Exception:
        # A defect: its text (which may name server paths) goes to the log only, as over HTTP.
        log.exception("tool %s failed unexpectedly", spec.name)
        failure = LeanIndexError(ErrorCode.INTERNAL_ERROR, "the server failed unexpectedly; the error is in its log", {})
    log.info("tool %s refused: %s", spec.name, failure.code.value)
    return error_result(failure)


def build_mcp_server(tools: Sequence[ServedTool], naming: ToolNaming = "both") -> Server[Any]:
    """The MCP server `leanindex` offering the `enabled` ones of `tools`, under the names
    `naming` gives (dotted, underscore alias, or both).

    Raises `ValueError` when two tools would share a name.
    """
    tools = [spec for spec in tools if spec.enabled]
    by_name: dict[str, ServedTool] = {}
    for spec in tools:
        for name in spec.names(naming):
            if name in by_name:
                raise ValueError(f"tool name {name!r} is used twice")
            by_name[name] = spec
    listing = tool_definitions(tools, naming)
    input_schemas = {tool.name: tool.input_schema for tool in listing}

    async def on_list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}", {"known": sorted(by_name)})
        return await call_tool(spec, params.arguments or {})

    return Server(
        SERVER_NAME,
        version=__version__,
        title="leanindex",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schemas.get,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve `server` over stdin/stdout until the client closes stdin.

    The SDK's `stdio_server` moves the protocol onto private descriptors and points fd 1 at
    stderr while it runs, so nothing but protocol frames reaches the real stdout; its stdin is
    read through `service.stdio.checked_stdio_server`, so every line gets an answer.
    """
    async with checked_stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
