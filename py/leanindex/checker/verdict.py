"""From what Lean reported to a verdict; nothing but Lean's messages, sorries, info trees and
`#print axioms` answers goes into it.

Order of precedence: a forbidden command, an error other than unsolved goals, or a flagged axiom
(other than `sorryAx`) makes it `rejected`; otherwise a `sorry` (REPL `sorries`, Lean's
"declaration uses `sorry`" warning, or `sorryAx` among the axioms) or an "unsolved goals" error
makes it `incomplete`; a declaration whose axioms could not be printed (an `example`, or a
name the probe could not resolve) makes it `rejected` with `axioms_unverified`, since nothing
proves it stays within the allowlist; only then is it `accepted`.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def decide(
    response: CommandResponse,
    forbidden: list[ForbiddenUse],
    axioms: list[TheoremAxioms],
    unverified: list[Declaration],
    examples: list[tuple[int, int]],
    protect: bool,
) -> Decision:
    """The verdict of one check (see the module docstring for the rules)."""
    diagnostics = diagnostics_of(response)
    sorries = sorries_of(response)
    reasons: list[Reason] = []
    if protect:
        for use in forbidden:
            reasons.append(
                Reason(
                    code=ReasonCode.FORBIDDEN_COMMAND,
                    message=f"`{use.command}` can change how the submission is checked and is not allowed",
                    command=use.command,
                    start=Position(line=use.line, column=use.column),
                )
            )
    for d in diagnostics:
        if d.severity == "error" and not d.text.startswith(_UNSOLVED):
            reasons.append(Reason(code=ReasonCode.ERROR, message=d.text.splitlines()[0] if d.text else "error", start=d.start))
    for entry in axioms:
        bad = [a for a in entry.flagged if a != "sorryAx"]
        if bad:
            reasons.append(
                Reason(code=ReasonCode.DISALLOWED_AXIOM, message=f"{entry.name} depends on {', '.join(bad)}", command=entry.name)
            )
    rejected = bool(reasons)
    for d in diagnostics:
        if d.severity == "error" and d.text.startswith(_UNSOLVED):
            reasons.append(Reason(code=ReasonCode.UNSOLVED_GOALS, message="unsolved goals", start=d.start))
    uses_sorry = (
        bool(sorries)
        or any(d.severity == "warning" and d.text.strip() in _SORRY_WARNINGS for d in diagnostics)
        or any("sorryAx" in entry.axioms for entry in axioms)
    )
    if uses_sorry:
        reasons.append(Reason(code=ReasonCode.SORRY, message="the submission uses `sorry`"))
    incomplete = not rejected and bool(reasons)
    for decl in unverified:
        reasons.append(
            Reason(
                code=ReasonCode.AXIOMS_UNVERIFIED,
                message=f"the axioms of {decl.name} could not be printed",
                command=decl.name,
                start=Position(line=decl.line, column=decl.column),
            )
        )
    for line, column in examples:
        reasons.append(
            Reason(
                code=ReasonCode.AXIOMS_UNVERIFIED,
                message="an `example` leaves no constant whose axioms can be printed; name it (`theorem`)",
                command="example",
                start=Position(line=line, column=column),
            )
        )
    if rejected:
        verdict = Verdict.REJECTED
    elif incomplete:
        verdict = Verdict.INCOMPLETE
    elif reasons:
        verdict = Verdict.REJECTED
    else:
        verdict = Verdict.ACCEPTED
    if verdict is Verdict.ACCEPTED and not response.lean_code_is_valid(allow_sorry=False):
        # lean-interact's own validity test, with `sorry` disallowed, must agree with ours.
        raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the verdict and lean-interact's validity check disagree", {})
    return Decision(verdict, reasons, diagnostics, sorries)
