"""Shared CLI output: JSON for machines, rich rendering on stderr/stdout for people, errors."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

# Codes and statuses without pydantic: a command's `--help` builds no models (issue 30); pydantic
# and `validation` are imported on the error paths that need them.
from ..codes import EXIT_STATUS, ErrorCode, LeanIndexError
from ..home import ROOT_ENV, default_root, resolve_root

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console

    #: Rich consoles for people on standard output and standard error (`__getattr__`).
    stdout: Console
    stderr: Console

P = ParamSpec("P")
R = TypeVar("R")

#: The module's consoles, each made on first use (`__getattr__`), and whether it writes to stderr.
_CONSOLES = {"stdout": False, "stderr": True}


def _console(name: str) -> Console:
    """The console `name` (`stdout` or `stderr`): a rich console for people (soft-wrapped, no
    highlighting), made on first use and kept as a module attribute, so that a command printing
    JSON never imports rich (about 25 ms of a command's CPU)."""
    made = globals().get(name)
    if made is None:
        from rich.console import Console

        made = globals().setdefault(name, Console(stderr=_CONSOLES[name], soft_wrap=True, highlight=False))
    return made


def __getattr__(name: str) -> Console:
    """`output.stdout` and `output.stderr` (`_console`); raises `AttributeError` for other names."""
    if name not in _CONSOLES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _console(name)


def emit_json(model: BaseModel | dict[str, Any]) -> None:
    """Print a response model (or dict) as one JSON document on stdout."""
    data = model if isinstance(model, dict) else model.model_dump(mode="json")
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


#: Codes about the catalogs under a root, after which a command that took `--root` prints it
#: (or the server it asked instead: `asked_server`).
_ABOUT_THE_ROOT = frozenset({ErrorCode.UNKNOWN_ENVIRONMENT, ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH})

#: The key of the click context's `meta` under which a command notes the server it asked.
_ASKED_SERVER = "leanindex.asked_server"


def asked_server(url: str, variable: str) -> None:
    """Note that this command run asks the server at `url` (named by the environment variable
    `variable`) rather than the catalogs under `--root`: its errors about catalogs then name
    that server, not the root (`handles_errors`). The URL is shown without user and password."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta[_ASKED_SERVER] = (shown, variable)


def handles_errors(json_flag: str | None = "as_json") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: turn `LeanIndexError`/`ValidationError`, and a failed write (`OSError` or a
    DuckDB I/O error, coded by `storage.storage_failure` as `storage_full` or `io_error`), into
    the error object (JSON mode) or a message on stderr, and exit with the code's status."""

    def decorate(command: Callable[P, R]) -> Callable[P, R]:
        @wraps(command)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            as_json = bool(kwargs.get(json_flag)) if json_flag else False
            try:
                return command(*args, **kwargs)
            except LeanIndexError as error:
                failure = error
            except Exception as error:
                failure = _coded(error)
            if as_json:
                emit_json(failure.to_dict())
            else:
                stderr = _console("stderr")
                stderr.print(f"[bold red]error[/] ({failure.code.value}): {failure.message}", markup=True)
                suggestions = failure.details.get("suggestions")
                if suggestions:
                    stderr.print("close names: " + ", ".join(suggestions), markup=False)
                root = kwargs.get("root")  # `root_option`'s value: a str, or None
                context = click.get_current_context(silent=True)
                server = context.meta.get(_ASKED_SERVER) if context is not None else None
                if failure.code in _ABOUT_THE_ROOT and server:
                    # The catalogs that server serves, not those under --root, are what the error is about.
                    url, variable = server
                    stderr.print(
                        f"server: {url} (from ${variable}; its environments: GET {url.rstrip('/')}/v1/environments); "
                        f"unset {variable} to use the catalogs under --root",
                        markup=False,
                    )
                elif failure.code in _ABOUT_THE_ROOT and isinstance(root, str):
                    # Errors name profiles and catalog-relative files only (they reach remote
                    # clients too); on the user's own terminal, the root they are under helps.
                    stderr.print(f"root: {resolve_root(root)}", markup=False)
            raise SystemExit(EXIT_STATUS[failure.code])

        return run

    return decorate


def _coded(error: Exception) -> LeanIndexError:
    """`error` as the `LeanIndexError` a command reports: `invalid_request` for a pydantic
    `ValidationError`, `storage_full`/`io_error` for a failed write (`storage.storage_failure`);
    re-raises anything else. Its imports are here so that a command's --help loads neither
    pydantic nor DuckDB."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        from ..validation import invalid_request

        return invalid_request(error.errors())
    from ..storage import storage_failure

    coded = storage_failure(error)
    if coded is None:
        raise error
    return coded


class UnknownOption(click.NoSuchOption):
    """Click's usage error for an unknown option, ending with the close flags `close` (by
    `validation.close_names`, the rule every surface uses) instead of click's own guess."""

    def __init__(self, option_name: str, close: list[str], ctx: click.Context | None = None):
        super().__init__(option_name, ctx=ctx)
        self.close = close

    def format_message(self) -> str:
        from ..validation import did_you_mean  # pydantic: not for `--help`

        hint = did_you_mean(self.close)
        return f"{self.message} {hint[:1].upper()}{hint[1:]}" if hint else self.message


#: Other words a user may write as a flag for an argument (`--name` for inspect's DECLARATIONS).
_ARGUMENT_WORDS: dict[str, tuple[str, ...]] = {"declarations": ("name", "declaration_name", "names"), "names": ("name", "declaration_names")}


class FieldCommand(click.Command):
    """A command whose unknown option (exit 2, as click's usage errors) gets its close flags by
    `validation.close_names` among every spelling of its options, each suggested as its
    option's first long flag, the field's own name: `--limits`, `--limit2` and
    `--result_limit` all get `--result-limit` (not the alias `--limit`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            from ..validation import close_names  # pydantic: not for `--help`

            spellings = self.flag_spellings(ctx)
            # A flag named like an argument (`inspect --name X`): the argument is the close name.
            for param in self.get_params(ctx):
                if isinstance(param, click.Argument) and param.name:
                    shown = f"{param.human_readable_name} (given without a flag)"
                    spellings.update({word: shown for word in (param.name, *_ARGUMENT_WORDS.get(param.name, ()))})
            raise UnknownOption(error.option_name, close_names(error.option_name, spellings), ctx) from None

    def flag_spellings(self, ctx: click.Context) -> dict[str, str]:
        """Every spelling of this command's options (each flag, alias, and the value's name)
        to the flag to suggest for it: the first long flag of its side (`--ignore-case` for
        `-i`, the off side of `--case-sensitive/--ignore-case`)."""
        spellings: dict[str, str] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue
            for side in (param.opts, param.secondary_opts):
                if side:
                    primary = next((flag for flag in side if flag.startswith("--")), side[0])
                    spellings.update({flag: primary for flag in side})
                    spellings.setdefault(param.name or primary, primary)
        return spellings


def report_on_stderr(logger_name: str) -> None:
    """Show the INFO messages of a library logger (e.g. space reclaimed by a build) as plain
    lines on stderr, once; stdout stays for the command's answer."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(handler, _StderrLines) for handler in logger.handlers):
        logger.addHandler(_StderrLines())
        logger.setLevel(logging.INFO)


class _StderrLines(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(record.getMessage() + "\n")


def _default_root(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str:
    return str(resolve_root(value))


root_option = click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    callback=_default_root,
    help=f"Folder holding catalog/ and manifests/ [${ROOT_ENV}, else the user data folder: {default_root()}].",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print exactly the response model (or error object) as JSON.")
