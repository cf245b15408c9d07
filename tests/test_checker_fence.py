"""The statement fence (`reference` on `lean.check` and `lean.check.target`) and the whole-file
audit (`lean.audit`) on the stand-in REPL.

The submissions `show_p` (accepted) are the recorded `infotree_theorem` transcript; everything
the recordings lack is scripted (tests/standin/scripted.py, labelled there): the reference
command's answer, the fence probe's answers (signatures in `#check`'s form, the guard's echo
when the two statements are the same as written, Lean's `guard_expr` failure otherwise), `def f`,
and the audited three-theorem file. The Lean comparison itself is tested in
test_checker_fence_lean.py, which needs Lean.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from lean_interact.interface import CommandResponse

from checker_support import STANDIN, standin_config, transcripts_dir
from leanindex.checker import Checker, CheckRequest
from leanindex.checker.fence import FenceLines, FencedTheorem, first_difference, plan, probe_command, read_fence, synced
from leanindex.checker.models import AuditRequest, FenceStatus, Reference, ReferenceTheorem, TargetCheckRequest
from leanindex.checker.probe import Declaration, Survey
from leanindex.checker.worker import Worker
from leanindex.cli import main
from leanindex.errors import ErrorCode, LeanIndexError

import sys

sys.path.insert(0, str(STANDIN))
import scripted  # noqa: E402

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem
SAME = "(p: Prop) (h : p) : p"


def named(name: str, statement: str) -> Reference:
    return Reference(theorems=[ReferenceTheorem(name=name, statement=statement)])


def run(tmp: Path, scenario, **settings):
    """Run `scenario(checker, sent)` on a started checker; `sent` collects (command, env) of every
    command the workers send, in order."""
    config, _control = standin_config(tmp, transcripts=TRANSCRIPTS, **settings)
    sent: list[tuple[str, int | None]] = []
    original = Worker._run

    def recording(self, command, deadline, budget):
        sent.append((command.cmd, command.env))
        return original(self, command, deadline, budget)

    async def go():
        checker = Checker(config)
        try:
            await checker.start()
            return await scenario(checker, sent)
        finally:
            await checker.close()

    Worker._run = recording
    try:
        return asyncio.run(go())
    finally:
        Worker._run = original


def check(checker: Checker, code: str, reference: Reference | None, **extra):
    return checker.check(CheckRequest(environment="TEST", code=code, reference=reference, **extra))


def test_same_statement_is_accepted_and_the_reference_runs_before_the_submission(tmp_path):
    async def scenario(checker, sent):
        return await check(checker, SHOW_P, named("show_p", SAME)), list(sent)

    response, sent = run(tmp_path, scenario)
    assert response.verdict == "accepted" and response.reasons == []
    [fence] = response.fence
    assert (fence.name, fence.status, fence.kind) == ("show_p", FenceStatus.SAME, "theorem")
    assert fence.submitted == fence.reference == "show_p (p: Prop) (h : p) : p"
    commands = [cmd for cmd, _env in sent]
    reference_at = next(i for i, cmd in enumerate(commands) if "leanindex_fence_" in cmd and cmd.startswith("section\n"))
    submission_at = commands.index(SHOW_P)
    assert reference_at < submission_at
    # The submission runs in the environment the reference command left.
    assert sent[submission_at][1] != sent[reference_at][1]
    assert commands[-1].startswith("#check (") and "guard_expr" in commands[-1]


def test_changed_missing_and_def_statements_are_rejected_with_statement_changed(tmp_path):
    async def scenario(checker, _sent):
        return (
            await check(checker, SHOW_P, named("show_p", "(p q : Prop) (h : p) : p ∨ q")),
            await check(checker, SHOW_P, named("nope", ": True")),
            await check(checker, "def f : Nat := 1", named("f", ": Nat")),
        )

    changed, missing, definition = run(tmp_path, scenario)
    assert changed.verdict == "rejected" and [r.code for r in changed.reasons] == ["statement_changed"]
    [fence] = changed.fence
    assert fence.status is FenceStatus.CHANGED
    assert fence.submitted == "show_p (p: Prop) (h : p) : p"
    assert fence.reference == "show_p (p q : Prop) (h : p) : p ∨ q"
    assert fence.first_difference == ["(p: Prop)", "(p q : Prop)"]
    assert "(p q : Prop)" in changed.reasons[0].message
    assert missing.verdict == "rejected" and missing.fence[0].status is FenceStatus.MISSING
    assert "does not declare" in missing.reasons[0].message
    assert definition.verdict == "rejected" and definition.fence[0].status is FenceStatus.NOT_THEOREM
    assert definition.fence[0].kind == "def" and "`def`" in definition.reasons[0].message


def test_reference_file_and_cache_key(tmp_path):
    reference = Reference(file=f"theorem show_p {SAME} := sorry")

    async def scenario(checker, _sent):
        plain = await check(checker, SHOW_P, None)
        fenced = await check(checker, SHOW_P, reference)
        again = await check(checker, SHOW_P, reference)
        return plain, fenced, again

    plain, fenced, again = run(tmp_path, scenario)
    assert plain.fence == [] and not plain.cached
    assert not fenced.cached and fenced.verdict == "accepted" and fenced.fence[0].status is FenceStatus.SAME
    assert again.cached and again.fence == fenced.fence


@pytest.mark.parametrize(("fault", "code"), [("sleep", ErrorCode.TIMEOUT), ("exit-mid-response", ErrorCode.BACKEND_ERROR)])
def test_a_failing_reference_or_probe_is_a_tool_error_never_a_verdict(tmp_path, fault, code):
    reference = Reference(file=f"theorem show_p {SAME} := sorry\n-- standin: {fault}")

    async def scenario(checker, _sent):
        with pytest.raises(LeanIndexError) as caught:
            await check(checker, SHOW_P, reference, timeout_s=1.0)
        return caught.value, await check(checker, SHOW_P, named("show_p", SAME))

    error, after = run(tmp_path, scenario)
    assert error.code is code
    assert after.verdict == "accepted"


def test_fence_probe_out_of_sync_is_a_backend_error():
    theorems = (FencedTheorem("show_p", "leanindex_fence_1_0"),)
    survey = Survey([Declaration("show_p", (), "theorem", 1, 0)], [], [])
    text, lines = probe_command(theorems, survey, 10**12)
    echo_line = next(iter(lines.guards))
    forged = CommandResponse.model_validate(
        {"env": 1, "messages": [{"severity": "info", "pos": {"line": echo_line, "column": 0}, "data": f"{lines.guards[echo_line][1]} : Nat"}]}
    )
    assert not synced(forged, 10**12)  # no first-line echo: the worker refuses this answer
    # Without the guard's own echo, a theorem is never `same`, whatever else was printed.
    silent = CommandResponse.model_validate({"env": 1, "messages": [{"severity": "info", "pos": {"line": 1, "column": 0}, "data": f"{10**12} : Nat"}]})
    [fence] = read_fence(silent, lines, theorems, survey)
    assert fence.status is FenceStatus.MISSING  # nor was a signature printed
    assert text.count("guard_expr") == 9


def test_reference_refusals():
    with pytest.raises(LeanIndexError) as caught:
        plan(Reference(file="def helper : Nat := 1\ntheorem t : helper = 1 := sorry"), ["Init"], 1)
    assert caught.value.code is ErrorCode.INVALID_REQUEST and caught.value.details == {"line": 1}
    with pytest.raises(LeanIndexError) as caught:
        plan(Reference(file="open Nat in\ntheorem t : True := sorry"), ["Init"], 1)
    assert caught.value.code is ErrorCode.INVALID_REQUEST
    with pytest.raises(LeanIndexError) as caught:
        plan(Reference(theorems=[ReferenceTheorem(name="t", statement=": True")], file="theorem t : True := sorry"), ["Init"], 1)
    assert caught.value.details == {"repeated": ["t"]}
    with pytest.raises(LeanIndexError) as caught:
        plan(Reference(file="import Mathlib\ntheorem t : True := sorry"), ["Init"], 1)
    assert caught.value.code is ErrorCode.HEADER_MISMATCH
    with pytest.raises(ValueError):
        Reference()


def test_plan_keeps_namespaces_and_renames_only_the_last_component():
    fence = plan(
        Reference(
            theorems=[ReferenceTheorem(name="Nat.my_comm", statement="(a b : Nat) : a + b = b + a")],
            file="namespace Foo\n/-- Says theorem t is trivial. -/\ntheorem t : True := sorry\nend Foo",
        ),
        ["Init"],
        7,
    )
    assert fence.text.split("\n") == [
        "section",
        "theorem Nat.leanindex_fence_7_0 (a b : Nat) : a + b = b + a := sorry",
        "namespace Foo",
        "/-- Says theorem t is trivial. -/",
        "theorem leanindex_fence_7_f1 : True := sorry",
        "end Foo",
        "end",
    ]
    assert [(t.name, t.fresh) for t in fence.theorems] == [
        ("Nat.my_comm", "Nat.leanindex_fence_7_0"),
        ("Foo.t", "Foo.leanindex_fence_7_f1"),
    ]


def test_first_difference():
    assert first_difference("t (n : Nat) : n + 0 = n", "t (n : Nat) : n + 0 = n") is None
    assert first_difference("t {n : Nat} : n = n", "t (n : Nat) : n = n") == ["{n : Nat}", "(n : Nat)"]
    assert first_difference("t : ∀ (x : Nat), f (g x) = 1", "t : ∀ (x : Nat), f (h x) = 1") == ["(g x)", "(h x)"]
    assert first_difference("t : a = b", "t : a = c") == ["b", "c"]


def test_target_check_fences_its_target_only(tmp_path):
    code = f"import Lean\n\ndef f : Nat := 1\n\n{SHOW_P}\n"

    async def scenario(checker, _sent):
        fenced = await checker.check_target(
            TargetCheckRequest(environment="TEST", code=code, target="show_p", candidates=[SHOW_P], reference=named("show_p", SAME))
        )
        changed = await checker.check_target(
            TargetCheckRequest(
                environment="TEST", code=code, target="show_p", candidates=[SHOW_P], reference=named("show_p", "(p q : Prop) (h : p) : p ∨ q")
            )
        )
        with pytest.raises(LeanIndexError) as other:
            await checker.check_target(
                TargetCheckRequest(environment="TEST", code=code, target="show_p", candidates=[SHOW_P], reference=named("f", ": Nat"))
            )
        return fenced, changed, other.value

    fenced, changed, other = run(tmp_path, scenario)
    [unit] = fenced.results
    assert unit.verdict == "accepted" and unit.fence[0].status is FenceStatus.SAME
    assert not changed.reused  # another reference is another prepared environment
    assert changed.results[0].verdict == "rejected" and changed.results[0].fence[0].status is FenceStatus.CHANGED
    assert other.code is ErrorCode.INVALID_REQUEST and other.details["others"] == ["f"]
    with pytest.raises(ValueError):
        TargetCheckRequest(environment="TEST", code=code, mode="sequential", reference=named("show_p", SAME))


def test_audit_of_three_theorems_with_sorry_and_native_decide(tmp_path):
    async def scenario(checker, _sent):
        return (
            await checker.audit(AuditRequest(environment="TEST", code=scripted.AUDIT_FILE)),
            await checker.audit(AuditRequest(environment="TEST", code=SHOW_P)),
            await checker.audit(AuditRequest(environment="TEST", code="#print List.cons")),
            await checker.audit(AuditRequest(environment="TEST", code="example : 2 + 2 = 4 := rfl")),
        )

    three, one, none, example = run(tmp_path, scenario)
    assert (three.declarations_added, three.declarations_audited) == (3, 3)
    assert [(d.name, d.kind, d.uses_sorry, d.flagged, d.start.line) for d in three.declarations] == [
        ("a1", "theorem", False, [], 1),
        ("a2", "theorem", True, ["sorryAx"], 2),
        ("a3", "theorem", False, ["a3._native.native_decide.ax_1_1"], 3),
    ]
    assert three.verdict == "rejected" and {r.code for r in three.reasons} == {"disallowed_axiom", "sorry"}
    assert one.verdict == "accepted" and (one.declarations_added, one.declarations_audited) == (1, 1)
    assert none.verdict == "rejected" and (none.declarations_added, none.declarations_audited) == (0, 0)
    assert [r.code for r in none.reasons] == ["nothing_audited"]
    assert example.verdict == "rejected" and (example.declarations_added, example.declarations_audited) == (1, 0)
    assert [(d.kind, d.name, d.verified) for d in example.unverified] == [("example", None, False)]


def test_audit_cli_exit_status_gates_ci(tmp_path):
    config, _control = standin_config(tmp_path, transcripts=TRANSCRIPTS)
    project = Path(config.project_dir)
    (project / "My").mkdir(parents=True)
    (project / "My" / "Good.lean").write_text(SHOW_P)
    bad = tmp_path / "bad.lean"
    bad.write_text(scripted.AUDIT_FILE)
    common = [
        "--environment", "TEST", "--root", str(tmp_path / "root"), "--project", str(config.project_dir), "--repl", str(config.repl_dir),
        "--lake", str(config.lake_path), "--import", "Lean",
    ]
    runner = CliRunner()
    good = runner.invoke(main, ["audit", "--module-prefix", "My", *common, "--json"])
    assert good.exit_code == 0, good.output
    body = json.loads(good.output)
    assert body["files"][0]["audit"]["declarations_audited"] == 1
    flagged = runner.invoke(main, ["audit", str(project / "My" / "Good.lean"), str(bad), *common])
    assert flagged.exit_code == 13, flagged.output
    assert "a3._native.native_decide.ax_1_1" in flagged.output and "uses sorry" in flagged.output
    empty = runner.invoke(main, ["audit", "--module-prefix", "Nope", *common])
    assert empty.exit_code == 3 and "no Lean file" in empty.output
