"""`leanindex doctor`: report what is installed and missing, with the fix for each gap."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from ..codes import OUTCOME_EXIT, Outcome
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout

_COLOUR = {"ok": "green", "missing": "red", "mismatch": "yellow", "failed": "red"}


@main.command()
@click.option("--source", type=click.Path(file_okay=False, path_type=Path), default=None, help="LeanIndex source checkout [the one leanindex runs from].")
@click.option("--repl", type=click.Path(file_okay=False, path_type=Path), default=None, help="A built REPL checkout, for checking proofs.")
@root_option
@json_option
@handles_errors()
def doctor(source: Path | None, repl: Path | None, root: str, as_json: bool) -> None:
    """Say what works for each kind of use: search (Python dependencies and catalogs; no Lean
    needed), indexing (elan, lake, lean on the pinned toolchain, the built extractor) and
    checking (lake, lean and a built REPL); print the commands that fix each missing piece.

    Exit status 0 when what is set up works (no use is broken and at least one is ready; a
    use with none of its pieces is just not set up), 15 otherwise.
    """
    from ..doctor import run_doctor

    report = run_doctor(root, source, repl)
    if as_json:
        emit_json(report)
    else:
        stdout.print(f"pinned toolchain: {report.pinned_toolchain}")
        for check in report.checks:
            stdout.print(f"[{_COLOUR[check.status]}]{check.status:<9}[/] {check.name:<26} {escape(check.detail)}", markup=True)
            if check.fix:
                stdout.print(f"{'':<10}fix: {check.fix}", markup=False)
        for use in report.uses:
            colour = {"ready": "green", "not set up": "dim", "broken": "red"}[use.state]
            stdout.print(f"{use.use:<9} [{colour}]{use.state}[/]" + (f" (missing or failing: {', '.join(use.failing)})" if use.failing else ""), markup=True)
        stdout.print("what is set up works" if report.ok else "something set up does not work, or nothing is: run the fix commands above")
    if not report.ok:
        raise SystemExit(OUTCOME_EXIT[Outcome.NOT_READY])
