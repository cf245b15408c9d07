"""Catalog files that are not regular files, and catalog reads that never end (issue 32).

A FIFO, a device, a directory or a symbolic link in a catalog file's place must be refused with
`catalog_unavailable` before any read, by `verify_catalog`, `leanindex catalog verify`, the
engine and the HTTP API, without holding up the other profiles or the server; once the file is
put back the profile serves again without a restart. A read that makes no progress is given up.
Error messages and details never carry a server path.

Every call that could hang without the fix runs on a thread with a generous bound (a hang
fails the test instead of wedging the run), and each FIFO made is opened for writing at the
end, so a reader stuck on it returns.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from click.testing import CliRunner
from leanindex.catalog import files as catalog_files_module
from leanindex.catalog.files import FileChanged, digest_fd
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, HTTP_STATUS, ErrorCode, LeanIndexError
from leanindex.models import InspectRequest, SearchRequest
from leanindex.sample import sample_stream_path
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from service_support import live_server
from streamkit import build

T = TypeVar("T")
SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
QUERY = SearchRequest(environment="SAMPLE", name_contains="add_comm")
OTHER_QUERY = SearchRequest(environment="OTHER", name_contains="add_comm")
#: Bound on a call that must answer at once; only reached when it hangs (the bug).
HANG_S = 60
FILES = ["index/names.npy", "declarations.parquet", "catalog.duckdb", "index/text/vocabulary.json", "manifest.json"]


def bounded(call: Callable[[], T]) -> T:
    """`call()` on a thread; its result or exception, or a failure when it hangs."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001  (re-raised below)
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_S)
    assert not thread.is_alive(), "the call hung on a catalog file"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def refused(call: Callable[[], object], code: ErrorCode = ErrorCode.CATALOG_UNAVAILABLE) -> LeanIndexError:
    with pytest.raises(LeanIndexError) as caught:
        bounded(call)
    assert caught.value.code is code, caught.value.message
    return caught.value


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """SAMPLE and OTHER (the same records) under one root; FIFOs left under it are opened for
    writing at the end, so that a thread blocked on one (without the fix) returns."""
    root = tmp_path / "root"
    build(root, "sample", SAMPLE_LINES)
    build(root, "other", SAMPLE_LINES)
    yield root
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if stat.S_ISFIFO(os.lstat(path).st_mode):
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass


@pytest.fixture
def engine(root: Path) -> Iterator[Engine]:
    served = Engine(root)
    assert served.search(QUERY).total_matches > 0 and served.search(OTHER_QUERY).total_matches > 0
    yield served
    served.close()


def catalog_path(root: Path, relative: str) -> Path:
    return CatalogPaths.of(root, "sample").catalog_dir / relative


def set_aside(root: Path, relative: str) -> Callable[[], None]:
    """Move the catalog file away; return the function that puts it back."""
    path = catalog_path(root, relative)
    aside = path.with_name(path.name + ".aside")
    os.rename(path, aside)

    def restore() -> None:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()
        os.rename(aside, path)

    return restore


def make_fifo(root: Path, relative: str) -> Callable[[], None]:
    restore = set_aside(root, relative)
    os.mkfifo(catalog_path(root, relative))
    return restore


def make_zero_link(root: Path, relative: str) -> Callable[[], None]:
    restore = set_aside(root, relative)
    os.symlink("/dev/zero", catalog_path(root, relative))
    return restore


def make_device(root: Path, relative: str) -> Callable[[], None]:
    probe = root / "device-probe"
    try:
        os.mknod(probe, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    except OSError as error:
        pytest.skip(f"cannot make a device node here: {error}")
    restore = set_aside(root, relative)
    os.rename(probe, catalog_path(root, relative))
    return restore


def make_folder(root: Path, relative: str) -> Callable[[], None]:
    restore = set_aside(root, relative)
    catalog_path(root, relative).mkdir()
    return restore


def make_link_to_copy(root: Path, relative: str) -> Callable[[], None]:
    """A symbolic link to an identical copy: the bytes verify, the link is still refused."""
    path = catalog_path(root, relative)
    copy = path.with_name(path.name + ".copy")
    shutil.copyfile(path, copy)
    restore = set_aside(root, relative)
    os.symlink(copy.name, path)
    return restore


REPLACEMENTS = {
    "fifo": (make_fifo, "a FIFO"),
    "link to /dev/zero": (make_zero_link, "symbolic link"),
    "device": (make_device, "a device"),
    "directory": (make_folder, "a directory"),
    "link to an identical copy": (make_link_to_copy, "symbolic link"),
}


def assert_refused_everywhere(root: Path, engine: Engine, relative: str, words: str) -> None:
    error = refused(lambda: verify_catalog(CatalogPaths.of(root, "sample")))
    assert error.details["file"] == relative and words in error.message
    result = bounded(lambda: CliRunner().invoke(main, ["catalog", "verify", "--profile", "SAMPLE", "--root", str(root), "--json"]))
    assert result.exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE], result.output
    assert json.loads(result.stdout)["error"]["details"]["file"] == relative
    for _ in range(3):  # every call, none of them wedged by the one before
        assert refused(lambda: engine.search(QUERY)).details["file"] == relative
        refused(lambda: engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_comm")))
        assert bounded(lambda: engine.search(OTHER_QUERY)).total_matches > 0
    listed = {e.environment: e.verified for e in bounded(engine.environments).environments}
    assert listed == {"SAMPLE": False, "OTHER": True}


@pytest.mark.parametrize("relative", FILES)
@pytest.mark.parametrize("kind", REPLACEMENTS)
def test_a_file_that_is_not_regular_is_refused_and_the_profile_recovers(root: Path, engine: Engine, kind: str, relative: str) -> None:
    make, words = REPLACEMENTS[kind]
    restore = make(root, relative)
    assert_refused_everywhere(root, engine, relative, words)
    restore()
    assert [r.name for r in bounded(lambda: engine.search(QUERY)).results] == ["Nat.add_comm"]
    assert verify_catalog(CatalogPaths.of(root, "sample")).profile == "sample"


def test_a_linked_folder_inside_the_catalog_is_refused(root: Path, engine: Engine) -> None:
    """`index/text` as a link to an identical copy of itself: the builder makes no links."""
    folder = catalog_path(root, "index/text")
    copy = folder.with_name("text.copy")
    shutil.copytree(folder, copy)
    shutil.rmtree(folder)
    os.symlink(copy.name, folder)
    error = refused(lambda: engine.search(QUERY))
    assert error.details["file"].startswith("index/text/") and "symbolic link" in error.message
    folder.unlink()
    os.rename(copy, folder)
    assert bounded(lambda: engine.search(QUERY)).total_matches > 0


def test_a_file_whose_size_changes_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(FileChanged):
            digest_fd(fd, 999)  # one byte more than the size it had when "opened"
        with pytest.raises(FileChanged):
            digest_fd(fd, 1001)  # one byte less
        assert digest_fd(fd, 1000) is not None
    finally:
        os.close(fd)


def test_a_read_without_progress_is_given_up_and_holds_nothing(root: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read stuck in the kernel (a hung mount) is simulated by a digest that waits for the
    test; the verification answers `catalog_unavailable` after the stall bound, every later one
    too (the stuck thread holds no lock), and once reads work again the profile serves."""
    stuck = threading.Event()
    real = catalog_files_module.digest_fd
    names = catalog_path(root, "index/names.npy")

    def hanging(fd: int, size: int, *args: object) -> str | None:
        if os.fstat(fd).st_ino == names.stat().st_ino and not stuck.is_set():
            stuck.wait(HANG_S)
        return real(fd, size, *args)

    monkeypatch.setattr(catalog_files_module, "STALL_S", 0.2)
    monkeypatch.setattr(catalog_files_module, "digest_fd", hanging)
    os.utime(names)  # a stat change, so the engine verifies again
    for _ in range(2):
        error = refused(lambda: engine.search(QUERY))
        assert "progress" in error.message and error.details["file"] == "index/names.npy"
        refused(lambda: verify_catalog(CatalogPaths.of(root, "sample")))
    assert bounded(lambda: engine.search(OTHER_QUERY)).total_matches > 0
    stuck.set()
    assert [r.name for r in bounded(lambda: engine.search(QUERY)).results] == ["Nat.add_comm"]


def test_http_a_fifo_answers_503_and_wedges_nothing(root: Path) -> None:
    """Through the HTTP app with 4 slots: SAMPLE answers 503 `catalog_unavailable` on every
    request (never 504), OTHER keeps answering 200 (never 429), /readyz says which profile is
    unverified, and after the file is put back SAMPLE answers 200 again."""
    engine = Engine(root)
    search = {"environment": "SAMPLE", "name_contains": "add_comm"}
    other = {**search, "environment": "OTHER"}
    with live_server(create_app(engine, ServiceConfig(max_concurrent=4, time_budget_s=3))) as url:
        with httpx.Client(base_url=url, timeout=HANG_S) as http:
            assert http.post("/v1/declarations/search", json=search).status_code == 200
            restore = make_fifo(root, "index/names.npy")
            statuses: list[int] = []

            def ask(body: dict) -> None:
                statuses.append(http.post("/v1/declarations/search", json=body).status_code)

            for _ in range(3):
                threads = [threading.Thread(target=ask, args=(search,)) for _ in range(3)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join(HANG_S)
                answer = http.post("/v1/declarations/search", json=search)
                assert answer.status_code == HTTP_STATUS[ErrorCode.CATALOG_UNAVAILABLE], answer.text
                assert answer.json()["error"]["code"] == "catalog_unavailable"
                assert answer.json()["error"]["details"]["file"] == "index/names.npy"
                assert http.post("/v1/declarations/search", json=other).status_code == 200
            assert statuses == [HTTP_STATUS[ErrorCode.CATALOG_UNAVAILABLE]] * 9
            ready = http.get("/readyz")
            assert ready.status_code == 503 and ready.json()["error"]["details"]["unverified"] == ["SAMPLE"]
            restore()
            assert http.post("/v1/declarations/search", json=search).json()["results"][0]["name"] == "Nat.add_comm"
            assert http.get("/readyz").status_code == 200
    engine.close()


def break_by(root: Path, how: str) -> None:
    paths = CatalogPaths.of(root, "sample")
    if how == "fifo":
        make_fifo(root, "index/kind.npy")
    elif how == "deleted file":
        (paths.catalog_dir / "index/kind.npy").unlink()
    elif how == "flipped byte":
        path = paths.catalog_dir / "catalog.duckdb"
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "manifest not json":
        paths.served_manifest.write_text("{not json")
    elif how == "manifest edited":
        data = json.loads(paths.served_manifest.read_text())
        data["lean"]["version"] = "4.99.0"
        paths.served_manifest.write_text(json.dumps(data))
    elif how == "manifest missing":
        paths.served_manifest.unlink()
        paths.manifest.unlink()  # then the profile is unknown
    elif how == "no catalog":
        paths.catalog_dir.unlink()


@pytest.mark.parametrize("how", ["fifo", "deleted file", "flipped byte", "manifest not json", "manifest edited", "manifest missing", "no catalog"])
def test_errors_carry_no_server_path(root: Path, how: str) -> None:
    """What a client sees (HTTP body: message and details) names profiles and catalog-relative
    files, never the root or another absolute path."""
    break_by(root, how)
    engine = Engine(root)
    with live_server(create_app(engine, ServiceConfig(time_budget_s=HANG_S))) as url:
        with httpx.Client(base_url=url, timeout=HANG_S) as http:
            answers = [
                http.post("/v1/declarations/search", json={"environment": "SAMPLE", "name_contains": "a"}),
                http.post("/v1/declarations/search", json={"environment": "NOPE", "name_contains": "a"}),
                http.get("/v1/environments"),
                http.get("/readyz"),
            ]
    engine.close()
    assert answers[0].status_code >= 400 and answers[1].status_code == 404
    assert answers[1].json()["error"]["details"] == {"environment": "NOPE", "known": ["OTHER", "SAMPLE"] if how != "manifest missing" else ["OTHER"]}
    for answer in answers:
        for server_path in {str(root), str(root.resolve()), str(root.parent), "/tmp/"}:
            assert server_path not in answer.text, (answer.request.url, answer.text)


def test_the_cli_prints_the_root_after_a_catalog_error(root: Path) -> None:
    """The error itself names no server path (it is what remote clients get); on the user's own
    terminal the command says which root it looked under, after the message (stderr only)."""
    runner = CliRunner()
    unknown = runner.invoke(main, ["search", "--root", str(root), "-e", "NOPE", "-n", "add"])
    assert unknown.exit_code == EXIT_STATUS[ErrorCode.UNKNOWN_ENVIRONMENT]
    assert f"root: {root}" in unknown.stderr and "OTHER, SAMPLE" in unknown.stderr
    as_json = runner.invoke(main, ["search", "--root", str(root), "-e", "NOPE", "-n", "add", "--json"])
    assert str(root) not in as_json.stdout and json.loads(as_json.stdout)["error"]["code"] == "unknown_environment"


def test_the_environments_tool_lists_a_broken_catalog_as_not_serving(root: Path) -> None:
    """`lean.environments` over MCP on a root with a damaged catalog answers (the broken profile
    listed as not serving, with its code), as `GET /v1/environments` does; before, its text
    rendering failed and the client got a JSON-RPC error with Python's message."""
    (CatalogPaths.of(root, "sample").catalog_dir / "catalog.duckdb.wal").write_bytes(b"x" * 100)
    engine = Engine(root)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lean.environments", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with live_server(create_app(engine)) as url:
        answer = httpx.post(f"{url}/mcp", json=message, headers=headers, timeout=HANG_S)
    engine.close()
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert not result.get("isError"), result
    assert "SAMPLE: not serving (digest_mismatch)" in result["content"][0]["text"]
    listed = {e["environment"]: e for e in result["structuredContent"]["environments"]}
    assert listed["SAMPLE"]["verified"] is False and listed["OTHER"]["verified"] is True


def test_a_renderer_that_fails_is_an_internal_error_result_not_a_protocol_error(root: Path) -> None:
    """A defect in a tool's text rendering is answered like any other: `internal_error`, its
    text in the log only."""
    import asyncio
    import dataclasses

    from leanindex.service.gate import CallGate
    from leanindex.service.mcp import call_tool
    from leanindex.service.tools import server_tools
    from leanindex.tools import ENVIRONMENTS

    def broken(response: object) -> str:
        raise AttributeError(f"secret path {root}")

    spec = next(s for s in server_tools(Engine(root), CallGate(2, 10.0), None) if s.name == ENVIRONMENTS)
    result = asyncio.run(call_tool(dataclasses.replace(spec, render=broken), {}))
    assert result.is_error and result.structured_content["error"]["code"] == "internal_error"
    assert str(root) not in result.content[0].text
