"""The checker end to end on the stand-in REPL (tests/standin/), driven through lean-interact's
real `LeanServer`, with faults, limits, queueing, recycling and shutdown."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from checker_support import STANDIN, make_layout, set_control, standin_config, transcripts_dir
from lakefakes import write_launcher
from leanindex.checker import Checker, CheckRequest, CheckResponse
from leanindex.cli import main
from leanindex.errors import ErrorCode, LeanIndexError

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem


def recorded_messages(name: str, index: int) -> list[dict]:
    """Messages of the `index`-th recorded response of transcript `name`, read independently."""
    text = (TRANSCRIPTS / f"{name}.expected.out").read_text(encoding="utf-8")
    return [json.loads(b) for b in text.split("\n\n") if b.strip()][index].get("messages", [])


def run(tmp: Path, scenario, **settings):
    """Run `scenario(checker)` on a started checker for the stand-in, then close it."""
    config, control = standin_config(tmp, transcripts=TRANSCRIPTS, **settings)

    async def go():
        checker = Checker(config)
        try:
            await checker.start()
            return await scenario(checker, control)
        finally:
            await checker.close()

    return asyncio.run(go())


def check(checker: Checker, code: str, **extra) -> "asyncio.Future[CheckResponse]":
    return checker.check(CheckRequest(environment="TEST", code=code, **extra))


def group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (zombies, dead but not yet reaped by an
    init that does not reap, do not count)."""
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def groups_gone(groups: list[int], within_s: float = 5.0) -> bool:
    """Whether every process of `groups` has stopped within `within_s` (SIGKILL is delivered
    asynchronously, later on a loaded machine)."""
    deadline = time.monotonic() + within_s
    while any(group_alive(g) for g in groups):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_accepted_recorded_theorem(tmp_path):
    async def scenario(checker, _):
        return await check(checker, SHOW_P)

    r = run(tmp_path, scenario)
    assert r.verdict == "accepted" and r.reasons == [] and r.protected and not r.cached
    assert [(a.name, a.axioms, a.flagged) for a in r.axioms] == [("show_p", [], [])]
    assert r.environment == "TEST" and r.lean_toolchain == "v4.33.0-rc2"
    assert r.code_sha256 == hashlib.sha256(SHOW_P.encode()).hexdigest()
    assert r.isolation.scrubbed_environment and "RLIMIT_AS" in r.isolation.rlimits


def test_repl_starts_under_the_projects_toolchain_in_a_private_directory(tmp_path, monkeypatch):
    """elan's `lake` picks the toolchain from ELAN_TOOLCHAIN, else from the working directory's
    `lean-toolchain`, never from `-d`: the stand-in `lake` records the choice elan would make,
    its working directory and its environment."""
    log = tmp_path / "lake-calls.jsonl"
    lake = write_launcher(tmp_path / "bin" / "lake", STANDIN / "fake_lake.py", {"FAKE_LAKE_LOG": str(log)})
    # A caller's own toolchain choice and secrets must not reach the REPL.
    monkeypatch.setenv("ELAN_TOOLCHAIN", "leanprover/lean4:v4.0.0")
    monkeypatch.setenv("LEANINDEX_TEST_SECRET", "not for Lean")

    async def scenario(checker, _):
        return await check(checker, SHOW_P)

    r = run(tmp_path, scenario, lake=lake)
    assert r.verdict == "accepted"
    [call] = [json.loads(line) for line in log.read_text().splitlines()]
    project = tmp_path / "project"
    assert call["args"][:3] == ["-d", str(project), "env"]
    assert call["toolchain"] == (project / "lean-toolchain").read_text().strip()
    private = Path(call["cwd"])
    assert call["env"]["HOME"] == call["env"]["TMPDIR"] == str(private)
    assert project not in private.parents and private != project
    assert "LEANINDEX_TEST_SECRET" not in call["env"]


def test_info_tree_nodes_of_kinds_lean_interact_does_not_list_are_accepted(tmp_path):
    """Lean 4.35 writes `DocElabInfo`/`DocInfo`/`ErrorNameInfo` nodes (scripted here, in the
    REPL's shape); they must not turn a valid check into `backend_error`."""

    async def scenario(checker, _):
        return await check(checker, "/-- A documented theorem. -/\ntheorem documented : True := trivial")

    r = run(tmp_path, scenario)
    assert r.verdict == "accepted" and [a.name for a in r.axioms] == ["documented"]


def test_rejected_and_incomplete_from_recordings(tmp_path):
    codes = {
        "kernel": "example : 1 = 0 := by\n  cases 1\n  rfl\n  apply ?succ",  # app_type_mismatch
        "sorry": "def f : Nat := sorry",  # term_sorry
        "goals": "def f : Nat := by apply Nat.succ",  # incomplete
        "parse": "theorem foo : 1 = 1 := by\nsorry",  # line_breaks, first request
    }

    async def scenario(checker, _):
        return {k: await check(checker, v) for k, v in codes.items()}

    r = run(tmp_path, scenario)
    assert r["kernel"].verdict == "rejected"
    assert [x.code for x in r["kernel"].reasons][0] == "error"
    assert "(kernel) declaration has metavariables" in r["kernel"].reasons[0].message
    assert r["parse"].verdict == "rejected"
    assert {x.code for x in r["parse"].reasons} >= {"error", "unsolved_goals"}
    assert r["sorry"].verdict == "incomplete" and [x.code for x in r["sorry"].reasons] == ["sorry"]
    assert [(s.goal, s.start.line, s.start.column, s.end.column) for s in r["sorry"].sorries] == [("⊢ Nat", 1, 15, 20)]
    assert r["goals"].verdict == "incomplete" and [x.code for x in r["goals"].reasons] == ["unsolved_goals"]


def test_diagnostics_round_trip_positions_severities_unicode(tmp_path):
    code = "def f (x : Bool) : Nat := by\n  by_cases x\n  { apply Nat.succ }"  # incomplete, second request

    async def scenario(checker, _):
        return await check(checker, code), await check(checker, "#print List.cons")

    r, info = run(tmp_path, scenario)
    expected = recorded_messages("incomplete", 1)
    got = [
        {"severity": d.severity, "pos": d.start.model_dump(), "endPos": d.end.model_dump(), "data": d.text}
        for d in r.diagnostics
    ]
    assert got == expected and any("¬x = true" in d.text for d in r.diagnostics)
    # An information message (a `#print` answer) reaches the caller and does not block acceptance.
    assert info.verdict == "accepted"
    assert [(d.severity, d.text) for d in info.diagnostics] == [
        ("info", "constructor List.cons.{u} : {α : Type u} → α → List α → List α")
    ]


def test_axiom_allowlist(tmp_path):
    async def scenario(checker, _):
        return [
            await check(checker, c)
            for c in (
                "theorem em' (p : Prop) : p ∨ ¬p := Classical.em p",
                "axiom cheat : False\ntheorem uses_cheat : 1 = 2 := cheat.elim",
                "theorem big : 2 ^ 10 = 1024 := by native_decide",
                "namespace Foo\ntheorem bar : True := trivial\nend Foo",
                "example : 2 + 2 = 4 := rfl",
            )
        ]

    standard, declared, native, namespaced, example = run(tmp_path, scenario)
    assert standard.verdict == "accepted" and standard.axioms[0].flagged == []
    assert declared.verdict == "rejected"
    assert {(a.name, tuple(a.flagged)) for a in declared.axioms} == {("cheat", ("cheat",)), ("uses_cheat", ("cheat",))}
    assert native.verdict == "rejected"
    assert native.axioms[0].flagged == ["big._native.native_decide.ax_1_1"]
    assert [x.code for x in native.reasons] == ["disallowed_axiom"]
    assert namespaced.verdict == "accepted" and namespaced.axioms[0].name == "Foo.bar"
    assert example.verdict == "rejected" and [x.code for x in example.reasons] == ["axioms_unverified"]


def test_anonymous_instance_is_never_accepted_silently(tmp_path):
    """An anonymous `instance` has no `declId`: its axioms cannot be printed by name, so it is
    reported as unverified; a named one is probed like any declaration."""
    anonymous = "instance : Decidable (2 ^ 10 = 1024) := isTrue (by native_decide)"
    named = "instance instBig : Decidable (2 ^ 10 = 1024) := isTrue (by native_decide)"

    async def scenario(checker, _):
        return await check(checker, anonymous), await check(checker, named)

    a, n = run(tmp_path, scenario)
    assert a.verdict == "rejected" and a.axioms == []
    assert [(x.code, x.command, x.start.line) for x in a.reasons] == [("axioms_unverified", "instance", 1)]
    assert "anonymous `instance`" in a.reasons[0].message
    assert n.verdict == "rejected" and [x.code for x in n.reasons] == ["disallowed_axiom"]
    assert n.axioms[0].flagged == ["instBig._native.native_decide.ax_1_1"]


@pytest.mark.parametrize(
    ("code", "command", "line"),
    [
        ("#eval 1 + 1", "#eval", 1),
        ('theorem ok : True := trivial\nmacro "tt" : term => `(True.intro)', "macro", 2),
        ("set_option debug.skipKernelTC true in\ntheorem t2 : 1 = 1 := rfl", "set_option debug.skipKernelTC", 1),
        ("@[implemented_by id] def h : Nat := 0", "@[implemented_by]", 1),
    ],
)
def test_forbidden_commands(tmp_path, code, command, line):
    async def scenario(checker, _):
        return await check(checker, code)

    r = run(tmp_path, scenario)
    assert r.verdict == "rejected"
    forbidden = [x for x in r.reasons if x.code == "forbidden_command"]
    assert [(x.command, x.start.line) for x in forbidden] == [(command, line)]


def test_unsafe_commands_allowed_marks_response_unprotected(tmp_path):
    async def scenario(checker, _):
        return await check(checker, "#eval 1 + 1")

    r = run(tmp_path, scenario, allow_unsafe_commands=True)
    assert r.verdict == "accepted" and r.protected is False
    assert [d.text for d in r.diagnostics] == ["2"]


def test_refusals_before_the_repl(tmp_path):
    async def scenario(checker, _):
        errors = {}
        for name, request in {
            "mismatch": CheckRequest(environment="TEST", code="import Mathlib.Tactic\nimport Lean.Elab\ntheorem x : True := trivial"),
            "prelude": CheckRequest(environment="TEST", code="prelude\ntheorem x : True := trivial"),
            "unknown": CheckRequest(environment="OTHER", code=SHOW_P),
            "large": CheckRequest(environment="TEST", code="-- " + "x" * 300),
        }.items():
            with pytest.raises(LeanIndexError) as caught:
                await checker.check(request)
            errors[name] = caught.value
        return errors

    e = run(tmp_path, scenario, max_code_bytes=200)
    assert e["mismatch"].code is ErrorCode.HEADER_MISMATCH and e["mismatch"].details["uncovered"] == ["Mathlib.Tactic"]
    assert e["prelude"].code is ErrorCode.HEADER_MISMATCH
    assert e["unknown"].code is ErrorCode.UNKNOWN_ENVIRONMENT and e["unknown"].details["known"] == ["TEST"]
    assert e["large"].code is ErrorCode.PAYLOAD_TOO_LARGE


def test_imports_of_modules_that_do_not_exist_are_refused(tmp_path):
    """`Lean.Nope` lies under the profile's `Lean` by name, but no `.olean` of it is on the REPL's
    search path (tests/standin/lake's toolchain has `Lean.Elab`, not `Lean.Nope`)."""

    async def scenario(checker, _):
        with pytest.raises(LeanIndexError) as caught:
            await check(checker, "import Lean.Elab\nimport Lean.Nope\n" + SHOW_P)
        ok = await check(checker, "import Lean.Elab\n" + SHOW_P)
        return caught.value, ok, checker.pool("TEST").idle

    error, ok, idle = run(tmp_path, scenario)
    assert error.code is ErrorCode.HEADER_MISMATCH and error.details["unknown_modules"] == ["Lean.Nope"]
    assert ok.verdict == "accepted" and idle == 1  # the refusal gave its worker back


def test_a_lake_that_sets_no_search_path_fails_the_start(tmp_path):
    lake = tmp_path / "bin" / "lake"
    lake.parent.mkdir(parents=True)
    lake.write_text('#!/bin/sh\nshift 2\nshift\nexec "$@"\n')  # `-d DIR env CMD...` without Lake's variables
    lake.chmod(0o755)
    config, _ = standin_config(tmp_path, transcripts=TRANSCRIPTS, lake=lake)

    async def go():
        checker = Checker(config)
        try:
            with pytest.raises(LeanIndexError) as caught:
                await checker.start()
            return caught.value, checker.pool("TEST").process_ids()
        finally:
            await checker.close()

    error, groups = asyncio.run(go())
    assert error.code is ErrorCode.BACKEND_ERROR and error.details["stage"] == "start" and groups == []


def test_header_failure_is_reported_and_not_kept(tmp_path):
    config, control = standin_config(tmp_path, transcripts=TRANSCRIPTS)
    set_control(control, header_fails=True)

    async def go():
        checker = Checker(config)
        try:
            with pytest.raises(LeanIndexError) as at_start:
                await checker.start()
            with pytest.raises(LeanIndexError) as at_check:
                await check(checker, SHOW_P)
            set_control(control, header_fails=False)
            return at_start.value, at_check.value, await check(checker, SHOW_P)
        finally:
            await checker.close()

    at_start, at_check, later = asyncio.run(go())
    assert at_start.code is ErrorCode.BACKEND_ERROR and at_start.details["stage"] == "header"
    assert "unknown module prefix" in at_start.details["errors"][0]
    assert at_check.code is ErrorCode.BACKEND_ERROR and at_check.details["stage"] == "header"
    assert later.verdict == "accepted"


@pytest.mark.parametrize(
    ("fault", "code"),
    [("sleep", ErrorCode.TIMEOUT), ("exit-mid-response", ErrorCode.BACKEND_ERROR), ("garbage", ErrorCode.BACKEND_ERROR)],
)
def test_fault_kills_worker_and_replacement_serves_next(tmp_path, fault, code):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        [first_group] = pool.process_ids()
        with pytest.raises(LeanIndexError) as caught:
            await check(checker, f"-- standin: {fault}", timeout_s=1.0)
        after = await check(checker, SHOW_P)
        return caught.value, first_group, pool.process_ids(), after

    error, first_group, groups, after = run(tmp_path, scenario)
    assert error.code is code
    if code is ErrorCode.TIMEOUT:
        assert error.details["failure_class"] == "timeout" and error.details["hint"] and error.details["timeout_s"] == 1.0
    assert groups_gone([first_group]) and first_group not in groups
    assert after.verdict == "accepted"


def test_memory_cap_and_resident_size_recycling(tmp_path):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        grown = await check(checker, "-- standin: grow 120")
        retired_after_grow = pool.retired
        with pytest.raises(LeanIndexError) as caught:
            await check(checker, "-- standin: grow 600")
        return grown, retired_after_grow, caught.value, await check(checker, SHOW_P)

    grown, retired, over_cap, after = run(tmp_path, scenario, recycle_rss_mb=80, memory_limit_mb=400)
    assert grown.verdict == "accepted" and retired == 1
    assert over_cap.code is ErrorCode.BACKEND_ERROR
    assert after.verdict == "accepted"


def test_recycling_after_n_checks_uses_a_spare(tmp_path):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        groups = []
        for _ in range(5):
            await check(checker, SHOW_P)
            groups.append(tuple(pool.process_ids()))
        return pool.retired, groups

    retired, groups = run(tmp_path, scenario, recycle_after_checks=2, cache_entries=0)
    assert retired == 2
    assert len({g[0] for g in groups if g}) >= 3


def test_cache_hit(tmp_path):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        first = await check(checker, SHOW_P)
        worker_checks = [w.checks for w in pool._idle]
        second = await check(checker, SHOW_P)
        return first, second, worker_checks, [w.checks for w in pool._idle]

    first, second, before, after = run(tmp_path, scenario)
    assert not first.cached and second.cached and before == after
    assert second.model_dump(exclude={"cached", "timings"}) == first.model_dump(exclude={"cached", "timings"})


def test_queue_full_is_busy_and_cancelled_waiter_leaves_queue(tmp_path):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        slow = asyncio.ensure_future(check(checker, "-- standin: sleep", timeout_s=1.0))
        while pool.idle:
            await asyncio.sleep(0.01)
        queued = asyncio.ensure_future(check(checker, SHOW_P))
        while not pool._waiters:
            await asyncio.sleep(0.01)
        with pytest.raises(LeanIndexError) as busy:
            await check(checker, SHOW_P + " ")
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        waiting_after_cancel = len(pool._waiters)
        with pytest.raises(LeanIndexError) as timed_out:
            await slow
        after = await check(checker, SHOW_P)
        return busy.value, waiting_after_cancel, timed_out.value, after, [w.checks for w in pool._idle]

    busy, waiting, timed_out, after, checks = run(tmp_path, scenario, workers=1, queue_size=1)
    assert busy.code is ErrorCode.BUSY
    assert waiting == 0
    assert timed_out.code is ErrorCode.TIMEOUT
    # The replacement worker ran exactly one check: the cancelled one never reached it.
    assert after.verdict == "accepted" and checks == [1]


def test_concurrent_checks_are_matched_to_their_requests(tmp_path):
    expected = {
        SHOW_P: "accepted",
        "def f : Nat := sorry": "incomplete",
        "def f : Nat := by sorry": "incomplete",
        "example : 1 = 0 := by\n  cases 1\n  rfl\n  apply ?succ": "rejected",
        "theorem em' (p : Prop) : p ∨ ¬p := Classical.em p": "accepted",
        "theorem big : 2 ^ 10 = 1024 := by native_decide": "rejected",
        "def f : Nat := by apply Nat.succ": "incomplete",
        "#print List.cons": "accepted",
    }

    async def scenario(checker, _):
        codes = list(expected) * 2
        responses = await asyncio.gather(*(check(checker, c) for c in codes))
        return list(zip(codes, responses))

    pairs = run(tmp_path, scenario, workers=3, cache_entries=0)
    for code, response in pairs:
        assert response.code_sha256 == hashlib.sha256(code.encode()).hexdigest()
        assert response.verdict == expected[code]


def test_no_orphan_processes_after_shutdown(tmp_path):
    async def scenario(checker, _):
        pool = checker.pool("TEST")
        hanging = asyncio.ensure_future(check(checker, "-- standin: sleep", timeout_s=60))
        while pool.idle != 1:
            await asyncio.sleep(0.01)
        groups = pool.process_ids()
        await checker.close()
        with pytest.raises(LeanIndexError):
            await hanging
        return groups

    groups = run(tmp_path, scenario, workers=2)
    assert len(groups) == 2
    assert groups_gone(groups)
    marker = str(STANDIN / "repl.py")
    leftovers = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and marker in " ".join(p.info["cmdline"]) and str(tmp_path) in " ".join(p.info["cmdline"])
        and p.status() != psutil.STATUS_ZOMBIE
    ]
    assert leftovers == []


def test_cli_exit_status_and_json(tmp_path):
    project, repl, _ = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    base = ["check", "-", "-e", "TEST", "--root", str(tmp_path), "--project", str(project), "--repl", str(repl), "--lake", str(STANDIN / "lake"), "--import", "Lean"]
    runner = CliRunner()
    accepted = runner.invoke(main, base + ["--json"], input=SHOW_P)
    assert accepted.exit_code == 0, accepted.output
    assert CheckResponse.model_validate_json(accepted.output).verdict == "accepted"
    assert runner.invoke(main, base, input="def f : Nat := sorry").exit_code == 12
    assert runner.invoke(main, base, input="#eval 1 + 1").exit_code == 13
    mismatch = runner.invoke(main, base + ["--json"], input="import Mathlib\n")
    assert mismatch.exit_code == 3 and json.loads(mismatch.output)["error"]["code"] == "header_mismatch"


@pytest.mark.parametrize("signum", [15, 9])
def test_no_orphans_when_the_checker_process_is_killed(tmp_path, signum):
    """SIGTERM or SIGKILL of the process that runs a checker takes every REPL with it."""
    import subprocess
    import sys

    script = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "from pathlib import Path\n"
        "from checker_support import standin_config, transcripts_dir\n"
        "from leanindex.checker import Checker\n"
        "async def main():\n"
        f"    config, _ = standin_config(Path({str(tmp_path)!r}), transcripts=transcripts_dir(), workers=2)\n"
        "    checker = Checker(config)\n"
        "    await checker.start()\n"
        "    print(' '.join(map(str, checker.pool('TEST').process_ids())), flush=True)\n"
        "    await asyncio.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    # A killed process cannot remove its REPLs' scratch folders: keep them under tmp_path.
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    groups = [int(g) for g in child.stdout.readline().split()]
    assert len(groups) == 2 and all(group_alive(g) for g in groups)
    child.send_signal(signum)
    child.wait()
    assert groups_gone(groups, within_s=10.0)  # the kernel delivers the parent-death signals asynchronously
