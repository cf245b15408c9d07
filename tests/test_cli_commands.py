"""The command table the CLI loads commands from (`leanindex.cli.COMMAND_MODULES`)."""

from __future__ import annotations

import subprocess
import sys

import click

import leanindex.cli as cli


def _callback_modules(command: click.Command) -> set[str]:
    found = {command.callback.__module__} if command.callback is not None else set()
    for sub in getattr(command, "commands", {}).values():
        found |= _callback_modules(sub)
    return found


def test_the_table_names_every_command_and_the_modules_that_define_it() -> None:
    for modules in cli.COMMAND_MODULES.values():
        for module in modules:
            __import__(f"leanindex.cli.{module}")
    assert set(cli.main.commands) == set(cli.COMMAND_MODULES)
    for name, command in cli.main.commands.items():
        assert _callback_modules(command) <= {f"leanindex.cli.{m}" for m in cli.COMMAND_MODULES[name]}, name


def test_a_group_loads_alone_with_subcommands_from_other_modules() -> None:
    # A fresh interpreter: only what the table names for `catalog` is imported.
    script = (
        "import click, leanindex.cli as cli\n"
        "print(sorted(cli.main.get_command(click.Context(cli.main), 'catalog').commands))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['build', 'diff', 'import-docgen', 'pack', 'pull', 'verify']"


def test_a_search_does_not_load_the_server_or_checker_stacks() -> None:
    script = (
        "import sys, click, leanindex.cli as cli\n"
        "cli.main.get_command(click.Context(cli.main), 'search')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('fastapi', 'mcp', 'lean_interact', 'leanindex.service', 'leanindex.checker'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
