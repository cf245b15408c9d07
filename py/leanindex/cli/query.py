"""`leanindex search` and `leanindex inspect`: the query engine from the command line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from pydantic.fields import FieldInfo
from rich.table import Table
from rich.text import Text

from ..engine import Engine
from ..models import (
    Assurance,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
    flag_settings,
    hidden_text,
    inspect_caveat,
    inspect_details,
    search_caveats,
)
from ..records import Kind
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout

F = TypeVar("F", bound=Callable[..., Any])


def render_search(response: SearchResponse) -> None:
    """A table of results with the stop reason, completeness (and `APPROXIMATE` for such an
    answer) and counts on top, and the caveats that concern this answer
    (`models.search_caveats`), for people."""
    approximate = f"{Assurance.APPROXIMATE.value} · " if response.assurance is Assurance.APPROXIMATE else ""
    stdout.print(
        f"{response.stop_reason.value} · {response.completeness.value} · {approximate}"
        f"{len(response.results)} shown of {response.total_matches} matches "
        f"({hidden_text(response.hidden_matches)} private/internal hidden) · {response.environment} {response.lean_version or ''}",
        markup=False,
    )
    for resolved in response.resolved_constants:
        stdout.print(f"{resolved.given} resolved to {resolved.resolved}", markup=False)
    for unknown in response.unknown_constants:
        hint = f"; close names: {', '.join(unknown.suggestions)}" if unknown.suggestions else ""
        stdout.print(f"no declaration's type mentions {unknown.name}{hint}", markup=False)
    for caveat in search_caveats(response):
        stdout.print(f"note: {caveat}", markup=False)
    if response.suggestions:
        stdout.print(f"no visible name contains that; close names: {', '.join(response.suggestions)}", markup=False)
    if response.results:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        # Names are kept whole (a folded name cannot be copied back); the type column folds.
        table.add_column("name", no_wrap=True, min_width=max(len(r.name) for r in response.results))
        for column in ("kind", "type", "module"):
            table.add_column(column, overflow="fold")
        for r in response.results:
            # Text cells: a signature's `[...]` spans are Lean, not console markup.
            table.add_row(*(Text(cell) for cell in (r.name, r.kind.value, r.type, r.module or "")))
        stdout.print(table)
        # Links below the table, one whole line each: a URL folded in a cell cannot be copied.
        for r in response.results:
            for label, url in (("source", r.source_url), ("docs", r.doc_url)):
                if url:
                    stdout.print(f"{label} {r.name} {url}", markup=False, soft_wrap=True)
    if response.next_cursor:
        stdout.print(f"next page: --after {response.next_cursor}")


def render_inspect(response: InspectResponse) -> None:
    """A readable card of one declaration, for people."""
    # The type goes on its own line: doc-gen4 catalogs keep binders before the colon.
    stdout.print(f"[bold]{response.name}[/bold]")
    stdout.print(f"  {response.type}", markup=False)
    stdout.print(f"kind {response.kind.value} · module {response.module or '—'} · {response.environment} {response.lean_version or ''}")
    if response.range:
        stdout.print(f"lines {response.range.start.line}-{response.range.end.line}")
    for label, url in (("source", response.source_url), ("docs", response.doc_url)):
        if url:
            stdout.print(f"{label} {url}", markup=False, soft_wrap=True)
    for line in inspect_details(response):
        stdout.print(line, markup=False)
    caveat = inspect_caveat(response)
    if caveat:
        stdout.print(f"note: {caveat}", markup=False)
    if response.doc:
        stdout.print()
        stdout.print(response.doc, markup=False)


def _list(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str] | None:
    return list(values) or None


def _fragments(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str | list[str] | None:
    return None if not values else values[0] if len(values) == 1 else list(values)


def _flags(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, bool] | None:
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


#: Options whose spelling differs from the request field (`--constant` for
#: `type_pattern.constants`, ...), by field; every other field of `SearchRequest` gets
#: `--field-name` from the model (`_derived_option`).
_SPELLED: dict[str, Callable[[F], F]] = {
    "environment": click.option("--environment", "-e", "environment", required=True, help="Profile id, e.g. CORE (case-insensitive)."),
    "name_contains": click.option(
        "--name-contains", "-n", "name_contains", multiple=True, callback=_fragments, help="Substring of the printed name (repeat: all must occur)."
    ),
    "case_sensitive": click.option(
        "--ignore-case", "-i", "case_sensitive", flag_value=False, default=True, help="Name substrings ignore the case of ASCII letters."
    ),
    "flags": click.option(
        "--flag", "flags", multiple=True, callback=_flags, help="instance, class, structure, deprecated or unsafe; KEY=false excludes (repeatable)."
    ),
    "type_pattern": _type_pattern,
    "namespace_prefixes": click.option("--namespace", "namespace_prefixes", multiple=True, callback=_list, help="Namespace prefix, e.g. Nat (repeatable)."),
    "kinds": click.option(
        "--kind", "kinds", multiple=True, callback=_list, type=click.Choice([k.value for k in Kind]), help="Kernel kind (repeatable)."
    ),
    "module_prefixes": click.option("--module", "module_prefixes", multiple=True, callback=_list, help="Module prefix, e.g. Init.Data (repeatable)."),
    "order": click.option(
        "--order", "order", type=click.Choice(["name", "relevance"]),
        help="name (default without --text): Name.lt order; relevance (default with --text): best first (docs/ranking.md).",
    ),
    "result_limit": click.option("--limit", "result_limit", type=int, default=10, show_default=True, help="Result limit, 1-50."),
    "after": click.option("--after", "after", help="Cursor from a previous page (next_cursor)."),
}


def _derived_option(name: str, field: FieldInfo) -> Callable[[F], F]:
    """`--field-name` for a `SearchRequest` field without a spelled option: repeatable for a
    list of names or strings, one value otherwise. Raises `TypeError` for a field whose type
    the command line cannot give, so a new filter never goes missing from it silently."""
    schema = SearchRequest.model_json_schema()["properties"][name]
    options = [o for o in schema.get("anyOf", [schema]) if o.get("type") != "null"]
    flag = "--" + name.replace("_", "-")
    if len(options) == 1 and options[0].get("type") == "array" and options[0].get("items", {}).get("type") == "string":
        return click.option(flag, name, multiple=True, callback=_list, help=field.description)
    if len(options) == 1 and options[0].get("type") in ("string", "integer", "boolean"):
        return click.option(flag, name, type={"string": str, "integer": int, "boolean": bool}[options[0]["type"]], help=field.description)
    raise TypeError(f"SearchRequest.{name} needs a spelled option in leanindex/cli/query.py")


def search_options(command: F) -> F:
    """One option per `SearchRequest` field, in the model's order."""
    for name, field in reversed(list(SearchRequest.model_fields.items())):
        command = (_SPELLED.get(name) or _derived_option(name, field))(command)
    return command


@main.command()
@search_options
@root_option
@json_option
@handles_errors()
def search(root: str, as_json: bool, **fields: Any) -> None:
    """Bounded search of declarations (by name fragment, type constants, words, namespace, kind, module), in Name.lt or relevance order, with an honest completeness signal."""
    response = Engine(root).search(SearchRequest(**_with_type_pattern(fields)))
    emit_json(response) if as_json else render_search(response)


@main.command()
@click.option("--environment", "-e", required=True, help="Profile id, e.g. CORE (case-insensitive).")
@click.argument("declaration")
@root_option
@json_option
@handles_errors()
def inspect(environment: str, declaration: str, root: str, as_json: bool) -> None:
    """Everything the catalog holds about one DECLARATION (exact name)."""
    response = Engine(root).inspect(InspectRequest(environment=environment, declaration_name=declaration))
    emit_json(response) if as_json else render_inspect(response)
