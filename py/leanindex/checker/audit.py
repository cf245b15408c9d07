"""What an audit (`lean.audit`) reports per declaration, from one check's raw answers: the
declarations the file adds (the survey of its info trees: named declarations of the probed
kinds, anonymous instances, `example`s) and, for each, Lean's `#print axioms` answer when there
is one."""

from __future__ import annotations

from .models import AuditedDeclaration, Position
from .probe import EXAMPLE_KIND, PROBED_KINDS, Declaration
from .worker import RawCheck

_EXAMPLE = "example"
assert EXAMPLE_KIND.endswith(_EXAMPLE)


def _unverified(decl: Declaration) -> AuditedDeclaration:
    return AuditedDeclaration(
        name=decl.name or None, kind=decl.kind, start=Position(line=decl.line, column=decl.column),
        verified=False, uses_sorry=None, axioms=None, flagged=[],
    )


def audited_declarations(raw: RawCheck) -> tuple[list[AuditedDeclaration], list[AuditedDeclaration]]:
    """(every declaration the file adds, in file order; those among them whose axioms Lean did
    not print). A declaration uses `sorry` when `sorryAx` is among its axioms (Lean's
    `collectAxioms` reaches `sorryAx` through every constant the proof uses)."""
    every: list[tuple[int, int, AuditedDeclaration]] = []
    for decl, answer in raw.probe.answered:
        every.append(
            (
                decl.line,
                decl.column,
                AuditedDeclaration(
                    name=answer.name, kind=decl.kind, start=Position(line=decl.line, column=decl.column), verified=True,
                    uses_sorry="sorryAx" in answer.axioms, axioms=answer.axioms, flagged=answer.flagged,
                ),
            )
        )
    missing = [*raw.probe.unanswered, *raw.found.unnamed]
    missing.extend(Declaration("", (), _EXAMPLE, line, column) for line, column in raw.found.examples)
    every.extend((decl.line, decl.column, _unverified(decl)) for decl in missing)
    every.sort(key=lambda item: (item[0], item[1]))
    declarations = [item[2] for item in every]
    return declarations, [d for d in declarations if not d.verified]


#: The kinds an audit counts (those whose axioms the probe prints, and `example`).
COUNTED_KINDS = (*PROBED_KINDS.values(), _EXAMPLE)
