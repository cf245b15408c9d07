"""The `leanindex` command line: a thin adapter over the library.

Each command group lives in its own module and registers itself on `main`; commands parse
arguments, call the library, and print either a readable rendering or (with `--json`) exactly
the response model or the shared error object. Exit status: the outcome's entry in
`leanindex.errors.OUTCOME_EXIT` (0 success, 2 usage error, ...), or the code's entry in
`leanindex.errors.EXIT_STATUS` on a refusal or failure.

A command's modules are imported only when it runs (`COMMAND_MODULES`): `leanindex search`
does not load the HTTP, MCP and checker stacks, which cost seconds at every start.
"""

from __future__ import annotations

import importlib

import click

from ..version import __version__

#: Each command or group of `main` and the modules of this package that define it and its
#: subcommands (a test checks this table against what the modules register).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "api": ("api",),
    "audit": ("check",),
    "catalog": ("catalog", "docgen", "pack"),
    "check": ("check",),
    "check-batch": ("batch",),
    "check-target": ("check",),
    "demo": ("demo",),
    "doctor": ("doctor",),
    "inspect": ("query",),
    "mcp": ("serve",),
    "profile": ("profile",),
    "proof-steps": ("check",),
    "search": ("query",),
    "serve": ("serve",),
}


class _LazyGroup(click.Group):
    """A group whose commands are imported from `COMMAND_MODULES` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module in COMMAND_MODULES.get(cmd_name, ()):
            importlib.import_module(f"{__name__}.{module}")
        return super().get_command(ctx, cmd_name)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="leanindex")
def main() -> None:
    """leanindex: declaration index, bounded search and proof checking for Lean 4."""
