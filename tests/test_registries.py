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
    """Every tool of the one tool list, built without a catalog or checker."""
    import tempfile

    from leanindex.engine import Engine
    from leanindex.service.gate import CallGate
    from leanindex.service.tools import server_tools

    return server_tools(Engine(tempfile.mkdtemp(prefix="leanindex-tools-")), CallGate(1, 1.0), None)


@pytest.mark.parametrize("spec", _tools(), ids=lambda spec: spec.name)
def test_every_tool_has_its_route_client_method_renderer_and_doc_entry(spec) -> None:
    """A tool of `service.tools.server_tools` has: an HTTP route in the app (checked route by
    route in `test_service_http`), a `leanindex.Client` method, a text renderer, a description,
    and an entry in the docs' tables (docs/surfaces.md, docs/checker.md or
    docs/agent-workflow.md)."""
    from pathlib import Path

    from leanindex.client import Client

    assert spec.http_route.split(" ", 1)[0] in {"GET", "POST"}
    assert callable(getattr(Client, spec.client_method, None)), f"Client has no {spec.client_method}"
    assert callable(spec.render) and spec.description.strip() and spec.title.strip()
    docs = Path(__file__).resolve().parents[1] / "docs"
    tables = "".join((docs / page).read_text(encoding="utf-8") for page in ("surfaces.md", "checker.md", "agent-workflow.md", "cluster.md", "diff.md"))
    assert f"`{spec.name}`" in tables, f"no docs entry names `{spec.name}`"


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


def test_a_post_tool_gets_its_route_from_its_spec_and_a_get_tool_needs_one_written(tmp_path, monkeypatch) -> None:
    """A tool added to `server_tools` with a POST route is served with no change to
    `service/http.py`; one with a GET route that nobody wrote stops the app at start."""
    import dataclasses

    import httpx

    from leanindex.engine import Engine
    from leanindex.service import http

    real = http.server_tools

    def with_extra(route: str):
        def tools(engine, gate, checker):
            specs = real(engine, gate, checker)
            return [*specs, dataclasses.replace(specs[2], name="lean.test.environments", http_route=route)]
        return tools

    monkeypatch.setattr(http, "server_tools", with_extra("POST /v1/test/environments"))
    app = http.create_app(Engine(tmp_path))
    transport = httpx.ASGITransport(app=app)

    async def ask() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/v1/test/environments", json={})

    import asyncio

    answer = asyncio.run(ask())
    assert answer.status_code == 200 and answer.json() == {"environments": []}
    monkeypatch.setattr(http, "server_tools", with_extra("GET /v1/test/environments"))
    with pytest.raises(RuntimeError, match="lean.test.environments"):
        http.create_app(Engine(tmp_path))
