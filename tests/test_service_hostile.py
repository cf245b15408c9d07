"""The HTTP/MCP surface against hostile input (issue 32): security headers on every answer, one
`Host` allow-list for every route, strict request types on every surface, UTF-8 request
targets, and bounded connections (idle and slow ones closed, a limit answered with `busy`). A
live loopback server (uvicorn in a thread) serves the sample catalog."""

from __future__ import annotations

import json
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from gappy_support import build_gappy
from leanindex.engine import Engine
from leanindex.errors import HTTP_STATUS, ErrorCode
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from leanindex.service.serving import server_config
from service_support import GatedEngine, free_port, live_server, sample_root  # noqa: F401  (fixture)

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TOKEN = "hostile-test-token"


@pytest.fixture(scope="module")
def served(sample_root: Path) -> Iterator[httpx.Client]:  # noqa: F811
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(allowed_hosts=("leanindex.internal",)))) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            yield http
    engine.close()


@pytest.fixture(scope="module")
def guarded(sample_root: Path) -> Iterator[httpx.Client]:  # noqa: F811
    """The same server with a token (for 401 answers and the token page)."""
    engine = Engine(sample_root)
    with live_server(create_app(engine, ServiceConfig(token=TOKEN))) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            yield http
    engine.close()


def error_of(response: httpx.Response, code: ErrorCode) -> dict:
    assert response.status_code == HTTP_STATUS[code], response.text
    body = response.json()
    assert body["error"]["code"] == code.value, body
    return body["error"]


def mcp_call(http: httpx.Client, name: str, arguments: dict, headers: dict | None = None) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return http.post("/mcp", json=message, headers={**MCP_HEADERS, **(headers or {})})


# 1. Security headers


def assert_security_headers(response: httpx.Response) -> None:
    policy = response.headers.get("content-security-policy", "")
    for directive in ("default-src 'none'", "img-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in policy, (response.request.url, policy)
    assert "script-src" not in policy and "unsafe-inline" not in policy
    assert response.headers.get("x-content-type-options") == "nosniff"
    assert response.headers.get("referrer-policy") == "no-referrer"


def test_every_answer_carries_the_security_headers(served: httpx.Client, guarded: httpx.Client) -> None:
    answers = [
        served.get("/"),
        served.get("/v1/environments"),
        served.get("/healthz"),
        served.get("/no/such/route"),
        served.post("/v1/declarations/search", json={"environment": "SAMPLE"}),
        served.get("/v1/environments", headers={"Host": "evil.example"}),
        mcp_call(served, "lean.environments", {}),
        served.get("/mcp", headers={"Accept": "text/html"}),
        guarded.get("/v1/environments"),
        guarded.get("/"),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 404, 400, 421, 200, 406, 401, 401]
    for answer in answers:
        assert_security_headers(answer)


def test_the_pages_need_nothing_the_policy_blocks(served: httpx.Client, guarded: httpx.Client) -> None:
    """No inline style or script (the policy allows neither); every stylesheet is this server's,
    served as CSS (`nosniff` makes browsers check the type)."""
    for page in (served.get("/"), served.get("/", params={"q": "add_comm"}), served.get("/d/Nat.add_comm", params={"env": "SAMPLE"}), guarded.get("/")):
        assert page.headers["content-type"].startswith("text/html")
        assert not re.search(r"<style|<script|\sstyle=|\son[a-z]+=", page.text, re.IGNORECASE), page.text[:300]
        sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page.text)
        for href in sheets:
            assert href.startswith("/") and not href.startswith("//")
            sheet = served.get(href)
            assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/css")
            assert_security_headers(sheet)



def test_the_token_form_is_styled_before_any_token(guarded: httpx.Client) -> None:
    """The token form is what a browser without the token sees: its stylesheet is served to it
    (public, like the form), while the pages themselves still need the token."""
    form = guarded.get("/")
    assert form.status_code == 401 and 'action="/token"' in form.text
    sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', form.text)
    assert sheets, "the token form has no stylesheet"
    for href in sheets:
        sheet = guarded.get(href)
        assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/css")
    assert guarded.get("/d/Nat.add_comm", params={"env": "SAMPLE"}).status_code == 401


# 2. Host allow-list


@pytest.mark.parametrize("path", ["/v1/environments", "/", "/healthz", "/v1/declarations/Nat.add_comm?environment=SAMPLE"])
def test_a_foreign_host_is_refused_on_every_route(served: httpx.Client, path: str) -> None:
    error = error_of(served.get(path, headers={"Host": "rebound.attacker.example:8000"}), ErrorCode.HOST_NOT_ALLOWED)
    assert error["details"]["host"] == "rebound.attacker.example:8000"


def test_a_foreign_host_is_refused_on_mcp(served: httpx.Client) -> None:
    error_of(mcp_call(served, "lean.environments", {}, headers={"Host": "evil.example"}), ErrorCode.HOST_NOT_ALLOWED)


@pytest.mark.parametrize("order", ["own first", "foreign first"])
def test_two_origin_headers_are_refused_whatever_their_order(served: httpx.Client, order: str) -> None:
    """The `/mcp` guard reads one `Origin`: with two, a foreign one could hide behind ours."""
    base = str(served.base_url).rstrip("/")
    origins = [base, "http://evil.example"] if order == "own first" else ["http://evil.example", base]
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = [*MCP_HEADERS.items(), *(("Origin", origin) for origin in origins)]
    error_of(served.post("/mcp", json=message, headers=headers), ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1:80", "[::1]:8000", "leanindex.internal", "leanindex.internal:443"])
def test_the_local_names_and_the_configured_ones_are_served(served: httpx.Client, host: str) -> None:
    assert served.get("/v1/environments", headers={"Host": host}).status_code == 200
    assert mcp_call(served, "lean.environments", {}, headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1.attacker.example", "localhost:80:80", "[::1", "", "localhost:x"])
def test_malformed_or_lookalike_hosts_are_refused(served: httpx.Client, host: str) -> None:
    error_of(served.get("/v1/environments", headers={"Host": host}), ErrorCode.HOST_NOT_ALLOWED)


def test_the_host_list_is_one_for_the_app_and_mcp() -> None:
    from leanindex.service.plumbing import mcp_sessions

    config = ServiceConfig(host="0.0.0.0", allowed_hosts=("Search.Example.org.", "[fd00::1]"))
    assert config.host_names() == {"localhost", "127.0.0.1", "::1", "0.0.0.0", "search.example.org", "fd00::1"}
    security = mcp_sessions(config, create_app.__globals__["build_mcp_server"]([])).security_settings
    assert security is not None and security.enable_dns_rebinding_protection
    assert {h.removesuffix(":*").strip("[]") for h in security.allowed_hosts} == config.host_names()
    for bad in ("evil.example:80", "http://evil.example", "*", "a b"):
        with pytest.raises(ValueError):
            ServiceConfig(allowed_hosts=(bad,))


# 5. Strict request types


@pytest.mark.parametrize(
    "fields",
    [
        {"result_limit": "10"},
        {"result_limit": True},
        {"result_limit": 10.5},
        {"case_sensitive": "yes"},
        {"case_sensitive": "false"},
        {"case_sensitive": 1},
        {"flags": {"instance": "true"}},
        {"flags": {"instance": 1}},
    ],
)
def test_json_bodies_and_mcp_arguments_are_strict(served: httpx.Client, fields: dict) -> None:
    body = {"environment": "SAMPLE", "name_contains": "add", **fields}
    error = error_of(served.post("/v1/declarations/search", json=body), ErrorCode.INVALID_REQUEST)
    assert error["details"]["errors"][0]["loc"][0] == next(iter(fields))
    answer = mcp_call(served, "lean.declaration.search", body).json()["result"]
    assert answer["isError"] and answer["structuredContent"]["error"]["code"] == "invalid_request"


def test_check_bodies_are_strict_too(served: httpx.Client) -> None:
    """A checker route refuses a coerced field before it looks for a checker."""
    body = {"environment": "SAMPLE", "code": "theorem t : True := trivial", "timeout_s": "5"}
    error_of(served.post("/v1/check", json=body), ErrorCode.INVALID_REQUEST)
    error_of(served.post("/v1/check", json={**body, "timeout_s": 5}), ErrorCode.CHECK_DISABLED)


def test_enums_and_literals_still_take_their_json_strings(served: httpx.Client) -> None:
    body = {"environment": "SAMPLE", "name_contains": "add", "kinds": ["theorem"], "order": "relevance", "result_limit": 3,
            "case_sensitive": False, "flags": {"instance": False}}
    answer = served.post("/v1/declarations/search", json=body)
    assert answer.status_code == 200 and answer.json()["total_matches"] > 0
    assert mcp_call(served, "lean.declaration.search", body).json()["result"]["structuredContent"] == answer.json()
    # A number with a zero fraction is the integer it equals (JSON Schema's `integer`).
    assert served.post("/v1/declarations/search", json={**body, "result_limit": 3.0}).json() == answer.json()
    diff = mcp_call(served, "lean.catalog.diff", {"older": "SAMPLE", "newer": "SAMPLE", "categories": ["added"], "limit": 5})
    assert "error" not in diff.json()["result"]["structuredContent"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("result_limit", "+5"), ("result_limit", "010"), ("result_limit", "5.0"), ("result_limit", " 5"), ("result_limit", "1_0"),
     ("result_limit", "٣"), ("case_sensitive", "yes"), ("case_sensitive", "1"), ("case_sensitive", "False"), ("case_sensitive", "on")],
)
def test_query_parameters_take_only_canonical_spellings(served: httpx.Client, key: str, value: str) -> None:
    query = [("environment", "SAMPLE"), ("name_contains", "add"), (key, value)]
    error = error_of(served.get("/v1/declarations/search", params=query), ErrorCode.INVALID_REQUEST)
    assert error["details"]["field"] == key


def test_query_parameters_in_canonical_spelling_are_read(served: httpx.Client) -> None:
    got = served.get("/v1/declarations/search", params=[("environment", "SAMPLE"), ("name_contains", "ADD"), ("case_sensitive", "false"), ("result_limit", "3")])
    posted = served.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "ADD", "case_sensitive": False, "result_limit": 3})
    assert got.status_code == 200 and got.json() == posted.json()


@pytest.mark.parametrize("limit", ["+5", "5.0", "1_0", " 5"])
def test_the_diff_limit_takes_only_canonical_digits(served: httpx.Client, limit: str) -> None:
    error_of(served.get("/v1/environments/SAMPLE/diff/SAMPLE", params={"limit": limit}), ErrorCode.INVALID_REQUEST)


# 6. UTF-8 in the request target


@pytest.mark.parametrize(
    "target",
    [
        "/v1/declarations/search?environment=SAMPLE&name_contains=%FF",
        "/v1/declarations/search?environment=SAMPLE&name_contains=add%C3",
        "/v1/declarations/Nat.add%FF?environment=SAMPLE",
        "/v1/declarations/Nat.add_comm?environment=SAMPLE%ED%A0%80",
        "/?q=%FF",
    ],
)
def test_invalid_utf8_in_the_target_is_refused_like_in_a_body(served: httpx.Client, target: str) -> None:
    error = error_of(served.get(target), ErrorCode.INVALID_REQUEST)
    assert error["details"]["part"] in ("path", "query")


def test_a_body_with_invalid_utf8_is_refused_alike(served: httpx.Client) -> None:
    body = b'{"environment": "SAMPLE", "name_contains": "\xff"}'
    error_of(served.post("/v1/declarations/search", content=body, headers={"Content-Type": "application/json"}), ErrorCode.INVALID_REQUEST)


def test_valid_percent_escapes_are_still_read(served: httpx.Client) -> None:
    answer = served.get("/v1/declarations/%C2%ABterm_%2B_%C2%BB", params={"environment": "SAMPLE"})
    assert answer.status_code == 200 and answer.json()["name"] == "«term_+_»"
    assert json.loads(served.get("/v1/declarations/search?environment=SAMPLE&name_contains=%C2%AB").text)["total_matches"] > 0


# 3. Connections: idle and slow ones are closed, the limit answers `busy`


@contextmanager
def serve_guarded(sample_root: Path, config: ServiceConfig) -> Iterator[int]:  # noqa: F811
    """`leanindex serve`'s uvicorn settings (`serving.server_config`) in a thread on 127.0.0.1."""
    engine = Engine(sample_root)
    port = free_port()
    server = uvicorn.Server(server_config(create_app(engine, config), config, port))
    thread = threading.Thread(target=server.run, name=f"guarded-{port}", daemon=True)
    thread.start()
    try:
        for _ in range(3000):
            if server.started or not thread.is_alive():
                break
            time.sleep(0.01)
        assert server.started, "the test server did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        engine.close()


def closed_by_server(conn: socket.socket) -> bool:
    """Read until the server closes the connection (True), or the socket's own timeout passes
    while it still holds it (False)."""
    try:
        while conn.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_idle_and_slow_connections_are_closed_and_the_server_still_answers(sample_root: Path) -> None:  # noqa: F811
    config = ServiceConfig(request_read_timeout_s=1.0, keep_alive_timeout_s=1, max_connections=256)
    with serve_guarded(sample_root, config) as port:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(40)]
        slow = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(20)]
        for conn in slow:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        for _ in range(8):  # a header byte now and then: each byte would reset a keep-alive timer
            for conn in slow:
                try:
                    conn.sendall(b"a")
                except OSError:
                    pass
            time.sleep(0.25)
        slow_body = socket.create_connection(("127.0.0.1", port), timeout=30)
        slow_body.sendall(b"POST /v1/declarations/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        kept = socket.create_connection(("127.0.0.1", port), timeout=30)
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert kept.recv(65536).startswith(b"HTTP/1.1 200")
        for conn in [*idle, *slow, slow_body, kept]:
            with conn:
                assert closed_by_server(conn)
        answer = httpx.get(f"http://127.0.0.1:{port}/v1/environments", timeout=30)
        assert answer.status_code == 200


def test_past_the_connection_limit_a_request_is_busy(sample_root: Path) -> None:  # noqa: F811
    config = ServiceConfig(request_read_timeout_s=60.0, max_connections=4)
    with serve_guarded(sample_root, config) as port:
        held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(4)]
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/v1/environments", timeout=30)
            error_of(answer, ErrorCode.BUSY)
            assert_security_headers(answer)
        finally:
            for conn in held:
                conn.close()
        for _ in range(100):  # the server notices the closed sockets
            answer = httpx.get(f"http://127.0.0.1:{port}/v1/environments", timeout=30)
            if answer.status_code == 200:
                break
            time.sleep(0.05)
        assert answer.status_code == 200


def test_a_head_over_the_cap_is_refused_with_the_shared_shape(sample_root: Path) -> None:  # noqa: F811
    with serve_guarded(sample_root, ServiceConfig(max_header_bytes=2048)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            # A head still unfinished past the cap (h11 measures what it holds unparsed).
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 4096)
            received = b""
            while chunk := conn.recv(65536):
                received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400") and b"content-security-policy: default-src 'none'" in head.lower()
        assert json.loads(body)["error"]["code"] == "invalid_request"



@pytest.mark.parametrize("header_bytes", [3000, 20000, 70000])
def test_a_whole_head_over_the_cap_in_one_read_is_refused(sample_root: Path, header_bytes: int) -> None:  # noqa: F811
    """A complete head larger than the cap, sent at once (h11's limit only sees unfinished
    heads), is refused the same way; a head under the cap is answered."""
    with serve_guarded(sample_root, ServiceConfig(max_header_bytes=2048)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * header_bytes + b"\r\nConnection: close\r\n\r\n")
            received = b""
            while chunk := conn.recv(65536):
                received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), head
        assert json.loads(body)["error"]["code"] == "invalid_request"
        small = httpx.get(f"http://127.0.0.1:{port}/healthz", headers={"X-Big": "a" * 1000}, timeout=30)
        assert small.status_code == 200


def test_a_head_dribbled_past_the_cap_is_refused(sample_root: Path) -> None:  # noqa: F811
    """A head that grows a read at a time (its last header line never ending, so the HTTP
    parser never hands it over) is refused once its reads pass the cap, not held until the read
    deadline."""
    with serve_guarded(sample_root, ServiceConfig(max_header_bytes=2048, request_read_timeout_s=60.0)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            received = b""
            for _ in range(40):
                time.sleep(0.02)
                try:
                    conn.sendall(b"a" * 256)
                except OSError:
                    break  # refused and closed
            while chunk := conn.recv(65536):
                received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), head
        error = json.loads(body)["error"]
        assert (error["code"], error["details"]["reason"]) == ("invalid_request", "head too large")


def test_pipelined_requests_under_the_cap_are_answered(sample_root: Path) -> None:  # noqa: F811
    """Two requests in one write, each head under the cap and both together over it: both are
    answered (a head is measured alone, not with the bytes of the request before it)."""
    with serve_guarded(sample_root, ServiceConfig(max_header_bytes=2048)) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            one = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 1500 + b"\r\n\r\n"
            conn.sendall(one + one.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
            received = b""
            while chunk := conn.recv(65536):
                received += chunk
        assert received.count(b"HTTP/1.1 200") == 2, received[:300]


# 7. No server path in any error a client can provoke


class BrokenEngine(Engine):
    """An engine whose search fails unexpectedly, naming a server path in its exception."""

    def search(self, request: object) -> object:
        raise RuntimeError(f"failure reading {self.root}/catalog/secret.parquet")


def leaked_paths(text: str, paths: list[str]) -> list[str]:
    """The server paths (and any absolute path under a usual top folder) that `text` shows."""
    found = [path for path in paths if path in text]
    found += re.findall(r"(?<![\w:/.])/(?:tmp|home|root|usr|var|work|opt|srv|private)/[^\s\"']*", text)
    return found


@pytest.fixture(scope="module")
def damaged_roots(sample_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:  # noqa: F811
    """Copies of the sample root: `tampered` (a catalog file's bytes changed), `missing` (a
    catalog file deleted), `no_catalog` (a manifest whose catalog folder is gone); and `gappy`, a
    catalog with absent facts and missing modules (`gappy_support`)."""
    roots = {}
    for name in ("tampered", "missing", "no_catalog"):
        root = tmp_path_factory.mktemp(f"leak-{name}") / "root"
        shutil.copytree(sample_root, root, symlinks=True)
        catalog = (root / "catalog" / "sample").resolve()
        if name == "tampered":
            target = catalog / "index" / "kind.npy"
            data = bytearray(target.read_bytes())
            data[-1] ^= 0xFF
            target.write_bytes(bytes(data))
        elif name == "missing":
            (catalog / "index" / "kind.npy").unlink()
        else:
            link = root / "catalog" / "sample"
            shutil.rmtree(catalog)
            if link.is_symlink():
                link.unlink()
        roots[name] = root
    gappy = tmp_path_factory.mktemp("leak-gappy") / "root"
    build_gappy(gappy)
    roots["gappy"] = gappy
    return roots


def provoked_answers(sample_root: Path, damaged_roots: dict[str, Path]) -> Iterator[tuple[str, str, str]]:  # noqa: F811
    """(what, code, body text) for every error code a client can provoke over HTTP and MCP
    without a checker."""
    search = {"environment": "SAMPLE", "name_contains": "add"}

    def over_both(http: httpx.Client, what: str, body: dict) -> Iterator[tuple[str, str, str]]:
        # MCP first: after an unexpected exception Starlette re-raises and uvicorn closes the
        # (kept-alive) connection of the HTTP answer.
        result = mcp_call(http, "lean.declaration.search", body)
        yield f"mcp {what}", result.json()["result"]["structuredContent"]["error"]["code"], result.text
        answer = http.post("/v1/declarations/search", json=body)
        yield f"http {what}", answer.json()["error"]["code"], answer.text

    def serving(root: Path, config: ServiceConfig, engine: Engine | None = None) -> Iterator[httpx.Client]:
        engine = engine or Engine(root)
        try:
            with live_server(create_app(engine, config)) as url, httpx.Client(base_url=url, timeout=30) as http:
                yield http
        finally:
            engine.close()

    for http in serving(sample_root, ServiceConfig(max_body_bytes=4096)):
        yield from over_both(http, "invalid_request", {**search, "result_limit": "10"})
        yield from over_both(http, "unknown_environment", {**search, "environment": "NOPE"})
        answer = http.get("/v1/declarations/No.such.name", params={"environment": "SAMPLE"})
        yield "http not_found", answer.json()["error"]["code"], answer.text
        result = mcp_call(http, "lean.declaration.inspect", {"environment": "SAMPLE", "declaration_name": "No.such.name"})
        yield "mcp not_found", result.json()["result"]["structuredContent"]["error"]["code"], result.text
        answer = http.post("/v1/declarations/search", json={**search, "after": "x" * 5000})
        yield "http payload_too_large", answer.json()["error"]["code"], answer.text
        answer = http.post("/v1/check", json={"environment": "SAMPLE", "code": "theorem t : True := trivial"})
        yield "http check_disabled", answer.json()["error"]["code"], answer.text
        answer = http.get("/v1/environments", headers={"Host": "evil.example"})
        yield "http host_not_allowed", answer.json()["error"]["code"], answer.text
        answer = http.get("/v1/declarations/search?environment=SAMPLE&name_contains=%FF")
        yield "http invalid_request (target)", answer.json()["error"]["code"], answer.text
    for http in serving(sample_root, ServiceConfig(token=TOKEN)):
        answer = http.get("/v1/environments")
        yield "http unauthorized", answer.json()["error"]["code"], answer.text
    for http in serving(sample_root, ServiceConfig(max_concurrent=0)):
        yield from over_both(http, "busy", search)
    for name in ("tampered", "missing", "no_catalog"):
        for http in serving(damaged_roots[name], ServiceConfig()):
            yield from over_both(http, name, search)
            answer = http.get("/v1/declarations/Nat.add_comm", params={"environment": "SAMPLE"})
            yield f"http inspect {name}", answer.json()["error"]["code"], answer.text
            answer = http.get("/readyz")
            yield f"http readyz {name}", answer.json()["error"]["code"], answer.text
            answer = http.get("/v1/environments")
            yield f"http environments {name}", "-", answer.text
    gated = GatedEngine(sample_root)
    try:
        for http in serving(sample_root, ServiceConfig(time_budget_s=0.2), gated):
            yield from over_both(http, "timeout", search)
    finally:
        gated.release.set()
    for http in serving(sample_root, ServiceConfig(), BrokenEngine(sample_root)):
        yield from over_both(http, "internal_error", search)
    gappy = damaged_roots["gappy"]
    for http in serving(gappy, ServiceConfig()):
        yield from over_both(http, "not_recorded", {"environment": "GAPPY", "kinds": ["recursor"]})
        answer = http.get("/v1/declarations/Gone.lemma", params={"environment": "GAPPY"})
        yield "http missing_module", answer.json()["error"]["code"], answer.text
        result = mcp_call(http, "lean.declaration.inspect", {"environment": "GAPPY", "declaration_name": "Gone.lemma"})
        yield "mcp missing_module", result.json()["result"]["structuredContent"]["error"]["code"], result.text
        page = http.get("/d/Gone.lemma", params={"env": "GAPPY"})
        yield "page missing_module", "-", page.text
        page = http.get("/", params={"env": "NOPE", "q": "add"})
        yield "page unknown_environment", "-", page.text


def test_no_error_answer_shows_a_server_path(sample_root: Path, damaged_roots: dict[str, Path]) -> None:  # noqa: F811
    paths = sorted({
        str(path) for root in (sample_root, *damaged_roots.values()) for path in (root, root.resolve(), root.parent)
    } | {tempfile.gettempdir() + "/", str(Path.cwd()), sys.prefix})
    answers = list(provoked_answers(sample_root, damaged_roots))
    codes = {code for _what, code, _text in answers}
    assert codes >= {
        "invalid_request", "unknown_environment", "not_found", "payload_too_large", "check_disabled", "host_not_allowed",
        "unauthorized", "busy", "digest_mismatch", "catalog_unavailable", "timeout", "internal_error", "not_recorded",
        "missing_module",
    }, codes
    # The rest are answered only by a checker (tests/test_service_check.py and the checker's
    # tests), or raised by builds and imports, which no client request starts.
    assert {code.value for code in ErrorCode} - codes == {
        "backend_error", "forbidden_command", "header_mismatch", "unknown_proof_state", "lean_not_installed", "invalid_stream",
        "io_error", "storage_full",
    }
    leaks = {what: leaked_paths(text, paths) for what, _code, text in answers if leaked_paths(text, paths)}
    assert not leaks, json.dumps(leaks, indent=1)
