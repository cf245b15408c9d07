"""Start-up cost of the `leanindex` command: `--version`, `--help`, every command's `--help`, a
cold CLI search (figures under "cold search": a fresh process from its start to the answer,
interpreter start-up and imports included, opening and verifying the catalog; not an in-process
time after imports, as `search_bench.py`'s `engine_to_first_answer_ms` is) on the embedded
Lean core catalog (profile CORE-DOCGEN, as `leanindex demo` imports it), and the same search
through a running local server (`LEANINDEX_URL` set: a `leanindex serve` on ROOT, started here
on a free port, warmed by one search; the figure is the CLI process's, not the server's).

Each command runs once unmeasured (so that its modules' bytecode is written, as an installed
package has it: `PYTHONDONTWRITEBYTECODE` is dropped for the children), then `--runs` times as
a fresh process; per command it reports the median CPU time (user + system of the child, from
`resource.getrusage(RUSAGE_CHILDREN)`) and the median wall time, in ms, and each `--help` and
each search as a multiple of `--version`'s CPU time in the same run. The two searches are
skipped (and said so) when ROOT holds no CORE-DOCGEN catalog; `leanindex demo --root ROOT`
imports one.

Run:
    .venv/bin/python benchmarks/startup_bench.py [--root ROOT] [--runs 7] [--out PATH]
Writes benchmarks/results/startup.json (or PATH), with the run's date, commit and load
(`runinfo.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

import leanindex.cli as cli
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import record_path
from leanindex.home import default_root

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import runinfo  # noqa: E402  (at the start: it records the run's start)

COMMAND = [sys.executable, "-m", "leanindex"]
SEARCH = ["search", "-e", "CORE-DOCGEN", "--name-contains", "add_comm", "--namespace", "Nat", "--json"]


def command_paths() -> list[tuple[str, ...]]:
    """Every command and subcommand of `leanindex` (all modules loaded in this process only)."""
    for modules in cli.COMMAND_MODULES.values():
        for module in modules:
            __import__(f"leanindex.cli.{module}")

    def walk(command: click.Command, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = [path] if path else []
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            found += walk(sub, (*path, name))
        return found

    return walk(cli.main, ())


#: The children's environment: this one without `PYTHONDONTWRITEBYTECODE`, so that the warm-up
#: run of each command leaves the bytecode a measured run reads (compiling is no start-up cost).
CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def measure(args: list[str], runs: int, env: dict[str, str] | None = None, baseline: dict[str, float] | None = None,
            before_each: Callable[[], None] | None = None) -> dict[str, float]:
    """Median CPU (user + system) and wall time in ms of `leanindex ARGS` over `runs` fresh
    processes after one unmeasured warm-up run (with `env` added to `CHILD_ENV`; `before_each`
    called before every run), and with a `baseline` figure (`--version`'s) the CPU median as a
    multiple of it (`cpu_times_version`); raises `RuntimeError` when a run fails."""
    cpu, wall = [], []
    for run in range(runs + 1):
        if before_each is not None:
            before_each()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([*COMMAND, *args], capture_output=True, text=True, env={**CHILD_ENV, **(env or {})})
        elapsed = (time.perf_counter() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"leanindex {' '.join(args)} exited {done.returncode}: {done.stderr[-400:]}")
        if run:
            wall.append(elapsed)
            cpu.append(((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000)
    result = {"cpu_ms_median": round(statistics.median(cpu), 1), "wall_ms_median": round(statistics.median(wall), 1), "runs": runs}
    if baseline is not None:
        result["cpu_times_version"] = round(result["cpu_ms_median"] / baseline["cpu_ms_median"], 2)
    return result


def report(label: str, result: dict[str, float]) -> None:
    """One printed line of figures."""
    times = f"  {result['cpu_times_version']:.1f}x --version" if "cpu_times_version" in result else ""
    print(f"{label:<40} cpu {result['cpu_ms_median']:>7.1f} ms  wall {result['wall_ms_median']:>7.1f} ms{times}")


@contextmanager
def local_server(root: Path) -> Iterator[str]:
    """A `leanindex serve` on `root` at a free port of 127.0.0.1, answering `/healthz`; yields its
    base URL and stops it after. Raises `RuntimeError` when it does not come up in 120 s."""
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in CHILD_ENV.items() if key != "LEANINDEX_TOKEN"}
    server = subprocess.Popen([*COMMAND, "serve", "--root", str(root), "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("leanindex serve did not come up")
            time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=None, help="Root holding the CORE-DOCGEN catalog [the default root].")
    parser.add_argument("--runs", type=int, default=7, help="Fresh processes per command (median taken).")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "startup.json")
    options = parser.parse_args()
    root = options.root or default_root()

    figures: dict[str, dict[str, float]] = {}
    version = figures["--version"] = measure(["--version"], options.runs)
    report("--version", version)
    for path in [(), *command_paths()]:
        label = " ".join((*path, "--help"))
        result = figures[label] = measure([*path, "--help"], options.runs, baseline=version)
        report(label, result)

    search_note = None
    if (root / "manifests" / "core-docgen.json").exists():
        record = record_path(CatalogPaths.of(root, "core-docgen"))
        first = figures["first search (CORE-DOCGEN), every file hashed"] = measure(
            [*SEARCH, "--root", str(root)], options.runs, {"LEANINDEX_URL": ""}, version, before_each=lambda: record.unlink(missing_ok=True))
        report("first search, every file hashed", first)
        cold = figures["cold search (CORE-DOCGEN)"] = measure([*SEARCH, "--root", str(root)], options.runs, {"LEANINDEX_URL": ""}, version)
        report("cold search, process start to answer", cold)
        with local_server(root) as url:
            measure(SEARCH, 1, {"LEANINDEX_URL": url})  # the server opens the catalog on its first search
            remote = figures["search via LEANINDEX_URL (CORE-DOCGEN)"] = measure(SEARCH, options.runs, {"LEANINDEX_URL": url}, version)
        report("search via LEANINDEX_URL (CORE-DOCGEN)", remote)
    else:
        search_note = f"skipped: no CORE-DOCGEN catalog under {root} (run `leanindex demo --root {root}`)"
        print(f"cold search: {search_note}")

    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps({
        "what": "median CPU (user+system) and wall ms of fresh `leanindex` processes (after one unmeasured run each), "
                "each from the process's start to its exit; 'cold search': the process opens the catalog (files unchanged since the verification record was written are not hashed again), then answers; 'first search': the same without a verification record (every file hashed); "
                "cpu_times_version: CPU as a multiple of --version's in the same run",
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "search_args": SEARCH,
        "search_note": search_note,
        "figures": figures,
        "run": runinfo.run_info(),
    }, indent=2) + "\n")
    print(f"wrote {options.out}")


if __name__ == "__main__":
    main()
