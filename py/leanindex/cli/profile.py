"""`leanindex profile ...`: the pinned profiles and the Lake projects they are built in."""

from __future__ import annotations

from pathlib import Path

import click

from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout


@main.group()
def profile() -> None:
    """Pinned profiles and their Lake projects."""


@profile.command("list")
@json_option
@handles_errors()
def list_profiles(as_json: bool) -> None:
    """Show the pinned profiles: imports, toolchain, required package."""
    from ..lake.profiles import load_profiles

    profiles = load_profiles()
    if as_json:
        emit_json({"profiles": [definition.model_dump(mode="json") for definition in profiles.values()]})
        return
    for definition in profiles.values():
        require = f"{definition.require.name} @ {definition.require.rev}" if definition.require else "no packages"
        stdout.print(f"{definition.name:<10} {', '.join(definition.imports):<12} {definition.toolchain}  {require}")


@profile.command("init")
@click.argument("name")
@click.option("--rev", default=None, help="Revision (tag or commit) of the required package [the pinned one].")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None, help="Project folder [ROOT/projects/NAME].")
@click.option("--lake", default=None, help="lake executable [lake on PATH].")
@root_option
@json_option
@handles_errors()
def init(name: str, rev: str | None, directory: Path | None, lake: str | None, root: str, as_json: bool) -> None:
    """Create the Lake project of pinned profile NAME and fetch its dependencies.

    Writes lakefile.lean (requiring e.g. Mathlib at --rev), lean-toolchain (the pinned
    toolchain) and a root module, then runs `lake update` and, for Mathlib, `lake exe cache
    get` (prebuilt .olean files). Lake's output goes to stderr.
    """
    from ..lake.build import default_projects_dir
    from ..lake.scaffold import init_profile_project

    target = directory if directory is not None else default_projects_dir(Path(root)) / name.lower()
    result = init_profile_project(name, target, rev, lake)
    if as_json:
        emit_json(result)
        return
    stdout.print(f"project   {result.directory}")
    stdout.print(f"toolchain {result.toolchain}")
    for package in result.packages or []:
        stdout.print(f"package   {package.name} {package.rev or '(local)'}")
    stdout.print(f"next      leanindex catalog build --profile {result.profile} --project {result.directory}")
