"""`leanindex search`, `leanindex inspect` and `leanindex exists`: the query engine from the command line.

With `$LEANINDEX_URL` set (`URL_ENV`), they ask the leanindex server there (`leanindex.Client`,
bearer token from `$LEANINDEX_TOKEN`) instead of opening the catalogs under `--root`: the same
requests, answers, output and exit statuses, and the server's error object on a refusal.

The request and response models (pydantic) are imported inside the commands and renderers:
`--help` builds no models (issue 30); the options come from `shown.SEARCH_FIELDS`. rich is
imported only to print for people (`--json` prints without it), and a query opening the catalogs
itself starts OpenBLAS with one thread (`BLAS_THREADS_ENV`) and runs without the cycle collector
(`_without_cycle_collection`): issue 31.
"""

from __future__ import annotations

import gc
import logging
import os
import textwrap
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import cli
from ..codes import OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from . import main, output
from .lazy import Engine
from .output import FieldCommand, asked_server, emit_json, handles_errors, json_option, root_option
from .shown import KINDS, SEARCH_DERIVED, SEARCH_FIELDS

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console

    from ..models import ExistsResponse, InspectManyResponse, InspectResponse, SearchResponse

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("leanindex.cli")

#: The environment variable naming a running leanindex server (e.g. `http://127.0.0.1:8000`)
#: that `search`, `inspect` and `exists` ask instead of opening the catalogs themselves.
URL_ENV = "LEANINDEX_URL"

#: OpenBLAS's thread count, read once when NumPy loads it. A query does no linear algebra, yet
#: by default OpenBLAS starts a thread per core that spins at start-up: 40-70 ms of CPU, a
#: tenth of a command's, for nothing. A query process sets it to 1 unless the user set it.
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


#: Columns between two cells of the results table.
_COLUMN_GAP = 2
#: The narrowest type column of the results table: where the name, kind and module columns leave
#: less (or less than the longest word of a type), each type goes on its own lines instead.
TYPE_COLUMN_MIN = 24
#: How far a type on its own lines is indented under its name.
_TYPE_INDENT = 4


def _say(console: Console, text: str, indent: int = 0) -> None:
    """Print `text` for people, each of its lines indented by `indent` columns and, on a
    terminal, wrapped at spaces to its width (into a pipe or a file, each line stays whole, for
    grep). A word is never broken: one longer than a line (a long declaration or module name)
    stands whole on a line of its own, which a terminal may fold but a copy keeps whole."""
    pad = " " * indent
    for line in text.splitlines() or [""]:
        if not console.is_terminal:
            console.print(pad + line, markup=False, highlight=False, soft_wrap=True)
            continue
        wrapped = textwrap.wrap(
            line, max(console.width, indent + 1), initial_indent=pad, subsequent_indent=pad,
            break_long_words=False, break_on_hyphens=False, replace_whitespace=False, drop_whitespace=True,
        )
        for part in wrapped or [""]:
            console.print(part, markup=False, highlight=False, soft_wrap=True)


def _note(console: Console, text: str) -> None:
    """Print `note: text` once per command run: a later answer of the same run with the same
    caveat (the demo's searches, the cards of a batch inspect, the pages a cursor follows)
    shows its status line only, where `PARTIAL`/`APPROXIMATE` still says it. Outside a click
    command (a caller of `render_search`), always."""
    context = click.get_current_context(silent=True)
    shown: set[str] = context.meta.setdefault("leanindex.notes_shown", set()) if context is not None else set()
    if text not in shown:
        shown.add(text)
        _say(console, f"note: {text}")


def _results(console: Console, response: SearchResponse) -> None:
    """The results of a search: a table of name, kind, type and module when the console is wide
    enough for every name, kind and module whole and a type column of `TYPE_COLUMN_MIN`
    (and the longest word of a type); else, per result, its name, kind and module on one line
    and its type below, indented, both wrapped at spaces. Nothing is broken mid-word either way
    (a folded name cannot be copied back)."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    rows = [(r.name, r.kind.value, r.type, r.module or "") for r in response.results]
    widths = [max(cell_len(row[i]) for row in [("name", "kind", "type", "module"), *rows]) for i in range(4)]
    longest_word = max((cell_len(word) for row in rows for word in row[2].split()), default=0)
    type_room = console.width - widths[0] - widths[1] - widths[3] - 3 * _COLUMN_GAP
    if type_room >= max(TYPE_COLUMN_MIN, longest_word):
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, padding=(0, _COLUMN_GAP // 2))
        for column, width in (("name", widths[0]), ("kind", widths[1])):
            table.add_column(column, no_wrap=True, min_width=width)
        table.add_column("type", overflow="fold", max_width=type_room)
        table.add_column("module", no_wrap=True, min_width=widths[3])
        for row in rows:
            # Text cells: a signature's `[...]` spans are Lean, not console markup.
            table.add_row(*(Text(cell) for cell in row))
        console.print(table, soft_wrap=False)
        return
    for name, kind, type_, module in rows:
        _say(console, "  ".join(part for part in (name, kind, module) if part))
        _say(console, type_, indent=_TYPE_INDENT)


def render_search(response: SearchResponse, console: Console | None = None) -> None:
    """A search answer for people on `console` (default: stdout): the stop reason, completeness
    (and `APPROXIMATE` for such an answer) and counts on top, the caveats that concern this
    answer (`models.search_caveats`, each once per command run: `_note`), the words of the
    text no declaration has (`render.unmatched_line`), the results
    (`_results`), then each result's links, one whole line each. On a terminal, prose is
    wrapped at spaces to its width, never inside a name (`_say`)."""
    from ..models import Assurance, hidden_text, search_caveats
    from ..render import unmatched_line

    out = console or output.stdout
    approximate = f"{Assurance.APPROXIMATE.value} · " if response.assurance is Assurance.APPROXIMATE else ""
    _say(
        out,
        f"{response.stop_reason.value} · {response.completeness.value} · {approximate}"
        f"{len(response.results)} shown of {response.total_matches} matches "
        f"({hidden_text(response.hidden_matches)} private/internal hidden) · {response.environment} {response.lean_version or ''}",
    )
    for resolved in response.resolved_constants:
        _say(out, f"{resolved.given} resolved to {resolved.resolved}")
    for unknown in response.unknown_constants:
        hint = f"; close names: {', '.join(unknown.suggestions)}" if unknown.suggestions else ""
        _say(out, f"no declaration's type mentions {unknown.name}{hint}")
    unmatched = unmatched_line(response)
    if unmatched:
        _say(out, unmatched)
    for caveat in search_caveats(response):
        _note(out, caveat)
    if response.suggestions:
        _say(out, f"no visible name contains that; close names: {', '.join(response.suggestions)}")
    if response.results:
        _results(out, response)
        # Links below the results, one whole line each: a URL folded in a cell cannot be copied.
        for r in response.results:
            for label, url in (("source", r.source_url), ("docs", r.doc_url)):
                if url:
                    out.print(f"{label} {r.name} {url}", markup=False, soft_wrap=True)
    if response.next_cursor:
        out.print(f"next page: --after {response.next_cursor}", markup=False, soft_wrap=True)


def render_inspect(response: InspectResponse, console: Console | None = None) -> None:
    """A readable card of one declaration for people on `console` (default: stdout), wrapped at
    spaces to a terminal's width (never inside a name: `_say`); the caveat once per command run
    (`_note`)."""
    from rich.text import Text

    from ..models import inspect_caveat, inspect_details

    out = console or output.stdout
    # The type goes on its own line: doc-gen4 catalogs keep binders before the colon.
    out.print(Text(response.name, style="bold"), soft_wrap=True)
    _say(out, response.type, indent=2)
    _say(out, f"kind {response.kind.value} · module {response.module or '—'} · {response.environment} {response.lean_version or ''}")
    if response.range:
        _say(out, f"lines {response.range.start.line}-{response.range.end.line}")
    for label, url in (("source", response.source_url), ("docs", response.doc_url)):
        if url:
            out.print(f"{label} {url}", markup=False, soft_wrap=True)
    for line in inspect_details(response):
        _say(out, line)
    caveat = inspect_caveat(response)
    if caveat:
        _note(out, caveat)
    if response.doc:
        out.print()
        _say(out, response.doc)


def _list(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str] | None:
    return list(values) or None


def _fragments(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | list[str] | None:
    return None if not values else values[0] if len(values) == 1 else list(values)


def _flags(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, bool] | None:
    from ..models import flag_settings

    try:
        return flag_settings(values)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _type_pattern(command: F) -> F:
    """`--constant`/`-c` and `--conclusion`, the two lists of `type_pattern`, read into one value
    by `_with_type_pattern`."""
    command = click.option("--conclusion", "type_pattern_conclusion", multiple=True, help="A constant that must occur in the conclusion (repeat, 1-8).")(command)
    return click.option("--constant", "-c", "type_pattern", multiple=True, help="A constant that must occur in the type (repeat, 1-8).")(command)


def _with_type_pattern(fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` with the two type-pattern options as the request's `type_pattern`."""
    constants, conclusion = fields.pop("type_pattern"), fields.pop("type_pattern_conclusion")
    given = {key: list(values) for key, values in (("constants", constants), ("conclusion", conclusion)) if values}
    return {**fields, "type_pattern": given or None}


#: Options written out (help, short aliases, choices), by field; every other field of
#: `SearchRequest` gets `--field-name` from the model (`_derived_option`). Each option's first
#: long flag is its field's name in kebab case (`--result-limit`), as the field is named on
#: every other surface; the spellings after it are aliases (`--limit`, `-n`), listed in
#: `--help`. `type_pattern` and `flags`, objects, are given as the query parameters of
#: `GET /v1/declarations/search` are (`models.QUERY_PARAMETERS`: `--constant`, `--conclusion`,
#: `--flag`).
_SPELLED: dict[str, Callable[[F], F]] = {
    "environment": click.option("--environment", "-e", "environment", required=True, help="Profile id, e.g. CORE (case-insensitive)."),
    "name_contains": click.option(
        "--name-contains", "-n", "name_contains", multiple=True, callback=_fragments, help="Substring of the printed name (repeat: all must occur)."
    ),
    "case_sensitive": click.option(
        "--case-sensitive/--ignore-case", " /-i", "case_sensitive", default=True,
        help="--ignore-case: name substrings ignore the case of ASCII letters [case-sensitive].",
    ),
    "flags": click.option(
        "--flag", "flags", multiple=True, callback=_flags, help="instance, class, structure, deprecated or unsafe; KEY=false excludes (repeatable)."
    ),
    "type_pattern": _type_pattern,
    "namespace_prefixes": click.option(
        "--namespace-prefixes", "--namespace", "namespace_prefixes", multiple=True, callback=_list, help="Namespace prefix, e.g. Nat (repeatable)."
    ),
    "kinds": click.option(
        "--kinds", "--kind", "kinds", multiple=True, callback=_list, type=click.Choice(KINDS), help="Kernel kind (repeatable)."
    ),
    "module_prefixes": click.option(
        "--module-prefixes", "--module", "module_prefixes", multiple=True, callback=_list, help="Module prefix, e.g. Init.Data (repeatable)."
    ),
    "text_match": click.option(
        "--text-match", "text_match", type=click.Choice(["any", "all"]),
        help="With --text only. any (default): a result has some word of --text (ranked, best first); all: every word.",
    ),
    "order": click.option(
        "--order", "order", type=click.Choice(["name", "relevance"]),
        help="name (default without --text): Name.lt order; relevance (default with --text): best first (docs/ranking.md).",
    ),
    "result_limit": click.option("--result-limit", "--limit", "result_limit", type=int, default=10, show_default=True, help="Result limit, 1-50."),
    "after": click.option("--after", "after", help="Cursor from a previous page (next_cursor)."),
}


def _derived_option(name: str) -> Callable[[F], F]:
    """`--field-name` for a `SearchRequest` field without a spelled option, from its entry in
    `shown.SEARCH_DERIVED`: repeatable for a list of strings, one value otherwise. Raises
    `TypeError` for a field listed in neither, so a new filter never goes missing silently
    (tests/test_startup.py checks both copies against the model)."""
    if name not in SEARCH_DERIVED:
        raise TypeError(f"SearchRequest.{name} needs a spelled option in leanindex/cli/query.py or an entry in cli/shown.py")
    value, description = SEARCH_DERIVED[name]
    flag = "--" + name.replace("_", "-")
    if value == "array":
        return click.option(flag, name, multiple=True, callback=_list, help=description)
    return click.option(flag, name, type={"string": str, "integer": int, "boolean": bool}[value], help=description)


def search_options(command: F) -> F:
    """One option per `SearchRequest` field, in the model's order (`shown.SEARCH_FIELDS`)."""
    for name in reversed(SEARCH_FIELDS):
        command = (_SPELLED.get(name) or _derived_option(name))(command)
    return command


def _without_cycle_collection(command: F) -> F:
    """Decorator: run `command` with the cyclic garbage collector off, then turn it back on if
    it was on. A query loads its modules (pydantic's schemas, NumPy, pyarrow: hundreds of
    thousands of objects, all kept until the process ends) in the command, and the collector
    would walk them again and again meanwhile, finding nothing to free: about 35 ms of CPU.
    Reference counting frees everything else as usual; a cycle left by the command waits for the
    next collection. When the command ends the process (`cli.ends_the_process`), what it made is
    frozen first (`gc.freeze`): neither the next collection nor the one at the interpreter's exit
    walks it again (another 30-40 ms), and the exit leaves its memory to the system."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return command(*args, **kwargs)
        finally:
            if cli.ends_the_process:
                gc.freeze()
            if collecting:
                gc.enable()

    return run  # type: ignore[return-value]


def _ask(root: str, method: str, request: BaseModel) -> Any:
    """The answer to `request` from the query `method` (`search`, `inspect`, `inspect_many` or
    `exists`: the `leanindex.Engine` method, and the `leanindex.tools` tool whose
    `client_method` it is): from the server at `$LEANINDEX_URL` when it is set (through
    `leanindex.Client`, token `$LEANINDEX_TOKEN`; its `LeanIndexError`s carry the server's
    error object, `backend_error` when the server cannot be reached); else from a `leanindex
    serve` announced in `root` (`service.announce`: it serves these very catalogs, already
    verified, and accepts connections; the token is sent only to one that announced it needs it,
    and one that answers without an error object, or not at all, is left for the engine), else
    from the engine on the catalogs under `root`. Raises `LeanIndexError` as that tool does."""
    from ..service.announce import announced_server
    from ..service.config import TOKEN_ENV

    token = os.environ.get(TOKEN_ENV) or None
    url = os.environ.get(URL_ENV)
    if url:
        asked_server(url, URL_ENV)
        return _ask_server(url, token, method, request)
    announced = announced_server(Path(root).resolve(), token_available=token is not None)
    if announced is not None:
        url, token_required, name = announced
        try:
            # The token only goes to a server that announced it needs one.
            return _ask_server(url, token if token_required else None, method, request)
        except LeanIndexError as error:
            if error.code is not ErrorCode.BACKEND_ERROR:
                raise
            # Not a leanindex server answering (gone meanwhile, or its port taken by another
            # program): these catalogs answer the same from here.
            log.warning("the server announced in serving/%s did not answer (%s): opening the catalogs", name, error.message)
    os.environ.setdefault(BLAS_THREADS_ENV, "1")  # before the engine loads NumPy
    return getattr(Engine(root), method)(request)


def _ask_server(url: str, token: str | None, method: str, request: BaseModel) -> Any:
    """`request` asked of the server at `url` through `leanindex.Client`."""
    # The client and the tool table load every model of every tool: imported for this path only.
    from ..client import Client
    from ..tools import TOOLS

    tool = next(spec.name for spec in TOOLS if spec.client_method == method)
    with Client(url, token=token) as client:
        return client.call(tool, **request.model_dump(exclude_none=True))


@main.command(cls=FieldCommand)
@search_options
@root_option
@json_option
@handles_errors()
@_without_cycle_collection
def search(root: str, as_json: bool, **fields: Any) -> None:
    """Bounded search of declarations (by name fragment, type constants, words, namespace, kind, module), in Name.lt or relevance order, with an honest completeness signal."""
    from ..models import SearchRequest

    response = _ask(root, "search", SearchRequest(**_with_type_pattern(fields)))
    emit_json(response) if as_json else render_search(response)


@main.command(cls=FieldCommand)
@click.option("--environment", "-e", required=True, help="Profile id, e.g. CORE (case-insensitive).")
@click.argument("declarations", nargs=-1, required=True)
@root_option
@json_option
@handles_errors()
@_without_cycle_collection
def inspect(environment: str, declarations: tuple[str, ...], root: str, as_json: bool) -> None:
    """Everything the catalog holds about each DECLARATION (exact names, up to 100).

    One name: its card, or its error with that error's exit status. Several: one answer per
    name in order (lean.declaration.inspect_many), exit 19 (item_errors) when some name is not
    found."""
    from ..models import InspectManyRequest, InspectRequest

    if len(declarations) == 1:
        response = _ask(root, "inspect", InspectRequest(environment=environment, declaration_name=declarations[0]))
        emit_json(response) if as_json else render_inspect(response)
        return
    many = _ask(root, "inspect_many", InspectManyRequest(environment=environment, names=list(declarations)))
    emit_json(many) if as_json else render_inspect_many(many)
    _exit_for_lookups(many)


@main.command(cls=FieldCommand)
@click.option("--environment", "-e", required=True, help="Profile id, e.g. CORE (case-insensitive).")
@click.argument("names", nargs=-1, required=True)
@root_option
@json_option
@handles_errors()
@_without_cycle_collection
def exists(environment: str, names: tuple[str, ...], root: str, as_json: bool) -> None:
    """Whether each of NAMES (1-100 exact declaration names) exists, with its kind and module or the closest names.

    For checking names before citing them (lean.declaration.exists, read from the name index).
    Exit 0 when all exist, 19 (item_errors) when some do not."""
    from ..models import ExistsRequest
    from ..render import render_exists  # the engine's stack: not for `--help`

    response = _ask(root, "exists", ExistsRequest(environment=environment, names=list(names)))
    emit_json(response) if as_json else output.stdout.print(render_exists(response), markup=False)
    _exit_for_lookups(response)


def render_inspect_many(response: InspectManyResponse) -> None:
    """Each name's card (`render_inspect`) or its error with the close names, in order, after
    the counts; the caveat (`models.lookup_caveat`) last."""
    from ..models import lookup_caveat

    stdout = output.stdout
    stdout.print(f"{response.completeness.value} · " + ", ".join(f"{n} {key}" for key, n in response.counts.items()), markup=False)
    for result in response.results:
        stdout.print()
        if result.response is not None:
            render_inspect(result.response)
            continue
        assert result.error is not None
        stdout.print(f"{result.name}: {result.error.code}: {result.error.message}", markup=False)
        if result.closest:
            stdout.print(f"close names: {', '.join(result.closest)}", markup=False)
    caveat = lookup_caveat(response)
    if caveat:
        stdout.print(f"note: {caveat}", markup=False)


def _exit_for_lookups(response: InspectManyResponse | ExistsResponse) -> None:
    """Exit with `item_errors` when some name of a batch look-up was not found (the answer is
    printed whole either way)."""
    if response.counts["found"] < len(response.results):
        raise SystemExit(OUTCOME_EXIT[Outcome.ITEM_ERRORS])
