"""Pure-ASGI middleware of the HTTP server, one job each: access log and metrics, security
headers, `Host` allow-list, UTF-8 request targets, bearer token, request body cap. (Pure ASGI
rather than Starlette's `BaseHTTPMiddleware`, which would buffer the streamed MCP responses.)"""

from __future__ import annotations

import functools
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
from ..validation import check_utf8_target
from .config import normalize_host_name

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


#: The Content-Security-Policy of every answer: nothing loads but same-origin stylesheets and
#: images (the pages' stylesheet is `/static/page.css`; they hold no inline style, which this
#: policy would block), no scripts at all, forms post to this server only, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def security_headers() -> tuple[tuple[bytes, bytes], ...]:
    """The headers every HTTP answer carries (pages, API, errors, `/mcp`, and the answers the
    HTTP protocol layer writes itself): `Content-Security-Policy` (`CONTENT_SECURITY_POLICY`),
    `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`."""
    return (
        (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    )


class SecurityHeadersMiddleware:
    """Adds `security_headers()` to every HTTP answer, replacing any same-named header an inner
    layer set (there is one policy)."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.headers = security_headers()
        self.names = {name for name, _ in self.headers}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in self.names]
                message["headers"] = [*kept, *self.headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


# Every request asks, nearly always with one of a few values: remembered (bounded, least recently used).
@functools.lru_cache(maxsize=256)
def host_of(header: str) -> str:
    """The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), normalised as
    the allow-list compares it (`config.normalize_host_name`); "" when it names none."""
    value = header.strip()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return ""
    else:
        name, colon, port = value.rpartition(":")
        if not colon:
            name = value
        elif not port.isdigit():
            return ""
    try:
        return normalize_host_name(name)
    except ValueError:
        return ""


class HostAllowListMiddleware:
    """Refuses every HTTP request whose `Host` header does not name one of `allowed` (host
    names as `config.ServiceConfig.host_names` gives them; any port) with 421
    `host_not_allowed`: a page of another site that re-points its DNS name at this server
    (DNS rebinding) sends its own name as `Host`. A request without `Host` is refused too, and
    one with two `Origin` headers (400 `invalid_request`: the `/mcp` guard would read the first).
    The accepted `Host` is passed on in lower case."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if len(headers.getlist("origin")) > 1:
            # One request, one origin: which of two would a guard read? (A browser sends one.)
            await error_response(LeanIndexError(ErrorCode.INVALID_REQUEST, "the request has more than one Origin header", {"header": "origin"}))(
                scope, receive, send
            )
            return
        given = headers.get("host")
        if given is not None and host_of(given) in self.allowed:
            # Host names are case-insensitive: inner layers (the MCP transport's own guard, which
            # compares exactly) see the accepted value in lower case.
            scope["headers"] = [(name, value.lower() if name == b"host" else value) for name, value in scope["headers"]]
            await self.app(scope, receive, send)
            return
        error = LeanIndexError(
            ErrorCode.HOST_NOT_ALLOWED,
            "the request has no Host header" if given is None else
            f"this server does not answer to host {given[:253]!r} (leanindex serve --allowed-host NAME adds a name)",
            {"host": given[:253] if given is not None else None},
        )
        await error_response(error)(scope, receive, send)


class Utf8TargetMiddleware:
    """Refuses a request whose path or query string is not UTF-8 once percent-decoded (`%FF`)
    with 400 `invalid_request` (`validation.check_utf8_target`), before a route reads it as
    U+FFFD."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                # Without `raw_path` (an ASGI server may leave it out) the decoded path cannot be checked.
                check_utf8_target(scope.get("raw_path") or b"", scope.get("query_string", b""))
            except LeanIndexError as error:
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)
