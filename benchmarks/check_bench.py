"""Checker overhead and throughput on the stand-in REPL answering instantly, beside direct
lean-interact calls to the same stand-in in the same run; real warm checks against CORE where
`lake` and a built REPL ($LEANINDEX_REPL) exist.

Per check the checker sends two REPL commands (the submission with its info trees, then the
axiom probe in the environment the submission left), so its overhead is measured like for like
against the same two commands sent directly with lean-interact, timed together per sample
(`direct_lean_interact_two_calls`, `overhead_p50_ms_vs_direct_two_calls`); one direct call's
figures are reported beside it. Run:
    .venv/bin/python benchmarks/check_bench.py [--checks 400] [--out PATH]
Writes benchmarks/results/check.json (or PATH), with the run's date, commit and load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from lean_interact import Command, LeanREPLConfig, LeanServer, LocalProject  # noqa: E402

import runinfo  # noqa: E402  (at the start: it records the run's start)
from checker_support import STANDIN, make_layout, standin_config  # noqa: E402
from leanindex.checker import Checker, CheckerConfig, CheckRequest  # noqa: E402

CODE = "theorem t{} (n : Nat) : n + 0 = n := rfl"


def quantiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "n": len(ordered),
    }


def direct_server(tmp: Path) -> LeanServer:
    """lean-interact's own `LeanServer` on the instant stand-in, configured as the checker's."""
    project, repl, _ = make_layout(tmp, instant=True)
    config = LeanREPLConfig(
        project=LocalProject(directory=str(project), lake_path=str(STANDIN / "lake"), auto_build=False),
        local_repl_path=str(repl),
        build_repl=False,
        lake_path=str(STANDIN / "lake"),
        enable_incremental_optimization=False,
        enable_parallel_elaboration=False,
    )
    return LeanServer(config)


def direct_baseline(tmp: Path, n: int) -> dict[str, object]:
    """lean-interact's own `LeanServer` on the same stand-in: one call per sample."""
    server = direct_server(tmp)
    try:
        header = server.run(Command(cmd="import Lean"), timeout=10).env
        samples = []
        started = time.perf_counter()
        for i in range(n):
            t0 = time.perf_counter()
            server.run(Command(cmd=CODE.format(i), env=header, infotree="full"), timeout=10)
            samples.append((time.perf_counter() - t0) * 1000)
        elapsed = time.perf_counter() - started
    finally:
        server.kill()
    return {**quantiles(samples), "calls_per_s": round(n / elapsed, 1)}


def direct_two_calls(tmp: Path, n: int) -> dict[str, object]:
    """lean-interact's own `LeanServer` on the same stand-in, sending per sample what a check
    sends: the submission with its info trees, then `#print axioms` of its theorem in the
    environment the submission left; each sample times the two together."""
    server = direct_server(tmp)
    try:
        header = server.run(Command(cmd="import Lean"), timeout=10).env
        samples = []
        for i in range(n):
            t0 = time.perf_counter()
            answer = server.run(Command(cmd=CODE.format(i), env=header, infotree="full"), timeout=10)
            server.run(Command(cmd=f"#print axioms t{i}", env=answer.env), timeout=10)
            samples.append((time.perf_counter() - t0) * 1000)
    finally:
        server.kill()
    return quantiles(samples)


async def checker_latency(checker: Checker, n: int) -> dict[str, object]:
    samples, repl_ms = [], []
    for i in range(n):
        t0 = time.perf_counter()
        response = await checker.check(CheckRequest(environment="TEST", code=CODE.format(i)))
        response.model_dump_json()  # serialisation is part of the cost an adapter pays
        samples.append((time.perf_counter() - t0) * 1000)
        repl_ms.append(response.timings.check_ms)
        assert response.verdict == "accepted", response
    return {**quantiles(samples), "repl_time": quantiles(repl_ms)}


async def checker_throughput(checker: Checker, n: int, concurrency: int) -> float:
    codes = iter(range(n))

    async def client() -> None:
        for i in codes:
            await checker.check(CheckRequest(environment="TEST", code=CODE.format(10_000 + i)))

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    return round(n / (time.perf_counter() - started), 1)


async def standin_runs(tmp: Path, n: int) -> dict[str, object]:
    results: dict[str, object] = {}
    for workers in (1, 2, 4):
        config, _ = standin_config(tmp / f"pool{workers}", instant=True, workers=workers, cache_entries=0, queue_size=64)
        async with Checker(config) as checker:
            if workers == 1:
                await checker_latency(checker, 20)  # warm-up
                results["latency"] = await checker_latency(checker, n)
            results[f"throughput_pool_{workers}"] = await checker_throughput(checker, n, concurrency=2 * workers)
    return results


async def lean_runs(n: int) -> dict[str, object] | None:
    repl = os.environ.get("LEANINDEX_REPL")
    if shutil.which("lake") is None or not repl:
        return None
    config = CheckerConfig.for_profile(REPO / ".lean-check-root", "CORE", project_dir=REPO, repl_dir=repl, imports=["Init"], cache_entries=0)
    async with Checker(config) as checker:
        return await checker_latency(checker, n)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks", type=int, default=400)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "check.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        direct = direct_baseline(tmp / "direct", args.checks)
        direct_two = direct_two_calls(tmp / "direct_two", args.checks)
        checker = asyncio.run(standin_runs(tmp, args.checks))
    latency = checker["latency"]
    lean = asyncio.run(lean_runs(min(args.checks, 50)))
    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "checks": args.checks,
        "direct_lean_interact_call": direct,
        "direct_lean_interact_two_calls": direct_two,
        "checker": checker,
        "overhead_p50_ms_vs_direct_two_calls": round(latency["p50_ms"] - direct_two["p50_ms"], 3),
        "lean_core_warm_checks": lean if lean is not None else "skipped: no lake or LEANINDEX_REPL",
        "run": runinfo.run_info(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
