"""Target checks, proof states and per-tactic goals against CORE (imports `Init`) with Lean: the
same cases as tests/test_checker_target.py and tests/test_checker_proofs.py, answered by a real
REPL. Needs `lake` and a built REPL ($LEANINDEX_REPL, as tests/test_checker_lean.py); skips
here, runs in the GitHub workflow."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from leanindex.checker import Checker, CheckerConfig
from leanindex.checker.models import (
    ProofStateRequest,
    ProofStepRequest,
    ProofStepsRequest,
    TargetCheckRequest,
)
from leanindex.errors import ErrorCode, LeanIndexError

pytestmark = pytest.mark.lean
REPO = Path(__file__).resolve().parents[1]

FILE = "def double (n : Nat) : Nat := n + n\n\ntheorem double_eq (n : Nat) : double n = 2 * n := by\n  sorry\n"
GOOD = "theorem double_eq (n : Nat) : double n = 2 * n := by\n  unfold double; omega"
PARTIAL = "theorem double_eq (n : Nat) : double n = 2 * n := by\n  sorry"
WRONG = "theorem double_eq (n : Nat) : double n = 2 * n := rfl"
BRANCHING = "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by sorry"
PROOF = (
    "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by\n"
    "  apply And.intro\n  · exact h1.left\n  · apply h2\n    exact h1.right"
)


@pytest.fixture(scope="module")
def config() -> CheckerConfig:
    if shutil.which("lake") is None:
        pytest.skip("lake is not on PATH: no Lean toolchain on this machine")
    repl = os.environ.get("LEANINDEX_REPL")
    if not repl or not (Path(repl) / ".lake" / "build" / "bin" / "repl").exists():
        pytest.skip("LEANINDEX_REPL does not point at a built REPL checkout")
    project = Path(os.environ.get("LEANINDEX_LEAN_PROJECT", REPO))
    return CheckerConfig.for_profile(
        REPO / ".lean-check-root", "CORE", project_dir=project, repl_dir=repl, imports=["Init"], memory_limit_mb=8192
    )


def run(config: CheckerConfig, scenario):
    async def go():
        async with Checker(config) as checker:
            return await scenario(checker)

    return asyncio.run(go())


def test_target_candidates_and_reuse(config):
    async def scenario(checker):
        request = TargetCheckRequest(environment="CORE", code=FILE, target="double_eq", candidates=[GOOD, PARTIAL, WRONG])
        return await checker.check_target(request), await checker.check_target(request)

    first, second = run(config, scenario)
    assert [r.verdict.value for r in first.results] == ["accepted", "incomplete", "rejected"]
    assert not first.reused and second.reused
    assert first.results[2].diagnostics[0].start.line >= 3  # file lines, not the candidate's


def test_sequential_extends_only_past_accepted(config):
    code = f"def double (n : Nat) : Nat := n + n\n{WRONG}\n{GOOD}\n"

    async def scenario(checker):
        return await checker.check_target(TargetCheckRequest(environment="CORE", code=code, mode="sequential"))

    response = run(config, scenario)
    assert [(r.verdict.value, r.extended) for r in response.results] == [("accepted", True), ("rejected", False), ("accepted", True)]


def test_proof_state_steps_and_unknown_after_failure(config):
    async def scenario(checker):
        opened = await checker.proof_state(ProofStateRequest(environment="CORE", code=BRANCHING))
        split = await checker.proof_step(ProofStepRequest(environment="CORE", state_id=opened.state_id, tactic="apply And.intro"))
        refused = await checker.proof_step(ProofStepRequest(environment="CORE", state_id=opened.state_id, tactic="exat 42"))
        left = await checker.proof_step(ProofStepRequest(environment="CORE", state_id=split.state_id, tactic="exact h1.left"))
        right = await checker.proof_step(ProofStepRequest(environment="CORE", state_id=left.state_id, tactic="exact h2 h1.right"))
        return opened, split, refused, right

    opened, split, refused, right = run(config, scenario)
    assert opened.goals[0].target == "p ∧ r"
    assert [g.case for g in split.goals] == ["left", "right"]
    assert refused.status == "error" and refused.state_id is None
    assert right.status == "completed"


def test_forbidden_tactic_is_refused(config):
    async def scenario(checker):
        opened = await checker.proof_state(ProofStateRequest(environment="CORE", code=BRANCHING))
        with pytest.raises(LeanIndexError) as caught:
            await checker.proof_step(ProofStepRequest(environment="CORE", state_id=opened.state_id, tactic="run_tac pure ()"))
        return caught.value

    assert run(config, scenario).code is ErrorCode.FORBIDDEN_COMMAND


def test_proof_steps_and_tree(config):
    async def scenario(checker):
        request = ProofStepsRequest(environment="CORE", code=PROOF)
        return await checker.proof_steps(request, tree=False), await checker.proof_steps(request, tree=True)

    flat, tree = run(config, scenario)
    assert [s.tactic for s in flat.steps][:1] == ["apply And.intro"]
    assert [g.case for g in flat.steps[0].goals_after] == ["left", "right"]
    assert tree.tree.tactics[0].outcome == "split" and len(tree.tree.tactics[0].subgoals) == 2
