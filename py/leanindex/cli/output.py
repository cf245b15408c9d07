"""Shared CLI output: JSON for machines, rich rendering on stderr/stdout for people, errors."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import click
import duckdb
from pydantic import BaseModel, ValidationError
from rich.console import Console

from ..errors import EXIT_STATUS, ErrorCode, LeanIndexError
from ..home import ROOT_ENV, default_root, resolve_root
from ..storage import storage_failure
from ..validation import invalid_request

P = ParamSpec("P")
R = TypeVar("R")

stdout = Console(soft_wrap=True, highlight=False)
stderr = Console(stderr=True, soft_wrap=True, highlight=False)


def emit_json(model: BaseModel | dict[str, Any]) -> None:
    """Print a response model (or dict) as one JSON document on stdout."""
    data = model.model_dump(mode="json") if isinstance(model, BaseModel) else model
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


#: Codes about the catalogs under a root, after which a command that took `--root` prints it.
_ABOUT_THE_ROOT = frozenset({ErrorCode.UNKNOWN_ENVIRONMENT, ErrorCode.CATALOG_UNAVAILABLE, ErrorCode.DIGEST_MISMATCH})


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
            except ValidationError as error:
                failure = invalid_request(error.errors())
            except LeanIndexError as error:
                failure = error
            except (OSError, duckdb.Error) as error:
                coded = storage_failure(error)
                if coded is None:
                    raise
                failure = coded
            if as_json:
                emit_json(failure.to_dict())
            else:
                stderr.print(f"[bold red]error[/] ({failure.code.value}): {failure.message}", markup=True)
                suggestions = failure.details.get("suggestions")
                if suggestions:
                    stderr.print("close names: " + ", ".join(suggestions), markup=False)
                root = kwargs.get("root")  # `root_option`'s value: a str, or None
                if failure.code in _ABOUT_THE_ROOT and isinstance(root, str):
                    # Errors name profiles and catalog-relative files only (they reach remote
                    # clients too); on the user's own terminal, the root they are under helps.
                    stderr.print(f"root: {resolve_root(root)}", markup=False)
            raise SystemExit(EXIT_STATUS[failure.code])

        return run

    return decorate


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
