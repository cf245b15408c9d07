"""`leanindex api ...`: regenerate or check the contract files under `api/`."""

from __future__ import annotations

import click

from ..api_files import API_DIR, check_all, write_all
from ..errors import OUTCOME_EXIT, Outcome
from . import main
from .output import handles_errors, stderr, stdout


@main.group()
def api() -> None:
    """The public contracts as files (JSON Schemas under api/)."""


@api.command("export")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
    default=".",
    show_default=True,
    help="Repository root; files go to ROOT/api/.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 14 and name the files that differ from the code.")
@handles_errors(json_flag=None)
def export(root: str, check: bool) -> None:
    """Write the api/ files from the models in code, or check that the committed ones match."""
    if check:
        drifted = check_all(root)
        if drifted:
            for name in drifted:
                stderr.print(f"{API_DIR}/{name} differs from the code; run `leanindex api export`")
            raise SystemExit(OUTCOME_EXIT[Outcome.DRIFTED])
        stdout.print(f"{API_DIR}/ matches the code")
        return
    for path in write_all(root):
        stdout.print(f"wrote {path}")
