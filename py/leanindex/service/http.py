"""The HTTP API (FastAPI) and the streamable HTTP MCP endpoint, in one ASGI app.

Routes (all JSON unless said otherwise; every error is the shared error object with the status
of `errors.HTTP_STATUS`):

- `GET /v1/environments`: `EnvironmentsResponse`, every profile under the root;
- `POST /v1/declarations/search`: body `SearchRequest`, answer `SearchResponse`;
- `GET /v1/declarations/search?environment=ID&name_contains=...`: the same search, its fields as
  query parameters (`models.search_request_from_query`), the same answer;
- `GET /v1/declarations/{name}?environment=ID`: `InspectResponse`; `name` is the percent-encoded
  full Lean name and may contain `/`, `.`, `«»`, newlines and any Unicode (`LeanNameConvertor`
  keeps it whole); any other query parameter is refused with its close names, or, for a name
  that is a batch tool's route (`GET /v1/declarations/exists?names=...`), with that tool's POST
  route (`_inspect_parameters`);
- `GET /v1/environments/{older}/diff/{newer}?categories=...&limit=...&after=...`: the
  `DeclarationDiff` (`category` is the same as `categories`; any other parameter is refused with
  its close names);
- `POST /v1/check`: body `CheckRequest`, answer `CheckResponse` (Lean's verdict on a complete
  file), when the app was given a checker; 404 `check_disabled` otherwise;
- the POST route of every other tool of `leanindex.tools.TOOLS` (`ToolSpec.http_route`), made
  from its spec (`_tool_routes`): body the tool's request model, answer its response model:
  `POST /v1/declarations/inspect`, `/v1/environments`, `/v1/catalog/diff` (the same calls as
  the GET routes above), `/v1/check/batch`, `/v1/check/target`, `/v1/audit`,
  `/v1/proof/state`, `/v1/proof/step`, `/v1/proof/close`, `/v1/proof/steps`,
  `/v1/proof/tree` (errors and `check_disabled` as `/v1/check`), `/v1/declarations/inspect_many`
  and `/v1/declarations/exists` (1-100 names, each answered or refused in its own entry);
- `GET /healthz`: the process is alive (never needs the token);
- `GET /readyz`: 200 when every profile's catalog verified against its manifest, else 503;
- `GET /metrics`: Prometheus text (see `leanindex.service.metrics`);
- `/mcp`: MCP over streamable HTTP (stateless, JSON responses), the same tools as `leanindex mcp`;
- `GET /`, `GET /d/{name}`, `POST /token`: the search page for people (HTML, no JavaScript;
  `leanindex.service.web`), answered by the same tools, gate and limits.

Limits (`ServiceConfig`): bodies over `max_body_bytes` get 413, an engine call over
`time_budget_s` gets 504 `timeout`, a call beyond `max_concurrent` running ones gets 429 `busy` at
once. FastAPI's own request validation answers 400 `invalid_request` (not 422), and every body is
then validated strictly (`validation.parse_request`: `"10"` is no number, `"yes"` no boolean; query
parameters by `models.query_value`). With a token set, every route but `/healthz` needs
`Authorization: Bearer <token>` (401 otherwise); the pages also take it from the cookie `POST
/token` sets. Every route refuses a `Host` not in `ServiceConfig.host_names()` (421
`host_not_allowed`) and a path or query string that is not UTF-8 once percent-decoded (400), and
every answer carries the security headers of `middleware.security_headers`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, TypeVar

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.responses import Response
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from pydantic import BaseModel

from ..checker import CheckRequest, CheckResponse
from ..checker.backend import CheckerBackend
from ..engine import Engine
from ..engine.diff import DIFF_LIMIT_MAX, ChangeCategory, DeclarationDiff, DiffRequest
from ..errors import ErrorCode, LeanIndexError
from ..identity import display_profile, normalize_profile
from ..models import (
    DeclarationName,
    EnvironmentsRequest,
    EnvironmentsResponse,
    InspectRequest,
    InspectResponse,
    ProfileId,
    SearchRequest,
    SearchResponse,
    query_value,
    search_query_parameters,
    search_request_from_query,
)
from ..validation import parse_request, unknown_name_error
from ..version import __version__
from .check import unless_disconnected
from .config import ServiceConfig
from .gate import CallGate
from .mcp import build_mcp_server
from .metrics import ServiceMetrics
from .middleware import ENVIRONMENT_KEY, NamedEndpoint
from .plumbing import error_responses, install_error_handlers, install_middleware, mcp_sessions, openapi_document
from .probes import Health, Readiness, readiness
from .tools import ServedTool, ToolCalls, bind_tools
from .web import install_pages

log = logging.getLogger("leanindex.http")

T = TypeVar("T", bound=BaseModel)

_VERIFICATION_CODES = (ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH)
_LIMITS = (ErrorCode.UNAUTHORIZED, ErrorCode.BUSY, ErrorCode.TIMEOUT, ErrorCode.HOST_NOT_ALLOWED)
_CHECKER_ERRORS = (
    ErrorCode.INVALID_REQUEST, ErrorCode.HEADER_MISMATCH, ErrorCode.CHECK_DISABLED, ErrorCode.UNKNOWN_ENVIRONMENT,
    ErrorCode.NOT_FOUND, ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.FORBIDDEN_COMMAND, ErrorCode.UNKNOWN_PROOF_STATE,
    ErrorCode.BACKEND_ERROR,
)
_CATALOG = (ErrorCode.UNKNOWN_ENVIRONMENT, ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH)


def create_app(engine: Engine, config: ServiceConfig | None = None, checker: CheckerBackend | None = None) -> FastAPI:
    """The ASGI app serving `engine` over HTTP and MCP (see the module docstring).

    With a `checker`, `POST /v1/check` answers and MCP lists `lean.check`; the app starts the
    checker's warm REPLs with the server and closes them (every REPL process group) at
    shutdown. Without one, `POST /v1/check` answers 404 `check_disabled`. The caller owns
    `engine` and closes it after the server stopped.
    """
    config = config or ServiceConfig()
    gate = CallGate(config.max_concurrent, config.time_budget_s)
    metrics = ServiceMetrics(gate)
    calls = ToolCalls(engine, gate, checker)
    tools = {spec.name: spec for spec in bind_tools(calls)}
    mcp_server = build_mcp_server(list(tools.values()), config.tool_names)
    sessions = mcp_sessions(config, mcp_server)

    def record_verification() -> None:
        try:
            metrics.record_environments(engine.environments())
        except Exception:
            log.exception("verifying the catalogs at start failed")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Verify every catalog in the background so /healthz answers at once and /readyz
        # turns ready when the digests are checked.
        threading.Thread(target=record_verification, name="leanindex-verify", daemon=True).start()
        if checker is not None:
            await checker.start()
        try:
            async with sessions.run():
                yield
        finally:
            if checker is not None:
                await checker.close()

    app = FastAPI(
        title="leanindex",
        version=__version__,
        summary="Declaration search and inspection over pinned Lean 4 environments.",
        description=(
            "Bounded, exact search and look-up of the declarations of pinned Lean 4 environments, "
            "with an explicit completeness signal and the environment identity on every answer. "
            "Errors are `{\"error\": {\"code\", \"message\", \"details\"}}`. When the server was "
            "started with a token (LEANINDEX_TOKEN), every route but /healthz needs "
            "`Authorization: Bearer <token>`."
        ),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.engine = engine
    app.state.gate = gate
    app.state.metrics = metrics
    app.state.mcp_server = mcp_server
    app.state.tools = tools
    _declaration_routes(app, engine, calls, tools, metrics)
    _check_route(app, engine, calls)
    _tool_routes(app, engine, tools, metrics)
    _operation_routes(app, engine, gate, metrics)
    install_pages(app, calls)
    # An ASGI app as endpoint: Starlette runs it as such, though its annotation names request handlers.
    app.add_route("/mcp", NamedEndpoint(StreamableHTTPASGIApp(sessions), "/mcp"), include_in_schema=False)  # type: ignore[arg-type]
    install_error_handlers(app)
    install_middleware(app, config, metrics)
    # FastAPI documents replacing `app.openapi` as the way to customise the document.
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]
    return app


async def _strict_body(request: Request, model: type[T]) -> T:
    """The request's JSON body as `model`, validated by the one rule of wire requests
    (`validation.parse_request`: strict, no string-to-number or -boolean coercion). FastAPI's own
    (lax) validation of the declared body runs first and documents it; this is the answer."""
    return parse_request(model, await request.body())


def _label(engine: Engine, request: Request, environment: str) -> str:
    """Record the request's environment for logs and metrics, if it names a served profile
    (anything else is `-`, so label values stay bounded). Up to two stats (`Engine.served_profile`)."""
    served = engine.served_profile(environment)
    if served is None:
        return "-"
    request.scope["state"][ENVIRONMENT_KEY] = served
    return served


async def _answer(engine: Engine, metrics: ServiceMetrics, request: Request, environment: str, pending: Awaitable[T]) -> T:
    """Await an engine answer for `environment` (`-` for a call naming none), label the request
    with it and keep the verification gauge current. An answer proves the profile served, so
    its label is the display id with no stat; only a refusal asks the engine (`_label`)."""
    try:
        response = await pending
    except LeanIndexError as error:
        name = _label(engine, request, environment) if environment != "-" else "-"
        if error.code in _VERIFICATION_CODES and name != "-":
            metrics.set_verified(name, False)
        raise
    if environment != "-":
        name = display_profile(normalize_profile(environment))
        request.scope["state"][ENVIRONMENT_KEY] = name
        metrics.set_verified(name, True)
    return response


def _declaration_routes(app: FastAPI, engine: Engine, calls: ToolCalls, tools: dict[str, ServedTool], metrics: ServiceMetrics) -> None:
    """`GET /v1/environments`, `POST /v1/declarations/search`, `GET /v1/declarations/{name}`."""

    @app.get(
        "/v1/environments",
        response_model=EnvironmentsResponse,
        responses=error_responses(*_LIMITS),
        operation_id="listEnvironments",
        tags=["declarations"],
    )
    async def environments(request: Request) -> EnvironmentsResponse:
        """Every profile under the served root: identity, imports, declaration counts, and
        whether its catalog verified against its manifest (`verified`); `400 invalid_request`
        for any query parameter (it takes none, and one would otherwise be dropped unseen)."""
        if request.query_params:
            given = next(iter(request.query_params))
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"unknown query parameter {given!r}; this route takes none", {"field": given})
        response = await calls.environments(EnvironmentsRequest())
        metrics.record_environments(response)
        return response

    @app.post(
        "/v1/declarations/search",
        response_model=SearchResponse,
        responses=error_responses(ErrorCode.INVALID_REQUEST, ErrorCode.NOT_RECORDED, *_CATALOG, ErrorCode.PAYLOAD_TOO_LARGE, *_LIMITS),
        operation_id="searchDeclarations",
        tags=["declarations"],
    )
    async def search(request: Request, body: SearchRequest) -> SearchResponse:
        """Bounded search in Name.lt order (`lean.declaration.search`); see `SearchResponse` for
        the completeness signal and `next_cursor` paging."""
        body = await _strict_body(request, SearchRequest)
        return await _answer(engine, metrics, request, body.environment, calls.search(body))

    @app.get(
        "/v1/environments/{older}/diff/{newer}",
        response_model=DeclarationDiff,
        responses=error_responses(ErrorCode.INVALID_REQUEST, ErrorCode.NOT_RECORDED, *_CATALOG, *_LIMITS),
        operation_id="diffEnvironments",
        tags=["declarations"],
        dependencies=[Depends(_known_parameters(_DIFF_PARAMETERS))],
    )
    async def diff(
        request: Request,
        older: Annotated[ProfileId, Path(description="The older profile id, e.g. CORE-V4-19; case-insensitive.")],
        newer: Annotated[ProfileId, Path(description="The newer profile id; case-insensitive.")],
        categories: Annotated[list[ChangeCategory] | None, Query(description="Change categories to list (repeat the parameter) [every recorded one].")] = None,
        category: Annotated[list[ChangeCategory] | None, Query(description="The same as categories (either may be repeated; both lists are taken).")] = None,
        limit: Annotated[int, Query(ge=1, le=DIFF_LIMIT_MAX, description="Changes per page.")] = 100,
        after: Annotated[str | None, Query(min_length=1, max_length=512, description="The previous page's next_cursor.")] = None,
    ) -> DeclarationDiff:
        """Per-declaration changes from `older` to `newer` (`lean.catalog.diff`): the module
        gaps, counts of added, removed, retyped, reprinted, deprecated and renamed
        declarations, then a page of them;
        `409 not_recorded` when a listed category needs deprecation a catalog does not record;
        `400 invalid_request` for a query parameter other than these (`categorys`, say, which
        would otherwise be dropped unseen and list every category), with its close names."""
        if "limit" in request.query_params:
            query_value("limit", request.query_params["limit"], "integer")  # the one spelling of a number
        listed = [*(categories or []), *(category or [])]
        body = DiffRequest(older=older, newer=newer, categories=listed, limit=limit, after=after)
        return await _answer(engine, metrics, request, older, calls.diff(body))

    # Declared before the inspect route, which would otherwise take `search` for a name.
    @app.get(
        "/v1/declarations/search",
        response_model=SearchResponse,
        responses=error_responses(ErrorCode.INVALID_REQUEST, ErrorCode.NOT_RECORDED, *_CATALOG, *_LIMITS),
        operation_id="searchDeclarationsByQuery",
        tags=["declarations"],
        openapi_extra={"parameters": search_query_parameters()},
    )
    async def search_by_query(request: Request) -> SearchResponse:
        """The same search as `POST /v1/declarations/search`, its fields as query parameters
        (`models.search_request_from_query`: list fields repeat their parameter, `constant`
        for a type-pattern constant, `flag=KEY` or `flag=KEY=false`); the same answer."""
        body = parse_request(SearchRequest, search_request_from_query(list(request.query_params.multi_items())))
        return await _answer(engine, metrics, request, body.environment, calls.search(body))

    @app.get(
        "/v1/declarations/{name:leanname}",
        response_model=InspectResponse,
        responses=error_responses(ErrorCode.INVALID_REQUEST, ErrorCode.NOT_FOUND, *_CATALOG, *_LIMITS),
        operation_id="inspectDeclaration",
        tags=["declarations"],
        dependencies=[Depends(_inspect_parameters(tools))],
    )
    async def inspect(
        request: Request,
        name: Annotated[DeclarationName, Path(description="Full Lean name, percent-encoded (e.g. `Nat.add_comm`, `%C2%ABterm_%2B_%C2%BB`).")],
        environment: Annotated[ProfileId, Query(description="Profile id such as CORE; case-insensitive.")],
    ) -> InspectResponse:
        """Everything the catalog holds about one declaration (`lean.declaration.inspect`);
        404 `not_found` with close names in `details.suggestions` when it is not there; 400
        `invalid_request` for a query parameter other than `environment`."""
        body = InspectRequest(environment=environment, declaration_name=name)
        return await _answer(engine, metrics, request, body.environment, calls.inspect(body))


#: The query parameters of the diff GET route as `validation.close_names` spellings: the
#: request's field names, and `category`, the same as `categories`.
_DIFF_PARAMETERS = {"categories": "categories", "category": "categories", "limit": "limit", "after": "after"}


def _known_parameters(known: dict[str, str]) -> Callable[[Request], None]:
    """A route dependency raising `LeanIndexError(invalid_request)` for the first query
    parameter (in name order) not among `known`'s spellings, with its close names
    (`validation.unknown_name_error`): a parameter the route would drop unseen changes the
    answer without a word. FastAPI solves a route's dependencies before its own parameters, so
    `?env=CORE` gets `did you mean environment?`, not only `environment: Field required`."""

    def refuse_unknown(request: Request) -> None:
        unknown = sorted(set(request.query_params) - set(known))
        if unknown:
            raise unknown_name_error("query parameter", unknown[0], known)

    return refuse_unknown


def _inspect_parameters(tools: dict[str, ServedTool]) -> Callable[[Request], None]:
    """The inspect route's check of its query parameters: `environment` only, else
    `invalid_request` with the close names (`_known_parameters`). Before that, a request for a
    name that is the last part of a POST tool route of `/v1/declarations/` (`exists`,
    `inspect_many`, `inspect`) with another parameter (`GET /v1/declarations/exists?names=...`)
    was meant for that tool: `invalid_request` naming its route and request fields, and how to
    inspect a declaration of that name instead (`details`: `field`, `tool`, `route`)."""
    known = _known_parameters({"environment": "environment"})
    prefix = "POST /v1/declarations/"
    routed = {spec.http_route.removeprefix(prefix): spec for spec in tools.values() if spec.http_route.startswith(prefix)}

    def refuse_unknown(request: Request) -> None:
        spec = routed.get(request.path_params.get("name", ""))
        unknown = sorted(set(request.query_params) - {"environment"})
        if spec is not None and unknown:
            name, fields = request.path_params["name"], ", ".join(spec.request_model.model_fields)
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"query parameter {unknown[0]!r} refused: GET /v1/declarations/{name} inspects a declaration named {name!r} "
                f"(query parameter environment only); {spec.name} is {spec.http_route} with a JSON body {{{fields}}}",
                {"field": unknown[0], "tool": spec.name, "route": spec.http_route},
            )
        known(request)

    return refuse_unknown


def _check_route(app: FastAPI, engine: Engine, calls: ToolCalls) -> None:
    """`POST /v1/check`."""

    @app.post(
        "/v1/check",
        response_model=CheckResponse,
        responses=error_responses(
            ErrorCode.INVALID_REQUEST, ErrorCode.HEADER_MISMATCH, ErrorCode.CHECK_DISABLED, ErrorCode.UNKNOWN_ENVIRONMENT,
            ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.BACKEND_ERROR, *_LIMITS,
        ),
        operation_id="checkLeanFile",
        tags=["check"],
    )
    async def check(request: Request, body: CheckRequest) -> CheckResponse:
        """Lean's verdict on a complete file from a warm REPL of the profile (`lean.check`):
        `accepted`, `incomplete` or `rejected`, with diagnostics, sorries and axioms. Tool
        failures are errors (`timeout`, `busy`, `backend_error`), never verdicts. A client that
        disconnects gives up its queued check. 404 `check_disabled` unless the server was
        started with a checker (`leanindex serve --check PROFILE=PROJECT --check-repl DIR`)."""
        body = await _strict_body(request, CheckRequest)
        _label(engine, request, body.environment)
        return await unless_disconnected(calls.check(body), request.is_disconnected)


def _tool_routes(app: FastAPI, engine: Engine, tools: dict[str, ServedTool], metrics: ServiceMetrics) -> None:
    """The POST route of every tool whose route is not written above (`spec.http_route`):
    body `spec.request_model`, answer `spec.response_model`, error list and tag by `spec.tag`.
    A catalog tool's answer keeps the verification gauge current (as the routes above); a
    client that disconnects gives up its queued check. A route that is not `POST` must be
    written here (its fields become path and query parameters): the app refuses to start
    without it."""
    declared = {f"{method} {getattr(route, 'path', '').replace(':leanname', '')}" for route in app.routes for method in getattr(route, "methods", None) or ()}
    for spec in tools.values():
        if spec.http_route in declared:
            continue
        method, path = spec.http_route.split(" ", 1)
        if method != "POST":
            raise RuntimeError(f"tool {spec.name} has no route for {spec.http_route}; write it in service/http.py")
        _tool_route(app, engine, spec, method, path, metrics)


def _tool_route(app: FastAPI, engine: Engine, spec: ServedTool, method: str, path: str, metrics: ServiceMetrics) -> None:
    """One route of `_tool_routes`."""

    async def endpoint(request: Request, body: BaseModel) -> BaseModel:
        body = await _strict_body(request, spec.request_model)
        # A batch names its environments per item, a diff two, the list none: those stay unlabelled.
        environment = getattr(body, "environment", None)
        if spec.tag == "declarations":
            return await _answer(engine, metrics, request, environment or "-", spec.call(body))
        if environment is not None:
            _label(engine, request, environment)
        return await unless_disconnected(spec.call(body), request.is_disconnected)

    endpoint.__annotations__ = {"request": Request, "body": spec.request_model, "return": spec.response_model}
    # Every body can be over the server's limit (413), a batch look-up's 100 names most of all.
    errors = _CHECKER_ERRORS if spec.tag == "check" else (ErrorCode.INVALID_REQUEST, ErrorCode.NOT_RECORDED, ErrorCode.PAYLOAD_TOO_LARGE, *_CATALOG)
    app.add_api_route(
        path,
        endpoint,
        methods=[method],
        response_model=spec.response_model,
        responses=error_responses(*errors, *_LIMITS),
        operation_id="".join(part if i == 0 else part.capitalize() for i, part in enumerate(spec.alias.split("_"))),
        tags=[spec.tag],
        summary=spec.title,
        description=spec.description,
    )


def _operation_routes(app: FastAPI, engine: Engine, gate: CallGate, metrics: ServiceMetrics) -> None:
    """`GET /healthz`, `GET /readyz`, `GET /metrics`."""

    @app.get("/healthz", response_model=Health, operation_id="health", tags=["operations"])
    async def healthz() -> Health:
        """The process is alive; needs no token and touches no catalog."""
        return Health()

    @app.get(
        "/readyz",
        response_model=Readiness,
        responses=error_responses(ErrorCode.CATALOG_UNAVAILABLE, *_LIMITS),
        operation_id="readiness",
        tags=["operations"],
    )
    async def readyz() -> Readiness:
        """200 when there is at least one profile and every profile's catalog verified against
        its manifest; else 503 `catalog_unavailable` listing the profiles that did not."""
        response = await gate.run(engine.environments)
        metrics.record_environments(response)
        return readiness(response)

    @app.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}, "description": "Prometheus text"}, **error_responses(ErrorCode.UNAUTHORIZED)},
        operation_id="metrics",
        tags=["operations"],
    )
    async def metrics_route() -> Response:
        """Prometheus exposition: request counts and latency histograms per route and
        environment, engine calls in flight, catalog verification state per environment."""
        return Response(metrics.render(), media_type=metrics.content_type)
