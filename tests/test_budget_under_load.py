"""Under a per-request time budget and 32 concurrent clients, a search is answered completely
or refused with `timeout` / `busy`, never cut short and marked `EXHAUSTED` (issue 10).

A live loopback server with a 0.05 s budget and 8 slots serves 30,000 declarations whose names
all contain `a`, `_` and `.`; 32 client threads (real HTTP) each send a bounded number of
searches for those substrings. Every 200 must be the complete first page (`RESULT_LIMIT`, 50
results, exact `total_matches`, a cursor), every other answer 504 `timeout` or 429 `busy` in
the shared error shape.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import httpx

from leanindex.catalog.builder import build_catalog
from leanindex.engine import Engine
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app
from service_support import live_server, run_threads
from streamkit import declaration, stream

SIZE = 30000
CLIENTS = 32
REQUESTS_PER_CLIENT = 6
SUBSTRINGS = ["a", "_", "."]


def test_complete_or_refused_never_short(tmp_path: Path) -> None:
    build_catalog(iter(stream([declaration(["Load", f"a_{i:05d}"]) for i in range(SIZE)])), tmp_path, "load")
    engine = Engine(tmp_path)
    outcomes: Counter[str] = Counter()
    problems: list[str] = []
    lock = threading.Lock()

    def client(slot: int) -> None:
        with httpx.Client(timeout=60) as http:
            for i in range(REQUESTS_PER_CLIENT):
                needle = SUBSTRINGS[(slot + i) % len(SUBSTRINGS)]
                answer = http.post(f"{base}/v1/declarations/search", json={"environment": "LOAD", "name_contains": needle, "result_limit": 50})
                body = answer.json()
                with lock:
                    if answer.status_code == 200:
                        outcomes["complete"] += 1
                        if not (
                            body["stop_reason"] == "RESULT_LIMIT"
                            and len(body["results"]) == 50
                            and body["total_matches"] == SIZE
                            and body["next_cursor"]
                        ):
                            problems.append(f"{needle}: {body['stop_reason']} {len(body['results'])} of {body['total_matches']}")
                    elif (answer.status_code, body.get("error", {}).get("code")) in {(504, "timeout"), (429, "busy")}:
                        outcomes[body["error"]["code"]] += 1
                    else:
                        problems.append(f"{needle}: {answer.status_code} {answer.text[:200]}")

    try:
        with live_server(create_app(engine, ServiceConfig(time_budget_s=0.05, max_concurrent=8))) as base:
            run_threads(CLIENTS, client)
    finally:
        engine.close()
    print(f"budget under load: {dict(outcomes)}")
    assert sum(outcomes.values()) + len(problems) == CLIENTS * REQUESTS_PER_CLIENT
    assert not problems, problems[:5]
