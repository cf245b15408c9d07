"""Pure-ASGI middleware of the HTTP server, one job each: access log and metrics, bearer token,
request body cap. (Pure ASGI rather than Starlette's `BaseHTTPMiddleware`, which would buffer
the streamed MCP responses.)"""

from __future__ import annotations

import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import HTTP_STATUS, ErrorCode, LeanIndexError

#: Key under `scope["state"]` where a route handler leaves the environment label of the request.
ENVIRONMENT_KEY = "leanindex_environment"
#: Key under `scope["state"]` naming the route of a plain ASGI endpoint (FastAPI records
#: `scope["route"]` for its own routes only).
ROUTE_KEY = "leanindex_route"
REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")

access_log = logging.getLogger("leanindex.access")


class CarriedError(HTTPException):
    """A `LeanIndexError` raised from inside a request body read: FastAPI re-raises
    `HTTPException`s from there unchanged (anything else becomes a generic 400), and the app's
    handler answers with the carried error."""

    def __init__(self, error: LeanIndexError):
        super().__init__(HTTP_STATUS[error.code], error.message)
        self.error = error


def error_response(error: LeanIndexError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The shared error object with the HTTP status of its code (`errors.HTTP_STATUS`)."""
    return JSONResponse(error.to_dict(), status_code=HTTP_STATUS[error.code], headers=headers)


class AccessMiddleware:
    """Gives every HTTP request an id (the client's `X-Request-Id` when well-formed, else a new
    one, echoed in the response), then writes one JSON access-log line (`leanindex.access`
    logger: request id, method, path, route template (`-` when no route was reached, e.g. a
    refused token), environment, status, duration in ms) and feeds
    `observe(method, route, environment, status, seconds)` (the metrics)."""

    def __init__(self, app: ASGIApp, observe: Callable[[str, str, str, int, float], None]):
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        given = Headers(scope=scope).get(REQUEST_ID_HEADER, "")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (REQUEST_ID_HEADER.encode(), request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            matched = scope.get("route")
            # `path_format` drops converters: `/v1/declarations/{name}`, as in the OpenAPI document.
            route = scope["state"].get(ROUTE_KEY) or getattr(matched, "path_format", None) or "-"
            environment = scope["state"].get(ENVIRONMENT_KEY, "-")
            self.observe(scope["method"], route, environment, status, seconds)
            access_log.info(
                "access",
                extra={
                    "fields": {
                        "request_id": request_id,
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": route,
                        "environment": environment,
                        "status": status,
                        "duration_ms": round(seconds * 1000, 3),
                    }
                },
            )

class NamedEndpoint:
    """A plain ASGI endpoint that records its route (`ROUTE_KEY`) for the access log and metrics."""

    def __init__(self, app: ASGIApp, route: str):
        self.app = app
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})[ROUTE_KEY] = self.route
        await self.app(scope, receive, send)


class BearerTokenMiddleware:
    """Requires `Authorization: Bearer <token>` on every HTTP request except the paths in
    `open_paths`; anything else gets 401 `unauthorized` (shared error object) with
    `WWW-Authenticate: Bearer`. Tokens are compared in constant time.

    On a GET of a page for people (`is_page(path)`), a browser cannot set that header without
    JavaScript: the token is also taken from the cookie `page_cookie`, and a refusal is
    `page_refusal(error)` (an HTML page with a form to give the token) instead of JSON. The
    cookie is never accepted on the API routes."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        open_paths: frozenset[str] = frozenset({"/healthz"}),
        is_page: Callable[[str], bool] = lambda path: False,
        page_cookie: str = "",
        page_refusal: Callable[[LeanIndexError], ASGIApp] | None = None,
    ):
        self.app = app
        self.token = token.encode()
        self.expected = f"Bearer {token}".encode()
        self.open_paths = open_paths
        self.is_page = is_page
        self.page_cookie = page_cookie
        self.page_refusal = page_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        given = headers.get("authorization", "").encode()
        page = scope["method"] == "GET" and self.is_page(scope["path"])
        cookie = _cookie(headers.get("cookie", ""), self.page_cookie).encode() if page and self.page_cookie else b""
        if secrets.compare_digest(given, self.expected) or (cookie and secrets.compare_digest(cookie, self.token)):
            await self.app(scope, receive, send)
            return
        error = LeanIndexError(
            ErrorCode.UNAUTHORIZED,
            "missing or wrong bearer token" if given or cookie else "this server requires a bearer token (Authorization: Bearer ...)",
        )
        if page and self.page_refusal is not None:
            await self.page_refusal(error)(scope, receive, send)
            return
        await error_response(error, {"www-authenticate": "Bearer"})(scope, receive, send)


def _cookie(header: str, name: str) -> str:
    """The value of cookie `name` in a `Cookie` header, or ""."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return ""


class BodyLimitMiddleware:
    """Refuses request bodies larger than `max_bytes` with 413 `payload_too_large`.

    A declared `Content-Length` over the cap is refused before anything reads the body; a body
    sent without one is counted as it is read, and the read fails with a `CarriedError` that the
    app's exception handler turns into the shared error object.
    """

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(self.too_large())(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise CarriedError(self.too_large())
            return message

        await self.app(scope, counted, send)

    def too_large(self) -> LeanIndexError:
        """The error for a body over the cap."""
        return LeanIndexError(
            ErrorCode.PAYLOAD_TOO_LARGE,
            f"request body larger than {self.max_bytes} bytes",
            {"max_bytes": self.max_bytes},
        )
