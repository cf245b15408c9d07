"""The checker on a Ray cluster (`leanindex.checker.cluster`): a local 2-CPU cluster started once
for the session (and stopped with it, no process left behind), 2 checker actors on the instant
stand-in REPL (tests/standin/), compared with the local checker's answers: 1,000 checks, an
actor killed mid-batch, a poisoned input that kills its host, `check-batch --ray` killed halfway
and resumed, and `serve --ray` answering `POST /v1/check`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import psutil
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters
from service_support import free_port, wait_until_serving
from test_service_check import SHOW_P, UNKNOWN, build_test_profile, standin_processes

from batch_support import KILL_HOST, cli_args, local_labels, mixed_items, outcome_label, read_results, run_until_killed, write_requests
from checker_support import STANDIN, make_layout, set_control, standin_config, transcripts_dir
from leanindex.checker import CheckerConfig
from leanindex.checker.models import BatchItem, BatchResult

TRANSCRIPTS = transcripts_dir()
ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'leanindex[ray]')")

from leanindex.checker.cluster import RayChecker, RaySettings, _Actor  # noqa: E402
from leanindex.errors import ErrorCode, LeanIndexError  # noqa: E402


def _ray_processes(before: set[int]) -> list[psutil.Process]:
    """Live processes started since `before` whose command line belongs to Ray."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.pid in before or proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        line = " ".join(proc.info["cmdline"] or [])
        # Ray's own programs run from its package folder; its workers are named `ray::...`.
        if ("/ray/" in line or line.startswith("ray::")) and proc.pid != os.getpid():
            found.append(proc)
    return found


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """A local Ray cluster of 2 CPUs for the session; its GCS address. At the end it is shut
    down and no process it started may remain."""
    before = {p.pid for p in psutil.process_iter()}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        deadline = time.monotonic() + 30
        while (left := _ray_processes(before)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == [], [" ".join(p.cmdline()) for p in left]


def settings(**fields: object) -> RaySettings:
    return RaySettings(**{"actors": 2, "actor_cpus": 1, "start_timeout_s": 60, **fields})


def run_on_ray(config: CheckerConfig, items: list[BatchItem], ray_settings: RaySettings, during=None) -> list[BatchResult]:
    """Every item through a started `RayChecker`; `during(front, results_so_far)` runs after
    each result (to kill actors mid-batch, or to look at the front)."""

    async def go() -> list[BatchResult]:
        front = RayChecker(config, ray_settings)
        await front.start()
        results: list[BatchResult] = []
        try:
            async for result in front.check_stream(items):
                results.append(result)
                if during is not None:
                    during(front, results)
        finally:
            await front.close()
        return results

    return asyncio.run(go())


def instant(tmp: Path) -> tuple[CheckerConfig, Path]:
    # No PID namespace: the kill-host fault must see the actor that hosts its REPL.
    return standin_config(tmp, instant=True, cache_entries=0, network_isolation=False)


def assert_each_once(results: list[BatchResult], items: list[BatchItem]) -> dict[str, BatchResult]:
    ids = [r.id for r in results]
    assert sorted(ids) == sorted(item.id for item in items) and len(set(ids)) == len(ids)
    return {r.id: r for r in results}


def test_a_thousand_checks_through_two_actors_match_the_local_checker(ray_address: str, tmp_path: Path) -> None:
    config, _ = instant(tmp_path)
    items = mixed_items(1000)
    served: list[int] = []

    def count_served(front: RayChecker, results: list[BatchResult]) -> None:
        if len(results) == len(items):
            served.extend(actor.served for actor in front.actors)

    results = run_on_ray(config, items, settings(), during=count_served)
    by_id = assert_each_once(results, items)
    assert {i: outcome_label(r) for i, r in by_id.items()} == local_labels(config, items)
    assert all(r.attempts == 1 for r in results)
    # Both actors did a fair share (least loaded first).
    assert len(served) == 2 and min(served) >= 300, served


@pytest.mark.parametrize("policy", ["retry", "backend_error"])
def test_an_actor_killed_mid_batch_loses_no_check_and_forges_no_verdict(ray_address: str, tmp_path: Path, policy: str) -> None:
    config, control = instant(tmp_path)
    set_control(control, delay_ms=15)
    items = mixed_items(80)
    killed: list[int] = []

    def kill_one(front: RayChecker, results: list[BatchResult]) -> None:
        if len(results) == 20 and not killed:
            # The actor with the most checks in flight (either may be idle for an instant).
            victim = max(front.actors, key=lambda actor: actor.in_flight)
            assert victim.in_flight > 0
            killed.append(victim.number)
            ray.kill(victim.handle)

    results = run_on_ray(config, items, settings(on_actor_death=policy), during=kill_one)
    set_control(control)
    by_id = assert_each_once(results, items)
    local = local_labels(config, items)
    retried = [r for r in results if r.attempts == 2]
    errors = [r for r in results if r.error is not None and r.error.code == "backend_error"]
    for result in results:
        if result.error is not None and result.error.code == "backend_error":
            assert policy == "backend_error" and result.error.details == {"reason": "actor_died", "actors": killed}
        else:
            assert outcome_label(result) == local[result.id]
    if policy == "retry":
        assert retried and not errors and all(outcome_label(r) == local[r.id] for r in retried)
    else:
        assert errors and not retried
    assert killed and len(by_id) == 80


def test_a_poisoned_input_that_kills_two_actors_is_answered_backend_error(ray_address: str, tmp_path: Path) -> None:
    config, control = instant(tmp_path)
    set_control(control, delay_ms=5)
    poisoned = BatchItem(id="poisoned", environment="TEST", code=f"theorem p : True := trivial\n{KILL_HOST}")
    items = [poisoned, *mixed_items(40)]
    deaths: list[int] = []

    def after(front: RayChecker, results: list[BatchResult]) -> None:
        deaths[:] = [front.deaths]

    results = run_on_ray(config, items, settings(), during=after)
    set_control(control)
    by_id = assert_each_once(results, items)
    answer = by_id.pop("poisoned")
    assert answer.response is None and answer.error.code == "backend_error"
    assert answer.error.details["reason"] == "actors_died_twice" and len(answer.error.details["actors"]) == 2
    assert answer.attempts == 2 and deaths == [2]
    local = local_labels(config, items[1:])
    for result in by_id.values():
        # A bystander on the second actor to die may share the poisoned input's fate; no other error, no other verdict.
        if result.error is not None and result.error.code == "backend_error":
            assert result.error.details["reason"] == "actors_died_twice"
        else:
            assert outcome_label(result) == local[result.id]


def test_check_batch_on_ray_killed_halfway_resumes_without_repeating(ray_address: str, tmp_path: Path) -> None:
    _project, _repl, control = make_layout(tmp_path, instant=True)
    set_control(control, delay_ms=15)
    items = mixed_items(60)
    source = write_requests(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    # Half a CPU each: the killed run's actors may hold theirs until Ray notices their owner died.
    ray_args = ("--ray", ray_address, "--ray-actors", "2", "--ray-actor-cpus", "0.5")
    at_kill = run_until_killed(cli_args(tmp_path, source, out, *ray_args), out, 15)
    assert 15 <= at_kill < 60
    set_control(control)
    finished = subprocess.run(
        [sys.executable, "-m", "leanindex", *cli_args(tmp_path, source, out, *ray_args, "--json")], capture_output=True, text=True, timeout=180
    )
    report = json.loads(finished.stdout)
    assert report["skipped"] == at_kill and report["answered"] == 60 - at_kill, finished.stderr
    results = read_results(out)
    assert_each_once(results, items)
    config, _ = instant(tmp_path / "local")
    assert {r.id: outcome_label(r) for r in results} == local_labels(config, items)


def test_serve_on_ray_answers_check_and_batch(ray_address: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, instant=True)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable, "-m", "leanindex", "serve", "--root", str(root), "--port", str(port), "--check", f"test={project}",
            "--check-repl", str(repl), "--check-lake", str(STANDIN / "lake"), "--ray", ray_address, "--ray-actors", "2",
            "--ray-actor-cpus", "0.5",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(server, url, timeout_s=120)
        accepted = httpx.post(f"{url}/v1/check", json={"environment": "test", "code": "theorem t : True := trivial"}, timeout=120)
        assert accepted.status_code == 200, accepted.text
        assert accepted.json()["verdict"] == "accepted" and accepted.json()["environment"] == "TEST"
        outside = httpx.post(f"{url}/v1/check", json={"environment": "TEST", "code": "import Mathlib"}, timeout=60)
        assert outside.status_code == 400 and outside.json()["error"]["code"] == "header_mismatch"
        items = [item.model_dump(exclude_none=True) for item in mixed_items(12)]
        batch = httpx.post(f"{url}/v1/check/batch", json={"items": items}, timeout=120)
        assert batch.status_code == 200, batch.text
        assert Counter(outcome_label(BatchResult.model_validate(r)) for r in batch.json()["results"]) == Counter(
            {"accepted": 7, "incomplete": 3, "error:header_mismatch": 2}
        )
        state = httpx.post(f"{url}/v1/proof/state", json={"environment": "TEST", "code": "theorem t : True := sorry"}, timeout=60)
        assert state.status_code == 404 and state.json()["error"]["code"] == "check_disabled"
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert [p for p in standin_processes() if str(tmp_path) in " ".join(p.cmdline())] == []


def test_placement_prefers_the_least_loaded_actor_unless_a_warm_one_is_nearly_as_free(tmp_path: Path) -> None:
    """`RayChecker._choose` on actors whose load is set by hand (no cluster needed): 2 REPLs per
    actor, so an actor warm for the key wins while it is busier by at most 1."""
    config, _ = instant(tmp_path)
    front = RayChecker(config.model_copy(update={"workers": 2}), settings())
    warm, cold = _Actor(number=1, handle=None, ready=True), _Actor(number=2, handle=None, ready=True)
    front.actors = [warm, cold]
    warm.remember("k")

    def chosen(warm_load: int, cold_load: int, key: str = "k", avoid: tuple = ()) -> int:
        warm.in_flight, cold.in_flight = warm_load, cold_load
        return asyncio.run(front._choose(key, list(avoid))).number

    assert chosen(0, 0) == 1 and chosen(1, 0) == 1
    assert chosen(2, 0) == 2 and "k" in cold.warm  # the cold actor served it and is warm now
    cold.warm.clear()
    assert chosen(3, 1) == 2 and chosen(0, 0, key="other") in (1, 2)
    assert chosen(0, 5, avoid=(warm,)) == 2
    warm.alive = cold.alive = False
    with pytest.raises(LeanIndexError) as none:
        chosen(0, 0)
    assert none.value.details["reason"] == "no_actor"


@pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")
def test_mcp_on_ray_keeps_stdout_for_frames_and_suggests_close_names(ray_address: str, tmp_path: Path) -> None:
    """`leanindex mcp --ray` over stdio, on the recorded transcripts: the actor's checker gives
    Lean's recorded verdicts and, from the catalog under ROOT, the close names of an unknown one."""
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "leanindex", "mcp", "--root", str(root), "--check", f"test={project}", "--check-repl", str(repl),
            "--check-lake", str(STANDIN / "lake"), "--ray", ray_address, "--ray-actors", "1", "--ray-actor-cpus", "0.5",
        ],
        env={**os.environ},
    )

    async def main() -> None:
        async with McpClient(params, cache=None) as client:
            items = [{"id": "show_p", "environment": "TEST", "code": SHOW_P}, {"id": "unknown", "environment": "TEST", "code": UNKNOWN}]
            result = await client.call_tool("lean.check.batch", {"items": items})
            assert not result.is_error, result.content
            show_p, unknown = (BatchResult.model_validate(r) for r in result.structured_content["results"])
            assert outcome_label(show_p) == "accepted" and outcome_label(unknown) == "rejected"
            assert unknown.response.diagnostics[0].suggestions == ["Nat.byrfl"]

    anyio.run(main)


def test_an_actor_the_cluster_cannot_place_is_reported_then_refused(ray_address: str, tmp_path: Path, monkeypatch, caplog) -> None:
    """64 CPUs asked of a 2-CPU cluster: warnings while it waits, then `backend_error` at the
    start timeout, and no actor left behind."""
    from leanindex.checker import cluster

    monkeypatch.setattr(cluster, "STILL_STARTING_S", 0.5)
    config, _ = instant(tmp_path)

    async def go() -> LeanIndexError:
        front = RayChecker(config, settings(address=ray_address, actors=1, actor_cpus=64, start_timeout_s=2))
        try:
            with pytest.raises(LeanIndexError) as refused:
                await front.start()
            return refused.value
        finally:
            await front.close()

    with caplog.at_level("WARNING", logger="leanindex"):
        error = asyncio.run(go())
    assert error.code is ErrorCode.BACKEND_ERROR and "did not start" in error.message
    assert any("has not started after" in r.getMessage() for r in caplog.records)
