"""Target-check and proof-step overhead on the stand-in REPL answering instantly, beside direct
lean-interact calls to the same stand-in in the same run, and the REPL commands a 10-candidate
target check sends.

A target check with a reused environment sends, per candidate, two REPL commands (the candidate
in the prepared environment, then the axiom probe), so its overhead is given against two direct
calls. A first check also elaborates the prefix once: for 10 candidates the expected count is
1 prefix + 10 candidates + 10 probes, never one prefix per candidate. Run:
    .venv/bin/python benchmarks/target_bench.py [--checks 400]
A proof step sends one REPL request (the tactic), so its overhead is given against one direct
`ProofStep` call. Writes benchmarks/results/target.json (or `--out PATH`), with the run's date,
commit and load (`runinfo.py`).
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
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from lean_interact import Command, ProofStep  # noqa: E402

import runinfo  # noqa: E402  (at the start: it records the run's start)
from check_bench import direct_baseline, direct_server, quantiles  # noqa: E402
from checker_support import standin_config  # noqa: E402
from leanindex.checker import Checker  # noqa: E402
from leanindex.checker.models import ProofStateRequest, ProofStepRequest, TargetCheckRequest  # noqa: E402
from leanindex.checker.worker import Worker  # noqa: E402

PREFIX = "theorem before (n : Nat) : n = n := rfl"
TARGET = "theorem tgt (n : Nat) : n + 0 = n := rfl"
FILE = f"import Lean\n\n{PREFIX}\n\n{TARGET}\n"


def candidate(i: int) -> str:
    return f"{TARGET} -- attempt {i}"


async def reused_latency(checker: Checker, n: int) -> dict[str, object]:
    """One candidate per request, the prefix prepared by an earlier request."""
    samples, repl_ms = [], []
    for i in range(n):
        t0 = time.perf_counter()
        response = await checker.check_target(TargetCheckRequest(environment="TEST", code=FILE, target="tgt", candidates=[candidate(i)]))
        response.model_dump_json()  # serialisation is part of the cost an adapter pays
        samples.append((time.perf_counter() - t0) * 1000)
        repl_ms.append(response.timings.check_ms)
        assert response.reused and response.results[0].verdict == "accepted", response
    return {**quantiles(samples), "repl_time": quantiles(repl_ms)}


SORRY = "theorem open_goal : True := by sorry"


def direct_steps(tmp: Path, n: int) -> dict[str, object]:
    """lean-interact's own `LeanServer` on the same stand-in: one `ProofStep` per sample."""
    server = direct_server(tmp)
    try:
        header = server.run(Command(cmd="import Lean"), timeout=10).env
        state = server.run(Command(cmd=SORRY, env=header), timeout=10).sorries[0].proof_state
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            server.run(ProofStep(proof_state=state, tactic="trivial"), timeout=10)
            samples.append((time.perf_counter() - t0) * 1000)
    finally:
        server.kill()
    return quantiles(samples)


async def step_latency(checker: Checker, n: int) -> dict[str, object]:
    """One tactic per request on the same open state."""
    opened = await checker.proof_state(ProofStateRequest(environment="TEST", code=SORRY))
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        response = await checker.proof_step(ProofStepRequest(environment="TEST", state_id=opened.state_id, tactic="trivial"))
        response.model_dump_json()
        samples.append((time.perf_counter() - t0) * 1000)
        assert response.status == "open", response
    return quantiles(samples)


async def standin_runs(tmp: Path, n: int) -> dict[str, object]:
    # Recycling after 500 checks would end the open state mid-run (its id then unknown).
    config, _ = standin_config(tmp / "pool", instant=True, cache_entries=0, recycle_after_checks=100_000)
    sent: Counter[str] = Counter()
    original = Worker._run

    def counting(self, command, deadline, budget):
        kind = "probe" if command.cmd.startswith("#check (") else "prefix" if command.cmd == PREFIX else "candidate"
        sent[kind] += 1
        return original(self, command, deadline, budget)

    async with Checker(config) as checker:
        Worker._run = counting
        try:
            ten = await checker.check_target(
                TargetCheckRequest(environment="TEST", code=FILE, target="tgt", candidates=[candidate(i) for i in range(10)])
            )
        finally:
            Worker._run = original
        assert not ten.reused and all(r.verdict == "accepted" for r in ten.results)
        await reused_latency(checker, 20)  # warm-up
        latency = await reused_latency(checker, n)
        steps = await step_latency(checker, n)
    return {"ten_candidates_repl_commands": dict(sent), "reused_one_candidate": latency, "proof_step": steps}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks", type=int, default=400)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "target.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        direct = direct_baseline(tmp / "direct", args.checks)
        direct_step = direct_steps(tmp / "direct_steps", args.checks)
        runs = asyncio.run(standin_runs(tmp, args.checks))
    latency = runs["reused_one_candidate"]
    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "checks": args.checks,
        "direct_lean_interact_call": direct,
        "target_check": runs,
        "overhead_p50_ms_vs_two_direct_calls": round(latency["p50_ms"] - 2 * direct["p50_ms"], 3),
        "overhead_p50_ms_vs_one_direct_call": round(latency["p50_ms"] - direct["p50_ms"], 3),
        "direct_lean_interact_proof_step": direct_step,
        "proof_step_overhead_p50_ms_vs_one_direct_step": round(runs["proof_step"]["p50_ms"] - direct_step["p50_ms"], 3),
        "run": runinfo.run_info(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
