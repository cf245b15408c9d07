"""Service benchmark (issue 4): what the HTTP API and the MCP tools add on top of the engine.

Usage: `python benchmarks/service_bench.py [--declarations 800000] [--requests 300]
[--work DIR]`. Prints a table and writes `benchmarks/results/service.json`.

- Builds (or reuses, under `--work`) a synthetic catalog with the shape of `import Mathlib`
  (`benchmarks/synthetic.py`) as profile BENCH.
- Draws a fixed query mix from the catalog: exact inspects, rare name substrings, rare type
  constants, a namespace+kind search (`QUERY_CLASSES`).
- Baseline: the same queries on an in-process `Engine`, timed call by call (warm).
- HTTP: `leanindex serve` in a child process on 127.0.0.1; 1, 8 and 32 concurrent clients (threads,
  one keep-alive httpx connection each) send the query mix; per-request round-trip latency
  (p50/p99), throughput (requests/s over the wall time of the level), and every non-200 answer or
  transport failure counted as an error.
- MCP: `leanindex mcp` as a stdio child of the SDK's client; the same queries as tool calls, one
  at a time (the client validates each structured result against the output schema, as clients
  should).
- Adapter overhead: median over queries of (surface latency - engine latency) for the same query,
  and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from synthetic import build_synthetic_catalog  # noqa: E402

from leanindex.engine import Engine  # noqa: E402
from leanindex.models import InspectRequest, SearchRequest  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "service.json"
PROFILE = "bench"
QUERY_CLASSES = ("inspect", "name_rare", "const_rare", "namespace_kind")


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"p50_ms": at(0.5), "p99_ms": at(0.99), "n": len(ordered)}


def _queries(engine: Engine, n: int, seed: int) -> list[tuple[str, SearchRequest | InspectRequest]]:
    """`n` queries drawn from the catalog, cycling through `QUERY_CLASSES`."""
    rng = np.random.default_rng(seed)
    catalog = engine.catalog(PROFILE)
    names = catalog.all_names()
    visible = np.flatnonzero(~np.asarray(catalog.index.hidden, dtype=bool))
    counts = np.diff(np.asarray(catalog.index.postings_offsets))
    rare = [catalog.constant_names[int(i)] for i in np.flatnonzero((counts >= 1) & (counts <= 20))]
    out: list[tuple[str, SearchRequest | InspectRequest]] = []
    for i in range(n):
        name = names[int(rng.choice(visible))]
        label = QUERY_CLASSES[i % len(QUERY_CLASSES)]
        if label == "inspect":
            out.append((label, InspectRequest(environment=PROFILE, declaration_name=name)))
        elif label == "name_rare":
            last = name.rsplit(".", 1)[-1]
            out.append((label, SearchRequest(environment=PROFILE, name_contains=last if len(last) >= 6 else name)))
        elif label == "const_rare":
            out.append((label, SearchRequest(environment=PROFILE, type_pattern={"constants": [rare[int(rng.integers(len(rare)))]]})))
        else:
            namespace = name.split(".")[0]
            out.append((label, SearchRequest(environment=PROFILE, name_contains="_", namespace_prefixes=[namespace], kinds=["theorem"])))
    return out


def _engine_latencies(engine: Engine, queries: list) -> list[float]:
    latencies = []
    for _label, request in queries:
        started = time.perf_counter()
        engine.inspect(request) if isinstance(request, InspectRequest) else engine.search(request)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def _http_call(http: httpx.Client, request: SearchRequest | InspectRequest) -> httpx.Response:
    if isinstance(request, InspectRequest):
        return http.get(f"/v1/declarations/{quote(request.declaration_name, safe='')}", params={"environment": request.environment})
    return http.post("/v1/declarations/search", content=request.model_dump_json(exclude_none=True), headers={"content-type": "application/json"})


def _http_level(url: str, queries: list, clients: int, per_client: int) -> dict:
    """`clients` threads, each sending `per_client` queries (its own slice of the mix)."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    barrier = threading.Barrier(clients + 1)

    def run(k: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            http.get("/healthz")  # open the keep-alive connection before the clock starts
            barrier.wait()
            for j in range(per_client):
                _label, request = queries[(k * per_client + j) % len(queries)]
                started = time.perf_counter()
                try:
                    ok = _http_call(http, request).status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies[k].append((time.perf_counter() - started) * 1000)
                errors[k] += not ok

    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    flat = [x for per in latencies for x in per]
    return {"clients": clients, **_percentiles(flat), "throughput_rps": len(flat) / wall, "errors": sum(errors)}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(root: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(root), "--port", str(port), "--max-concurrent", "32"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while True:
        try:
            # /readyz verifies the catalog, so timing starts on a warm, verified server.
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=300).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("leanindex serve did not become ready")
        time.sleep(0.2)


def _mcp_latencies(root: Path, queries: list) -> tuple[list[float], int]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "leanindex", "mcp", "--root", str(root)], env=dict(os.environ))
    latencies: list[float] = []
    errors = 0

    async def main() -> None:
        nonlocal errors
        async with Client(params, cache=None) as client:
            await client.list_tools()
            await client.call_tool("lean.declaration.search", {"environment": PROFILE, "name_contains": "comm", "result_limit": 1})
            for _label, request in queries:
                tool = "lean.declaration.inspect" if isinstance(request, InspectRequest) else "lean.declaration.search"
                arguments = request.model_dump(mode="json", exclude_none=True)
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                latencies.append((time.perf_counter() - started) * 1000)
                errors += bool(result.is_error)

    anyio.run(main)
    return latencies, errors


def _overhead(surface: list[float], engine: list[float]) -> dict[str, float]:
    return {
        "median_overhead_ms": statistics.median(s - e for s, e in zip(surface, engine)),
        "p50_ratio": statistics.median(surface) / statistics.median(engine),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--declarations", type=int, default=800_000)
    parser.add_argument("--requests", type=int, default=400, help="Queries in the mix (and per concurrency level).")
    parser.add_argument("--work", type=Path, default=Path("/tmp/leanindex-service-bench"))
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    root = args.work / f"n{args.declarations}"
    if not (root / "manifests" / f"{PROFILE}.json").exists():
        started = time.perf_counter()
        build_synthetic_catalog(root, PROFILE, args.declarations)
        print(f"built {args.declarations:,} declarations in {time.perf_counter() - started:.0f} s")

    engine = Engine(root)
    queries = _queries(engine, args.requests, args.seed)
    _engine_latencies(engine, queries)  # warm caches (names list, DuckDB) like a serving process
    engine_ms = _engine_latencies(engine, queries)
    engine.close()

    results: dict = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "declarations": args.declarations,
        "queries": len(queries),
        "query_classes": list(QUERY_CLASSES),
        "engine_in_process": _percentiles(engine_ms),
        "engine_by_class": {c: _percentiles([m for (l, _), m in zip(queries, engine_ms) if l == c]) for c in QUERY_CLASSES},
    }

    port = _free_port()
    server = _serve(root, port)
    url = f"http://127.0.0.1:{port}"
    try:
        # One client, every query once in order: pairs with the engine timings for the overhead.
        sequential: list[float] = []
        with httpx.Client(base_url=url, timeout=60) as http:
            for _label, request in queries:
                _http_call(http, request)  # warm-up pass
            http_errors = 0
            for _label, request in queries:
                started = time.perf_counter()
                http_errors += _http_call(http, request).status_code != 200
                sequential.append((time.perf_counter() - started) * 1000)
        results["http_sequential"] = {**_percentiles(sequential), "errors": http_errors, **_overhead(sequential, engine_ms)}
        results["http_by_class"] = {c: _percentiles([m for (l, _), m in zip(queries, sequential) if l == c]) for c in QUERY_CLASSES}
        results["http_concurrency"] = [
            _http_level(url, queries, clients, max(1, args.requests // clients) if clients > 1 else args.requests)
            for clients in (1, 8, 32)
        ]
    finally:
        server.terminate()
        server.wait(timeout=60)

    mcp_ms, mcp_errors = _mcp_latencies(root, queries)
    results["mcp_stdio"] = {**_percentiles(mcp_ms), "errors": mcp_errors, **_overhead(mcp_ms, engine_ms)}

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")

    e = results["engine_in_process"]
    print(f"\n{args.declarations:,} declarations, {len(queries)} queries ({', '.join(QUERY_CLASSES)})")
    print(f"{'surface':<28}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>9}{'errors':>8}{'overhead ms':>13}{'ratio':>7}")
    print(f"{'engine in-process':<28}{e['p50_ms']:>9.2f}{e['p99_ms']:>9.2f}")
    h = results["http_sequential"]
    print(f"{'HTTP, 1 client (paired)':<28}{h['p50_ms']:>9.2f}{h['p99_ms']:>9.2f}{'':>9}{h['errors']:>8}{h['median_overhead_ms']:>13.2f}{h['p50_ratio']:>7.2f}")
    for level in results["http_concurrency"]:
        print(f"{'HTTP, ' + str(level['clients']) + ' clients':<28}{level['p50_ms']:>9.2f}{level['p99_ms']:>9.2f}{level['throughput_rps']:>9.0f}{level['errors']:>8}")
    m = results["mcp_stdio"]
    print(f"{'MCP stdio, 1 client':<28}{m['p50_ms']:>9.2f}{m['p99_ms']:>9.2f}{'':>9}{m['errors']:>8}{m['median_overhead_ms']:>13.2f}{m['p50_ratio']:>7.2f}")
    print("\nby class (p50 ms): " + ", ".join(
        f"{c} engine {results['engine_by_class'][c]['p50_ms']:.2f} / HTTP {results['http_by_class'][c]['p50_ms']:.2f}" for c in QUERY_CLASSES
    ))
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
