"""The statement fence and the audit against CORE (imports `Init`) with real Lean: needs `lake`
and a built REPL ($LEANINDEX_REPL, as test_checker_lean.py). Skipped here with the reason printed
when there is no Lean toolchain.

Lean compares the statements (`guard_expr ... =ₛ ...`, `Expr.eqv`: bound-variable names and
binder annotations do not count; see `leanindex.checker.fence`), so these cases pin what Lean
answers: the same statement is `same`; a weakened hypothesis, a more general universe, a changed
implicit argument's type, a `def` in place of the theorem are `statement_changed`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from leanindex.checker import Checker, CheckerConfig, CheckRequest
from leanindex.checker.models import AuditRequest, FenceStatus, Reference, ReferenceTheorem
from leanindex.errors import LeanIndexError

pytestmark = pytest.mark.lean
REPO = Path(__file__).resolve().parents[1]

#: label -> (submission, fenced name, reference statement)
FENCED = {
    "same": ("theorem add_zero' (n : Nat) : n + 0 = n := rfl", "add_zero'", "(n : Nat) : n + 0 = n"),
    "same_renamed_binder": ("theorem add_zero' (m : Nat) : m + 0 = m := rfl", "add_zero'", "(n : Nat) : n + 0 = n"),
    "same_namespaced": ("namespace Foo\ntheorem bar (n : Nat) : n = n := rfl\nend Foo", "Foo.bar", "(n : Nat) : n = n"),
    "same_universe_renamed": ("theorem refl' {α : Sort v} (a : α) : a = a := rfl", "refl'", "{α : Sort u} (a : α) : a = a"),
    "weakened_hypothesis": ("theorem lt_succ' (a b : Nat) (h : a < b) : a < b + 1 := by omega", "lt_succ'", "(a b : Nat) (h : a ≤ b) : a < b + 1"),
    "changed_universe": ("theorem refl' {α : Sort u} (a : α) : a = a := rfl", "refl'", "{α : Type u} (a : α) : a = a"),
    "changed_implicit": ("theorem zero_add' {n : Int} (h : n = 0) : n + 0 = 0 := by omega", "zero_add'", "{n : Nat} (h : n = 0) : n + 0 = 0"),
    "def_for_theorem": ("def two_two : 2 + 2 = 4 := rfl", "two_two", ": 2 + 2 = 4"),
    "missing": ("theorem other : True := trivial", "two_two", ": 2 + 2 = 4"),
}

AUDIT_FILE = (
    "theorem a1 : 1 + 1 = 2 := rfl\n"
    "theorem a2 (p q : Prop) (hp : p) : p ∧ q := ⟨hp, sorry⟩\n"
    "theorem a3 : 2 ^ 20 = 1048576 := by native_decide\n"
)


@pytest.fixture(scope="module")
def answers():
    if shutil.which("lake") is None:
        pytest.skip("lake is not on PATH: no Lean toolchain on this machine")
    repl = os.environ.get("LEANINDEX_REPL")
    if not repl or not (Path(repl) / ".lake" / "build" / "bin" / "repl").exists():
        pytest.skip("LEANINDEX_REPL does not point at a built REPL checkout")
    project = Path(os.environ.get("LEANINDEX_LEAN_PROJECT", REPO))
    config = CheckerConfig.for_profile(
        REPO / ".lean-check-root", "CORE", project_dir=project, repl_dir=repl, imports=["Init"], memory_limit_mb=8192
    )

    async def go():
        async with Checker(config) as checker:
            found = {}
            for label, (code, name, statement) in FENCED.items():
                reference = Reference(theorems=[ReferenceTheorem(name=name, statement=statement)])
                found[label] = await checker.check(CheckRequest(environment="CORE", code=code, reference=reference))
            found["file"] = await checker.check(
                CheckRequest(environment="CORE", code=FENCED["same"][0], reference=Reference(file="theorem add_zero' (n : Nat) : n + 0 = n := sorry"))
            )
            found["audit"] = await checker.audit(AuditRequest(environment="CORE", code=AUDIT_FILE))
            try:
                await checker.check(
                    CheckRequest(environment="CORE", code=FENCED["same"][0], reference=Reference(file="theorem t : undefinedThing := sorry"))
                )
            except LeanIndexError as error:
                found["bad_reference"] = error
            return found

    return asyncio.run(go())


@pytest.mark.parametrize("label", ["same", "same_renamed_binder", "same_namespaced", "same_universe_renamed"])
def test_same_statement_accepted(answers, label):
    response = answers[label]
    assert response.verdict == "accepted", response.reasons
    assert [f.status for f in response.fence] == [FenceStatus.SAME]


@pytest.mark.parametrize(
    ("label", "status"),
    [
        ("weakened_hypothesis", FenceStatus.CHANGED),
        ("changed_universe", FenceStatus.CHANGED),
        ("changed_implicit", FenceStatus.CHANGED),
        ("def_for_theorem", FenceStatus.NOT_THEOREM),
        ("missing", FenceStatus.MISSING),
    ],
)
def test_changed_statement_rejected(answers, label, status):
    response = answers[label]
    assert response.verdict == "rejected"
    assert "statement_changed" in [r.code for r in response.reasons]
    [fence] = response.fence
    assert fence.status is status
    if status is FenceStatus.CHANGED:
        assert fence.submitted and fence.reference and fence.first_difference
        assert fence.first_difference[0] != fence.first_difference[1]


def test_reference_file(answers):
    assert answers["file"].verdict == "accepted" and answers["file"].fence[0].status is FenceStatus.SAME


def test_reference_that_does_not_elaborate_is_a_tool_error(answers):
    error = answers["bad_reference"]
    assert error.code == "invalid_request" and error.details["stage"] == "reference"


def test_audit_of_three_theorems(answers):
    audit = answers["audit"]
    assert (audit.declarations_added, audit.declarations_audited) == (3, 3)
    by_name = {d.name: d for d in audit.declarations}
    assert by_name["a1"].uses_sorry is False and by_name["a1"].flagged == []
    assert by_name["a2"].uses_sorry is True
    assert by_name["a3"].flagged and by_name["a3"].uses_sorry is False
    assert audit.verdict == "rejected"
