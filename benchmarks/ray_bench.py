"""Batch checking on the local pool against Ray checker actors, on the stand-in REPL answering
instantly (so the figures are the machinery's cost, not Lean's), all in the same run:

- throughput (checks/s) of `check_many` on the local pool with 1 and 2 REPLs, and of the Ray
  front with 1 and 2 actors of 1 REPL each on a local cluster of this machine's CPUs;
- per-check latency p50/p99 of single checks, one at a time, local vs through one actor, and
  the difference of the p50s: the overhead Ray adds per check;
- resident memory per actor: the actor process alone, and with its REPL.

Run:
    .venv/bin/python benchmarks/ray_bench.py [--checks 2000] [--out PATH]
Prints a table and writes benchmarks/results/ray.json (or PATH), with the run's date, commit and
load (`runinfo.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

import psutil  # noqa: E402
import ray  # noqa: E402

import runinfo  # noqa: E402  (at the start: it records the run's start)
from check_bench import quantiles  # noqa: E402
from checker_support import standin_config  # noqa: E402
from leanindex.checker import Checker, CheckerConfig, CheckRequest  # noqa: E402
from leanindex.checker.cluster import RayChecker, RaySettings  # noqa: E402
from leanindex.checker.models import BatchItem  # noqa: E402

CODE = "theorem t{} (n : Nat) : n + 0 = n := rfl"


def items(n: int, offset: int = 0) -> list[BatchItem]:
    return [BatchItem(id=str(i), environment="TEST", code=CODE.format(offset + i)) for i in range(n)]


async def latency(checker: Checker | RayChecker, n: int) -> dict[str, float]:
    """Single checks one after the other, end to end as a caller sees them."""
    samples = []
    for i in range(n):
        t0 = time.perf_counter()
        response = await checker.check(CheckRequest(environment="TEST", code=CODE.format(50_000 + i)))
        samples.append((time.perf_counter() - t0) * 1000)
        assert response.verdict == "accepted", response
    return quantiles(samples)


async def throughput(checker: Checker | RayChecker, n: int) -> float:
    """`check_stream` over `n` distinct checks at the checker's default batch width."""
    started = time.perf_counter()
    count = 0
    async for result in checker.check_stream(items(n)):
        assert result.response is not None and result.response.verdict == "accepted", result
        count += 1
    assert count == n
    return round(n / (time.perf_counter() - started), 1)


async def local_runs(config: CheckerConfig, n: int, latency_n: int) -> dict[str, object]:
    runs: dict[str, object] = {}
    for workers in (1, 2):
        async with Checker(config.model_copy(update={"workers": workers})) as checker:
            await throughput(checker, 50)  # warm-up
            if workers == 1:
                runs["latency"] = await latency(checker, latency_n)
            runs[f"checks_per_s_{workers}_repls"] = await throughput(checker, n)
    return runs


async def ray_runs(config: CheckerConfig, n: int, latency_n: int) -> dict[str, object]:
    runs: dict[str, object] = {}
    for actors in (1, 2):
        front = RayChecker(config, RaySettings(actors=actors, actor_cpus=1))
        started = time.perf_counter()
        await front.start()
        runs[f"start_{actors}_actors_s"] = round(time.perf_counter() - started, 2)
        try:
            await throughput(front, 50)  # warm-up
            if actors == 1:
                runs["latency"] = await latency(front, latency_n)
            runs[f"checks_per_s_{actors}_actors"] = await throughput(front, n)
            stats = await front.actor_stats()
            runs[f"rss_per_actor_{actors}_actors"] = [
                {"actor_mib": round(psutil.Process(s["pid"]).memory_info().rss / 2**20, 1), "with_repl_mib": round(s["rss_bytes"] / 2**20, 1)}
                for s in stats
            ]
        finally:
            await front.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=2000, help="checks per throughput run")
    parser.add_argument("--latency-checks", type=int, default=300, help="single checks per latency run")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "ray.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config, _ = standin_config(Path(folder), instant=True, cache_entries=0, queue_size=64, network_isolation=False)
        local = asyncio.run(local_runs(config, args.checks, args.latency_checks))
        t0 = time.perf_counter()
        ray.init(include_dashboard=False, log_to_driver=False)
        cluster_start_s = round(time.perf_counter() - t0, 2)
        try:
            on_ray = asyncio.run(ray_runs(config, args.checks, args.latency_checks))
        finally:
            ray.shutdown()
    overhead = round(on_ray["latency"]["p50_ms"] - local["latency"]["p50_ms"], 3)
    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(), "ray": ray.__version__},
        "checks": args.checks,
        "local": local,
        "ray": {**on_ray, "cluster_start_s": cluster_start_s},
        "ray_overhead_p50_ms_per_check": overhead,
        "ratio_checks_per_s_2_actors_to_2_repls": round(on_ray["checks_per_s_2_actors"] / local["checks_per_s_2_repls"], 2),
        "run": runinfo.run_info(),
    }
    rows = [
        ("local pool, 1 REPL", f"{local['checks_per_s_1_repls']:,.0f}", f"{local['latency']['p50_ms']:.2f}", "-"),
        ("local pool, 2 REPLs", f"{local['checks_per_s_2_repls']:,.0f}", "-", "-"),
        ("Ray, 1 actor (1 REPL)", f"{on_ray['checks_per_s_1_actors']:,.0f}", f"{on_ray['latency']['p50_ms']:.2f}",
         ", ".join(f"{r['actor_mib']:.0f}/{r['with_repl_mib']:.0f}" for r in on_ray["rss_per_actor_1_actors"])),
        ("Ray, 2 actors (1 REPL each)", f"{on_ray['checks_per_s_2_actors']:,.0f}", "-",
         ", ".join(f"{r['actor_mib']:.0f}/{r['with_repl_mib']:.0f}" for r in on_ray["rss_per_actor_2_actors"])),
    ]
    print(f"{'backend':30} {'checks/s':>9} {'p50 ms':>8}  RSS per actor MiB (actor/with REPL)")
    for name, rate, p50, rss in rows:
        print(f"{name:30} {rate:>9} {p50:>8}  {rss}")
    print(f"Ray overhead per check (p50): {overhead} ms; cluster start {cluster_start_s} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
