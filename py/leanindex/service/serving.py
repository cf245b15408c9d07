"""How `leanindex serve` runs the app on uvicorn (0.54): its settings from `ServiceConfig`, and
the HTTP/1.1 protocol that bounds what a connection may hold.

The protocol is uvicorn's httptools one (the C parser llhttp; uvicorn's pure-Python h11 protocol
costs about 0.1 ms more per request, `benchmarks/service_bench.py`). uvicorn's own limits:
`timeout_keep_alive` (an idle connection is closed that long after its last answer) and
`limit_concurrency` (connections and requests in progress). It bounds neither the size of a
request head (the httptools protocol gathers header lines as they come) nor the time a request
takes to arrive: a connection that opens and sends nothing, or dribbles its head a byte at a
time, is held forever. `GuardedHttpToolsProtocol` adds both bounds, and answers the refusals
uvicorn writes itself with the shared error object and the security headers.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ErrorCode, LeanIndexError
from .announce import announce, withdraw
from .config import ServiceConfig
from .errorshape import SharedErrorHttpToolsProtocol, refusal

#: Seconds uvicorn waits for open connections (MCP streams) at shutdown.
GRACEFUL_SHUTDOWN_S = 5

#: Bytes of a request line besides its target: method, spaces, `HTTP/1.1`, CRLF.
_REQUEST_LINE_BYTES = 20


class _HeadTooLarge(Exception):
    """Raised from a parser callback to stop reading a head over the cap (httptools turns it into
    a parse error, which `send_400_response` answers)."""


class GuardedHttpToolsProtocol(SharedErrorHttpToolsProtocol):
    """uvicorn's httptools protocol with three more bounds (build one with `for_config`):

    - a request (head and body) must arrive in full within `request_read_timeout_s` seconds of
      its first byte, or of the connection's opening for the first request; else the
      connection is closed without an answer (the client was still sending);
    - with more than uvicorn's `limit_concurrency` connections open or requests in progress, a
      request is answered at once with 429 `busy` and the connection closed (uvicorn's own check,
      which would answer plain-text 503, is replaced by this one);
    - a request head (request line and header lines) over `max_header_bytes` is answered 400
      `invalid_request` (`details.reason` "head too large") and the connection closed, whether
      it arrived in one read (counted as the parser hands it over) or is still unfinished
      (counted by the reads that hold it).
    """

    request_read_timeout_s: float = ServiceConfig.request_read_timeout_s
    max_header_bytes: int = ServiceConfig.max_header_bytes

    @classmethod
    def for_config(cls, config: ServiceConfig) -> type[GuardedHttpToolsProtocol]:
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
        self.read_deadline: asyncio.TimerHandle | None = None
        # Requests begun on this connection; whether one is in progress, and still in its head.
        self.messages = 0
        self.in_message = False
        self.reading_head = False
        # The current head's size as the callbacks report it, and as whole reads measure it.
        self.head_bytes = 0
        self.raw_head_bytes = 0
        self.head_too_large = False

    def _limited(self, app: ASGIApp, limit: int) -> ASGIApp:
        async def limited(scope: Scope, receive: Receive, send: Send) -> None:
            # This connection and this request's task are counted already.
            if len(self.connections) > limit or len(self.tasks) > limit:
                error = LeanIndexError(
                    ErrorCode.BUSY,
                    f"the server has more than {limit} connections or requests open; retry in a moment",
                    {"max_connections": limit},
                )
                status, headers, body = refusal(error)
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
            await app(scope, receive, send)

        return limited

    # uvicorn's protocol annotates the transport as `asyncio.Transport`, narrower than the base's.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        # httptools holds a header line until it ends, unseen by the callbacks, so an endless one
        # is measured by whole reads: a read after which the head is still unfinished is all head
        # when that head began before it, or began with it on a connection with no request in
        # progress. (A read that also ended an earlier request is left to the callbacks; the next
        # read is measured whole.)
        reading, idle, begun = self.reading_head, not self.in_message, self.messages
        super().data_received(data)
        if self.reading_head and not self.transport.is_closing() and (
            (reading and self.messages == begun) or (idle and self.messages == begun + 1)
        ):
            self.raw_head_bytes += len(data)
            if self.raw_head_bytes > self.max_header_bytes:
                self._refuse_head()

    # Parser callbacks: a request's first byte arms the read deadline, its last disarms it.
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.messages += 1
        self.in_message = self.reading_head = True
        self.head_bytes = _REQUEST_LINE_BYTES
        self.raw_head_bytes = 0
        if self.read_deadline is None:
            self._arm()

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.reading_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self.in_message = False
        super().on_message_complete()

    def _count_head(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > self.max_header_bytes:
            self.head_too_large = True
            raise _HeadTooLarge

    def send_400_response(self, msg: str) -> None:
        if self.head_too_large:
            self._refuse_head()
        else:
            super().send_400_response(msg)

    def _refuse_head(self) -> None:
        self.head_too_large = True
        self.refuse(LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"malformed HTTP request: the request head is larger than {self.max_header_bytes} bytes",
            {"reason": "head too large", "max_header_bytes": self.max_header_bytes},
        ))

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


def server_config(app: ASGIApp, config: ServiceConfig, port: int) -> uvicorn.Config:
    """The uvicorn settings `leanindex serve` runs `app` with: `config.host` and `port`, no
    uvicorn logging or access log (the app logs), `GuardedHttpToolsProtocol.for_config(config)`,
    and the connection limits of `config` (`keep_alive_timeout_s`, `request_read_timeout_s`,
    `max_header_bytes`, `max_connections`)."""
    return uvicorn.Config(
        app,
        host=config.host,
        port=port,
        log_config=None,
        access_log=False,
        http=GuardedHttpToolsProtocol.for_config(config),
        # Open MCP streams would otherwise hold shutdown forever.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        timeout_keep_alive=config.keep_alive_timeout_s,
        limit_concurrency=config.max_connections,
    )


class AnnouncedServer(uvicorn.Server):
    """uvicorn's server that announces itself in `root` once its socket is bound and withdraws
    the announcement when it stops (`service.announce`), so CLI queries on the same root ask it."""

    def __init__(self, config: uvicorn.Config, root: Path, token_required: bool):
        super().__init__(config)
        self.root = root
        self.token_required = token_required
        self.announcement: Path | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up, then the announcement (the port is known only once bound)."""
        await super().startup(sockets)
        if self.started and self.servers and self.servers[0].sockets:
            port = self.servers[0].sockets[0].getsockname()[1]
            self.announcement = announce(self.root, self.config.host, port, self.token_required)

    def withdraw(self) -> None:
        """Remove the announcement (idempotent)."""
        withdraw(self.announcement)
        self.announcement = None

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Withdraw first, so no new command is sent here, then uvicorn's shutdown."""
        self.withdraw()
        await super().shutdown(sockets)
