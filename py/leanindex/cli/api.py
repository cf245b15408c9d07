"""`leanindex api export`: write or check the contract files under `api/`."""

from __future__ import annotations

import click

from ..api_files import API_FILES, export_api_files
from . import main
from .output import stderr, stdout


@main.group()
def api() -> None:
    """The public contracts as files (OpenAPI document, MCP tool schemas, ...)."""


@api.command("export")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default="api", show_default=True, help="Folder of the contract files.")
@click.option("--check", is_flag=True, help="Write nothing; exit with status 1 when a file differs from the code.")
def export(directory: str, check: bool) -> None:
    """Write every contract file generated from the code (or check that they are current)."""
    differing = export_api_files(directory, check=check)
    if check and differing:
        stderr.print(f"out of date in {directory}: {', '.join(differing)} (run `leanindex api export`)")
        raise SystemExit(1)
    for name in API_FILES:
        state = "up to date" if name not in differing else "differs" if check else "written"
        stdout.print(f"{directory}/{name}: {state}")
