"""The public contracts as files under `api/`, generated from the models defined once in code.

Each file has one function returning its exact text (JSON, sorted keys, two-space indent,
trailing newline), so the output depends only on the code: the JSON Schemas of the stream
records, the request/response models and the manifest; the HTTP API's OpenAPI document (from
the FastAPI app itself); and the MCP server's tool list (name, title, description, input and
output schemas, annotations, exactly as `tools/list` returns them), and the table of tools
people read (`tools.md`, Markdown, from `leanindex.tools.TOOLS`). `API_FILES` maps a file name under
`api/` to its function; another surface adds its own file by adding an entry. `write_all`
regenerates the files; `check_all` lists those that drifted, which `tests/test_api_files.py`
and `leanindex api export --check` use to fail when the committed files and the code disagree.

JSON Schemas are draft 2020-12, produced by Pydantic (`pydantic.json_schema.models_json_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .catalog.manifest import MANIFEST_SCHEMA, Manifest
from .engine import Engine
from .errors import ErrorResponse
from .models import EnvironmentsResponse
from .records import STREAM_FORMAT, DeclarationRecord, FooterRecord, HeaderRecord

API_DIR = "api"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

Mode = Literal["validation", "serialization"]


def render(document: Any) -> str:
    """The canonical text of an `api/` file: sorted keys, two-space indent, trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _schema_of(models: list[tuple[type[BaseModel], Mode]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """`$ref`s to each model (in the given order) and the shared `$defs`."""
    refs, definitions = models_json_schema(models, ref_template="#/$defs/{model}")
    return [refs[key] for key in models], definitions["$defs"]


def _schema_document(name: str, title: str, version: str, description: str, **body: Any) -> str:
    """The text of the JSON Schema file `api/<name>`: dialect, id, title, version, description,
    then `body` (the schema proper and its `$defs`)."""
    return render(
        {
            "$schema": JSON_SCHEMA_DIALECT,
            "$id": f"urn:leanindex:api:{name}",
            "title": title,
            "version": version,
            "description": description,
            **body,
        }
    )


def declarations_schema() -> str:
    """`api/declarations.schema.json`: one line of a `leanindex.declarations/v1` stream is one
    of `records.HeaderRecord`, `records.DeclarationRecord`, `records.FooterRecord`.

    The schema states each line's shape only; what spans lines (header first, `Name.lt` order,
    no duplicates, the name reading back to its components, the footer count) is checked by
    the builder (`leanindex.catalog.stream.read_stream`).
    """
    refs, definitions = _schema_of([(HeaderRecord, "validation"), (DeclarationRecord, "validation"), (FooterRecord, "validation")])
    return _schema_document(
        "declarations.schema.json",
        STREAM_FORMAT,
        STREAM_FORMAT.rsplit("/", 1)[1],
        f"One line of a {STREAM_FORMAT} declaration stream (NDJSON): the first line is a header, "
        "then one declaration per constant in Lean's Name.lt order, then a footer with the count. "
        "Ordering, uniqueness, name/components agreement and the footer count are checked by the "
        "catalog builder, not by this schema.",
        oneOf=refs,
        **{"$defs": definitions},
    )


def _tools() -> list[Any]:
    """Every tool a server can offer (`service.tools.server_tools`), for the documents only."""
    from .service.gate import CallGate
    from .service.tools import server_tools

    return server_tools(_unused_engine(), CallGate(1, 1.0), checker=None)


def models_schema() -> str:
    """`api/models.schema.json`: each tool's request model (as accepted) and response model (as
    sent), each once, then the environment list and the error object, every one under `$defs`
    by its class name."""
    tools = _tools()
    # Tools may share a model (lean.proof.steps and lean.proof.tree): each is listed once.
    requests = list(dict.fromkeys(t.request_model for t in tools))
    responses = list(dict.fromkeys([*(t.response_model for t in tools), EnvironmentsResponse, ErrorResponse]))
    refs, definitions = _schema_of([(m, "validation") for m in requests] + [(m, "serialization") for m in responses])
    return _schema_document(
        "models.schema.json",
        "leanindex request, response and error models",
        "v1",
        f"Requests and responses of {', '.join(t.name for t in tools[:-1])} and {tools[-1].name}, the "
        "environment list, and the shared error object, as every surface (library, CLI, HTTP, MCP) "
        "sends and accepts them.",
        anyOf=refs,
        **{"$defs": definitions},
    )


def manifest_schema() -> str:
    """`api/manifest.schema.json`: an environment manifest (`catalog.manifest.Manifest`)."""
    refs, definitions = _schema_of([(Manifest, "validation")])
    return _schema_document(
        "manifest.schema.json",
        MANIFEST_SCHEMA,
        MANIFEST_SCHEMA.rsplit("/", 1)[1],
        "catalog/<profile>/manifest.json (served; pinned copy at manifests/<profile>.json): binds "
        "catalog/<profile>/ to the environment it was built from; "
        "environment_digest is the sha256 of the canonical JSON of every field but catalog, "
        "environment_digest and manifest_digest (the environment's identity); manifest_digest is "
        "the sha256 of the canonical JSON of every field but itself.",
        **{"$ref": refs[0]["$ref"], "$defs": definitions},
    )


def _unused_engine() -> Engine:
    # The service documents depend on the routes and models only; the engine is never called.
    return Engine(".")


def openapi_document() -> str:
    """`api/openapi.json`: the OpenAPI document of `leanindex serve` (default settings; the
    limits do not change it)."""
    from .service.config import ServiceConfig
    from .service.http import create_app

    return render(create_app(_unused_engine(), ServiceConfig()).openapi())


def _mcp_listing() -> list[Any]:
    """The `tools/list` entries of a server offering every tool, under the default names."""
    from .service.mcp import tool_definitions

    return tool_definitions(_tools())


def mcp_tools_document() -> str:
    """`api/mcp-tools.json`: `{"server": "leanindex", "tools": [...]}` with every tool a server
    can offer (`service.tools.server_tools`, `lean.check` included) as `tools/list` gives it
    under the default names (`tools.DEFAULT_TOOL_NAMING`: each tool once, dotted; camelCase wire
    names: `inputSchema`, `outputSchema`, ...)."""
    from .service.mcp import SERVER_NAME

    return render({"server": SERVER_NAME, "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in _mcp_listing()]})


def mcp_listing_sizes() -> list[tuple[str, int, int | None]]:
    """`(tool, characters, budget or None)` of each entry of `api/mcp-tools.json`'s tool list
    and then of the whole list (`service.mcp.listing_report`, measured as `tools/list` sends it)."""
    from .service.mcp import listing_report

    return listing_report(_mcp_listing())


def tools_table() -> str:
    """`api/tools.md`: every tool of `leanindex.tools.TOOLS` in listing order, as a table
    (dotted name, MCP alias, HTTP route, `Client` method, whether it needs a checker, whether
    it changes state, characters of its MCP listing) and then one section per tool with its
    description and models, so the docs never list a tool by hand."""
    from .tools import TOOLS

    *entries, whole = mcp_listing_sizes()
    sizes = {name: size for name, size, _budget in entries}
    lines = [
        "# Tools",
        "",
        "Every tool of leanindex, generated by `leanindex api export` from `leanindex.tools.TOOLS`",
        "(do not edit). Each is offered over MCP under its dotted name (its alias with `--tool-names",
        "underscore`, both with `--tool-names both`), at its HTTP route (body: the request model;",
        "answer: the response model, both in `models.schema.json`), as a `leanindex.Client` method",
        "and through `Client.call(name, **fields)`. Checker tools answer only on a server started",
        "with a checker (`check_disabled` otherwise).",
        "",
        "MCP listing: the characters of each tool's `tools/list` entry (compact JSON text, as sent);",
        f"all {len(TOOLS)} tools take {whole[1]:,} (budget {whole[2]:,}; `api/mcp-tools.json`).",
        "",
        "| tool | MCP alias | HTTP | `Client` | needs a checker | changes state | MCP listing |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for spec in TOOLS:
        lines.append(
            f"| `{spec.name}` | `{spec.alias}` | `{spec.http_route}` | `{spec.client_method}` | "
            f"{'yes' if spec.tag == 'check' else 'no'} | {'no' if spec.read_only else 'yes'} | {sizes[spec.name]:,} |"
        )
    for spec in TOOLS:
        lines += [
            "",
            f"## `{spec.name}`: {spec.title}",
            "",
            spec.description.replace("\n", " "),
            "",
            f"Request `{spec.request_model.__name__}`, response `{spec.response_model.__name__}`.",
        ]
    return "\n".join(lines) + "\n"


API_FILES: dict[str, Callable[[], str]] = {
    "declarations.schema.json": declarations_schema,
    "models.schema.json": models_schema,
    "manifest.schema.json": manifest_schema,
    "openapi.json": openapi_document,
    "mcp-tools.json": mcp_tools_document,
    "tools.md": tools_table,
}
"""File name under `api/` -> the function producing its text."""


def write_all(root: str | Path) -> list[Path]:
    """Write every `api/` file under `root/api/` (created if missing); return the paths written."""
    folder = Path(root) / API_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, produce in API_FILES.items():
        path = folder / name
        path.write_text(produce(), encoding="utf-8")
        written.append(path)
    return written


def check_all(root: str | Path) -> list[str]:
    """Names of the `api/` files under `root` that are missing or differ from the code (empty
    when everything agrees)."""
    folder = Path(root) / API_DIR
    drifted = []
    for name, produce in API_FILES.items():
        path = folder / name
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != produce():
            drifted.append(name)
    return drifted
