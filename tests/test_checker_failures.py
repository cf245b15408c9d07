"""Failure classes, hints and unknown-name suggestions on the checker's answers, on the stand-in
REPL replaying recorded Lean answers (each code below names its transcript). The catalog behind
the suggestions is a `NameTable` of a few names written here, not Lean output."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from click.testing import CliRunner

from checker_support import STANDIN, make_layout, standin_config, transcripts_dir
from leanindex.cli import main
from leanindex.checker import Checker, CheckRequest
from leanindex.checker.failures import HINTS, FailureClass, classify_error, unknown_name
from leanindex.checker.models import (
    AuditRequest,
    ProofStateRequest,
    ProofStepRequest,
    Reason,
    ReasonCode,
    TargetCheckRequest,
    TargetMode,
)
from leanindex.engine.suggest import NameTable
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.render import render_proof_step
from test_service_check import build_test_profile

TRANSCRIPTS = transcripts_dir()
needs_transcripts = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

UNKNOWN = "theorem bar : 1 = 1 := byrfl"  # invalid_line_break: "Unknown identifier `byrfl`"
CODES = {
    UNKNOWN: ("rejected", FailureClass.UNKNOWN_IDENTIFIER),
    "theorem foo : 1 = 1 := by\nsorry": ("rejected", FailureClass.SYNTAX_ERROR),  # line_breaks: "unexpected token 'sorry'; expected command"
    "example : 1 = 0 := by\n  cases 1\n  rfl\n  apply ?succ": ("rejected", FailureClass.OTHER_ERROR),  # app_type_mismatch: kernel error
    "def f : Nat := by apply Nat.succ": ("incomplete", FailureClass.UNSOLVED_GOALS),  # incomplete
    "def f : Nat := sorry": ("incomplete", FailureClass.SORRY),  # term_sorry
    "theorem show_p (p: Prop) (h : p) : p := by exact h": ("accepted", None),  # infotree_theorem
}
TABLE = NameTable.build(["Nat.byrfl", "Nat.my_fake_premise", "Nat.rfl_eq", "rfl"], np.zeros(4, dtype=bool))


def run(tmp_path, scenario, close_names=None):
    config, _control = standin_config(tmp_path, transcripts=TRANSCRIPTS)
    digest = config.identity.environment_digest

    def names(_profile: str, unknown: list[str]) -> tuple[str, list[list[str]]]:
        return digest, [TABLE.suggest(n) for n in unknown]

    async def go():
        checker = Checker(config, close_names=names if close_names is None else close_names(digest))
        try:
            await checker.start()
            return await scenario(checker)
        finally:
            await checker.close()

    return asyncio.run(go())


@needs_transcripts
def test_every_answer_names_its_failure_class_and_hint(tmp_path):
    async def scenario(checker):
        return {code: await checker.check(CheckRequest(environment="TEST", code=code)) for code in CODES}

    responses = run(tmp_path, scenario)
    for code, response in responses.items():
        verdict, failure = CODES[code]
        assert response.verdict == verdict, code
        assert response.failure_class == failure, code
        assert response.hint == (HINTS[failure] if failure else None)
        if failure is not None:
            assert response.reasons[0].failure_class == failure
        assert all(r.hint == HINTS[r.failure_class] for r in response.reasons)
    assert [d.suggestions for d in responses[UNKNOWN].diagnostics] == [TABLE.suggest("byrfl")] == [["Nat.byrfl", "rfl"]]


@needs_transcripts
def test_audit_and_target_answers_carry_them_too(tmp_path):
    async def scenario(checker):
        audit = await checker.audit(AuditRequest(environment="TEST", code=UNKNOWN))
        target = await checker.check_target(TargetCheckRequest(environment="TEST", code=UNKNOWN, mode=TargetMode.SEQUENTIAL))
        return audit, target

    audit, target = run(tmp_path, scenario)
    assert audit.verdict == "rejected" and audit.failure_class == FailureClass.UNKNOWN_IDENTIFIER
    assert audit.diagnostics[0].suggestions == ["Nat.byrfl", "rfl"]
    [unit] = target.results
    assert unit.failure_class == FailureClass.UNKNOWN_IDENTIFIER and unit.hint == HINTS[FailureClass.UNKNOWN_IDENTIFIER]
    assert unit.diagnostics[0].suggestions == ["Nat.byrfl", "rfl"]


@needs_transcripts
def test_a_refused_tactic_step_carries_them(tmp_path):
    async def scenario(checker):
        opened = await checker.proof_state(ProofStateRequest(environment="TEST", code="theorem my_theorem (x : Nat) : x = x := by sorry"))
        # recorded: invalid_tactic ("Unknown identifier `my_fake_premise`")
        return await checker.proof_step(ProofStepRequest(environment="TEST", state_id=opened.state_id, tactic="exact my_fake_premise"))

    refused = run(tmp_path, scenario)
    assert refused.status == "error"
    assert [(m.text, m.suggestions) for m in refused.messages] == [("Unknown identifier `my_fake_premise`", ["Nat.my_fake_premise"])]
    assert "did you mean: Nat.my_fake_premise" in render_proof_step(refused)


@needs_transcripts
def test_suggestions_only_from_a_catalog_of_the_same_environment(tmp_path):
    """A catalog of another environment, or one that cannot be read, gives no suggestions
    (null, not an empty list), and the verdict is unchanged."""

    def other_environment(_digest):
        return lambda _profile, unknown: ("0" * 64, [["Nat.byrfl"] for _ in unknown])

    def unreadable(_digest):
        def fail(_profile, _unknown):
            raise LeanIndexError(ErrorCode.CATALOG_UNAVAILABLE, "no catalog", {})

        return fail

    async def scenario(checker):
        return await checker.check(CheckRequest(environment="TEST", code=UNKNOWN))

    for close_names in (other_environment, unreadable):
        response = run(tmp_path / close_names.__name__, scenario, close_names)
        assert response.verdict == "rejected" and response.failure_class == FailureClass.UNKNOWN_IDENTIFIER
        assert [d.suggestions for d in response.diagnostics] == [None]


def test_classes_of_older_and_current_spellings():
    """Current texts (seen with the real 4.35 front end: test_failure_frontend.py) and the older
    ones of the recorded transcripts and earlier toolchains."""
    assert unknown_name("Unknown identifier `Nat.add_comm'`") == "Nat.add_comm'"
    assert unknown_name("unknown identifier 'h''") == "h'"
    assert unknown_name("Unknown constant `Foo.bar`") == "Foo.bar"
    assert unknown_name("invalid field 'foo', the environment does not contain 'Nat.foo'\n  n\nhas type\n  Nat") == "Nat.foo"
    assert unknown_name("unknown tactic") is None
    assert classify_error("type mismatch\n  h\nhas type") is FailureClass.TYPE_MISMATCH
    assert classify_error("(kernel) application type mismatch") is FailureClass.TYPE_MISMATCH
    assert classify_error("unknown tactic") is FailureClass.SYNTAX_ERROR
    assert classify_error("(deterministic) timeout at `whnf`, maximum number of heartbeats (200000) has been reached") is FailureClass.TIMEOUT
    assert classify_error("maximum recursion depth has been reached") is FailureClass.TIMEOUT
    assert classify_error("failed to synthesize\n  Add α") is FailureClass.OTHER_ERROR


def test_every_class_has_one_hint_and_reasons_are_classed_by_code():
    assert set(HINTS) == set(FailureClass) and all(h and "\n" not in h for h in HINTS.values())
    for code in ReasonCode:
        reason = Reason(code=code, message="m")
        expected = FailureClass.OTHER_ERROR if code is ReasonCode.ERROR else FailureClass(code.value)
        assert reason.failure_class is expected and reason.hint == HINTS[expected]
    given = Reason(code=ReasonCode.ERROR, message="m", failure_class=FailureClass.SYNTAX_ERROR)
    assert given.failure_class is FailureClass.SYNTAX_ERROR and given.hint == HINTS[FailureClass.SYNTAX_ERROR]


@needs_transcripts
def test_cli_prints_the_class_hint_and_suggestions_from_roots_catalog(tmp_path):
    """`leanindex check` asks ROOT's catalog of the profile (TEST, built with `Nat.byrfl`)."""
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _ = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    base = ["check", "-", "-e", "TEST", "--root", str(root), "--project", str(project), "--repl", str(repl), "--lake", str(STANDIN / "lake")]
    plain = CliRunner().invoke(main, base, input=UNKNOWN)
    assert plain.exit_code == 13, plain.output
    assert f"unknown_identifier: {HINTS[FailureClass.UNKNOWN_IDENTIFIER]}" in " ".join(plain.output.split())
    assert "did you mean: Nat.byrfl" in plain.output
    as_json = CliRunner().invoke(main, [*base, "--json"], input=UNKNOWN)
    assert json.loads(as_json.output)["diagnostics"][0]["suggestions"] == ["Nat.byrfl"]


def test_each_unknown_name_is_looked_up_once_and_at_most_32(tmp_path):
    """A file of many unknown names: one catalog call, each distinct name once, the first 32."""
    from leanindex.checker.checker import MAX_SUGGESTED_NAMES
    from leanindex.checker.models import Diagnostic, Position

    config, _control = standin_config(tmp_path, instant=True)
    calls: list[list[str]] = []

    def names(_profile, unknown):
        calls.append(list(unknown))
        return config.identity.environment_digest, [[f"Nat.{n}"] for n in unknown]

    where = Position(line=1, column=0)
    texts = [f"Unknown identifier `n{i % 40}`" for i in range(400)] + ["unsolved goals"]
    diagnostics = [Diagnostic(severity="error", start=where, end=None, text=t) for t in texts]
    answered = asyncio.run(Checker(config, close_names=names).suggested(config, diagnostics))
    assert calls == [[f"n{i}" for i in range(MAX_SUGGESTED_NAMES)]]
    for d in answered:
        name = unknown_name(d.text)
        first = name is not None and int(name[1:]) < MAX_SUGGESTED_NAMES
        assert d.suggestions == ([f"Nat.{name}"] if first else None)
