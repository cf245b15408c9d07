"""`leanindex api ...`: regenerate or check the contract files under `api/`."""

from __future__ import annotations

import click

from ..codes import OUTCOME_EXIT, Outcome
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
    from ..api_files import API_DIR, check_all, write_all  # here: the models load for the export, not for --help

    if check:
        drifted = check_all(root)
        if drifted:
            for name in drifted:
                stderr.print(f"{API_DIR}/{name} differs from the code; run `leanindex api export`")
            raise SystemExit(OUTCOME_EXIT[Outcome.DRIFTED])
        stdout.print(f"{API_DIR}/ matches the code")
        print_listing_sizes()
        return
    for path in write_all(root):
        stdout.print(f"wrote {path}")
    print_listing_sizes()


def print_listing_sizes() -> None:
    """One line per MCP tool and one for the whole list: its characters as `tools/list` sends it,
    and its budget where it has one (`service.mcp.LISTING_BUDGET`, `ENTRY_BUDGETS`)."""
    from ..api_files import mcp_listing_sizes

    stdout.print("MCP tool list (characters of the JSON text tools/list sends):")
    for name, size, budget in mcp_listing_sizes():
        limit = "" if budget is None else f" of {budget:,}{'' if size <= budget else ' OVER BUDGET'}"
        stdout.print(f"  {name:<32} {size:>7,}{limit}")
