"""Rebuilding a profile while it is served disturbs no request (issue 10, item 1).

A live loopback server serves a catalog of 6,000 declarations; 8 client threads (real HTTP,
keep-alive connections) search it while the same profile is rebuilt under the same root
several times. Every answer must be a 200 with a complete search response, with no connection
reset; each request finishes on the catalog it started on, and the catalog it replaced is
closed only when its last request has left. Loops are bounded in count and time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from leanindex.catalog.builder import build_catalog
from leanindex.engine import Engine
from leanindex.models import SearchRequest
from leanindex.service.http import create_app
from service_support import live_server
from streamkit import declaration, stream

CLIENTS = 8
REBUILDS = 6
MAX_REQUESTS_PER_CLIENT = 400
QUERIES = [
    {"environment": "LOAD", "name_contains": "a", "result_limit": 50},
    {"environment": "LOAD", "name_contains": "a_0", "result_limit": 50},
    {"environment": "LOAD", "type_pattern": {"constants": ["True"]}, "result_limit": 50},
]


def load_stream(size: int) -> list[bytes]:
    """`size` theorems `Load.a_<i>` in `Name.lt` order (numbers padded, so printed order agrees)."""
    return stream([declaration(["Load", f"a_{i:05d}"]) for i in range(size)])


LINES = load_stream(6000)


def test_rebuilds_under_load_lose_no_request(tmp_path: Path) -> None:
    build_catalog(iter(LINES), tmp_path, "load")
    engine = Engine(tmp_path)
    failures: list[str] = []
    counts = [0] * CLIENTS
    rebuilding = threading.Event()
    rebuilding.set()

    def client(slot: int) -> None:
        with httpx.Client(timeout=60) as http:
            for i in range(MAX_REQUESTS_PER_CLIENT):
                if not rebuilding.is_set() and i >= 20:
                    return
                query = QUERIES[(slot + i) % len(QUERIES)]
                try:
                    answer = http.post(f"{base}/v1/declarations/search", json=query)
                except httpx.TransportError as error:
                    failures.append(f"transport: {type(error).__name__}: {error}")
                    continue
                counts[slot] += 1
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code}: {answer.text[:200]}")
                    continue
                body = answer.json()
                if body["total_matches"] != 6000 or len(body["results"]) != 50:
                    failures.append(f"short answer: {body['total_matches']}")

    try:
        with live_server(create_app(engine)) as base:
            threads = [threading.Thread(target=client, args=(slot,)) for slot in range(CLIENTS)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 120
            for _ in range(REBUILDS):
                if time.monotonic() > deadline:
                    break
                build_catalog(iter(LINES), tmp_path, "load")
                time.sleep(0.05)
            rebuilding.clear()
            for thread in threads:
                thread.join(timeout=120)
    finally:
        engine.close()
    print(f"rebuild under load: {sum(counts)} requests, {REBUILDS} rebuilds, {len(failures)} failures")
    assert not failures, f"{len(failures)} failed of {sum(counts)}: {failures[:5]}"
    assert sum(counts) >= CLIENTS * 20


def test_a_call_in_flight_keeps_its_catalog_across_a_swap(tmp_path: Path) -> None:
    """The same rule without threads: a lease outlives the swap, and the old catalog closes at
    its end, not before."""
    small = load_stream(10)
    build_catalog(iter(small), tmp_path, "load")
    engine = Engine(tmp_path)
    try:
        with engine.lease("load") as old:
            build_catalog(iter(small), tmp_path, "load")
            fresh = engine.catalog("load")
            assert fresh is not old and not old.leases.closed
            assert len(old.all_names()) == 10
        assert old.leases.closed
        assert engine.search(SearchRequest(environment="load", name_contains="a_")).total_matches == 10
    finally:
        engine.close()
    assert fresh.leases.closed
