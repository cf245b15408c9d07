"""The `leanindex` command line: a thin adapter over the library.

Each command group lives in its own module and registers itself on `main`; commands parse
arguments, call the library, and print either a readable rendering or (with `--json`) exactly
the response model or the shared error object. Exit status: the outcome's entry in
`leanindex.errors.OUTCOME_EXIT` (0 success, 2 usage error, ...), or the code's entry in
`leanindex.errors.EXIT_STATUS` on a refusal or failure.

A command's modules are imported only when it runs (`COMMAND_MODULES`): `leanindex search`
does not load the HTTP, MCP and checker stacks, which cost seconds at every start. `leanindex
--help` imports none of them: it lists each command with its summary from `COMMAND_SUMMARIES`
(tests/test_startup.py checks that listing against the one the commands' own help gives), and a
command module imports the engine, pyarrow, DuckDB, FastAPI and MCP only inside its commands, so
`leanindex COMMAND --help` stays as cheap as `--version` (the same test, over `sys.modules`).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

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
    "exists": ("query",),
    "inspect": ("query",),
    "mcp": ("serve",),
    "profile": ("profile",),
    "proof-steps": ("check",),
    "search": ("query",),
    "serve": ("serve",),
}


#: Each command's summary: the first sentence of its help, which `leanindex --help` lists
#: without importing the command's module.
COMMAND_SUMMARIES: dict[str, str] = {
    "api": "The public contracts as files (JSON Schemas under api/).",
    "audit": "Audit Lean files: each is checked on its own against ENVIRONMENT, and every declaration it adds is listed with its axioms and sorry use.",
    "catalog": "Build, verify and compare catalogs.",
    "check": "Check a complete Lean file (or - for stdin) against ENVIRONMENT's warm REPL; with --reference, every theorem of that file must keep its statement.",
    "check-batch": "Check every request of SOURCE (JSON lines, - for stdin) against ENVIRONMENT's warm REPLs (or a Ray cluster's), appending one result line per request to OUT as checks complete.",
    "check-target": "Check replacements (--candidate FILE) for declaration --target of SOURCE against the environment before it, or (--sequential) every command of SOURCE in order.",
    "demo": "Search real Lean core (86,957 declarations, Lean v4.33.0) with no Lean installed: imports the embedded catalog into the root on first use (printing what its data lacks: 4 missing Std modules, 10 host-project modules), then searches, follows a cursor and inspects; prints where the catalog is and the next commands to try.",
    "doctor": "Say what works for each kind of use: search (Python dependencies and catalogs; no Lean needed), indexing (elan, lake, lean on the pinned toolchain, the built extractor) and checking (lake, lean and a built REPL); print the commands that fix each missing piece.",
    "exists": "Whether each of NAMES (1-100 exact declaration names) exists, with its kind and module or the closest names.",
    "inspect": "Everything the catalog holds about each DECLARATION (exact names, up to 100).",
    "mcp": "Serve the MCP tools over stdio for every profile under ROOT.",
    "profile": "Pinned profiles and their Lake projects.",
    "proof-steps": "Every tactic of a proof in SOURCE with the goals before and after it (or, --tree, the proof as a tree of goals), from a warm REPL of ENVIRONMENT.",
    "search": "Bounded search of declarations (by name fragment, type constants, words, namespace, kind, module), in Name.lt or relevance order, with an honest completeness signal.",
    "serve": "Serve the HTTP API and MCP (streamable HTTP, at /mcp) for every profile under ROOT.",
}


#: Whether `main` runs on the process's own command line (the `leanindex` script, `python -m
#: leanindex`), which ends the process when the command does; not for a call with its
#: arguments (a test's `CliRunner`, a program calling `main([...])`).
ends_the_process = False


class _LazyGroup(click.Group):
    """A group whose commands are imported from `COMMAND_MODULES` on first use; its help lists
    the commands not yet imported with their `COMMAND_SUMMARIES` entry."""

    def main(self, args: Sequence[str] | None = None, *rest: Any, **kwargs: Any) -> Any:
        """click's `main`, noting in `ends_the_process` whether `args` is the process's own
        command line (None: read from `sys.argv`)."""
        global ends_the_process
        ends_the_process = args is None
        return super().main(args, *rest, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module in COMMAND_MODULES.get(cmd_name, ()):
            importlib.import_module(f"{__name__}.{module}")
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `--help`, shortened as click shortens a command's own help."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None and loaded.hidden:
                continue
            # A stand-in command shortens the summary exactly as the real one would its help.
            shown = loaded if loaded is not None else click.Command(name, help=COMMAND_SUMMARIES[name])
            rows.append((name, shown.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="leanindex")
def main() -> None:
    """leanindex: declaration index, bounded search and proof checking for Lean 4."""
