"""Every list of the project has one home, and each entry has all of its parts: a list entry
that lacks one fails here, naming the entry (not silently somewhere else)."""

from __future__ import annotations

import pytest

from leanindex.engine.filters import FILTERS
from leanindex.errors import EXIT_STATUS, HTTP_STATUS, OUTCOME_EXIT, ErrorCode
from leanindex.models import NOT_FILTERS, SearchRequest


def test_every_search_request_filter_field_has_its_filter_class() -> None:
    """A field added to `SearchRequest` is a filter unless listed in `NOT_FILTERS`; one without
    its `SearchFilter` class in `engine.filters.FILTERS` would be accepted and ignored."""
    filter_fields = set(SearchRequest.model_fields) - set(NOT_FILTERS)
    classes = {f.field: f.__name__ for f in FILTERS}
    assert filter_fields - set(classes) == set(), "request fields without a filter class"
    assert set(classes) - filter_fields == set(), "filter classes reading no request field"
    assert set(NOT_FILTERS) <= set(SearchRequest.model_fields)
    assert len(classes) == len(FILTERS), "two filter classes read one field"


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_has_an_http_and_an_exit_status(code: ErrorCode) -> None:
    assert code in HTTP_STATUS and 400 <= HTTP_STATUS[code] <= 599
    assert code in EXIT_STATUS and EXIT_STATUS[code] not in OUTCOME_EXIT.values()


def _tools() -> list:
    """Every tool of the one tool list, bound without a catalog or checker."""
    import tempfile

    from leanindex.engine import Engine
    from leanindex.service.gate import CallGate
    from leanindex.service.tools import server_tools

    return server_tools(Engine(tempfile.mkdtemp(prefix="leanindex-tools-")), CallGate(1, 1.0), None)


@pytest.mark.parametrize("spec", _tools(), ids=lambda spec: spec.name)
def test_every_tool_has_its_call_route_client_method_renderer_and_doc_entry(spec) -> None:
    """A tool of `leanindex.tools.TOOLS` has: a `ToolCalls` method answering it, a POST route
    (made by the app, checked route by route in `test_service_http`), a `leanindex.Client`
    method, a text renderer, a description, and its row in the generated `api/tools.md`."""
    from leanindex.api_files import tools_table
    from leanindex.client import Client
    from leanindex.service.tools import ToolCalls

    assert callable(getattr(ToolCalls, spec.answered_by, None)) and not spec.answered_by.startswith("_")
    assert spec.http_route.startswith("POST /v1/")
    assert getattr(getattr(Client, spec.client_method, None), "__tool__", None) == spec.name, f"Client.{spec.client_method} does not answer it"
    assert callable(spec.render) and spec.description.strip() and spec.title.strip()
    assert f"| `{spec.name}` | `{spec.alias}` | `{spec.http_route}` | `{spec.client_method}` |" in tools_table()


def test_tool_names_routes_and_client_methods_are_unique() -> None:
    from leanindex.tools import TOOLS

    for key in ("name", "http_route", "client_method"):
        values = [getattr(spec, key) for spec in TOOLS]
        assert len(values) == len(set(values)), key


def test_every_reason_code_has_its_failure_class_and_hint() -> None:
    """A verdict reason's code has a failure class of the same name with a one-line hint (the
    answer's `failure_class` and `hint` come from them)."""
    from leanindex.checker.failures import HINTS, FailureClass
    from leanindex.checker.verdict import ReasonCode

    for code in ReasonCode:
        if code is ReasonCode.ERROR:
            continue  # a Lean error is classed by its message (`failures._ERROR_CLASSES`)
        failure = FailureClass[code.name]
        assert HINTS.get(failure, "").strip(), code
    assert all(hint.strip() and "\n" not in hint for hint in HINTS.values())


def test_every_reason_code_is_given_by_a_rule() -> None:
    """A `ReasonCode` that no verdict rule (nor the audit's own rule) gives would be documented
    and hinted but never answered: every code is named outside `checker/failures.py`."""
    import re
    from pathlib import Path

    from leanindex.checker.failures import ReasonCode

    checker = Path(__file__).resolve().parents[1] / "py" / "leanindex" / "checker"
    used = {
        name
        for path in checker.glob("*.py")
        if path.name != "failures.py"
        for name in re.findall(r"ReasonCode\.([A-Z_]+)", path.read_text(encoding="utf-8"))
    }
    assert {code.name for code in ReasonCode} - used == set()


#: The layers of the contracts, bottom first: what a module of one layer may not import.
_FORBIDDEN_BELOW = {
    "catalog": ("leanindex.models", "leanindex.checker", "leanindex.engine", "leanindex.service", "leanindex.client", "leanindex.cli"),
    "docgen": ("leanindex.models", "leanindex.checker", "leanindex.engine", "leanindex.service", "leanindex.client", "leanindex.cli"),
}


@pytest.mark.parametrize("layer", sorted(_FORBIDDEN_BELOW))
def test_the_catalog_layer_depends_on_no_request_or_response_model(layer: str) -> None:
    """`catalog/` and `docgen/` build on the bottom contracts (`identity`, `records`,
    `errors`), never on the public request/response models or the layers above them."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "py" / "leanindex"
    offending = []
    for path in sorted((package / layer).glob("*.py")):
        module = f"leanindex.{layer}.{path.stem}"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = module.rsplit(".", node.level)[0] if node.level else ""
                target = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module or "")
                names = [f"{target}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            offending += [f"{path.name}: {name}" for name in names if name.startswith(_FORBIDDEN_BELOW[layer])]
    assert offending == []


def test_a_tool_declared_once_reaches_every_surface(tmp_path, monkeypatch) -> None:
    """One more `ToolSpec` in `leanindex.tools.TOOLS` over an existing call is served with no
    other change: MCP lists it, the app has its POST route and OpenAPI entry, `Client.local()`
    answers it by name and by its generated method, and the docs table has its row. A tool whose
    route is not a POST, which nobody wrote, stops the app at start."""
    import asyncio
    import dataclasses

    import httpx

    from leanindex import client as client_module
    from leanindex import tools as tools_module
    from leanindex.api_files import tools_table
    from leanindex.engine import Engine
    from leanindex.service import http
    from leanindex.service import tools as served_module
    from leanindex.service.gate import CallGate
    from leanindex.service.mcp import tool_definitions

    extra = dataclasses.replace(
        tools_module.tool_named("lean.environments"), name="lean.test.environments", http_route="POST /v1/test/environments",
        client_method="test_environments",
    )
    listed = (*tools_module.TOOLS, extra)
    monkeypatch.setattr(tools_module, "TOOLS", listed)
    monkeypatch.setattr(served_module, "TOOLS", listed)
    monkeypatch.setattr(client_module, "TOOLS", listed)
    monkeypatch.delattr(client_module.Client, "test_environments", raising=False)
    client_module.add_tool_methods()
    try:
        served = served_module.server_tools(Engine(tmp_path), CallGate(1, 1.0), None)
        assert "lean.test.environments" in {t.name for t in tool_definitions([s for s in served if s.enabled])}
        app = http.create_app(Engine(tmp_path))
        assert "/v1/test/environments" in app.openapi()["paths"]

        async def ask() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as web:
                return await web.post("/v1/test/environments", json={})

        answer = asyncio.run(ask())
        assert answer.status_code == 200 and answer.json() == {"environments": []}
        with client_module.Client.local(tmp_path) as local:
            assert local.call("lean.test.environments").environments == []
            assert local.call("lean_test_environments").environments == []
            assert local.test_environments().environments == []  # type: ignore[attr-defined]
        assert "| `lean.test.environments` |" in tools_table()
    finally:
        delattr(client_module.Client, "test_environments")
    monkeypatch.setattr(tools_module, "TOOLS", (*tools_module.TOOLS[:-1], dataclasses.replace(extra, http_route="GET /v1/test/environments")))
    monkeypatch.setattr(served_module, "TOOLS", tools_module.TOOLS)
    with pytest.raises(RuntimeError, match="lean.test.environments"):
        http.create_app(Engine(tmp_path))


def test_an_unknown_tool_name_gets_the_close_names() -> None:
    from leanindex.errors import ErrorCode, LeanIndexError
    from leanindex.tools import tool_named

    with pytest.raises(LeanIndexError) as raised:
        tool_named("lean.declaration.serch")
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.details["suggestions"][0] == "lean.declaration.search"


def test_a_client_method_naming_another_method_is_refused(monkeypatch) -> None:
    """A spec whose `client_method` is an existing method answering something else (`close`,
    another tool's) would leave the tool without a method: making the methods refuses it."""
    import dataclasses

    from leanindex import client as client_module
    from leanindex.tools import tool_named

    for taken in ("close", "check_many", "search"):
        extra = dataclasses.replace(tool_named("lean.environments"), name="lean.test.environments", client_method=taken)
        monkeypatch.setattr(client_module, "TOOLS", (*client_module.TOOLS, extra))
        with pytest.raises(RuntimeError, match="lean.test.environments"):
            client_module.add_tool_methods()
