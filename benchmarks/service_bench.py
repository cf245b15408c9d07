"""Service benchmark (issues 4, 31): what `leanindex serve` and the MCP tools add on top of the
engine, how many requests per second one server core answers, and the server's memory.

Usage: `python benchmarks/service_bench.py --root ROOT [--profile ID] [--out PATH]`, or
`--core` instead of `--root` (the Lean core catalog, built by `leanindex demo` under `--work` on
first use). Prints a table and writes `--out` (default `benchmarks/results/service.json`).

- Query mix (`QUERY_CLASSES`, drawn from the catalog with a fixed seed, in turn): exact inspects
  (`GET /v1/declarations/{name}`), a rare name substring, a rare type constant, a namespace +
  kind browse (a visible declaration's root namespace, theorems) (`POST /v1/declarations/search`).
- Cores: the server (and later `leanindex mcp`) runs on `--server-core` alone
  (`os.sched_setaffinity` before it starts), this process, the load generator and the MCP
  client on `--load-core`; the JSON records both (`server_cores`, `load_generator_cores`), and
  the run's date, commit and load are in `run` (`runinfo.py`).
- Engine: the same queries on an in-process `Engine`, timed call by call (warm).
- HTTP, paired: one keep-alive connection sends each query in turn on a raw socket (no client
  library's own cost in the figure), after a warm-up pass; `median_overhead_ms` is the median
  over queries of (round trip - the engine's time for the same query).
- Server CPU per request (ms, user + system of every server thread, `/proc/PID/stat`) for the
  paired pass and each throughput level, beside the engine's own CPU per query in-process: what
  a request costs the server's core however loaded the machine is (1000 / it bounds the
  requests/s of a dedicated core); `server_cpu_over_engine_ms` is the paired pass's part that is
  not the engine.
- HTTP, throughput: `wrk` (one thread, `--load-core`) with 1, 8 and 32 keep-alive connections
  cycling through the mix for `--seconds` each: requests/s, p50/p99 latency, non-2xx answers and
  socket errors. Without `wrk` on PATH (Debian: `apt-get install wrk`), a Python load generator
  (asyncio, raw sockets, keep-alive) in its own process on `--load-core` does the same;
  `load_generator` says which ran.
- Server memory (MiB, one process: `leanindex serve` has no children): VmRSS with its anonymous
  and file-backed parts (`/proc/PID/status`) when ready, then sampled every 0.5 s through the
  load; `steady` is after the last level, `peak_sampled_rss` the largest sample.
- MCP: `leanindex mcp` as a stdio child of the SDK's client; the same queries as tool calls, one
  at a time (the client validates each structured result against the output schema).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import runinfo  # noqa: E402  (at the start: it records the run's start)
from leanindex.engine import Engine  # noqa: E402
from leanindex.models import InspectRequest, SearchRequest  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "service.json"
QUERY_CLASSES = ("inspect", "name_rare", "const_rare", "namespace_kind")
CONNECTION_LEVELS = (1, 8, 32)
HOST = "127.0.0.1"


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"p50_ms": at(0.5), "p99_ms": at(0.99), "n": len(ordered)}


def _queries(engine: Engine, profile: str, n: int, seed: int) -> list[tuple[str, SearchRequest | InspectRequest]]:
    """`n` queries drawn from the catalog, cycling through `QUERY_CLASSES`."""
    rng = np.random.default_rng(seed)
    catalog = engine.catalog(profile)
    names = catalog.all_names()
    visible = np.flatnonzero(~np.asarray(catalog.index.hidden, dtype=bool))
    counts = np.diff(np.asarray(catalog.index.postings_offsets))
    rare = [catalog.constant_names[int(i)] for i in np.flatnonzero((counts >= 1) & (counts <= 20))]
    out: list[tuple[str, SearchRequest | InspectRequest]] = []
    for i in range(n):
        name = names[int(rng.choice(visible))]
        label = QUERY_CLASSES[i % len(QUERY_CLASSES)]
        if label == "inspect":
            out.append((label, InspectRequest(environment=profile, declaration_name=name)))
        elif label == "name_rare":
            last = name.rsplit(".", 1)[-1]
            out.append((label, SearchRequest(environment=profile, name_contains=last if len(last) >= 6 else name)))
        elif label == "const_rare":
            out.append((label, SearchRequest(environment=profile, type_pattern={"constants": [rare[int(rng.integers(len(rare)))]]})))
        else:
            out.append((label, SearchRequest(environment=profile, namespace_prefixes=[name.split(".")[0]], kinds=["theorem"])))
    return out


def _engine_latencies(engine: Engine, queries: list) -> list[float]:
    latencies = []
    for _label, request in queries:
        started = time.perf_counter()
        engine.inspect(request) if isinstance(request, InspectRequest) else engine.search(request)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def _wire(request: SearchRequest | InspectRequest) -> tuple[str, str, bytes]:
    """(method, target, body) of the HTTP request answering `request`."""
    if isinstance(request, InspectRequest):
        target = f"/v1/declarations/{quote(request.declaration_name, safe='')}?environment={quote(request.environment, safe='')}"
        return "GET", target, b""
    return "POST", "/v1/declarations/search", request.model_dump_json(exclude_none=True).encode()


def _raw_request(port: int, method: str, target: str, body: bytes) -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
    if method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


def _read_answer(sock: socket.socket, buffer: bytearray) -> int:
    """Read one answer (with a Content-Length, as every JSON answer has) off a keep-alive
    socket; its status. `buffer` carries bytes read past it."""
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        buffer += sock.recv(65536) or _closed()
    length = _LENGTH.search(buffer, 0, end + 2)
    if length is None:
        raise RuntimeError("an answer without Content-Length")
    total = end + 4 + int(length.group(1))
    while len(buffer) < total:
        buffer += sock.recv(65536) or _closed()
    status = int(buffer[9:12])
    del buffer[:total]
    return status


def _closed() -> bytes:
    raise RuntimeError("the server closed the connection")


def _paired(port: int, payloads: list[bytes]) -> tuple[list[float], int]:
    """Each payload in turn on one keep-alive connection (after a warm-up pass): round trips
    in ms and the count of non-200 answers."""
    with socket.create_connection((HOST, port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = bytearray()
        for payload in payloads:
            sock.sendall(payload)
            _read_answer(sock, buffer)
        latencies, errors = [], 0
        for payload in payloads:
            started = time.perf_counter()
            sock.sendall(payload)
            errors += _read_answer(sock, buffer) != 200
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies, errors


_WRK_SCRIPT = """
local payloads = {}
local n = 0
init = function(args)
%s
end
request = function()
  n = n + 1
  return payloads[(n - 1) %% #payloads + 1]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKJSON {\\"requests\\": %%d, \\"duration_us\\": %%d, \\"non_2xx\\": %%d, \\"socket_errors\\": %%d, \\"p50_us\\": %%d, \\"p99_us\\": %%d}\\n",
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
"""


def _lua_string(data: str | bytes) -> str:
    text = data.decode() if isinstance(data, bytes) else data
    return "[==[" + text + "]==]"


def _wrk_level(port: int, wires: list[tuple[str, str, bytes]], connections: int, seconds: float, core: int, work: Path) -> dict:
    lines = []
    for method, target, body in wires:
        headers = '{["Content-Type"] = "application/json"}' if method == "POST" else "nil"
        lines.append(f"  payloads[#payloads + 1] = wrk.format({_lua_string(method)}, {_lua_string(target)}, {headers}, {_lua_string(body) if body else 'nil'})")
    script = work / "mix.lua"
    script.write_text(_WRK_SCRIPT % "\n".join(lines))
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(script), f"http://{HOST}:{port}"]
    out = subprocess.run(command, capture_output=True, text=True, check=True, preexec_fn=lambda: os.sched_setaffinity(0, {core})).stdout
    found = re.search(r"^WRKJSON (.*)$", out, re.M)
    if found is None:
        raise SystemExit(f"wrk printed no summary:\n{out}")
    summary = json.loads(found.group(1))
    wall = summary["duration_us"] / 1e6
    return {
        "connections": connections, "p50_ms": summary["p50_us"] / 1000, "p99_ms": summary["p99_us"] / 1000, "n": summary["requests"],
        "throughput_rps": summary["requests"] / wall, "errors": summary["non_2xx"] + summary["socket_errors"],
    }


def _python_load(port: int, payloads: list[bytes], connections: int, seconds: float, core: int, results: multiprocessing.Queue) -> None:
    """The Python load generator (a child process on `core`): `connections` keep-alive
    connections, each sending the mix in turn from its own offset until `seconds` pass."""
    os.sched_setaffinity(0, {core})
    latencies: list[float] = []
    errors = 0

    async def connection(k: int, deadline: float) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection(HOST, port)
        i = k * len(payloads) // connections
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            writer.write(payloads[i % len(payloads)])
            i += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = _LENGTH.search(b"\r\n" + head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            latencies.append((time.perf_counter() - started) * 1000)
            errors += int(head[9:12]) != 200
        writer.close()

    async def run() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(connection(k, started + seconds) for k in range(connections)))
        return time.perf_counter() - started

    wall = asyncio.run(run())
    results.put({"connections": connections, **_percentiles(latencies), "throughput_rps": len(latencies) / wall, "errors": errors})


def _python_level(port: int, payloads: list[bytes], connections: int, seconds: float, core: int) -> dict:
    results: multiprocessing.Queue = multiprocessing.Queue()
    child = multiprocessing.get_context("fork").Process(target=_python_load, args=(port, payloads, connections, seconds, core, results))
    child.start()
    level = results.get(timeout=seconds + 120)
    child.join()
    return level


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _with_server_cpu(pid: int, measure: Callable[[], dict]) -> dict:
    """`measure()`'s figures plus the server's CPU time per answered request (ms): what one
    request costs the server's core, whatever else the machine runs."""
    before = _cpu_s(pid)
    figures = measure()
    return {**figures, "server_cpu_ms_per_request": (_cpu_s(pid) - before) * 1000 / figures["n"]}


def _memory_mib(pid: int) -> dict[str, float]:
    """VmRSS and its anonymous, file-backed and shared-memory parts of process `pid`, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss": fields["VmRSS"], "anon": fields["RssAnon"], "file": fields["RssFile"], "shmem": fields["RssShmem"]}


class _Sampler:
    """Samples a process's memory every `interval_s` seconds in a thread."""

    def __init__(self, pid: int, interval_s: float = 0.5):
        self.pid, self.interval_s, self.samples = pid, interval_s, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.wait(self.interval_s):
            self.samples.append(_memory_mib(self.pid)["rss"])

    def __enter__(self) -> _Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _serve(root: Path, port: int, core: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(root), "--port", str(port), "--max-concurrent", "32"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=lambda: os.sched_setaffinity(0, {core}),
    )
    deadline = time.monotonic() + 300
    while True:
        try:
            # /readyz verifies the catalog, so timing starts on a warm, verified server.
            if httpx.get(f"http://{HOST}:{port}/readyz", timeout=300).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("leanindex serve did not become ready")
        time.sleep(0.2)


def _mcp_latencies(root: Path, queries: list, core: int) -> tuple[list[float], int]:
    from mcp import Client, StdioServerParameters

    command = ["taskset", "-c", str(core), sys.executable] if shutil.which("taskset") else [sys.executable]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "-m", "leanindex", "mcp", "--root", str(root)], env=dict(os.environ))
    latencies: list[float] = []
    errors = 0
    profile = queries[0][1].environment

    async def main() -> None:
        nonlocal errors
        async with Client(params, cache=None) as client:
            await client.list_tools()
            await client.call_tool("lean.declaration.search", {"environment": profile, "name_contains": "comm", "result_limit": 1})
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
        "median_overhead_ms": statistics.median(s - e for s, e in zip(surface, engine, strict=True)),
        "p50_ratio": statistics.median(surface) / statistics.median(engine),
    }


def _core_root(work: Path) -> Path:
    """The Lean core catalog, built once under `work` by `leanindex demo`."""
    root = work / "core"
    if not any((root / "manifests").glob("*.json")):
        subprocess.run([sys.executable, "-m", "leanindex", "demo", "--root", str(root)], check=True, stdout=subprocess.DEVNULL)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--root", type=Path, help="A served root (manifests/, catalog/), e.g. one holding the Mathlib catalog.")
    source.add_argument("--core", action="store_true", help="The Lean core catalog, built by `leanindex demo` under --work.")
    parser.add_argument("--profile", help="The profile to query [the root's only profile].")
    parser.add_argument("--requests", type=int, default=400, help="Queries in the mix.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of each throughput level.")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--load-core", type=int, default=1)
    parser.add_argument("--no-mcp", action="store_true", help="Skip the MCP stdio measurement.")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "leanindex-service-bench")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.server_core == args.load_core:
        parser.error("--server-core and --load-core must differ")
    os.sched_setaffinity(0, {args.load_core})
    args.work.mkdir(parents=True, exist_ok=True)
    root = _core_root(args.work) if args.core else args.root

    engine = Engine(root)
    profile = args.profile or (engine.profiles() or [""])[0]
    queries = _queries(engine, profile, args.requests, args.seed)
    _engine_latencies(engine, queries)  # warm caches like a serving process
    started = time.process_time()
    engine_ms = _engine_latencies(engine, queries)
    engine_cpu_ms = (time.process_time() - started) * 1000 / len(queries)
    engine.close()

    wrk = shutil.which("wrk")
    results: dict = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "root": root.name,
        "profile": profile,
        "server_cores": [args.server_core],
        "load_generator_cores": [args.load_core],
        "load_generator": "wrk" if wrk else "python-asyncio",
        "queries": len(queries),
        "query_classes": list(QUERY_CLASSES),
        "engine_in_process": {**_percentiles(engine_ms), "cpu_ms_per_request": engine_cpu_ms},
        "engine_by_class": {c: _percentiles([m for (label, _), m in zip(queries, engine_ms, strict=True) if label == c]) for c in QUERY_CLASSES},
    }

    port = _free_port()
    server = _serve(root, port, args.server_core)
    wires = [_wire(request) for _label, request in queries]
    payloads = [_raw_request(port, *wire) for wire in wires]
    try:
        memory = {"ready": _memory_mib(server.pid)}
        before = _cpu_s(server.pid)
        sequential, http_errors = _paired(port, payloads)
        server_cpu_ms = (_cpu_s(server.pid) - before) * 1000 / (2 * len(payloads))  # the warm-up pass and the timed one
        results["http_sequential"] = {
            **_percentiles(sequential), "errors": http_errors, **_overhead(sequential, engine_ms),
            "server_cpu_ms_per_request": server_cpu_ms, "server_cpu_over_engine_ms": server_cpu_ms - engine_cpu_ms,
        }
        results["http_by_class"] = {c: _percentiles([m for (label, _), m in zip(queries, sequential, strict=True) if label == c]) for c in QUERY_CLASSES}
        with _Sampler(server.pid) as sampler:
            results["http_throughput"] = [
                _with_server_cpu(server.pid, lambda c=c: _wrk_level(port, wires, c, args.seconds, args.load_core, args.work)) if wrk else
                _with_server_cpu(server.pid, lambda c=c: _python_level(port, payloads, c, args.seconds, args.load_core))
                for c in CONNECTION_LEVELS
            ]
        memory["steady"] = _memory_mib(server.pid)
        memory["peak_sampled_rss"] = max(sampler.samples, default=memory["steady"]["rss"])
        results["server_memory_mib"] = memory
    finally:
        server.terminate()
        server.wait(timeout=60)

    if not args.no_mcp:
        mcp_ms, mcp_errors = _mcp_latencies(root, queries, args.server_core)
        results["mcp_stdio"] = {**_percentiles(mcp_ms), "errors": mcp_errors, **_overhead(mcp_ms, engine_ms)}

    results["run"] = runinfo.run_info()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")

    e = results["engine_in_process"]
    print(f"\n{profile} ({root}), {len(queries)} queries ({', '.join(QUERY_CLASSES)}); server on core {args.server_core}, "
          f"{results['load_generator']} on core {args.load_core}")
    print(f"{'surface':<30}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>9}{'errors':>8}{'overhead ms':>13}{'ratio':>7}{'CPU ms/req':>12}")
    print(f"{'engine in-process':<30}{e['p50_ms']:>9.2f}{e['p99_ms']:>9.2f}{'':>50}{e['cpu_ms_per_request']:>12.3f}")
    h = results["http_sequential"]
    print(f"{'HTTP, 1 connection (paired)':<30}{h['p50_ms']:>9.2f}{h['p99_ms']:>9.2f}{'':>9}{h['errors']:>8}{h['median_overhead_ms']:>13.2f}{h['p50_ratio']:>7.2f}{h['server_cpu_ms_per_request']:>12.3f}")
    for level in results["http_throughput"]:
        label = f"HTTP, {level['connections']} connections"
        print(f"{label:<30}{level['p50_ms']:>9.2f}{level['p99_ms']:>9.2f}{level['throughput_rps']:>9.0f}{level['errors']:>8}{'':>20}{level['server_cpu_ms_per_request']:>12.3f}")
    if "mcp_stdio" in results:
        m = results["mcp_stdio"]
        print(f"{'MCP stdio, 1 client':<30}{m['p50_ms']:>9.2f}{m['p99_ms']:>9.2f}{'':>9}{m['errors']:>8}{m['median_overhead_ms']:>13.2f}{m['p50_ratio']:>7.2f}")
    print("\nby class (p50 ms): " + ", ".join(
        f"{c} engine {results['engine_by_class'][c]['p50_ms']:.2f} / HTTP {results['http_by_class'][c]['p50_ms']:.2f}" for c in QUERY_CLASSES
    ))
    memory = results["server_memory_mib"]
    print(f"server RSS: {memory['ready']['rss']:.0f} MiB ready, {memory['steady']['rss']:.0f} MiB steady "
          f"({memory['steady']['anon']:.0f} anonymous, {memory['steady']['file']:.0f} file-backed), {memory['peak_sampled_rss']:.0f} MiB peak sampled")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
