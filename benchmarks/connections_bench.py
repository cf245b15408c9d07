"""Connection benchmark (issue 32, item 3): how many idle or slow connections `leanindex serve`
holds, for how long, and whether it still answers meanwhile.

Usage: `python benchmarks/connections_bench.py [--connections 200] [--read-timeout 10]
[--keep-alive 5] [--max-wait 60] [--work DIR] [--out PATH]`. Prints a table and writes
`benchmarks/results/connections.json` (or PATH), with the run's date, commit and load (`runinfo.py`).

- Builds the embedded sample catalog (profile SAMPLE) under `--work` (a temporary folder by
  default) and starts `leanindex serve` on 127.0.0.1 (a free port) with the given
  `--request-read-timeout` and `--keep-alive-timeout`.
- Opens `--connections` sockets of each kind, one kind at a time: `idle` (connect, send
  nothing), `slow_head` (a request head one byte every 0.5 s, never finished), `slow_body` (a
  head announcing 100 bytes of body, then 1 byte), `kept_alive` (one answered request, then
  nothing).
- For each kind: how many the server still held after the read timeout passed, when each was
  closed by the server (seconds after it opened: min, median, max), and whether a normal
  `GET /v1/environments` was answered 200 while they were open (and its latency). Sockets still
  open after `--max-wait` seconds count as held.

Only loopback addresses; every loop is bounded by `--max-wait`.
"""

from __future__ import annotations

import argparse
import json
import platform
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import runinfo  # noqa: E402  (at the start: it records the run's start)

RESULTS = Path(__file__).resolve().parent / "results" / "connections.json"
KINDS = ("idle", "slow_head", "slow_body", "kept_alive")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def open_kind(kind: str, port: int, count: int) -> list[socket.socket]:
    """`count` sockets of `kind`, after their opening bytes."""
    sockets = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port), timeout=10)
        if kind == "slow_head":
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        elif kind == "slow_body":
            conn.sendall(b"POST /v1/declarations/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        elif kind == "kept_alive":
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            conn.recv(65536)
        conn.setblocking(False)
        sockets.append(conn)
    return sockets


def watch(kind: str, sockets: list[socket.socket], base: str, read_timeout_s: float, max_wait_s: float) -> dict:
    """Wait (at most `max_wait_s`) until the server closed every socket; dribble bytes into
    slow heads meanwhile; probe the server once while they are open."""
    opened = time.monotonic()
    closed_after: dict[int, float] = {}
    selector = selectors.DefaultSelector()
    for index, conn in enumerate(sockets):
        selector.register(conn, selectors.EVENT_READ, index)
    probe_started = time.monotonic()
    probe = httpx.get(f"{base}/v1/environments", timeout=30)
    probe_ms = (time.monotonic() - probe_started) * 1000
    held_after_timeout = None
    next_dribble = opened
    while len(closed_after) < len(sockets) and time.monotonic() - opened < max_wait_s:
        now = time.monotonic()
        if kind == "slow_head" and now >= next_dribble:
            next_dribble = now + 0.5
            for index, conn in enumerate(sockets):
                if index not in closed_after:
                    try:
                        conn.send(b"a")
                    except OSError:
                        pass
        for key, _ in selector.select(timeout=0.1):
            conn = key.fileobj
            try:
                data = conn.recv(65536)  # type: ignore[union-attr]
            except (ConnectionResetError, BlockingIOError):
                data = b""
            if not data and key.data not in closed_after:
                closed_after[key.data] = time.monotonic() - opened
                selector.unregister(conn)
        if held_after_timeout is None and time.monotonic() - opened > read_timeout_s + 1:
            held_after_timeout = len(sockets) - len(closed_after)
    for conn in sockets:
        conn.close()
    times = sorted(closed_after.values())
    return {
        "kind": kind,
        "opened": len(sockets),
        "held_after_read_timeout_plus_1s": held_after_timeout if held_after_timeout is not None else len(sockets) - len(closed_after),
        "held_at_end": len(sockets) - len(closed_after),
        "closed_after_s": {"min": times[0], "median": statistics.median(times), "max": times[-1]} if times else None,
        "probe_status": probe.status_code,
        "probe_ms": round(probe_ms, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--read-timeout", type=float, default=10.0)
    parser.add_argument("--keep-alive", type=int, default=5)
    parser.add_argument("--max-wait", type=float, default=60.0)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    from service_support import build_sample

    work = args.work or Path(tempfile.mkdtemp(prefix="connections-bench-"))
    root = work / "root"
    if not (root / "manifests").exists():
        root.mkdir(parents=True, exist_ok=True)
        build_sample(root)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(root), "--port", str(port),
         "--request-read-timeout", str(args.read_timeout), "--keep-alive-timeout", str(args.keep_alive),
         "--max-connections", str(max(512, 2 * args.connections))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("leanindex serve did not come up")
            time.sleep(0.1)
        rows = [watch(kind, open_kind(kind, port, args.connections), base, args.read_timeout, args.max_wait) for kind in KINDS]
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(f"{'kind':<11} {'opened':>6} {'held >T+1s':>10} {'held end':>8} {'closed after s (min/med/max)':>30} {'probe':>6} {'probe ms':>9}")
    for row in rows:
        closed = row["closed_after_s"]
        spread = f"{closed['min']:.2f}/{closed['median']:.2f}/{closed['max']:.2f}" if closed else "-"
        print(f"{row['kind']:<11} {row['opened']:>6} {row['held_after_read_timeout_plus_1s']:>10} {row['held_at_end']:>8} {spread:>30} {row['probe_status']:>6} {row['probe_ms']:>9}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "settings": {"connections": args.connections, "request_read_timeout_s": args.read_timeout, "keep_alive_timeout_s": args.keep_alive, "max_wait_s": args.max_wait},
        "kinds": rows,
        "run": runinfo.run_info(),
    }, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
