"""`leanindex doctor`: report what is installed and missing, with the fix for each gap."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..doctor import run_doctor
from ..errors import OUTCOME_EXIT, Outcome
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout

_COLOUR = {"ok": "green", "missing": "red", "mismatch": "yellow", "failed": "red"}


@main.command()
@click.option("--source", type=click.Path(file_okay=False, path_type=Path), default=None, help="LeanIndex source checkout [the one leanindex runs from].")
@root_option
@json_option
@handles_errors()
def doctor(source: Path | None, root: str, as_json: bool) -> None:
    """Check Python dependencies, elan/lake/lean against the pinned toolchain, the built
    extractor, and each profile's catalog; print the command that fixes each missing piece.

    Exit status 0 when everything is in place, 15 otherwise.
    """
    report = run_doctor(root, source)
    if as_json:
        emit_json(report)
    else:
        stdout.print(f"pinned toolchain: {report.pinned_toolchain}")
        for check in report.checks:
            stdout.print(f"[{_COLOUR[check.status]}]{check.status:<9}[/] {check.name:<26} {escape(check.detail)}", markup=True)
            if check.fix:
                stdout.print(f"{'':<10}fix: {check.fix}", markup=False)
        stdout.print("all good" if report.ok else "some pieces are missing: run the fix commands above")
    if not report.ok:
        raise SystemExit(OUTCOME_EXIT[Outcome.NOT_READY])
