"""Proof states (`lean.proof.state` / `lean.proof.step` / `lean.proof.close`) end to end on the
stand-in REPL, replaying the recorded `proof_step`, `proof_branching`, `tactic_mode_sorry`,
`invalid_tactic`, `unknown_tactic` and `unknown_proof_state` transcripts through lean-interact.
The info trees of the opening commands are scripted (the recordings ran without them; see
tests/standin/scripted.py `INFOTREES`); the goals, states and statuses are recorded."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from test_checker import run

from checker_support import transcripts_dir
from leanindex.checker import CheckRequest
from leanindex.checker.goals import parse_goal
from leanindex.checker.models import ProofCloseRequest, ProofStateRequest, ProofStepRequest, ProofStepsRequest
from leanindex.errors import ErrorCode, LeanIndexError

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

DEF_F = "def f : Nat := by sorry"  # recorded: proof_step and others
BRANCHING = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by sorry"  # recorded


def open_at(code: str, **extra) -> ProofStateRequest:
    return ProofStateRequest(environment="TEST", code=code, **extra)


def step(state_id: str, tactic: str, **extra) -> ProofStepRequest:
    return ProofStepRequest(environment="TEST", state_id=state_id, tactic=tactic, **extra)


def test_steps_branch_and_close_a_proof(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(BRANCHING))
        split = await checker.proof_step(step(opened.state_id, "apply And.intro"))
        left = await checker.proof_step(step(split.state_id, "exact h1.left"))
        applied = await checker.proof_step(step(left.state_id, "apply h2"))
        done = await checker.proof_step(step(applied.state_id, "exact h1.right"))
        return opened, split, left, done

    opened, split, left, done = run(tmp_path, scenario)
    assert [g.text for g in opened.goals] == ["p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n⊢ p ∧ r"]
    assert opened.goals[0].hypotheses == ["p q r : Prop", "h1 : p ∧ q", "h2 : q → r"] and opened.goals[0].target == "p ∧ r"
    assert opened.position.line == 1 and opened.position.column == 75
    assert split.status == "open" and [g.case for g in split.goals] == ["left", "right"]
    assert split.previous_state_id == opened.state_id and split.state_id not in (None, opened.state_id)
    assert [g.case for g in left.goals] == ["right"]
    assert done.status == "completed" and done.goals == [] and done.proof_status == "Completed"


def test_a_failed_step_leaves_the_old_state_usable(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F))
        refused = await checker.proof_step(step(opened.state_id, "exat 42"))  # recorded: unknown_tactic
        first = await checker.proof_step(step(opened.state_id, "apply Int.natAbs"))  # recorded: proof_step
        second = await checker.proof_step(step(opened.state_id, "have t : Nat := 42"))
        done = await checker.proof_step(step(second.state_id, "exact t"))
        return refused, first, second, done

    refused, first, second, done = run(tmp_path, scenario)
    assert refused.status == "error" and refused.state_id is None and "unknown tactic" in refused.proof_status
    assert [g.text for g in first.goals] == ["⊢ Int"] and [g.text for g in second.goals] == ["t : Nat\n⊢ Nat"]
    assert done.status == "completed"


def test_lean_errors_and_sorry_statuses(tmp_path):
    async def scenario(checker, _):
        wrong = await checker.proof_state(open_at("theorem my_theorem (x : Nat) : x = x := by sorry"))
        error = await checker.proof_step(step(wrong.state_id, "exact my_fake_premise"))  # recorded: invalid_tactic
        opened = await checker.proof_state(open_at(DEF_F))
        sorried = await checker.proof_step(step(opened.state_id, "sorry"))  # recorded: tactic_mode_sorry
        return error, sorried

    error, sorried = run(tmp_path, scenario)
    assert error.status == "error" and error.state_id is None
    assert [(m.severity, m.text) for m in error.messages] == [("error", "Unknown identifier `my_fake_premise`")]
    assert sorried.status == "incomplete" and sorried.proof_status == "Incomplete: contains sorry" and sorried.state_id


def test_ids_belong_to_their_session_and_close(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F, session="alice"))
        errors = {}
        with pytest.raises(LeanIndexError) as other_session:
            await checker.proof_step(step(opened.state_id, "exact 42"))
        errors["other"] = other_session.value
        closed = await checker.proof_close(ProofCloseRequest(environment="TEST", state_id=opened.state_id, session="alice"))
        with pytest.raises(LeanIndexError) as after_close:
            await checker.proof_step(step(opened.state_id, "apply Int.natAbs", session="alice"))
        errors["closed"] = after_close.value
        return closed, errors

    closed, errors = run(tmp_path, scenario)
    assert closed.open_states == 0
    assert {e.code for e in errors.values()} == {ErrorCode.UNKNOWN_PROOF_STATE}


def test_states_of_a_killed_worker_are_unknown_never_replayed(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F))
        with pytest.raises(LeanIndexError) as timed_out:
            await checker.proof_step(step(opened.state_id, "skip\n-- standin: sleep", timeout_s=1))
        with pytest.raises(LeanIndexError) as afterwards:
            await checker.proof_step(step(opened.state_id, "apply Int.natAbs"))
        return timed_out.value, afterwards.value

    timed_out, afterwards = run(tmp_path, scenario)
    assert timed_out.code is ErrorCode.TIMEOUT
    assert afterwards.code is ErrorCode.UNKNOWN_PROOF_STATE and "stopped" in afterwards.message


def test_states_expire_and_are_bounded_per_worker(tmp_path):
    async def scenario(checker, _):
        first = await checker.proof_state(open_at(DEF_F))
        second = await checker.proof_state(open_at(DEF_F))
        codes = []
        for state in (first, second):
            try:
                await checker.proof_step(step(state.state_id, "apply Int.natAbs"))
                codes.append("ok")
            except LeanIndexError as error:
                codes.append(error.code.value)
        return codes

    # One state per worker: opening the second closed the first.
    assert run(tmp_path, scenario, proof_states_per_worker=1) == ["unknown_proof_state", "ok"]


def test_refusals(tmp_path):
    async def scenario(checker, _):
        found = {}
        for label, call in [
            ("no sorry", checker.proof_state(open_at("theorem show_p (p: Prop) (h : p) : p := by exact h"))),
            ("forbidden file", checker.proof_state(open_at("#eval 1 + 1"))),
            ("forbidden tactic", checker.proof_step(step("ps_x", "run_tac pure ()"))),
            ("unknown id", checker.proof_step(step("ps_x", "exact 42"))),
            ("bad position", checker.proof_state(open_at(DEF_F, position={"line": 9, "column": 0}))),
        ]:
            with pytest.raises(LeanIndexError) as caught:
                await call
            found[label] = caught.value.code
        return found

    assert run(tmp_path, scenario) == {
        "no sorry": ErrorCode.INVALID_REQUEST,
        "forbidden file": ErrorCode.FORBIDDEN_COMMAND,
        "forbidden tactic": ErrorCode.FORBIDDEN_COMMAND,
        "unknown id": ErrorCode.UNKNOWN_PROOF_STATE,
        "bad position": ErrorCode.INVALID_REQUEST,
    }


def test_goal_parts():
    goal = parse_goal("case h\nx y : Nat\nh : x =\n  y\n⊢ y = x")
    assert (goal.case, goal.hypotheses, goal.target) == ("h", ["x y : Nat", "h : x =\n  y"], "y = x")
    assert parse_goal("no goal").target == "no goal"


def test_idle_states_expire(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F))
        await asyncio.sleep(0.6)
        with pytest.raises(LeanIndexError) as expired:
            await checker.proof_step(step(opened.state_id, "apply Int.natAbs"))
        return expired.value

    error = run(tmp_path, scenario, proof_state_ttl_s=0.5)
    assert error.code is ErrorCode.UNKNOWN_PROOF_STATE


# Complete proofs whose info trees are scripted (tests/standin/scripted.py); the branching one's
# goal texts are the recorded ones of `proof_branching`.
BRANCHING_PROOF = (
    "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by\n"
    "  apply And.intro\n  · exact h1.left\n  · apply h2\n    exact h1.right"
)
HAVE_PROOF = "theorem use_have (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  have h : p := by exact hp\n  exact ⟨h, hq⟩"


def test_proof_steps_give_every_tactic_with_goals_before_and_after(tmp_path):
    async def scenario(checker, _):
        return await checker.proof_steps(ProofStepsRequest(environment="TEST", code=BRANCHING_PROOF), tree=False)

    response = run(tmp_path, scenario)
    assert response.theorem == "complex_and" and response.tree is None
    assert [s.tactic for s in response.steps] == [
        "apply And.intro", "· exact h1.left", "exact h1.left", "· apply h2\n    exact h1.right", "apply h2", "exact h1.right",
    ]
    first = response.steps[0]
    assert [g.target for g in first.goals_before] == ["p ∧ r"] and [g.case for g in first.goals_after] == ["left", "right"]
    assert response.steps[-1].goals_after == [] and response.initial_hypotheses == ["p q r : Prop", "h1 : p ∧ q", "h2 : q → r"]
    assert (first.start.line, first.start.column, first.end.column) == (2, 2, 17)
    assert response.used_constants is None and response.used_theorems is None


def test_proof_tree_splits_closes_and_opens_have_boxes(tmp_path):
    async def scenario(checker, _):
        branching = await checker.proof_steps(ProofStepsRequest(environment="TEST", code=BRANCHING_PROOF), tree=True)
        have = await checker.proof_steps(ProofStepsRequest(environment="TEST", code=HAVE_PROOF, theorem="use_have"), tree=True)
        return branching.tree, have.tree

    branching, have = run(tmp_path, scenario)
    split = branching.tactics[0]
    assert branching.goal.target == "p ∧ r" and split.outcome == "split" and len(branching.tactics) == 1
    left, right = split.subgoals
    assert [(t.tactic, t.outcome) for t in left.tactics] == [("exact h1.left", "closed")]
    assert [(t.tactic, t.outcome) for t in right.tactics] == [("apply h2", "transformed"), ("exact h1.right", "closed")]
    assert right.tactics[0].new_goal.target == "q"
    have_tactic, exact = have.tactics
    assert have_tactic.outcome == "transformed" and have_tactic.new_hypotheses == ["h : p"]
    assert [(b.goal.target, [t.outcome for t in b.tactics]) for b in have_tactic.have_boxes] == [("p", ["closed"])]
    assert exact.outcome == "closed"


def test_include_theorems_answers_from_the_catalog(tmp_path):
    signatures = {"And.intro": "theorem And.intro : ∀ {a b : Prop}, a → b → a ∧ b"}

    async def inspect(request):
        if request.declaration_name not in signatures:
            raise LeanIndexError(ErrorCode.NOT_FOUND, "no such declaration", {})
        return SimpleNamespace(kind=SimpleNamespace(value="theorem"), name=request.declaration_name, approximate_fields=[],
                               type=signatures[request.declaration_name].split(" : ", 1)[1])

    async def scenario(checker, _):
        request = ProofStepsRequest(environment="TEST", code=BRANCHING_PROOF, include_theorems=True)
        with pytest.raises(LeanIndexError) as without:
            await checker.proof_steps(request, tree=False)
        return without.value, await checker.proof_steps(request, tree=False, inspect=inspect)

    without, response = run(tmp_path, scenario)
    assert without.code is ErrorCode.INVALID_REQUEST
    assert response.used_constants == ["And.intro", "And.left", "And.right"]
    assert response.used_theorems == [signatures["And.intro"]] and response.not_in_catalog == ["And.left", "And.right"]


def test_proof_steps_refusals(tmp_path):
    async def scenario(checker, _):
        codes = []
        for request in [
            ProofStepsRequest(environment="TEST", code=BRANCHING_PROOF, theorem="nope"),
            ProofStepsRequest(environment="TEST", code="#eval 1 + 1"),
        ]:
            with pytest.raises(LeanIndexError) as caught:
                await checker.proof_steps(request, tree=False)
            codes.append(caught.value.code)
        return codes

    assert run(tmp_path, scenario) == [ErrorCode.NOT_FOUND, ErrorCode.FORBIDDEN_COMMAND]


def test_states_of_a_worker_recycled_for_its_resident_size_are_unknown(tmp_path):
    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F))
        grown = await checker.check(CheckRequest(environment="TEST", code="-- standin: grow 120"))
        with pytest.raises(LeanIndexError) as afterwards:
            await checker.proof_step(step(opened.state_id, "apply Int.natAbs"))
        return grown, checker.pool("TEST").retired, afterwards.value

    grown, retired, afterwards = run(tmp_path, scenario, recycle_rss_mb=80, memory_limit_mb=400)
    assert grown.verdict == "accepted" and retired == 1
    assert afterwards.code is ErrorCode.UNKNOWN_PROOF_STATE and "stopped" in afterwards.message


def test_steps_on_one_state_wait_for_its_worker(tmp_path):
    """Two workers; concurrent steps on one state all go to the worker holding it, one at a time."""

    async def scenario(checker, _):
        opened = await checker.proof_state(open_at(DEF_F))
        answers = await asyncio.gather(*(checker.proof_step(step(opened.state_id, "apply Int.natAbs")) for _ in range(4)))
        return answers, checker.pool("TEST").idle

    answers, idle = run(tmp_path, scenario, workers=2)
    assert [[g.text for g in a.goals] for a in answers] == [["⊢ Int"]] * 4
    assert len({a.state_id for a in answers}) == 4 and idle == 2
