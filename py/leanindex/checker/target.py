"""From a target check's raw answers to its per-candidate (or per-command) verdicts: each
verdict by the one verdict table (`verdict.decide`), its positions moved from the command's own
lines to the file's."""

from __future__ import annotations

from collections.abc import Sequence

from .forbidden import ForbiddenUse
from .models import Diagnostic, Position, Reason, SorryGoal, UnitVerdict
from .verdict import Decision, decide
from .worker import RawCheck


def decide_raw(raw: RawCheck, protect: bool, inherited: Sequence[ForbiddenUse] = (), prefix_infotree: bool = True) -> Decision:
    """The verdict of one check (`verdict.decide`); `inherited` are forbidden commands of the
    environment it ran in (they shaped it, so they count against it), `prefix_infotree` whether
    that environment's info tree came back (else nothing rules such commands out)."""
    return decide(
        raw.response,
        [*inherited, *raw.forbidden],
        raw.probe.axioms,
        raw.probe.unanswered + raw.found.unnamed,
        raw.found.examples,
        protect,
        raw.has_infotree and prefix_infotree,
        raw.fence,
    )


def _moved(position: Position | None, lines: int) -> Position | None:
    return position.model_copy(update={"line": position.line + lines}) if position is not None else None


def moved_diagnostics(diagnostics: list[Diagnostic], lines: int) -> list[Diagnostic]:
    """`diagnostics` with every line number increased by `lines`."""
    return [d.model_copy(update={"start": _moved(d.start, lines), "end": _moved(d.end, lines)}) for d in diagnostics]


def unit_verdict(
    decision: Decision,
    raw: RawCheck,
    *,
    lines: int,
    start_line: int,
    name: str | None,
    candidate: int | None,
    extended: bool,
    inherited: int = 0,
    inherited_lines: int = 0,
) -> UnitVerdict:
    """One `UnitVerdict`: `decision` on `raw`, positions moved down by `lines` (the line before
    the command's first line in the file). The first `inherited` reasons are the forbidden
    commands of the environment it ran in (`decide_raw` lists them first, as the verdict table's
    first rule reports forbidden commands in the order given); they are moved by
    `inherited_lines` instead, the line before that environment's text in the file."""
    reasons: list[Reason] = [
        r.model_copy(update={"start": _moved(r.start, inherited_lines if index < inherited else lines)})
        for index, r in enumerate(decision.reasons)
    ]
    sorries: list[SorryGoal] = [
        s.model_copy(update={"start": _moved(s.start, lines), "end": _moved(s.end, lines)}) for s in decision.sorries
    ]
    return UnitVerdict(
        candidate=candidate,
        name=name,
        start=Position(line=start_line, column=0),
        verdict=decision.verdict,
        failure_class=decision.failure_class,
        hint=decision.hint,
        reasons=reasons,
        diagnostics=moved_diagnostics(decision.diagnostics, lines),
        sorries=sorries,
        axioms=raw.probe.axioms,
        extended=extended,
        check_ms=raw.check_ms,
        fence=raw.fence,
    )
