"""What the HTTP app is built with besides its routes: the Lean-name path convertor, the
OpenAPI error entries and document, the MCP session manager, the error handlers and the
middleware stack (`leanindex.service.http.create_app` wires them)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ValidationError
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from ..errors import HTTP_STATUS, ErrorCode, ErrorResponse, LeanIndexError
from ..validation import invalid_request
from .config import ServiceConfig
from .errorshape import install_error_shape
from .metrics import ServiceMetrics
from .middleware import (
    AccessMiddleware,
    BearerTokenMiddleware,
    BodyLimitMiddleware,
    CarriedError,
    HostAllowListMiddleware,
    SecurityHeadersMiddleware,
    Utf8TargetMiddleware,
    error_response,
)
from .web import STYLESHEET_PATH, TOKEN_COOKIE, is_page_path, token_page


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


def error_responses(*codes: ErrorCode) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries documenting the shared error object for `codes`."""
    statuses: dict[int, list[str]] = {}
    for code in codes:
        statuses.setdefault(HTTP_STATUS[code], []).append(code.value)
    return {
        status: {"model": ErrorResponse, "description": "Error object; code " + " or ".join(names)}
        for status, names in sorted(statuses.items())
    }


def mcp_sessions(config: ServiceConfig, mcp_server: Server[Any]) -> StreamableHTTPSessionManager:
    """The streamable HTTP MCP transport for `mcp_server` (stateless, JSON responses), with the
    SDK's DNS-rebinding guard on the server's one host list (`ServiceConfig.host_names`, which
    `HostAllowListMiddleware` already enforces on every route): `Host` any of those names, and
    `Origin`, when sent, `http(s)://` one of them or a configured CORS origin."""
    hosts = [f"[{name}]" if ":" in name else name for name in sorted(config.host_names())]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[form for host in hosts for form in (host, f"{host}:*")],
        allowed_origins=[
            *(f"{scheme}://{form}" for host in hosts for scheme in ("http", "https") for form in (host, f"{host}:*")),
            *config.cors_origins,
        ],
    )
    return StreamableHTTPSessionManager(app=mcp_server, json_response=True, stateless=True, security_settings=security)


def _body_model(request: Request) -> type[BaseModel] | None:
    """The request model of the route's JSON body, so a refused body's unknown field gets its
    close names (`validation.invalid_request`); None for a route without one."""
    field = getattr(request.scope.get("route"), "body_field", None)
    annotation = getattr(getattr(field, "field_info", None), "annotation", None)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def install_error_handlers(app: FastAPI) -> None:
    """Answer every failure with the shared error object: library errors with their code's
    status, request validation with 400 `invalid_request` (not 422), unknown routes with 404
    `not_found`, other protocol refusals (405, ...) with their own status."""

    @app.exception_handler(LeanIndexError)
    async def on_library_error(request: Request, error: LeanIndexError) -> Response:
        return error_response(error)

    @app.exception_handler(RequestValidationError)
    async def on_request_invalid(request: Request, error: RequestValidationError) -> Response:
        return error_response(invalid_request(error.errors(), drop_prefix=("body",), model=_body_model(request)))

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


def install_middleware(app: FastAPI, config: ServiceConfig, metrics: ServiceMetrics) -> None:
    """Body limit, bearer token (when configured), CORS (when origins are configured), the shared
    error shape on every answer that is not a success (`errorshape`), UTF-8 request targets, the
    `Host` allow-list, the security headers on every answer, and the access log with metrics,
    outermost last."""
    app.add_middleware(BodyLimitMiddleware, max_bytes=config.max_body_bytes)
    if config.token is not None:
        app.add_middleware(
            # The stylesheet is public: the token form, shown before any token, uses it too.
            BearerTokenMiddleware, token=config.token, open_paths=frozenset({"/healthz", "/token", STYLESHEET_PATH}),
            is_page=is_page_path, page_cookie=TOKEN_COOKIE, page_refusal=token_page,
        )
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
    app.add_middleware(Utf8TargetMiddleware)
    app.add_middleware(HostAllowListMiddleware, allowed=config.host_names())
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(AccessMiddleware, observe=metrics.observe)


def openapi_document(app: FastAPI) -> dict[str, Any]:
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
