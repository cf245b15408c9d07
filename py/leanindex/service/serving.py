"""How `leanindex serve` runs the app on uvicorn (0.54): its settings from `ServiceConfig`, and
the HTTP/1.1 protocol that bounds what a connection may hold.

uvicorn's own limits: `timeout_keep_alive` (an idle connection is closed that long after its
last answer), `h11_max_incomplete_event_size` (the largest request head) and `limit_concurrency`
(connections and requests in progress). It has no timeout for reading a request: its keep-alive
timer starts only once an answer is complete and every received byte cancels it, so a
connection that opens and sends nothing, or dribbles its head a byte at a time, is held
forever. `GuardedH11Protocol` adds that deadline, and answers the refusals uvicorn writes itself
with the shared error object and the security headers.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import HTTP_STATUS, ErrorCode, LeanIndexError
from .config import ServiceConfig
from .errorshape import SharedErrorH11Protocol
from .middleware import security_headers

#: Seconds uvicorn waits for open connections (MCP streams) at shutdown.
GRACEFUL_SHUTDOWN_S = 5

#: h11 states of the client in which a request is still being received.
_READING = (h11.IDLE, h11.SEND_BODY)


class GuardedH11Protocol(SharedErrorH11Protocol):
    """uvicorn's h11 protocol with two more bounds (build one with `for_config`):

    - a request (head and body) must arrive in full within `request_read_timeout_s` seconds of
      its first byte, or of the connection's opening for the first request; else the
      connection is closed without an answer (the client was still sending);
    - with more than uvicorn's `limit_concurrency` connections open or requests in progress, a
      request is answered at once with 429 `busy` and the connection closed (uvicorn's own check,
      which would answer plain-text 503, is replaced by this one);
    - a request head (request line and headers) over `max_header_bytes` is answered 400
      `invalid_request` and the connection closed: h11's own limit
      (`h11_max_incomplete_event_size`) only bounds a head still incomplete in its buffer, so a
      larger one that arrives in one read would otherwise pass.
    """

    request_read_timeout_s: float = ServiceConfig.request_read_timeout_s
    max_header_bytes: int = ServiceConfig.max_header_bytes

    @classmethod
    def for_config(cls, config: ServiceConfig) -> type[GuardedH11Protocol]:
        """The protocol class with `config`'s read timeout and head size (the connection limit is
        uvicorn's `limit_concurrency`, which `server_config` sets)."""
        return type(
            cls.__name__, (cls,), {"request_read_timeout_s": config.request_read_timeout_s, "max_header_bytes": config.max_header_bytes}
        )

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # uvicorn's `limit_concurrency`, checked by `_limited` instead (shared error object).
        self.max_connections = self.limit_concurrency
        self.limit_concurrency = None
        if self.max_connections is not None:
            self.app = self._limited(self.app, self.max_connections)
        self.app = self._bounded_head(self.app, self.max_header_bytes)
        self.read_deadline: asyncio.TimerHandle | None = None

    def _limited(self, app: ASGIApp, limit: int) -> ASGIApp:
        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            # This connection and this request's task are counted already.
            if len(self.connections) > limit or len(self.tasks) > limit:
                error = LeanIndexError(
                    ErrorCode.BUSY,
                    f"the server has more than {limit} connections or requests open; retry in a moment",
                    {"max_connections": limit},
                )
                await _refuse(send, error)
                return
            await app(scope, receive, send)

        return limited

    @staticmethod
    def _bounded_head(app: ASGIApp, limit: int) -> ASGIApp:
        async def bounded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                # What the client sent: request line (method, target, version) and header lines.
                head = len(scope["method"]) + len(scope.get("raw_path") or b"") + len(scope.get("query_string", b"")) + 12
                head += sum(len(name) + len(value) + 4 for name, value in scope["headers"])
                if head > limit:
                    await _refuse(send, LeanIndexError(
                        ErrorCode.INVALID_REQUEST,
                        f"malformed HTTP request: the request head is larger than {limit} bytes",
                        {"reason": "head too large", "max_header_bytes": limit},
                    ))
                    return
            await app(scope, receive, send)

        return bounded

    # uvicorn's protocol annotates the transport as `asyncio.Transport`, narrower than the base's.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.read_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state not in _READING:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self.read_deadline = self.loop.call_later(self.request_read_timeout_s, self._read_timed_out)

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _read_timed_out(self) -> None:
        self.read_deadline = None
        if not self.transport.is_closing():
            self.logger.info("closing a connection whose request did not arrive within %s s", self.request_read_timeout_s)
            self.transport.close()


async def _refuse(send: Send, error: LeanIndexError) -> None:
    """Answer `error` (the shared error object, its HTTP status, the security headers) and close
    the connection after it."""
    body = json.dumps(error.to_dict()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *security_headers(),
    ]
    await send({"type": "http.response.start", "status": HTTP_STATUS[error.code], "headers": headers})
    await send({"type": "http.response.body", "body": body})


def server_config(app: ASGIApp, config: ServiceConfig, port: int) -> uvicorn.Config:
    """The uvicorn settings `leanindex serve` runs `app` with: `config.host` and `port`, no
    uvicorn logging (the app logs), `GuardedH11Protocol.for_config(config)`, and the connection
    limits of `config` (`keep_alive_timeout_s`, `max_header_bytes`, `max_connections`)."""
    return uvicorn.Config(
        app,
        host=config.host,
        port=port,
        log_config=None,
        access_log=False,
        http=GuardedH11Protocol.for_config(config),
        # Open MCP streams would otherwise hold shutdown forever.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        timeout_keep_alive=config.keep_alive_timeout_s,
        h11_max_incomplete_event_size=config.max_header_bytes,
        limit_concurrency=config.max_connections,
    )
