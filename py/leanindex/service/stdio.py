"""MCP over stdio where every line gets an answer: the SDK's `stdio_server` with a checked reader.

The SDK's transport (mcp 2.3.0, `mcp.server.stdio.stdio_server`) decodes stdin leniently (raw
invalid UTF-8 becomes U+FFFD) and hands a line it cannot parse to the session as an exception,
which answers nothing, so the client waits forever. Here each line is read as bytes and checked
the way the SDK's streamable HTTP transport checks a body (`pydantic_core.from_json`, then the
JSON-RPC message model) before the SDK sees it:

- not UTF-8, not JSON (including a lone surrogate escape such as `"\\ud800"`, which the HTTP
  transport refuses too), or nested too deep: JSON-RPC error -32700 (parse error);
- a message whose `id` is not a string or an integer (an object, an array, a float, `true`,
  `null`): -32600 (invalid request) with a null id, as JSON-RPC 2.0 says; the SDK would
  otherwise take it for a notification and answer nothing;
- JSON but not a JSON-RPC message: -32602 (invalid params, as the HTTP transport answers).

The answer carries the line's `id` when one can be read (a lenient parse that accepts lone
surrogates), else a null id; a line without an id is answered all the same, since no answer
would leave a client waiting. So every line gets one answer but a valid notification, which by
JSON-RPC gets none. Good lines are passed on unchanged; stdout stays the SDK's. At the end of
stdin, the requests still running are answered before the session ends (`DRAIN_S`).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

#: A line longer than this (bytes) is refused unread beyond it, like an oversized HTTP body.
MAX_LINE_BYTES = 16 * 1024 * 1024


def check_line(line: bytes) -> tuple[str | None, types.JSONRPCError | None]:
    """Check one stdin line (without its newline): `(text, None)` when the SDK can take it, or
    `(None, error)` with the JSON-RPC error to answer instead."""
    text, _message, refusal = _checked(line)
    return text, refusal


def _checked(line: bytes) -> tuple[str | None, Any, types.JSONRPCError | None]:
    """`check_line`, with the message as parsed (None when refused), so it is parsed once."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, None, _error(None, types.PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte {error.start})")
    try:
        raw = pydantic_core.from_json(line)
    except ValueError as error:
        ident = readable_id(text)
        code = types.PARSE_ERROR if ident is None else types.INVALID_PARAMS
        return None, None, _error(ident, code, f"Parse error: {error}")
    if isinstance(raw, dict) and "id" in raw and not _is_id(raw["id"]):
        # Else the SDK would read it as a notification (which gets no answer) or coerce it.
        return None, None, _error(None, types.INVALID_REQUEST, "Invalid Request: an id is a string or an integer")
    try:
        types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError as error:
        ident = _id_of(raw)
        return None, None, _error(ident, types.INVALID_PARAMS, f"Validation error: not a JSON-RPC message ({error.error_count()} problems)")
    return text, raw, None


def readable_id(text: str) -> int | str | None:
    """The `id` of a line that strict parsing refused, read by Python's lenient parser (which
    accepts lone surrogates); None when it cannot be read (not JSON, or nested too deep)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return _id_of(value)


def _is_id(value: Any) -> bool:
    """Whether `value` is a JSON-RPC id as MCP allows it and an answer can carry it: a string
    UTF-8 can write (no lone surrogate such as `"\\ud800"`, which the lenient parser reads) or
    an integer (not a boolean, a float such as `1.0`, null, an object or an array)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return isinstance(value, int) and not isinstance(value, bool)


def _id_of(value: Any) -> int | str | None:
    if isinstance(value, dict) and _is_id(value.get("id")):
        return value["id"]
    return None


def _error(ident: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))


#: Seconds the server waits at the end of stdin for the answers of requests still running.
DRAIN_S = 120.0


class _CheckedLines:
    """The async line source given to the SDK's `stdio_server` as its stdin: yields the good
    lines as text and answers the others on `write_stream` (set once the transport is up).

    It remembers the ids of the requests it passed on (`pending`) until their answers are sent
    (`answered`, called by `_WatchedAnswers`); at the end of stdin it waits for them, up to
    `DRAIN_S` seconds, before it ends: the SDK ends the session when its input ends and would
    cancel requests still running, leaving a client that wrote its requests and closed stdin
    without their answers."""

    def __init__(self, source: BinaryIO):
        self._source = source
        self.write_stream: Any = None
        self.ready = anyio.Event()
        self.pending: dict[int | str, int] = {}

    def answered(self, ident: Any) -> None:
        """An answer carrying `ident` was sent."""
        if ident in self.pending:
            self.pending[ident] -= 1
            if not self.pending[ident]:
                del self.pending[ident]

    def _passed_on(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and _is_id(message.get("id")):
            self.pending[message["id"]] = self.pending.get(message["id"], 0) + 1

    async def _readline(self, limit: int = -1) -> bytes:
        return await anyio.to_thread.run_sync(self._source.readline, limit, abandon_on_cancel=True)

    async def __aiter__(self) -> AsyncIterator[str]:
        await self.ready.wait()
        while line := await self._readline(MAX_LINE_BYTES + 1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while (rest := await self._readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass  # drop the rest of the oversized line
                await self._answer(_error(None, types.PARSE_ERROR, f"Parse error: the line is longer than {MAX_LINE_BYTES} bytes"))
                continue
            text, message, refusal = _checked(line.rstrip(b"\r\n"))
            if refusal is not None:
                await self._answer(refusal)
                continue
            assert text is not None
            self._passed_on(message)
            yield text
        with anyio.move_on_after(DRAIN_S):
            while self.pending:
                await anyio.sleep(0.01)

    async def _answer(self, refusal: types.JSONRPCError) -> None:
        await self.write_stream.send(SessionMessage(refusal))


class _WatchedAnswers:
    """The session's write stream, telling `lines` which request ids were answered."""

    def __init__(self, stream: Any, lines: _CheckedLines):
        self._stream = stream
        self._lines = lines

    async def send(self, item: SessionMessage) -> None:
        await self._stream.send(item)
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._lines.answered(message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> _WatchedAnswers:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


@asynccontextmanager
async def checked_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """`stdio_server()` reading stdin through `check_line`. Like the SDK, it serves from a
    private copy of fd 0 and points fd 0 at the null device meanwhile (children read EOF); fd 0
    is restored on exit. The copy stays open: a reader thread may still block on it."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        lines = _CheckedLines(os.fdopen(private, "rb", closefd=False))
        # The SDK annotates `stdin` as an anyio file; it only iterates lines, which `lines` gives.
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.write_stream = write_stream
            lines.ready.set()
            yield read_stream, _WatchedAnswers(write_stream, lines)
    finally:
        os.dup2(private, 0)
