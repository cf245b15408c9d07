"""What an audit (`lean.audit`) reports per declaration, from one check's raw answers: the
declarations the file adds (the survey of its info trees: named declarations of the probed
kinds, anonymous instances, `example`s) and, for each, Lean's `#print axioms` answer when there
is one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import ErrorCode, LeanIndexError
from .models import AuditedDeclaration, Position
from .probe import Declaration
from .worker import RawCheck

_EXAMPLE = "example"


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


def project_files(project: Path, paths: Sequence[str], module_prefix: str | None) -> list[Path]:
    """The Lean files to audit: `paths` as given, then (with `module_prefix`, e.g.
    `MyProject.Algebra`) the module's file `<project>/MyProject/Algebra.lean` and every `.lean`
    file under `<project>/MyProject/Algebra/`, as Lake maps module names to files under a
    package's source directory; sorted, without duplicates.

    Raises `LeanIndexError(invalid_request)` when nothing is given, or when a module prefix
    matches no file (an audit of nothing must not pass).
    """
    found: dict[Path, None] = {Path(p): None for p in paths}
    if module_prefix is not None:
        parts = module_prefix.split(".")
        base = project.joinpath(*parts)
        matched = ([base.with_suffix(".lean")] if base.with_suffix(".lean").is_file() else []) + sorted(base.rglob("*.lean"))
        if not matched:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"no Lean file of module prefix {module_prefix} under {project}",
                {"module_prefix": module_prefix, "project": str(project)},
            )
        found.update(dict.fromkeys(matched))
    if not found:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, "give the files to audit or a module prefix", {})
    return list(found)
