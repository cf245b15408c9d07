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

from leanindex.checker import Checker, CheckerConfig, CheckRequest, CheckResponse
from leanindex.errors import ErrorCode, LeanIndexError

pytestmark = pytest.mark.lean
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project() -> Path:
    return Path(os.environ.get("LEANINDEX_LEAN_PROJECT", REPO))


@pytest.fixture(scope="module")
def responses(project):
    if shutil.which("lake") is None:
        pytest.skip("lake is not on PATH: no Lean toolchain on this machine")
    repl = os.environ.get("LEANINDEX_REPL")
    if not repl or not (Path(repl) / ".lake" / "build" / "bin" / "repl").exists():
        pytest.skip("LEANINDEX_REPL does not point at a built REPL checkout")
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
        "toolchain": "#version",
        "verso": "set_option doc.verso true in\n/-- A *documented* theorem. -/\ntheorem documented : True := trivial",
        "anonymous_instance": "instance : Decidable (2 ^ 10 = 1024) := isTrue (by native_decide)",
        "existing_import": "import Init.Data.Nat\ntheorem t : True := trivial",
        "missing_import": "import Init.Nope\ntheorem t : True := trivial",
        "unknown_name": "theorem swap (a b : Nat) : a * b = b * a := Nat.mul_com a b",
        "mismatch": "theorem two : (2 : Nat) = 2 := (rfl : 3 = 3)",
        "parse": "theorem broken : True :=\ntheorem next : True := trivial",
        **{f"refused {label}": code for label, code in REFUSED.items()},
    }

    async def answer(checker: Checker, code: str) -> CheckResponse | LeanIndexError:
        try:
            return await checker.check(CheckRequest(environment="CORE", code=code))
        except LeanIndexError as error:
            return error

    async def go():
        async with Checker(config) as checker:
            return {k: await answer(checker, v) for k, v in codes.items()}

    return asyncio.run(go())


#: Commands that run code during elaboration, and the label each is refused with.
REFUSED = {
    "simproc_decl": "simproc_decl reduceFoo (Nat.succ _) := fun _ => pure .continue",
    "dsimproc_decl": "dsimproc_decl reduceFoo (Nat.succ _) := fun _ => pure .continue",
    "cbv_simproc_decl": "cbv_simproc_decl reduceFoo (Nat.succ _) := fun _ => pure .continue",
    "#guard": "#guard 1 + 1 == 2",
    "unsafe": "def viaUnsafe : Nat := unsafe (unsafeCast (0 : Nat))",
    "@[sevalproc]": "def p := 0\nattribute [sevalproc] p",
}


def pinned_version(project: Path) -> str:
    """The Lean version the project's `lean-toolchain` names (`leanprover/lean4:v4.35.0` gives
    `4.35.0`), as `Lean.versionString` prints it."""
    return (project / "lean-toolchain").read_text().strip().rsplit(":v", 1)[-1]


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


def test_repl_runs_the_projects_toolchain(responses, project):
    # `#version` answers `Lean <Lean.versionString>` (Lean.Elab.BuiltinCommand, `elabVersion`).
    r = responses["toolchain"]
    assert r.verdict == "accepted"
    assert [d.text.splitlines()[0] for d in r.diagnostics] == [f"Lean {pinned_version(project)}"]


def test_doc_verso_info_nodes_do_not_fail_the_check(responses):
    r = responses["verso"]
    assert r.verdict == "accepted" and r.axioms[0].name == "documented"


def test_anonymous_instance_is_not_accepted(responses):
    r = responses["anonymous_instance"]
    assert r.verdict == "rejected"
    assert {x.code for x in r.reasons} & {"axioms_unverified", "disallowed_axiom"}


@pytest.mark.parametrize("label", list(REFUSED))
def test_elaboration_time_code_is_refused(responses, label):
    r = responses[f"refused {label}"]
    assert r.verdict == "rejected" and label in [x.command for x in r.reasons if x.code == "forbidden_command"]


def test_imports_must_be_modules(responses):
    assert responses["existing_import"].verdict == "accepted"
    error = responses["missing_import"]
    assert isinstance(error, LeanIndexError) and error.code is ErrorCode.HEADER_MISMATCH
    assert error.details["unknown_modules"] == ["Init.Nope"]


@pytest.mark.parametrize(
    ("label", "failure"), [("unknown_name", "unknown_identifier"), ("mismatch", "type_mismatch"), ("parse", "syntax_error"), ("sorry", "sorry")]
)
def test_failure_classes_from_real_messages(responses, label, failure):
    r = responses[label]
    assert r.verdict != "accepted" and r.failure_class == failure and r.hint
