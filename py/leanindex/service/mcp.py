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

import json
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext

from ..errors import ErrorCode, LeanIndexError
from ..render import render_error
from ..tools import DEFAULT_TOOL_NAMING, SEARCH, ToolNaming, ToolSpec
from ..validation import parse_request
from ..version import __version__
from .stdio import checked_stdio_server
from .tools import ServedTool

SERVER_NAME = "leanindex"

INSTRUCTIONS = (
    "Search and inspect the declarations of pinned Lean 4 environments (and, when the server has a "
    "checker, check Lean files and proofs). Every answer names the environment it came from "
    "(environment_digest, lean_version, mathlib_commit). A search says whether it is complete: follow "
    "next_cursor while stop_reason is RESULT_LIMIT. Every answer carries every field its tool's "
    "outputSchema lists (null when it has no value); objects nested deeper than it goes are typed "
    "only as object. Unknown argument fields are refused (invalid_request)."
)

log = logging.getLogger("leanindex.mcp")


#: Keywords no listed schema keeps: what people read (`title`, `description`, `examples`) and
#: what the models check on every call (string grammar and lengths, list lengths, non-empty
#: objects); the full, described schemas are in `api/models.schema.json`.
_DROPPED = frozenset(
    {"title", "description", "examples", "pattern", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "format", "discriminator"}
)

#: Keywords no output schema keeps besides `_DROPPED`: they bound what the server sends, which
#: an agent reading an answer does not need. `required` goes too: every answer carries every
#: field its output schema lists (null when it has no value), said once in `INSTRUCTIONS`.
_OUTPUT_DROPPED = frozenset(
    {"default", "required", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxProperties"}
)

#: The keywords that apply to values of one JSON type only (`items` to arrays, ...): `anyOf`
#: options of different types carrying only these merge into one schema with a list of types,
#: which admits exactly the same values.
_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "array": frozenset({"items", "prefixItems", "contains", "uniqueItems"}),
    "object": frozenset({"properties", "required", "additionalProperties", "propertyNames", "minProperties", "maxProperties"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "string": frozenset(),
    "boolean": frozenset(),
    "null": frozenset(),
}

_NULL = {"type": "null"}


def _merged_options(options: list[Any]) -> dict[str, Any] | None:
    """One schema admitting what `anyOf: options` admits, or None when the options do not merge:
    each must be a `{"type": T, ...}` of its own type (at most one numeric) with only keywords of
    that type, or an `enum`/`const` (merged with `null` only)."""
    if len(options) == 2 and _NULL in options:
        other = options[1 - options.index(_NULL)]
        if set(other) == {"enum"}:
            return {"enum": [*other["enum"], None]}
    types: list[str] = []
    merged: dict[str, Any] = {}
    for option in options:
        kind = option.get("type")
        if not isinstance(kind, str) or kind not in _TYPE_KEYWORDS or kind in types:
            return None
        rest = {key: value for key, value in option.items() if key != "type"}
        if not set(rest) <= _TYPE_KEYWORDS[kind] or set(rest) & set(merged):
            return None
        types.append(kind)
        merged.update(rest)
    if {"integer", "number"} <= set(types):
        return None
    return {"type": types, **merged}


def _compact(schema: Any, output: bool) -> Any:
    """`schema` compacted bottom up, as `compact_schema` (input) or `compact_output_schema`
    (`output`) describe."""
    if isinstance(schema, list):
        return [_compact(item, output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED or (key == "default" and value is None) or (output and key in _OUTPUT_DROPPED):
            continue
        if key == "additionalProperties" and isinstance(value, bool):
            continue  # unknown fields are refused by every request model (`INSTRUCTIONS` says so)
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _compact(item, output) for name, item in value.items()}
        else:
            out[key] = _compact(value, output)
    if not output and isinstance(out.get("properties"), dict):
        # "Not null" constraints go with the null options: an input field is left out, never null.
        out["properties"] = {name: value for name, value in out["properties"].items() if value != {"not": _NULL}}
        if not out["properties"]:
            del out["properties"]
    if not output and "if" in out and "then" in out:
        # "This field only with that one" (`text_match` with `text`): the request model says it
        # in its error, as for the rules below.
        del out["if"], out["then"]
    enum = out.get("enum", [out["const"]] if "const" in out else None)
    if enum is not None and out.get("type") in ("string", ["string", "null"]) and all(isinstance(v, str) or v is None for v in enum):
        del out["type"]  # the values say it
    options = out.get("anyOf")
    if isinstance(options, list):
        if not output:
            options = [option for option in options if option != _NULL]
        if not output and all(set(option) <= {"required"} for option in options):
            # "One of these fields is given" (after the null options went): the tool's description
            # says it and the request model checks it.
            del out["anyOf"]
            return out
        merged = _merged_options(options) if len(options) > 1 else options[0]
        if merged is not None and not set(merged) & (set(out) - {"anyOf"}):
            del out["anyOf"]
            out.update(merged)
        else:
            out["anyOf"] = options
    return out


def _refs(node: Any) -> list[str]:
    """The `$defs` names `node` refers to (`#/$defs/Name`), once per reference."""
    if isinstance(node, dict):
        found = [node["$ref"].rsplit("/", 1)[1]] if isinstance(node.get("$ref"), str) else []
        return found + [name for value in node.values() for name in _refs(value)]
    if isinstance(node, list):
        return [name for value in node for name in _refs(value)]
    return []


def _inline_single_uses(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each `$defs` entry referred to exactly once (and not from within itself,
    directly or through others) written in place of its reference; shared and recursive
    definitions stay under `$defs`, written once."""
    definitions = dict(schema.get("$defs", {}))
    body = {key: value for key, value in schema.items() if key != "$defs"}

    def reaches(name: str, target: str, seen: set[str]) -> bool:
        for ref in _refs(definitions.get(name)):
            if ref == target or (ref not in seen and reaches(ref, target, seen | {ref})):
                return True
        return False

    def replace(node: Any, name: str, definition: dict[str, Any]) -> Any:
        if isinstance(node, dict):
            if node.get("$ref") == f"#/$defs/{name}":
                return {**definition, **{key: value for key, value in node.items() if key != "$ref"}}
            return {key: replace(value, name, definition) for key, value in node.items()}
        if isinstance(node, list):
            return [replace(value, name, definition) for value in node]
        return node

    while True:
        counts = Counter(_refs([body, definitions]))
        single = next((name for name in definitions if counts[name] == 1 and not reaches(name, name, set())), None)
        if single is None:
            break
        definition = definitions.pop(single)
        body = replace(body, single, definition)
        definitions = {name: replace(value, single, definition) for name, value in definitions.items()}
    unused = set(definitions) - set(_refs([body, definitions]))
    definitions = {name: value for name, value in definitions.items() if name not in unused}
    return {**({"$defs": definitions} if definitions else {}), **body}


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A request model's JSON Schema as agents are shown it (a tool's `inputSchema`).

    Left out (the request model still checks all of it on every call): titles, descriptions and
    examples (the tool's description says what an agent needs), null defaults, string patterns
    and lengths, list lengths and non-empty objects, `additionalProperties: false` (every model
    refuses unknown fields, `INSTRUCTIONS` says it once), `null` among a field's options and "not
    null" constraints (leaving a field out means the same), "one of these fields is given"
    rules (the description says them) and "this field only with that one" rules (`if`/`then`:
    the request model's error says them). Definitions used once are written in place, shared ones
    stay under `$defs`; `anyOf` options of different JSON types merge into one schema with a list
    of types; an enum of strings needs no `type`.
    """
    return _compact(_inline_single_uses(schema), output=False)


def _is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def _shallow(node: Any, definitions: dict[str, Any], levels: int) -> Any:
    """`node` with every `$ref` written out and objects nested deeper than `levels` object levels
    below it typed `{"type": "object"}` (their fields unlisted; recursive models end there)."""
    if isinstance(node, list):
        return [_shallow(item, definitions, levels) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        node = {**definitions[node["$ref"].rsplit("/", 1)[1]], **{key: value for key, value in node.items() if key != "$ref"}}
    if _is_object(node):
        if levels < 0:
            return {"type": "object"}
        inner = {"properties", "additionalProperties"}
        return {
            key: {name: _shallow(item, definitions, levels - 1) for name, item in value.items()} if key == "properties"
            else _shallow(value, definitions, levels - 1 if key in inner else levels)
            for key, value in node.items() if key != "$defs"
        }
    return {key: _shallow(value, definitions, levels) for key, value in node.items() if key != "$defs"}


#: What a reference to a definition may add to it where it is used (`older: Side` and `newer: Side`
#: describe the same `Side` in their own words): not part of the definition.
_SITE_KEYWORDS = frozenset({"description", "default", "examples"})


def _definition_key(node: dict[str, Any]) -> str:
    """What makes two occurrences of a definition the same: everything but `_SITE_KEYWORDS`."""
    return json.dumps({key: value for key, value in node.items() if key not in _SITE_KEYWORDS}, sort_keys=True)


def _hoist_repeats(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each titled definition (a model or an enum) that occurs more than once, the
    same each time, written once under `$defs` (by its title) and referred to by `$ref`."""
    seen: Counter[str] = Counter()
    by_key: dict[str, tuple[str, dict[str, Any]]] = {}

    def count(node: Any, top: bool) -> None:
        if isinstance(node, dict):
            if not top and isinstance(node.get("title"), str) and ("enum" in node or _is_object(node)):
                key = _definition_key(node)
                seen[key] += 1
                by_key[key] = (node["title"], {k: v for k, v in node.items() if k not in _SITE_KEYWORDS})
            for value in node.values():
                count(value, False)
        elif isinstance(node, list):
            for value in node:
                count(value, False)

    count(schema, True)
    names: dict[str, str] = {}
    for key, times in seen.items():
        title = by_key[key][0]
        if times > 1 and title not in names.values():
            names[key] = title

    def replace(node: Any, top: bool) -> Any:
        if isinstance(node, dict):
            key = _definition_key(node) if not top and isinstance(node.get("title"), str) else None
            if key in names:
                return {"$ref": f"#/$defs/{names[key]}"}
            return {k: replace(v, False) for k, v in node.items()}
        if isinstance(node, list):
            return [replace(v, False) for v in node]
        return node

    hoisted = replace(schema, True)
    # A definition's own body is written out; the definitions inside it are referred to.
    definitions = {title: {k: replace(v, False) for k, v in by_key[key][1].items()} for key, title in names.items()}
    return {"$defs": definitions, **hoisted} if definitions else hoisted


def compact_output_schema(schema: dict[str, Any], levels: int) -> dict[str, Any]:
    """A response model's JSON Schema (serialization mode) as agents are shown it (a tool's
    `outputSchema`, `levels` = `ToolSpec.output_levels`).

    Objects nested more than `levels` object levels below the answer are typed `object` (their
    fields unlisted); definitions that occur twice or more are written once under `$defs`. As
    `compact_schema` does, titles, descriptions and the models' string and list bounds go; so do
    defaults, numeric bounds, `additionalProperties: false` and `required` (every answer carries
    every field listed). `null` stays among a field's types (a field without a value is null).
    What stays (types, enums, nullability) validates every answer; the SDK's client validates
    `structuredContent` against it. The full, described schemas are in `api/models.schema.json`.
    """
    return _compact(_hoist_repeats(_shallow(schema, schema.get("$defs", {}), levels)), output=True)


def tool_definitions(tools: Sequence[ToolSpec], naming: ToolNaming = DEFAULT_TOOL_NAMING) -> list[types.Tool]:
    """The `tools/list` entries: each tool under the names `naming` gives (`ToolSpec.names`),
    with its compact input and output schemas and its annotations (the hints that
    mean something only for a tool that changes state are given for those tools alone)."""
    listed = []
    for spec in tools:
        changes_state = not spec.read_only
        for name in spec.names(naming):
            listed.append(
                types.Tool(
                    name=name,
                    title=spec.title,
                    description=spec.description,
                    input_schema=compact_schema(spec.request_model.model_json_schema(mode="validation")),
                    output_schema=compact_output_schema(spec.response_model.model_json_schema(mode="serialization"), spec.output_levels),
                    annotations=types.ToolAnnotations(
                        read_only_hint=spec.read_only,
                        destructive_hint=False if changes_state else None,
                        idempotent_hint=spec.idempotent if changes_state else None,
                        open_world_hint=False,
                    ),
                )
            )
    return listed


#: Most characters (`listing_size`) the whole tool list may take, every tool a server can offer
#: included (`api/mcp-tools.json`), and single tools' entries: what an agent's context pays for
#: the tools before its first call. `tests/test_mcp_schemas.py` holds the listing to them.
LISTING_BUDGET = 40_000
ENTRY_BUDGETS: dict[str, int] = {SEARCH: 2_500}


def _wire(entry: types.Tool) -> dict[str, Any]:
    """`entry` as `tools/list` sends it: camelCase wire names, unset fields left out."""
    return entry.model_dump(mode="json", by_alias=True, exclude_none=True)


def listing_size(entries: Sequence[types.Tool]) -> int:
    """Characters of `entries` as `tools/list` sends them: the JSON text of the `tools` array,
    camelCase wire names, unset fields left out, no whitespace between tokens and non-ASCII
    characters as themselves (as the SDK writes it, `model_dump_json(by_alias=True,
    exclude_none=True)`; what an agent's context holds). One entry's size is `listing_size([entry])
    - 2` (without the brackets)."""
    return len(json.dumps([_wire(entry) for entry in entries], ensure_ascii=False, separators=(",", ":")))


def listing_report(entries: Sequence[types.Tool]) -> list[tuple[str, int, int | None]]:
    """`(name, characters, budget)` for each entry (`listing_size`; budget from `ENTRY_BUDGETS`,
    else None), then `("all tools", whole list, LISTING_BUDGET)`: the sizes `leanindex api
    export` prints and `api/tools.md` records."""
    rows: list[tuple[str, int, int | None]] = [(entry.name, listing_size([entry]) - 2, ENTRY_BUDGETS.get(entry.name)) for entry in entries]
    return [*rows, ("all tools", listing_size(entries), LISTING_BUDGET)]


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


def build_mcp_server(tools: Sequence[ServedTool], naming: ToolNaming = DEFAULT_TOOL_NAMING) -> Server[Any]:
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
