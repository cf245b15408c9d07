"""Shared pieces of the service tests: sample catalogs, a live loopback server, a gated engine.

Imported by the test modules (pytest puts `tests/` on `sys.path`); the fixtures defined here are
registered by importing them into a test module.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from lakefakes import sample_modules

from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.links import ModuleFiles, PackageTree, github_blob_base
from leanindex.catalog.stream import iter_lines
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest, SearchResponse
from leanindex.sample import sample_stream_path

#: Names of the sample that are hard to carry in a URL path.
HARD_NAMES = ("«term_+_»", "«term_++_»", "Lean.Parser.Tactic.«tactic_<;>_»")


#: A revision for the sample's source links (test data: the sample names no lean4 commit).
SAMPLE_SOURCE_REV = "5a3c0e1d9b7f2a4c6e8d0b1f3a5c7e9d1b3f5a7c"


def sample_module_files(folder: Path) -> ModuleFiles:
    """A source tree holding a `.lean` file for every module of the sample (under `folder`),
    linked as lean4's `src/` at `SAMPLE_SOURCE_REV`, so that sample results carry source URLs."""
    for module in sample_modules():
        path = folder.joinpath(*module.split(".")).with_suffix(".lean")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"-- {module}\n")
    base = github_blob_base("https://github.com/leanprover/lean4.git", SAMPLE_SOURCE_REV)
    return ModuleFiles([PackageTree(name="lean4", directory=folder, blob_base=f"{base}src/")])


def build_sample(root: Path) -> Path:
    """Build the embedded sample stream as profile SAMPLE under `root`, with source links
    (`sample_module_files`, its tree beside `root`); return `root`."""
    files = sample_module_files(root.parent / f"{root.name}-sources")
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), root, "sample", EnvironmentFacts(module_files=files))
    return root


def sample_names() -> list[str]:
    """Every declaration name of the embedded sample stream, as printed."""
    import json

    names = []
    with open(sample_stream_path(), encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "name" in record and "kind" in record:
                names.append(record["name"])
    return names


@pytest.fixture(scope="session")
def sample_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root holding the sample catalog (profile SAMPLE); shared, so never modify it."""
    return build_sample(tmp_path_factory.mktemp("sample-root"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def live_server(app: object) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in a background thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def wait_until_serving(process: subprocess.Popen, base_url: str, timeout_s: float = 60) -> None:
    """Poll `base_url/healthz` until a `leanindex serve` child answers 200; fail if it exits or
    `timeout_s` passes first."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, "leanindex serve did not come up"
        time.sleep(0.1)


def run_threads(count: int, target: Callable[[int], None], timeout_s: float = 300) -> None:
    """Run `target(slot)` on `count` threads at once and wait for all of them."""
    threads = [threading.Thread(target=target, args=(slot,)) for slot in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout_s)


class GatedEngine(Engine):
    """A real engine whose `search` first waits until the test sets `release` (so a test can
    hold a call in flight for as long as it needs); `entered` is set when a search is waiting."""

    def __init__(self, root: Path):
        super().__init__(root)
        self.entered = threading.Event()
        self.release = threading.Event()

    def search(self, request: SearchRequest) -> SearchResponse:
        self.entered.set()
        if not self.release.wait(timeout=60):
            raise RuntimeError("the test never released the gated search")
        return super().search(request)


def engine_search(root: Path, **fields: object) -> SearchResponse:
    """The in-process engine's answer, for comparison with what a surface returned."""
    engine = Engine(root)
    try:
        return engine.search(SearchRequest(**fields))
    finally:
        engine.close()


def engine_inspect(root: Path, environment: str, name: str) -> object:
    """The in-process engine's inspect answer, for comparison."""
    engine = Engine(root)
    try:
        return engine.inspect(InspectRequest(environment=environment, declaration_name=name))
    finally:
        engine.close()
