"""The committed `api/` files agree with the code, and say what the code does.

Drift: each file under `api/` must equal what `leanindex.api_files` produces now (regenerate
with `leanindex api export`). Meaning: the embedded sample stream validates line by line
against `declarations.schema.json` (with `jsonschema`, an independent validator), lines the
builder refuses for their shape are refused by the schema too, and real responses, errors and
manifests validate against `models.schema.json` and `manifest.schema.json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from leanindex.api_files import API_FILES, check_all, write_all
from leanindex.catalog.layout import CatalogPaths
from leanindex.checker.models import (
    AuditRequest,
    AuditResponse,
    BatchCheckRequest,
    BatchCheckResponse,
    CheckRequest,
    CheckResponse,
    TargetCheckRequest,
    TargetCheckResponse,
)
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.engine.diff import DiffRequest
from leanindex.errors import OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from leanindex.models import EnvironmentsRequest, InspectRequest, InspectResponse, SearchRequest, SearchResponse
from leanindex.sample import sample_stream_path
from leanindex.service.mcp import compact_schema
from leanindex.tools import TOOLS
from streamkit import build, declaration

REPO = Path(__file__).resolve().parents[1]
API = REPO / "api"


def schema(name: str) -> dict[str, Any]:
    return json.loads((API / name).read_text(encoding="utf-8"))


def validator_for(name: str, definition: str | None = None) -> Draft202012Validator:
    """A validator for the whole file, or for one of its `$defs`."""
    document = schema(name)
    Draft202012Validator.check_schema(document)
    if definition is not None:
        document = {"$defs": document["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(document)


@pytest.mark.parametrize("name", sorted(API_FILES))
def test_committed_file_matches_the_code(name: str) -> None:
    path = API / name
    assert path.exists(), f"api/{name} is missing; run `leanindex api export`"
    assert path.read_text(encoding="utf-8") == API_FILES[name](), f"api/{name} drifted; run `leanindex api export`"


def test_check_all_on_the_repository() -> None:
    assert check_all(REPO) == []


@pytest.mark.parametrize("name", sorted(name for name in API_FILES if name.endswith(".json")))
def test_files_are_canonical_json(name: str) -> None:
    text = API_FILES[name]()
    assert text == API_FILES[name]()
    assert text.endswith("}\n")
    assert json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n" == text
    document = json.loads(text)
    if name.endswith(".schema.json"):
        Draft202012Validator.check_schema(document)
        assert {"$schema", "$id", "title", "version", "$defs"} <= set(document)


def test_export_and_check_through_the_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["api", "export", "--check", "--root", str(tmp_path)])
    assert missing.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    assert not (tmp_path / "api").exists(), "--check writes nothing"
    written = runner.invoke(main, ["api", "export", "--root", str(tmp_path)])
    assert written.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "api").iterdir()) == sorted(API_FILES)
    assert runner.invoke(main, ["api", "export", "--check", "--root", str(tmp_path)]).exit_code == 0
    edited = tmp_path / "api" / "models.schema.json"
    edited.write_text(edited.read_text().replace('"SearchRequest"', '"SearchRequestX"', 1))
    assert check_all(tmp_path) == ["models.schema.json"]
    drifted = runner.invoke(main, ["api", "export", "--check", "--root", str(tmp_path)])
    assert drifted.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    assert "api/models.schema.json" in drifted.stderr
    write_all(tmp_path)
    assert check_all(tmp_path) == []


# --- declarations.schema.json ------------------------------------------------------------------------


def test_every_sample_line_validates() -> None:
    validator = validator_for("declarations.schema.json")
    lines = sample_stream_path().read_bytes().splitlines()
    kinds = []
    for number, line in enumerate(lines, start=1):
        record = json.loads(line)
        errors = list(validator.iter_errors(record))
        assert not errors, f"line {number}: {errors[0].message}"
        kinds.append(record["record"])
    assert kinds[0] == "header" and kinds[-1] == "footer" and set(kinds[1:-1]) == {"declaration"}


GOOD = declaration(["Nat", "add_comm"], type_constants=["Eq", "HAdd.hAdd", "Nat"])


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != key}


SHAPE_ERRORS = [
    ("missing field", _without("type")),
    ("mistyped field", {**GOOD, "type": 5}),
    ("int where bool", {**GOOD, "is_private": 0}),
    ("bool where int", {**GOOD, "range": {"start": {"line": True, "column": 0}, "end": {"line": 2, "column": 0}}}),
    ("line 0", {**GOOD, "range": {"start": {"line": 0, "column": 0}, "end": {"line": 2, "column": 0}}}),
    ("bool component", {**GOOD, "components": ["Nat", False]}),
    ("negative component", {**GOOD, "components": ["Nat", -1]}),
    ("empty components", {**GOOD, "components": []}),
    ("unknown kind", {**GOOD, "kind": "lemma"}),
    ("extra field", {**GOOD, "proof": "rfl"}),
    ("unknown record", {**GOOD, "record": "comment"}),
    ("footer count as bool", {"record": "footer", "count": True}),
    ("footer count negative", {"record": "footer", "count": -1}),
    ("header of another format", {"record": "header", "format": "leanindex.declarations/v3", "extractor": {"name": "x", "version": "1"}, "lean": {"version": "4", "githash": None}, "imports": [], "modules": []}),
]


@pytest.mark.parametrize("record", [r for _, r in SHAPE_ERRORS], ids=[n for n, _ in SHAPE_ERRORS])
def test_schema_refuses_what_the_builder_refuses(record: dict[str, Any], tmp_path: Path) -> None:
    assert not validator_for("declarations.schema.json").is_valid(record)
    header = json.loads(sample_stream_path().read_bytes().splitlines()[0])
    header["modules"] = ["Init.Core"]
    lines = [json.dumps(header).encode(), json.dumps(record).encode(), b'{"record": "footer", "count": 1}']
    if record.get("record") == "header":
        lines = [json.dumps(record).encode(), b'{"record": "footer", "count": 0}']
    with pytest.raises(LeanIndexError) as caught:
        build(tmp_path, "core", lines)
    assert caught.value.code is ErrorCode.INVALID_STREAM


def test_schema_accepts_optional_fields() -> None:
    validator = validator_for("declarations.schema.json")
    assert validator.is_valid({**GOOD, "value_constants": ["Nat.add"], "type_fallback": True, "range": None, "doc": "d"})
    assert validator.is_valid({**GOOD, "range": {"start": {"line": 3, "column": None}, "end": {"line": 4, "column": None}}})


# --- models.schema.json and manifest.schema.json ---------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Engine]:
    root = tmp_path_factory.mktemp("api")
    build(root, "sample", sample_stream_path().read_bytes().splitlines())
    engine = Engine(root)
    yield root, engine
    engine.close()


def test_responses_validate(served: tuple[Path, Engine]) -> None:
    _, engine = served
    page = engine.search(SearchRequest(environment="SAMPLE", name_contains="add", result_limit=2))
    assert page.next_cursor
    unknown = engine.search(SearchRequest(environment="SAMPLE", type_pattern={"constants": ["List.lenght"]}))
    assert validator_for("models.schema.json", "SearchResponse").is_valid(page.model_dump(mode="json"))
    assert validator_for("models.schema.json", "SearchResponse").is_valid(unknown.model_dump(mode="json"))
    found = engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_comm"))
    assert validator_for("models.schema.json", "InspectResponse").is_valid(found.model_dump(mode="json"))
    assert validator_for("models.schema.json", "EnvironmentsResponse").is_valid(engine.environments().model_dump(mode="json"))
    assert not validator_for("models.schema.json", "SearchResponse").is_valid(found.model_dump(mode="json"))


def test_errors_validate(served: tuple[Path, Engine]) -> None:
    _, engine = served
    with pytest.raises(LeanIndexError) as caught:
        engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_com"))
    assert validator_for("models.schema.json", "ErrorResponse").is_valid(caught.value.to_dict())


def test_requests_validate() -> None:
    search = validator_for("models.schema.json", "SearchRequest")
    request = SearchRequest(environment="CORE", name_contains="add", type_pattern={"constants": ["Nat"]}, kinds=["theorem"])
    assert search.is_valid(request.model_dump(mode="json", exclude_none=True))
    assert not search.is_valid({"environment": "CORE", "name_contains": "a", "result_limit": 51})
    assert not search.is_valid({"environment": "CORE", "type_pattern": {"constants": [f"C{i}" for i in range(9)]}})
    assert not search.is_valid({"environment": "../x", "name_contains": "a"})
    assert not search.is_valid({"environment": "CORE", "name_contains": "a", "limit": 3})
    inspect = validator_for("models.schema.json", "InspectRequest")
    assert inspect.is_valid({"environment": "CORE", "declaration_name": "Nat.add_comm"})
    assert not inspect.is_valid({"environment": "CORE", "declaration_name": ""})


def test_manifest_validates(served: tuple[Path, Engine]) -> None:
    root, _ = served
    manifest = json.loads(CatalogPaths.of(root, "sample").manifest.read_text())
    validator = validator_for("manifest.schema.json")
    assert validator.is_valid(manifest)
    assert not validator.is_valid({**manifest, "schema": "leanindex.environment-manifest/v2"})
    assert not validator.is_valid({k: v for k, v in manifest.items() if k != "environment_digest"})


def test_mcp_tools_file_carries_the_shared_model_schemas() -> None:
    from leanindex.service.mcp import compact_output_schema
    from leanindex.tools import tool_named

    document = json.loads((API / "mcp-tools.json").read_text(encoding="utf-8"))
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert document["server"] == "leanindex"
    # Each tool once, under its dotted name (`--tool-names` changes that on request only).
    assert {"lean.declaration.search", "lean.declaration.inspect", "lean.environments", "lean.catalog.diff", "lean.check",
            "lean.check.batch", "lean.check.target", "lean.audit", "lean.proof.state", "lean.proof.step", "lean.proof.close",
            "lean.proof.steps", "lean.proof.tree"} <= set(tools)
    names = [tool["name"] for tool in document["tools"]]
    assert [tool_named(name).name for name in names] == names and len(set(names)) == len(names)
    for name, request, _response in [
        ("lean.declaration.search", SearchRequest, SearchResponse),
        ("lean.declaration.inspect", InspectRequest, InspectResponse),
        ("lean.environments", EnvironmentsRequest, None),
        ("lean.catalog.diff", DiffRequest, None),
        ("lean.check", CheckRequest, CheckResponse),
        ("lean.check.batch", BatchCheckRequest, BatchCheckResponse),
        ("lean.check.target", TargetCheckRequest, TargetCheckResponse),
        ("lean.audit", AuditRequest, AuditResponse),
    ]:
        spec = tool_named(name)
        assert tools[name]["inputSchema"] == compact_schema(request.model_json_schema())
        assert tools[name]["outputSchema"] == compact_output_schema(spec.response_model.model_json_schema(mode="serialization"), spec.output_levels)
        assert tools[name]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    # Opening, stepping and closing proof states change what the server holds.
    for name in ("lean.proof.state", "lean.proof.step", "lean.proof.close"):
        assert tools[name]["annotations"]["readOnlyHint"] is False
        assert tools[name]["annotations"]["destructiveHint"] is False and tools[name]["annotations"]["idempotentHint"] is False


@pytest.mark.parametrize("name", ["lean.declaration.search", "lean.declaration.inspect", "lean.environments", "lean.catalog.diff"])
def test_each_query_tool_costs_at_most_its_budget_of_an_agents_context(name: str) -> None:
    from leanindex.service.mcp import ENTRY_BUDGETS, LISTING_BUDGET

    tools = {tool["name"]: tool for tool in json.loads((API / "mcp-tools.json").read_text(encoding="utf-8"))["tools"]}
    size = len(json.dumps(tools[name], ensure_ascii=False, separators=(",", ":")))
    print(f"{name}: {size} characters")
    assert size <= ENTRY_BUDGETS.get(name, LISTING_BUDGET)


@pytest.mark.parametrize(
    "body",
    [
        {"environment": "CORE", "name_contains": "add"},
        {"environment": "CORE", "name_contains": ["add", "comm"], "case_sensitive": False, "flags": {"instance": True}},
        {"environment": "CORE", "type_pattern": {"constants": ["Nat"]}, "kinds": ["theorem"], "result_limit": 50},
    ],
)
def test_the_compact_search_schema_admits_what_the_model_admits(body: dict) -> None:
    import jsonschema

    SearchRequest.model_validate(body)
    jsonschema.validate(body, compact_schema(SearchRequest.model_json_schema()))


class _Checker:
    """Stands in for a configured checker: the app only starts, closes and calls it."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def check(self, request: CheckRequest) -> CheckResponse:
        raise AssertionError("not called")

    async def check_target(self, request: TargetCheckRequest) -> TargetCheckResponse:
        raise AssertionError("not called")

    proof_state = proof_step = proof_close = proof_steps = audit = check_batch = check_target


def test_mcp_tools_file_lists_every_tool_a_server_offers(tmp_path: Path) -> None:
    """The file lists exactly what the MCP endpoint of a server with every feature on (here a
    checker) lists: a tool missing from the file, or listed by a server but not documented, fails."""
    from leanindex.service.http import create_app
    from leanindex.service.mcp import tool_definitions

    document = json.loads((API / "mcp-tools.json").read_text(encoding="utf-8"))
    engine = Engine(tmp_path)
    served = create_app(engine, checker=_Checker()).state.tools  # type: ignore[arg-type]
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tool_definitions(list(served.values()))]
    assert document["tools"] == listed
    assert all(spec.enabled for spec in served.values())
    without = create_app(engine).state.tools
    assert [spec.name for spec in without.values()] == list(served)
    # Without a checker, exactly the tools the engine answers.
    assert [spec.name for spec in without.values() if spec.enabled] == [spec.name for spec in TOOLS if spec.tag != "check"]


def test_openapi_documents_the_error_object_and_no_422() -> None:
    document = json.loads((API / "openapi.json").read_text(encoding="utf-8"))
    search = document["paths"]["/v1/declarations/search"]["post"]
    assert "422" not in search["responses"]
    assert {"400", "401", "404", "413", "429", "503", "504"} <= set(search["responses"])
    assert search["responses"]["429"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorResponse"}
    assert "HTTPValidationError" not in document["components"]["schemas"]
