"""`leanindex search` and `leanindex inspect`: the query engine from the command line."""

from __future__ import annotations

import click
from rich.table import Table

from ..engine import Engine
from ..models import InspectRequest, InspectResponse, SearchRequest, SearchResponse
from ..records import Kind
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stdout


def render_search(response: SearchResponse) -> None:
    """A table of results with the stop reason and counts on top, for people."""
    stdout.print(
        f"{response.stop_reason.value} · {response.completeness.value} · {len(response.results)} shown of "
        f"{response.total_matches} matches ({response.hidden_matches} private/internal hidden) · "
        f"{response.environment} {response.lean_version or ''}"
    )
    for unknown in response.unknown_constants:
        hint = f"; close names: {', '.join(unknown.suggestions)}" if unknown.suggestions else ""
        stdout.print(f"no declaration's type mentions {unknown.name}{hint}", markup=False)
    if response.approximate_fields:
        stdout.print(
            f"note: this catalog comes from {response.source}; approximate fields: {', '.join(response.approximate_fields)}",
            markup=False,
        )
    if response.results:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("name", "kind", "type", "module"):
            table.add_column(column, overflow="fold")
        for r in response.results:
            table.add_row(r.name, r.kind.value, r.type, r.module or "")
        stdout.print(table)
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
    flags = [name for name, value in response.flags.model_dump().items() if value]
    if flags:
        stdout.print("flags " + ", ".join(flags))
    if response.level_params:
        stdout.print("universes " + ", ".join(response.level_params))
    if response.type_constants:
        stdout.print("type constants " + ", ".join(response.type_constants))
    if response.doc:
        stdout.print()
        stdout.print(response.doc, markup=False)


@main.command()
@click.option("--environment", "-e", required=True, help="Profile id, e.g. CORE (case-insensitive).")
@click.option("--name-contains", "-n", help="Case-sensitive substring of the printed name.")
@click.option("--constant", "-c", "constants", multiple=True, help="A constant that must occur in the type (repeat, 1-8).")
@click.option("--namespace", "namespaces", multiple=True, help="Namespace prefix, e.g. Nat (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice([k.value for k in Kind]), help="Kernel kind (repeatable).")
@click.option("--module", "modules", multiple=True, help="Module prefix, e.g. Init.Data (repeatable).")
@click.option("--limit", "result_limit", type=int, default=10, show_default=True, help="Result limit, 1-50.")
@click.option("--after", help="Cursor from a previous page (next_cursor).")
@root_option
@json_option
@handles_errors()
def search(
    environment: str,
    name_contains: str | None,
    constants: tuple[str, ...],
    namespaces: tuple[str, ...],
    kinds: tuple[str, ...],
    modules: tuple[str, ...],
    result_limit: int,
    after: str | None,
    root: str,
    as_json: bool,
) -> None:
    """Bounded search of declarations, in Name.lt order, with an honest completeness signal."""
    request = SearchRequest(
        environment=environment,
        name_contains=name_contains,
        type_pattern={"constants": list(constants)} if constants else None,
        namespace_prefixes=list(namespaces) or None,
        kinds=list(kinds) or None,
        module_prefixes=list(modules) or None,
        result_limit=result_limit,
        after=after,
    )
    response = Engine(root).search(request)
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
