"""The MCP server `leanindex`: tools from `ToolSpec`s on the SDK's low-level `Server`.

The low-level server (mcp 2.3.0, `mcp.server.Server`) is used rather than `MCPServer` because
the input schema of each tool must be exactly its shared request model and each error result
must carry the shared error object, which `MCPServer` (schemas from function signatures, errors
as text) does not allow.

Each tool is listed twice, under its dotted name and its underscore alias, with the same input
schema (the request model's JSON Schema), output schema (the response model's) and annotations.
A call validates the arguments with the request model and answers with `structuredContent` =
the response model and one text block = the compact rendering. A request the library refuses or
a service failure (`LeanIndexError`, or arguments the model rejects) is a tool result with
`isError: true`, `structuredContent` = the shared error object `{"error": {...}}` and its text
rendering. Protocol errors stay protocol errors: an unknown tool name is JSON-RPC
`INVALID_PARAMS` (-32602), and an unexpected exception is the SDK's internal error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from pydantic import ValidationError

from ..errors import LeanIndexError
from ..validation import invalid_request
from ..version import __version__
from .stdio import checked_stdio_server
from .tools import ToolSpec, render_error

SERVER_NAME = "leanindex"

INSTRUCTIONS = (
    "Search and inspect the declarations of pinned Lean 4 environments. Every answer names the "
    "environment it came from (environment_digest, lean_version, mathlib_commit). A search says "
    "whether it is complete: follow next_cursor while stop_reason is RESULT_LIMIT."
)

log = logging.getLogger("leanindex.mcp")


def tool_definitions(tools: Sequence[ToolSpec]) -> list[types.Tool]:
    """The `tools/list` entries: each tool under its dotted name, then under its alias."""
    listed = []
    for spec in tools:
        for name in (spec.name, spec.alias):
            listed.append(
                types.Tool(
                    name=name,
                    title=spec.title,
                    description=spec.description,
                    input_schema=spec.request_model.model_json_schema(mode="validation"),
                    output_schema=spec.response_model.model_json_schema(mode="serialization"),
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


async def call_tool(spec: ToolSpec, arguments: dict[str, Any]) -> types.CallToolResult:
    """Validate `arguments` with the tool's request model, run it, and build the result.

    Never raises for a refusal or a service failure (those become error results); an
    unexpected exception propagates, and the SDK answers it as a protocol error.
    """
    try:
        request = spec.request_model.model_validate(arguments)
        response = await spec.call(request)
    except ValidationError as error:
        failure = invalid_request(error.errors())
    except LeanIndexError as error:
        failure = error
    else:
        return types.CallToolResult(
            content=[types.TextContent(text=spec.render(response))],
            structured_content=response.model_dump(mode="json"),
        )
    log.info("tool %s refused: %s", spec.name, failure.code.value)
    return error_result(failure)


def build_mcp_server(tools: Sequence[ToolSpec]) -> Server[Any]:
    """The MCP server `leanindex` offering the `enabled` ones of `tools` (and their aliases).

    Raises `ValueError` when two tools would share a name.
    """
    tools = [spec for spec in tools if spec.enabled]
    by_name: dict[str, ToolSpec] = {}
    for spec in tools:
        for name in (spec.name, spec.alias):
            if name in by_name:
                raise ValueError(f"tool name {name!r} is used twice")
            by_name[name] = spec
    listing = tool_definitions(tools)
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
