"""MCP over stdio answers every line (issue 10, item 5).

`leanindex mcp` runs as a real subprocess. After the handshake it gets the campaign's inputs,
one per line: a `tools/call` whose arguments hold a lone surrogate (`"\\ud800"`), a line of
malformed JSON, JSON nested 5,000 deep, a line of raw invalid UTF-8, valid JSON that is not a
JSON-RPC message, and finally a good `tools/list`. Each gets exactly one answer: JSON-RPC error
-32700 with a null id where no id can be read, -32602 (invalid params) with the request's id
otherwise, and the server still answers the good request after them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from service_support import sample_root  # noqa: F401  (fixture)

PARSE_ERROR = -32700
INVALID_PARAMS = -32602

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DEEP = "[" * 5000 + "]" * 5000

#: (line, the id its answer must carry, the error code it must carry)
BAD_LINES: list[tuple[bytes, int | None, int]] = [
    (
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "lean_declaration_search", '
        b'"arguments": {"environment": "SAMPLE", "name_contains": "\\ud800"}}}',
        2,
        INVALID_PARAMS,
    ),
    (b'{"jsonrpc": "2.0", "id": 3, "method": ', None, PARSE_ERROR),
    (
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "lean_declaration_search", '
            '"arguments": {"environment": "SAMPLE", "name_contains": ' + DEEP + "}}}"
        ).encode(),
        None,
        PARSE_ERROR,
    ),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"x": "\xff\xfe"}}', None, PARSE_ERROR),
    (b'{"id": 6, "hello": "world"}', 6, INVALID_PARAMS),
]
GOOD = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}


def test_every_line_gets_an_answer(sample_root: Path) -> None:  # noqa: F811
    lines = [json.dumps(INITIALIZE).encode(), json.dumps(INITIALIZED).encode()]
    lines += [line for line, _id, _code in BAD_LINES]
    lines.append(json.dumps(GOOD).encode())
    expected = 1 + len(BAD_LINES) + 1
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "mcp", "--root", str(sample_root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    # As a real client does, stdin stays open until the answers are in: closing it ends the
    # session, and a request still being served then is cancelled with it.
    frames: list[dict] = []
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(line + b"\n" for line in lines))
        process.stdin.flush()
        reader = ThreadPoolExecutor(1)
        while len(frames) < expected:
            line = reader.submit(process.stdout.readline).result(timeout=60)
            if not line:
                break
            frames.append(json.loads(line))
        reader.shutdown()
        process.stdin.close()
        err = process.stderr.read() if process.stderr is not None else b""
        process.wait(timeout=60)
    finally:
        process.kill()
    assert len(frames) == expected, (frames, err.decode()[-2000:])
    assert all(frame["jsonrpc"] == "2.0" for frame in frames)
    errors = [frame for frame in frames if "error" in frame]
    assert sorted((e["id"] is None, e["id"] or 0, e["error"]["code"]) for e in errors) == sorted(
        (expected_id is None, expected_id or 0, code) for _line, expected_id, code in BAD_LINES
    )
    assert all(isinstance(e["error"]["message"], str) and e["error"]["message"] for e in errors)
    answered = {frame["id"]: frame for frame in frames if "result" in frame}
    assert set(answered) == {1, 7}
    assert {tool["name"] for tool in answered[7]["result"]["tools"]} >= {"lean.declaration.search"}
    assert "Traceback" not in err.decode()


def test_an_oversized_line_is_answered_and_the_next_one_read(monkeypatch) -> None:
    """The reader's own limit, with a 64-byte limit instead of 16 MiB."""
    import io

    import anyio

    from leanindex.service import stdio

    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 64)
    good = json.dumps(GOOD).encode()
    assert len(good) <= 64
    source = io.BytesIO(b'{"id": 9, "x": "' + b"y" * 200 + b'"}\n' + good + b"\n")
    answered = []

    class Sink:
        async def send(self, message) -> None:
            answered.append(message.message)

    async def run() -> list[str]:
        lines = stdio._CheckedLines(source)
        lines.write_stream = Sink()
        lines.ready.set()
        return [text async for text in lines]

    passed = anyio.run(run)
    assert passed == [good.decode()]
    assert [(a.id, a.error.code) for a in answered] == [(None, PARSE_ERROR)]
