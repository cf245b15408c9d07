"""The `leanindex` command line: a thin adapter over the library.

Each command group lives in its own module and registers itself on `main`; commands parse
arguments, call the library, and print either a readable rendering or (with `--json`) exactly
the response model or the shared error object. Exit status: the outcome's entry in
`leanindex.errors.OUTCOME_EXIT` (0 success, 2 usage error, ...), or the code's entry in
`leanindex.errors.EXIT_STATUS` on a refusal or failure.
"""

from __future__ import annotations

import click

from ..version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="leanindex")
def main() -> None:
    """leanindex: declaration index, bounded search and proof checking for Lean 4."""


def _register() -> None:
    from . import api, batch, catalog, check, demo, docgen, doctor, pack, profile, query, serve  # noqa: F401  (each module adds its commands to `main`)


_register()
