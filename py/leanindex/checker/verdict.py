"""From what Lean reported to a verdict; nothing but Lean's messages, sorries, info trees and
`#print axioms` answers goes into it.

Order of precedence: a forbidden command, an error other than unsolved goals, or a flagged axiom
(other than `sorryAx`) makes it `rejected`; otherwise a `sorry` (REPL `sorries`, Lean's
"declaration uses `sorry`" warning, or `sorryAx` among the axioms) or an "unsolved goals" error
makes it `incomplete`; a declaration whose axioms could not be printed (an `example`, or a
name the probe could not resolve) makes it `rejected` with `axioms_unverified`, since nothing
proves it stays within the allowlist; only then is it `accepted`, and only when the REPL's
answer can vouch for it (lean-interact's validity test agrees, an info tree came back), else the
check fails with `backend_error`. Each rule is one entry of `RULES` or `ACCEPTANCE_CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lean_interact.interface import CommandResponse

from ..errors import ErrorCode, LeanIndexError
from .forbidden import ForbiddenUse
from .models import Diagnostic, Position, Reason, ReasonCode, SorryGoal, TheoremAxioms, Verdict
from .probe import Declaration

_SORRY_WARNINGS = ("declaration uses `sorry`", "declaration uses 'sorry'")
_UNSOLVED = "unsolved goals"


@dataclass(frozen=True)
class Decision:
    """The verdict and what it rests on."""

    verdict: Verdict
    reasons: list[Reason]
    diagnostics: list[Diagnostic]
    sorries: list[SorryGoal]


def diagnostics_of(response: CommandResponse) -> list[Diagnostic]:
    """Every message of the check, in the REPL's order, positions unchanged."""
    return [
        Diagnostic(
            severity=m.severity,
            start=Position(line=m.start_pos.line, column=m.start_pos.column),
            end=Position(line=m.end_pos.line, column=m.end_pos.column) if m.end_pos else None,
            text=m.data,
        )
        for m in response.messages
    ]


def sorries_of(response: CommandResponse) -> list[SorryGoal]:
    """The REPL's `sorries`, with their goals."""
    return [
        SorryGoal(
            start=Position(line=s.start_pos.line, column=s.start_pos.column) if s.start_pos else None,
            end=Position(line=s.end_pos.line, column=s.end_pos.column) if s.end_pos else None,
            goal=s.goal,
        )
        for s in response.sorries
    ]


@dataclass(frozen=True)
class Facts:
    """Everything a verdict rests on: Lean's messages and sorries, the forbidden commands
    found, the `#print axioms` answers, the declarations whose axioms could not be printed,
    the `example`s (line, column), whether forbidden commands are refused (`protect`), and
    whether the REPL returned an info tree."""

    response: CommandResponse
    diagnostics: list[Diagnostic]
    forbidden: list[ForbiddenUse]
    axioms: list[TheoremAxioms]
    unverified: list[Declaration]
    examples: list[tuple[int, int]]
    protect: bool
    has_infotree: bool


def _forbidden(facts: Facts) -> list[Reason]:
    if not facts.protect:
        return []
    return [
        Reason(
            code=ReasonCode.FORBIDDEN_COMMAND,
            message=f"`{use.command}` can change how the submission is checked and is not allowed",
            command=use.command,
            start=Position(line=use.line, column=use.column),
        )
        for use in facts.forbidden
    ]


def _errors(facts: Facts) -> list[Reason]:
    return [
        Reason(code=ReasonCode.ERROR, message=d.text.splitlines()[0] if d.text else "error", start=d.start)
        for d in facts.diagnostics
        if d.severity == "error" and not d.text.startswith(_UNSOLVED)
    ]


def _disallowed_axioms(facts: Facts) -> list[Reason]:
    reasons = []
    for entry in facts.axioms:
        bad = [a for a in entry.flagged if a != "sorryAx"]
        if bad:
            reasons.append(
                Reason(code=ReasonCode.DISALLOWED_AXIOM, message=f"{entry.name} depends on {', '.join(bad)}", command=entry.name)
            )
    return reasons


def _unsolved_goals(facts: Facts) -> list[Reason]:
    return [
        Reason(code=ReasonCode.UNSOLVED_GOALS, message="unsolved goals", start=d.start)
        for d in facts.diagnostics
        if d.severity == "error" and d.text.startswith(_UNSOLVED)
    ]


def _sorry(facts: Facts) -> list[Reason]:
    uses_sorry = (
        bool(facts.response.sorries)
        or any(d.severity == "warning" and d.text.strip() in _SORRY_WARNINGS for d in facts.diagnostics)
        or any("sorryAx" in entry.axioms for entry in facts.axioms)
    )
    return [Reason(code=ReasonCode.SORRY, message="the submission uses `sorry`")] if uses_sorry else []


def _axioms_unverified(facts: Facts) -> list[Reason]:
    reasons = [
        Reason(
            code=ReasonCode.AXIOMS_UNVERIFIED,
            message=f"the axioms of {decl.name} could not be printed",
            command=decl.name,
            start=Position(line=decl.line, column=decl.column),
        )
        for decl in facts.unverified
    ]
    reasons.extend(
        Reason(
            code=ReasonCode.AXIOMS_UNVERIFIED,
            message="an `example` leaves no constant whose axioms can be printed; name it (`theorem`)",
            command="example",
            start=Position(line=line, column=column),
        )
        for line, column in facts.examples
    )
    return reasons


@dataclass(frozen=True)
class Rule:
    """One verdict rule: the reasons it finds in the facts, and the verdict they lead to."""

    reasons: Callable[[Facts], list[Reason]]
    verdict: Verdict


#: The verdict rules in order of precedence (see the module docstring): the verdict is that of
#: the first rule that finds a reason, `accepted` when none does; the answer lists every rule's
#: reasons, in this order.
RULES: tuple[Rule, ...] = (
    Rule(_forbidden, Verdict.REJECTED),
    Rule(_errors, Verdict.REJECTED),
    Rule(_disallowed_axioms, Verdict.REJECTED),
    Rule(_unsolved_goals, Verdict.INCOMPLETE),
    Rule(_sorry, Verdict.INCOMPLETE),
    Rule(_axioms_unverified, Verdict.REJECTED),
)

#: What must hold before `accepted` is answered, in order, each with the `backend_error`
#: raised otherwise: a tool that could not show the verdict is sound fails instead of
#: answering.
ACCEPTANCE_CHECKS: tuple[tuple[Callable[[Facts], bool], str, dict[str, Any]], ...] = (
    # lean-interact's own validity test, with `sorry` disallowed, must agree with ours.
    (
        lambda facts: facts.response.lean_code_is_valid(allow_sorry=False),
        "the verdict and lean-interact's validity check disagree",
        {},
    ),
    (
        lambda facts: facts.has_infotree,
        "the REPL returned no info tree, so forbidden commands could not be ruled out",
        {"stage": "infotree"},
    ),
)


def decide(
    response: CommandResponse,
    forbidden: list[ForbiddenUse],
    axioms: list[TheoremAxioms],
    unverified: list[Declaration],
    examples: list[tuple[int, int]],
    protect: bool,
    has_infotree: bool,
) -> Decision:
    """The verdict of one check: `RULES` in order, then `ACCEPTANCE_CHECKS` on an `accepted`
    one. Raises `LeanIndexError(backend_error)` when an acceptance check fails."""
    diagnostics = diagnostics_of(response)
    facts = Facts(response, diagnostics, forbidden, axioms, unverified, examples, protect, has_infotree)
    reasons: list[Reason] = []
    verdict = Verdict.ACCEPTED
    for rule in RULES:
        found = rule.reasons(facts)
        if found and not reasons:
            verdict = rule.verdict
        reasons.extend(found)
    if verdict is Verdict.ACCEPTED:
        for holds, message, details in ACCEPTANCE_CHECKS:
            if not holds(facts):
                raise LeanIndexError(ErrorCode.BACKEND_ERROR, message, details)
    return Decision(verdict, reasons, diagnostics, sorries_of(response))
