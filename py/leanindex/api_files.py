"""The service contracts as committed files under `api/`, generated from the code.

Each entry of `API_FILES` maps a file name under `api/` to the function producing its document:

- `openapi.json`: the HTTP API's OpenAPI 3.1 document, from the FastAPI app itself;
- `mcp-tools.json`: the MCP server's name and every tool it lists (name, title, description,
  input and output JSON Schemas, annotations), exactly as `tools/list` returns them.

`leanindex api export` writes them; `leanindex api export --check` (and a test) fails when the
committed files differ from what the code produces. Other contract files are further entries.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .engine import Engine
from .service.config import ServiceConfig
from .service.gate import CallGate
from .service.mcp import SERVER_NAME, tool_definitions
from .service.tools import query_tools


def _unused_engine() -> Engine:
    # The documents depend on the routes and models only; the engine is never called.
    return Engine(".")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of `leanindex serve` (default settings; limits do not change it)."""
    from .service.http import create_app

    return create_app(_unused_engine(), ServiceConfig()).openapi()


def mcp_tools_document() -> dict[str, Any]:
    """`{"server": "leanindex", "tools": [...]}` with each tool as `tools/list` gives it
    (camelCase wire names: `inputSchema`, `outputSchema`, `annotations.readOnlyHint`, ...)."""
    tools = tool_definitions(query_tools(_unused_engine(), CallGate(1, 1.0)))
    return {
        "server": SERVER_NAME,
        "tools": [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools],
    }


API_FILES: dict[str, Callable[[], dict[str, Any]]] = {
    "openapi.json": openapi_document,
    "mcp-tools.json": mcp_tools_document,
}


def render(document: dict[str, Any]) -> str:
    """The canonical text of a document: sorted keys, 2-space indent, UTF-8 kept, final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_api_files(directory: str | Path, check: bool = False) -> list[str]:
    """Write every file of `API_FILES` under `directory` (created if needed), or with `check`
    write nothing; either way return the names whose committed text differed (or was missing)."""
    directory = Path(directory)
    differing = []
    for name, produce in API_FILES.items():
        text = render(produce())
        path = directory / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        differing.append(name)
        if not check:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return differing
