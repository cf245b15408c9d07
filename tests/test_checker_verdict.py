"""The verdict rules of `leanindex.checker.verdict`, on REPL answers built in the test: the
precedence of `RULES` and the acceptance checks that turn an unsound `accepted` into
`backend_error`."""

from __future__ import annotations

import pytest
from lean_interact.interface import CommandResponse, Message, Pos

from leanindex.checker.forbidden import ForbiddenUse
from leanindex.checker.models import ReasonCode, TheoremAxioms, Verdict
from leanindex.checker.verdict import decide
from leanindex.errors import ErrorCode, LeanIndexError


def message(severity: str, text: str, line: int = 1) -> Message:
    return Message(severity=severity, data=text, start_pos=Pos(line=line, column=0), end_pos=None)


def verdict_of(messages: list[Message], **facts: object) -> tuple[Verdict, list[ReasonCode]]:
    arguments: dict[str, object] = {
        "forbidden": [], "axioms": [], "unverified": [], "examples": [], "protect": True, "has_infotree": True,
    }
    arguments.update(facts)
    decision = decide(CommandResponse(env=0, messages=messages), **arguments)  # type: ignore[arg-type]
    return decision.verdict, [reason.code for reason in decision.reasons]


def test_a_clean_answer_is_accepted() -> None:
    assert verdict_of([]) == (Verdict.ACCEPTED, [])


def test_rejecting_rules_win_over_incomplete_ones_and_every_reason_is_listed() -> None:
    verdict, reasons = verdict_of([message("error", "unsolved goals\n⊢ p"), message("error", "unknown identifier 'x'", 2)])
    assert verdict is Verdict.REJECTED
    assert reasons == [ReasonCode.ERROR, ReasonCode.UNSOLVED_GOALS]


def test_unsolved_goals_and_sorry_are_incomplete_before_unverified_axioms() -> None:
    verdict, reasons = verdict_of([message("warning", "declaration uses `sorry`")], examples=[(3, 0)])
    assert verdict is Verdict.INCOMPLETE
    assert reasons == [ReasonCode.SORRY, ReasonCode.AXIOMS_UNVERIFIED]


def test_unverified_axioms_alone_reject() -> None:
    assert verdict_of([], examples=[(1, 0)]) == (Verdict.REJECTED, [ReasonCode.AXIOMS_UNVERIFIED])


def test_forbidden_commands_reject_only_when_protected() -> None:
    use = ForbiddenUse(command="set_option debug.skipKernelTC", line=1, column=0)
    assert verdict_of([], forbidden=[use]) == (Verdict.REJECTED, [ReasonCode.FORBIDDEN_COMMAND])
    assert verdict_of([], forbidden=[use], protect=False) == (Verdict.ACCEPTED, [])


def test_a_disallowed_axiom_rejects_and_sorry_ax_is_incomplete() -> None:
    bad = TheoremAxioms(name="t", axioms=["bogus"], flagged=["bogus"])
    assert verdict_of([], axioms=[bad]) == (Verdict.REJECTED, [ReasonCode.DISALLOWED_AXIOM])
    sorry = TheoremAxioms(name="t", axioms=["sorryAx"], flagged=["sorryAx"])
    assert verdict_of([], axioms=[sorry]) == (Verdict.INCOMPLETE, [ReasonCode.SORRY])


def test_accepted_without_an_info_tree_is_a_backend_error() -> None:
    with pytest.raises(LeanIndexError) as raised:
        verdict_of([], has_infotree=False)
    assert raised.value.code is ErrorCode.BACKEND_ERROR and raised.value.details == {"stage": "infotree"}
    # A verdict other than `accepted` needs no info tree to stand.
    assert verdict_of([message("error", "boom")], has_infotree=False)[0] is Verdict.REJECTED
