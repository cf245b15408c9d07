"""Real checks against CORE (imports `Init`) with Lean: needs `lake` and a built REPL.

The REPL checkout is taken from $LEANINDEX_REPL (a directory holding `.lake/build/bin/repl`, e.g.
leanprover-community/repl built with `lake build` on this project's toolchain); the project is
this repository (its `lean-toolchain`), or $LEANINDEX_LEAN_PROJECT.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from leanindex.checker import Checker, CheckerConfig, CheckRequest

pytestmark = pytest.mark.lean
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def responses():
    if shutil.which("lake") is None:
        pytest.skip("lake is not on PATH: no Lean toolchain on this machine")
    repl = os.environ.get("LEANINDEX_REPL")
    if not repl or not (Path(repl) / ".lake" / "build" / "bin" / "repl").exists():
        pytest.skip("LEANINDEX_REPL does not point at a built REPL checkout")
    project = Path(os.environ.get("LEANINDEX_LEAN_PROJECT", REPO))
    config = CheckerConfig.for_profile(
        REPO / ".lean-check-root", "CORE", project_dir=project, repl_dir=repl, imports=["Init"], memory_limit_mb=8192
    )
    codes = {
        "accepted": "theorem add_zero' (n : Nat) : n + 0 = n := rfl",
        "wrong": "theorem bad (n : Nat) : n + 1 = n := rfl",
        "sorry": "theorem later (p q : Prop) (hp : p) : p ∧ q := ⟨hp, sorry⟩",
        "native": "theorem big : 2 ^ 20 = 1048576 := by native_decide",
        "axiom": "axiom cheat : False\ntheorem uses_cheat : 1 = 2 := cheat.elim",
        "eval": "#eval 1 + 1",
        "namespaced": "namespace Foo\ntheorem bar : True := trivial\nend Foo",
    }

    async def go():
        async with Checker(config) as checker:
            return {k: await checker.check(CheckRequest(environment="CORE", code=v)) for k, v in codes.items()}

    return asyncio.run(go())


def test_accepted(responses):
    r = responses["accepted"]
    assert r.verdict == "accepted" and r.axioms[0].name == "add_zero'" and r.axioms[0].flagged == []


def test_wrong_proof_rejected(responses):
    r = responses["wrong"]
    assert r.verdict == "rejected" and any(d.severity == "error" for d in r.diagnostics)


def test_sorry_incomplete(responses):
    r = responses["sorry"]
    assert r.verdict == "incomplete" and r.sorries and "q" in r.sorries[0].goal


def test_native_decide_flagged(responses):
    r = responses["native"]
    assert r.verdict == "rejected"
    flagged = r.axioms[0].flagged
    assert flagged and all(a not in ("propext", "Classical.choice", "Quot.sound") for a in flagged)


def test_declared_axiom_flagged(responses):
    r = responses["axiom"]
    assert r.verdict == "rejected" and any("cheat" in a.flagged for a in r.axioms)


def test_eval_forbidden(responses):
    r = responses["eval"]
    assert r.verdict == "rejected" and [x.command for x in r.reasons if x.code == "forbidden_command"] == ["#eval"]


def test_namespaced_theorem_probed_by_full_name(responses):
    r = responses["namespaced"]
    assert r.verdict == "accepted" and r.axioms[0].name == "Foo.bar"
