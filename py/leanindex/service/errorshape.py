"""The shared error object on every HTTP answer that is not a success, whoever produced it.

Three producers answer outside the app's own exception handlers:
- the MCP SDK's streamable HTTP transport (`/mcp`): plain text for a foreign `Host` (421) or
  `Origin` (403) and a JSON-RPC error object for a GET without the event-stream Accept header;
- Starlette's last-resort handler: plain-text `Internal Server Error` for an unexpected exception;
- uvicorn's HTTP/1.1 protocol (httptools' parser): plain-text 400 for a request it cannot parse
  (conflicting `Content-Length` headers, a bad request line), before any application code runs.

`ErrorShapeMiddleware` rewrites the first kind, `install_error_shape` adds it and a handler for
the second, and `SharedErrorHttpToolsProtocol` (given to uvicorn as its `http` protocol) answers
the third. A JSON-RPC error to a POST on `/mcp` is an MCP protocol answer and keeps its framing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..errors import HTTP_STATUS, ErrorCode, LeanIndexError
from .middleware import error_response, security_headers
from .web import is_page_path

log = logging.getLogger("leanindex.http")

#: The code of a rewritten answer by HTTP status; any other 4xx is `invalid_request`, any
#: other 5xx `internal_error`. The status itself is kept.
_CODE_BY_STATUS = {
    401: ErrorCode.UNAUTHORIZED,
    404: ErrorCode.NOT_FOUND,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    421: ErrorCode.HOST_NOT_ALLOWED,
    429: ErrorCode.BUSY,
    502: ErrorCode.BACKEND_ERROR,
    504: ErrorCode.TIMEOUT,
}


def shaped_error(status: int, body: bytes) -> dict[str, Any]:
    """The shared error object for an answer of `status` whose body is not one: the message is
    the JSON-RPC error's message or the body's text (or the status phrase), and `details` keeps
    the status (and the JSON-RPC error code when there was one)."""
    code = _CODE_BY_STATUS.get(status, ErrorCode.INVALID_REQUEST if status < 500 else ErrorCode.INTERNAL_ERROR)
    details: dict[str, Any] = {"status": status}
    message = body.decode("utf-8", "replace").strip()[:500]
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and "jsonrpc" in parsed:
        message = str(parsed["error"].get("message", ""))
        details["jsonrpc_code"] = parsed["error"].get("code")
    if not message:
        message = HTTPStatus(status).phrase
    return LeanIndexError(code, message, details).to_dict()


def _is_shared(body: bytes) -> bool:
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return (
        isinstance(parsed, dict)
        and set(parsed) == {"error"}
        and isinstance(parsed["error"], dict)
        and {"code", "message", "details"} <= set(parsed["error"])
        and isinstance(parsed["error"]["code"], str)
    )


def _is_json_rpc(body: bytes) -> bool:
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    return isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0" and "error" in parsed


class ErrorShapeMiddleware:
    """Pure ASGI: holds back the start and body of each answer with status >= 400 and, unless it
    already is the shared error object (or a JSON-RPC error to a POST on `/mcp`), sends the
    shared error object instead with the same status and other headers. Successful answers
    (including MCP event streams) pass through unbuffered, and so does a GET of a page for
    people (`is_page(path)`, the search page's HTML), whose errors are pages too."""

    def __init__(self, app: ASGIApp, mcp_path: str = "/mcp", is_page: Callable[[str], bool] = lambda path: False):
        self.app = app
        self.mcp_path = mcp_path
        self.is_page = is_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"] == "GET" and self.is_page(scope["path"])):
            await self.app(scope, receive, send)
            return
        keeps_json_rpc = scope["path"] == self.mcp_path and scope["method"] == "POST"
        start: Message | None = None
        body = bytearray()

        async def held_send(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = message
                return
            if start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            data = bytes(body)
            if _is_shared(data) or (keeps_json_rpc and _is_json_rpc(data)):
                await send(start)
                await send({"type": "http.response.body", "body": data})
                return
            shaped = json.dumps(shaped_error(start["status"], data), ensure_ascii=False).encode()
            headers = MutableHeaders(raw=list(start["headers"]))
            headers["content-type"] = "application/json"
            headers["content-length"] = str(len(shaped))
            await send({**start, "headers": headers.raw})
            await send({"type": "http.response.body", "body": shaped})

        await self.app(scope, receive, held_send)


def install_error_shape(app: FastAPI) -> None:
    """Add `ErrorShapeMiddleware` and the handler that turns an unexpected exception into a 500
    `internal_error` (logged with its traceback; its text is not sent to the client)."""

    async def on_unexpected(request: Request, error: Exception) -> Response:
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=error)
        failure = LeanIndexError(ErrorCode.INTERNAL_ERROR, "the server failed unexpectedly; the error is in its log", {})
        return error_response(failure)

    app.add_exception_handler(Exception, on_unexpected)
    app.add_middleware(ErrorShapeMiddleware, is_page=is_page_path)


def refusal(error: LeanIndexError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Status, headers and body of the answer to a request refused before the app ran: the shared
    error object with its code's status, the security headers, `Connection: close`."""
    body = json.dumps(error.to_dict()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *security_headers(),
    ]
    return HTTP_STATUS[error.code], headers, body


def raw_error_answer(error: LeanIndexError) -> bytes:
    """`refusal(error)` as the bytes of an HTTP/1.1 answer."""
    status, headers, body = refusal(error)
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode()]
    head += [name + b": " + value + b"\r\n" for name, value in headers]
    return b"".join(head) + b"\r\n" + body


class SharedErrorHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering a request it cannot parse with the shared error
    object (400 `invalid_request`, `details.reason` = the complaint) instead of plain text, with
    the security headers of every answer (`middleware.security_headers`), then closing the
    connection."""

    def send_400_response(self, msg: str) -> None:
        self.refuse(LeanIndexError(ErrorCode.INVALID_REQUEST, f"malformed HTTP request: {msg}", {"reason": msg}))

    def refuse(self, error: LeanIndexError) -> None:
        """Write `raw_error_answer(error)` and close the connection."""
        self.transport.write(raw_error_answer(error))
        self.transport.close()
