"""The HTTP API (FastAPI) and the streamable HTTP MCP endpoint, in one ASGI app.

Routes (all JSON unless said otherwise; every error is the shared error object with the status
of `errors.HTTP_STATUS`):

- `GET /v1/environments`: `EnvironmentsResponse`, every profile under the root;
- `POST /v1/declarations/search`: body `SearchRequest`, answer `SearchResponse`;
- `GET /v1/declarations/{name}?environment=ID`: `InspectResponse`; `name` is the percent-encoded
  full Lean name and may contain `/`, `.`, `«»`, newlines and any Unicode (`LeanNameConvertor`
  keeps it whole);
- `POST /v1/check`: body `CheckRequest`, answer `CheckResponse` (Lean's verdict on a complete
  file), when the app was given a checker; 404 `check_disabled` otherwise;
- `GET /healthz`: the process is alive (never needs the token);
- `GET /readyz`: 200 when every profile's catalog verified against its manifest, else 503;
- `GET /metrics`: Prometheus text (see `leanindex.service.metrics`);
- `/mcp`: MCP over streamable HTTP (stateless, JSON responses), the same tools as `leanindex mcp`.

Limits (`ServiceConfig`): bodies over `max_body_bytes` get 413, an engine call over
`time_budget_s` gets 504 `timeout`, a call beyond `max_concurrent` running ones gets 429 `busy` at
once. FastAPI's own request validation answers 400 `invalid_request` (not 422). With a token set,
every route but `/healthz` needs `Authorization: Bearer <token>` (401 otherwise).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ValidationError
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from .. import __version__
from ..catalog.layout import CatalogPaths, normalize_profile
from ..engine import Engine
from ..errors import HTTP_STATUS, ErrorCode, LeanIndexError
from ..models import (
    DeclarationName,
    EnvironmentsResponse,
    ErrorResponse,
    InspectRequest,
    InspectResponse,
    ProfileId,
    SearchRequest,
    SearchResponse,
)
from ..validation import invalid_request
from ..checker import Checker, CheckRequest, CheckResponse
from .check import check_tool, unless_disconnected
from .config import ServiceConfig
from .gate import CallGate
from .mcp import build_mcp_server
from .metrics import ServiceMetrics
from .errorshape import install_error_shape
from .middleware import (
    ENVIRONMENT_KEY,
    AccessMiddleware,
    BearerTokenMiddleware,
    BodyLimitMiddleware,
    CarriedError,
    NamedEndpoint,
    error_response,
)
from .tools import query_tools

log = logging.getLogger("leanindex.http")

T = TypeVar("T", bound=BaseModel)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_VERIFICATION_CODES = (ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH)


class LeanNameConvertor(Convertor[str]):
    """The rest of the path, whatever it holds. Starlette's `path` convertor (`.*`) stops at a
    newline, and its route pattern's `$` then accepts a trailing one, so `Foo%0A` would be served
    as `Foo`; a Lean name may hold any character between `«»`, so this one matches every
    character (`(?s:...)` lets `.` match newlines)."""

    regex = "(?s:.+)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("leanname", LeanNameConvertor())


class Health(BaseModel):
    """`GET /healthz`: the process answers."""

    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    """`GET /readyz` when ready: every listed profile verified against its manifest."""

    ready: Literal[True] = True
    environments: list[str]


def error_responses(*codes: ErrorCode) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries documenting the shared error object for `codes`."""
    statuses: dict[int, list[str]] = {}
    for code in codes:
        statuses.setdefault(HTTP_STATUS[code], []).append(code.value)
    return {
        status: {"model": ErrorResponse, "description": "Error object; code " + " or ".join(names)}
        for status, names in sorted(statuses.items())
    }


_LIMITS = (ErrorCode.UNAUTHORIZED, ErrorCode.BUSY, ErrorCode.TIMEOUT)
_CATALOG = (ErrorCode.UNKNOWN_ENVIRONMENT, ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH)


def create_app(engine: Engine, config: ServiceConfig | None = None, checker: Checker | None = None) -> FastAPI:
    """The ASGI app serving `engine` over HTTP and MCP (see the module docstring).

    With a `checker`, `POST /v1/check` answers and MCP lists `lean.check`; the app starts the
    checker's warm REPLs with the server and closes them (every REPL process group) at
    shutdown. Without one, `POST /v1/check` answers 404 `check_disabled`. The caller owns
    `engine` and closes it after the server stopped.
    """
    config = config or ServiceConfig()
    gate = CallGate(config.max_concurrent, config.time_budget_s)
    metrics = ServiceMetrics(gate)
    tools = query_tools(engine, gate) + ([check_tool(checker)] if checker is not None else [])
    mcp_server = build_mcp_server(tools)
    security = None
    if config.host in _LOOPBACK:
        # The SDK's own loopback default (DNS-rebinding guard), plus any configured CORS origin.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *config.cors_origins],
        )
    sessions = StreamableHTTPSessionManager(app=mcp_server, json_response=True, stateless=True, security_settings=security)

    def record_verification() -> None:
        try:
            for summary in engine.environments().environments:
                metrics.set_verified(summary.environment, summary.verified)
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

    def label(request: Request, environment: str) -> str:
        """Record the request's environment for logs and metrics, if it names a served profile
        (anything else is `-`, so label values stay bounded)."""
        try:
            profile = normalize_profile(environment)
        except LeanIndexError:
            return "-"
        # One stat, not a listing of manifests/, on every request.
        if not CatalogPaths(engine.root, profile).manifest.exists():
            return "-"
        request.scope["state"][ENVIRONMENT_KEY] = profile.upper()
        return profile.upper()

    async def answer(request: Request, environment: str, pending: Awaitable[T]) -> T:
        """Await an engine answer for `environment`, keeping the verification gauge current."""
        name = label(request, environment)
        try:
            response = await pending
        except LeanIndexError as error:
            if error.code in _VERIFICATION_CODES and name != "-":
                metrics.set_verified(name, False)
            raise
        if name != "-":
            metrics.set_verified(name, True)
        return response

    @app.get(
        "/v1/environments",
        response_model=EnvironmentsResponse,
        responses=error_responses(*_LIMITS),
        operation_id="listEnvironments",
        tags=["declarations"],
    )
    async def environments() -> EnvironmentsResponse:
        """Every profile under the served root: identity, imports, declaration counts, and
        whether its catalog verified against its manifest (`verified`)."""
        response = await gate.run(engine.environments)
        for summary in response.environments:
            metrics.set_verified(summary.environment, summary.verified)
        return response

    @app.post(
        "/v1/declarations/search",
        response_model=SearchResponse,
        responses=error_responses(ErrorCode.INVALID_REQUEST, *_CATALOG, ErrorCode.PAYLOAD_TOO_LARGE, *_LIMITS),
        operation_id="searchDeclarations",
        tags=["declarations"],
    )
    async def search(request: Request, body: SearchRequest) -> SearchResponse:
        """Bounded search in Name.lt order (`lean.declaration.search`); see `SearchResponse` for
        the completeness signal and `next_cursor` paging."""
        return await answer(request, body.environment, gate.run(engine.search, body))

    @app.get(
        "/v1/declarations/{name:leanname}",
        response_model=InspectResponse,
        responses=error_responses(ErrorCode.INVALID_REQUEST, ErrorCode.NOT_FOUND, *_CATALOG, *_LIMITS),
        operation_id="inspectDeclaration",
        tags=["declarations"],
    )
    async def inspect(
        request: Request,
        name: Annotated[DeclarationName, Path(description="Full Lean name, percent-encoded (e.g. `Nat.add_comm`, `%C2%ABterm_%2B_%C2%BB`).")],
        environment: Annotated[ProfileId, Query(description="Profile id such as CORE; case-insensitive.")],
    ) -> InspectResponse:
        """Everything the catalog holds about one declaration (`lean.declaration.inspect`);
        404 `not_found` with close names in `details.suggestions` when it is not there."""
        body = InspectRequest(environment=environment, declaration_name=name)
        return await answer(request, body.environment, gate.run(engine.inspect, body))

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
        if checker is None:
            raise LeanIndexError(
                ErrorCode.CHECK_DISABLED,
                "checking is not enabled on this server; start it with --check PROFILE=PROJECT --check-repl DIR",
                {},
            )
        label(request, body.environment)
        return await unless_disconnected(checker.check(body), request.is_disconnected)

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
        for summary in response.environments:
            metrics.set_verified(summary.environment, summary.verified)
        failing = [s.environment for s in response.environments if not s.verified]
        if failing or not response.environments:
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE,
                "not ready: " + (f"unverified catalogs {', '.join(failing)}" if failing else "no profile under the root"),
                {"unverified": failing},
            )
        return Readiness(environments=[s.environment for s in response.environments])

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

    app.add_route("/mcp", NamedEndpoint(StreamableHTTPASGIApp(sessions), "/mcp"), include_in_schema=False)

    @app.exception_handler(LeanIndexError)
    async def on_library_error(request: Request, error: LeanIndexError) -> Response:
        return error_response(error)

    @app.exception_handler(RequestValidationError)
    async def on_request_invalid(request: Request, error: RequestValidationError) -> Response:
        return error_response(invalid_request(error.errors(), drop_prefix=("body",)))

    @app.exception_handler(ValidationError)
    async def on_model_invalid(request: Request, error: ValidationError) -> Response:
        return error_response(invalid_request(error.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, error: StarletteHTTPException) -> Response:
        if isinstance(error, CarriedError):
            return error_response(error.error)
        if error.status_code == 404:
            failure = LeanIndexError(ErrorCode.NOT_FOUND, f"no route {request.url.path}", {"path": request.url.path})
            return error_response(failure)
        # Other protocol-level refusals (405 method not allowed, ...) keep their status.
        failure = LeanIndexError(ErrorCode.INVALID_REQUEST, str(error.detail), {"status": error.status_code})
        response = error_response(failure)
        response.status_code = error.status_code
        response.headers.update(error.headers or {})
        return response

    app.add_middleware(BodyLimitMiddleware, max_bytes=config.max_body_bytes)
    if config.token is not None:
        app.add_middleware(BearerTokenMiddleware, token=config.token)
    if config.cors_origins:
        # Outside the token check, so browsers' preflight requests are answered.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization", "Content-Type", "X-Request-Id", "Mcp-Session-Id", "Mcp-Protocol-Version",
                "Mcp-Method", "Mcp-Name", "Last-Event-ID",
            ],
            expose_headers=["Mcp-Session-Id", "X-Request-Id"],
        )
    install_error_shape(app)
    app.add_middleware(AccessMiddleware, observe=metrics.observe)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, minus its 422 validation responses (this API answers 400 with the
    shared error object instead) and with the optional bearer token declared."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    document = get_openapi(
        title=app.title,
        version=app.version,
        openapi_version=app.openapi_version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
        tags=[
            {"name": "declarations", "description": "Search and inspect declarations."},
            {"name": "operations", "description": "Liveness, readiness and metrics."},
        ],
    )
    for path, operations in document["paths"].items():
        for operation in operations.values():
            operation["responses"].pop("422", None)
            if path != "/healthz":
                operation["security"] = [{}, {"bearerToken": []}]
    schemas = document.get("components", {}).get("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    document.setdefault("components", {})["securitySchemes"] = {
        "bearerToken": {"type": "http", "scheme": "bearer", "description": "The server's LEANINDEX_TOKEN, when it has one."}
    }
    app.openapi_schema = document
    return document
