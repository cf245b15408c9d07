"""MCP over stdio answers every line (issue 10, item 5).

`leanindex mcp` runs as a real subprocess. After the handshake it gets the campaign's inputs,
one per line: a `tools/call` whose arguments hold a lone surrogate (`"\\ud800"`), a line of
malformed JSON, JSON nested 5,000 deep, a line of raw invalid UTF-8, valid JSON that is not a
JSON-RPC message, and finally a good `tools/list`. Each gets exactly one answer: JSON-RPC error
-32700 with a null id where no id can be read, -32602 (invalid params) with the request's id
otherwise, and the server still answers the good request after them. A request whose `id`
JSON-RPC does not allow (an object, array, float, boolean or null: issue 32) gets -32600 with a
null id, and a notification gets no answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from service_support import sample_root  # noqa: F401  (fixture)

from leanindex.service.stdio import check_line

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
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
        b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "lean.declaration.search", '
        b'"arguments": {"environment": "SAMPLE", "name_contains": "\\ud800"}}}',
        2,
        INVALID_PARAMS,
    ),
    (b'{"jsonrpc": "2.0", "id": 3, "method": ', None, PARSE_ERROR),
    (
        (
            '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "lean.declaration.search", '
            '"arguments": {"environment": "SAMPLE", "name_contains": ' + DEEP + "}}}"
        ).encode(),
        None,
        PARSE_ERROR,
    ),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"x": "\xff\xfe"}}', None, PARSE_ERROR),
    (b'{"id": 6, "hello": "world"}', 6, INVALID_PARAMS),
]
GOOD = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}


def stdio_session(root: Path, lines: list[bytes], expected: int, then: bytes | None = None) -> tuple[list[dict], dict | None, str]:
    """Run `leanindex mcp` on `root`, send the handshake and `lines`, read `expected` answers;
    with `then`, send that one more line and read its answer (the next frame, so whatever was
    sent before it and not answered by then was answered by nothing). Returns (answers, the
    answer to `then`, stderr)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "mcp", "--root", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    # As a real client does, stdin stays open until the answers are in: closing it ends the
    # session, and a request still being served then is cancelled with it.
    frames: list[dict] = []
    following = None
    try:
        assert process.stdin is not None and process.stdout is not None
        handshake = [json.dumps(INITIALIZE).encode(), json.dumps(INITIALIZED).encode()]
        process.stdin.write(b"".join(line + b"\n" for line in [*handshake, *lines]))
        process.stdin.flush()
        reader = ThreadPoolExecutor(1)
        while len(frames) < expected:
            line = reader.submit(process.stdout.readline).result(timeout=60)
            if not line:
                break
            frames.append(json.loads(line))
        if then is not None:
            process.stdin.write(then + b"\n")
            process.stdin.flush()
            following = json.loads(reader.submit(process.stdout.readline).result(timeout=60))
        reader.shutdown()
        process.stdin.close()
        err = process.stderr.read() if process.stderr is not None else b""
        process.wait(timeout=60)
    finally:
        process.kill()
    assert len(frames) == expected, (frames, err.decode()[-2000:])
    assert "Traceback" not in err.decode()
    return frames, following, err.decode()


def test_every_line_gets_an_answer(sample_root: Path) -> None:  # noqa: F811
    lines = [line for line, _id, _code in BAD_LINES] + [json.dumps(GOOD).encode()]
    frames, _, _ = stdio_session(sample_root, lines, expected=1 + len(BAD_LINES) + 1)
    assert all(frame["jsonrpc"] == "2.0" for frame in frames)
    errors = [frame for frame in frames if "error" in frame]
    assert sorted((e["id"] is None, e["id"] or 0, e["error"]["code"]) for e in errors) == sorted(
        (expected_id is None, expected_id or 0, code) for _line, expected_id, code in BAD_LINES
    )
    assert all(isinstance(e["error"]["message"], str) and e["error"]["message"] for e in errors)
    answered = {frame["id"]: frame for frame in frames if "result" in frame}
    assert set(answered) == {1, 7}
    assert {tool["name"] for tool in answered[7]["result"]["tools"]} >= {"lean.declaration.search"}


#: Ids JSON-RPC does not allow (issue 32): each request with one gets -32600 with a null id.
BAD_IDS = [{"a": 1}, [1], 2.5, 3.0, True, False, None]
NOTIFICATION = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}}


def test_check_line_refuses_every_id_but_strings_and_integers() -> None:
    for ident in BAD_IDS:
        for message in ({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}, {"jsonrpc": "2.0", "id": ident, "result": {}}):
            text, refusal = check_line(json.dumps(message).encode())
            assert text is None and refusal is not None, message
            assert refusal.id is None and refusal.error.code == INVALID_REQUEST
    for ident in (7, "seven", -1, 0):
        text, refusal = check_line(json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}).encode())
        assert refusal is None and text is not None
    text, refusal = check_line(json.dumps(NOTIFICATION).encode())
    assert refusal is None and text is not None


def test_every_request_with_a_bad_id_gets_an_answer_and_a_notification_none(sample_root: Path) -> None:  # noqa: F811
    """Each request with an id of the wrong type (object, array, float, `1.0`, booleans, null)
    gets exactly one -32600 with a null id; the valid notification between them gets none; the
    server answers good requests after them, in order."""
    lines = []
    for ident in BAD_IDS:
        lines += [json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}).encode(), json.dumps(NOTIFICATION).encode()]
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}).encode())
    frames, following, _ = stdio_session(
        sample_root, lines, expected=1 + len(BAD_IDS) + 1, then=json.dumps({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}).encode()
    )
    errors = [frame for frame in frames if "error" in frame]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, INVALID_REQUEST)] * len(BAD_IDS)
    assert {frame["id"] for frame in frames if "result" in frame} == {1, 99}
    assert following is not None and following["id"] == 100 and "result" in following


def test_an_oversized_line_is_answered_and_the_next_one_read(monkeypatch) -> None:
    """The reader's own limit, with a 64-byte limit instead of 16 MiB."""
    import io

    import anyio

    from leanindex.service import stdio

    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(stdio, "DRAIN_S", 0.0)  # nothing answers the passed-on request here
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


def test_an_id_no_answer_could_carry_gets_a_null_id_and_the_server_goes_on(sample_root: Path) -> None:  # noqa: F811
    """A string id holding a lone surrogate cannot be written back as UTF-8: the line is answered
    with a null id (before, the server crashed writing the answer and answered nothing more)."""
    lines = [f'{{"jsonrpc":"2.0","id":"{ident}","method":"ping"}}'.encode() for ident in ("\\ud800", "a\\ud800b", "\\udc00")]
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode())
    frames, _, _ = stdio_session(sample_root, lines, expected=1 + 4)
    assert [frame["id"] for frame in frames if "error" in frame] == [None, None, None]
    assert [frame["id"] for frame in frames if "result" in frame] == [1, 9]


def test_requests_written_before_stdin_closes_are_all_answered(sample_root: Path) -> None:  # noqa: F811
    """A client that writes its requests and closes stdin at once still gets every answer: the
    server answers what is running before it ends."""
    requests = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in range(100, 150)]
    ended = subprocess.run(
        [sys.executable, "-m", "leanindex", "mcp", "--root", str(sample_root)],
        input="\n".join([json.dumps(INITIALIZE), json.dumps(INITIALIZED), *requests]) + "\n",
        capture_output=True, text=True, timeout=120,
    )
    assert ended.returncode == 0, ended.stderr[-2000:]
    answered = [json.loads(line)["id"] for line in ended.stdout.splitlines()]
    assert sorted(answered) == [1, *range(100, 150)]
