"""Every HTTP answer that is not a success carries the shared error object (issue 10, item 6).

A real `leanindex serve` subprocess on a loopback port gets the campaign's requests, some as raw
bytes on a socket: `GET /mcp` without the MCP Accept header, a foreign `Host` on `/mcp`, two
conflicting `Content-Length` headers (refused by the HTTP parser before the application runs),
plus 404/405/413/400 for comparison. A 500 comes from an in-process server whose engine raises.
Each answer must be JSON of the shape `{"error": {"code", "message", "details"}}`, except MCP
protocol errors to a POST on `/mcp`, which keep JSON-RPC framing (never plain text).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from leanindex.engine import Engine
from leanindex.errors import ErrorCode
from leanindex.models import SearchRequest, SearchResponse
from leanindex.service.http import create_app
from service_support import free_port, live_server, sample_root, wait_until_serving  # noqa: F401  (fixture)


def assert_shared(status: int, content_type: str, body: bytes) -> dict:
    assert status >= 400
    assert content_type.startswith("application/json"), (status, content_type, body[:200])
    data = json.loads(body)
    assert set(data) == {"error"}, data
    error = data["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] in {code.value for code in ErrorCode}
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    return error


@pytest.fixture(scope="module")
def served(sample_root: Path) -> Iterator[tuple[str, int]]:  # noqa: F811
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(sample_root), "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, base)
        yield base, port
    finally:
        process.terminate()
        process.wait(timeout=30)


def raw_exchange(port: int, request: bytes) -> tuple[int, str, bytes]:
    """Send raw bytes, read until the server closes; return status, content type and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return status, {k.lower(): v for k, v in headers.items()}.get("content-type", ""), body


def test_get_mcp_without_the_accept_header(served: tuple[str, int]) -> None:
    base, _ = served
    answer = httpx.get(f"{base}/mcp", headers={"Accept": "text/html"})
    assert_shared(answer.status_code, answer.headers["content-type"], answer.content)


def test_bad_host_on_mcp(served: tuple[str, int]) -> None:
    base, _ = served
    answer = httpx.post(
        f"{base}/mcp",
        headers={"Host": "evil.example", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
    )
    assert answer.status_code == 421
    assert_shared(answer.status_code, answer.headers["content-type"], answer.content)


def test_conflicting_content_length(served: tuple[str, int]) -> None:
    _, port = served
    body = b'{"environment": "SAMPLE", "name_contains": "add"}'
    request = (
        b"POST /v1/declarations/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\nContent-Length: {len(body) + 5}\r\n\r\n".encode()
        + body
    )
    status, content_type, answer = raw_exchange(port, request)
    assert status == 400
    assert assert_shared(status, content_type, answer)["code"] == "invalid_request"


def test_other_refusals_share_the_shape(served: tuple[str, int]) -> None:
    base, _ = served
    for answer in (
        httpx.get(f"{base}/no/such/route"),
        httpx.delete(f"{base}/v1/declarations/search"),
        httpx.post(f"{base}/v1/declarations/search", content=b"{not json", headers={"Content-Type": "application/json"}),
        httpx.post(f"{base}/v1/declarations/search", content=b"x" * (2 * 1024 * 1024), headers={"Content-Type": "application/json"}),
    ):
        assert_shared(answer.status_code, answer.headers["content-type"], answer.content)


def test_mcp_protocol_errors_on_post_keep_json_rpc_framing(served: tuple[str, int]) -> None:
    base, _ = served
    answer = httpx.post(
        f"{base}/mcp",
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        content=b"{not json",
    )
    assert answer.status_code == 400
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32700


class BrokenEngine(Engine):
    """An engine whose search fails with an unexpected exception (a defect, not a refusal)."""

    def search(self, request: SearchRequest) -> SearchResponse:
        raise RuntimeError("unexpected failure inside the engine")


def test_an_unexpected_exception_is_a_shaped_500(sample_root: Path) -> None:  # noqa: F811
    engine = BrokenEngine(sample_root)
    try:
        with live_server(create_app(engine)) as base:
            answer = httpx.post(f"{base}/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a"})
            assert answer.status_code == 500
            error = assert_shared(answer.status_code, answer.headers["content-type"], answer.content)
            assert error["code"] == "internal_error"
            assert "unexpected failure" not in answer.text  # no internals leak to clients
            # The server goes on answering.
            assert httpx.get(f"{base}/healthz").status_code == 200
    finally:
        engine.close()
