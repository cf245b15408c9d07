"""The committed contract files under api/ are exactly what the code generates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leanindex.api_files import API_FILES, export_api_files, render
from leanindex.models import InspectRequest, InspectResponse, SearchRequest, SearchResponse

API_DIR = Path(__file__).resolve().parents[1] / "api"


@pytest.mark.parametrize("name", sorted(API_FILES))
def test_committed_file_matches_the_code(name: str) -> None:
    committed = (API_DIR / name).read_text(encoding="utf-8")
    assert committed == render(API_FILES[name]()), f"api/{name} is stale: run `leanindex api export`"


def test_check_mode_reports_drift_and_writes_nothing(tmp_path: Path) -> None:
    assert export_api_files(tmp_path) == list(API_FILES)
    assert export_api_files(tmp_path, check=True) == []
    stale = tmp_path / "mcp-tools.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert export_api_files(tmp_path, check=True) == ["mcp-tools.json"]
    assert stale.read_text(encoding="utf-8") == "{}\n"


def test_mcp_tools_file_carries_the_shared_model_schemas() -> None:
    document = json.loads((API_DIR / "mcp-tools.json").read_text(encoding="utf-8"))
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert document["server"] == "leanindex"
    assert set(tools) == {"lean.declaration.search", "lean_declaration_search", "lean.declaration.inspect", "lean_declaration_inspect"}
    for name, request, response in [
        ("lean_declaration_search", SearchRequest, SearchResponse),
        ("lean.declaration.inspect", InspectRequest, InspectResponse),
    ]:
        assert tools[name]["inputSchema"] == request.model_json_schema()
        assert tools[name]["outputSchema"] == response.model_json_schema(mode="serialization")
        assert tools[name]["annotations"]["readOnlyHint"] is True
        assert tools[name]["annotations"]["idempotentHint"] is True


def test_openapi_documents_the_error_object_and_no_422() -> None:
    document = json.loads((API_DIR / "openapi.json").read_text(encoding="utf-8"))
    search = document["paths"]["/v1/declarations/search"]["post"]
    assert "422" not in search["responses"]
    assert {"400", "401", "404", "413", "429", "503", "504"} <= set(search["responses"])
    assert search["responses"]["429"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorResponse"}
    assert "HTTPValidationError" not in document["components"]["schemas"]
