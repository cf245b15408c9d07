"""`leanindex demo`: the main job end to end on the embedded sample, no Lean needed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..catalog.builder import build_catalog
from ..catalog.layout import CatalogPaths
from ..catalog.stream import iter_lines
from ..catalog.verify import verify_catalog
from ..engine import Engine
from ..models import InspectRequest, SearchRequest
from ..sample import sample_stream_path
from . import main
from .catalog import print_manifest_summary
from .output import handles_errors, stdout
from .query import render_inspect, render_search

_SEARCHES = (
    ("name contains `add_comm`, namespace Nat", {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]}),
    ("type mentions List.length and HAppend.hAppend", {"type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}}),
    ("theorems whose name contains `add`, 3 per page", {"name_contains": "add", "kinds": ["theorem"], "result_limit": 3}),
    ("a misspelt constant", {"type_pattern": {"constants": ["List.lenght"]}}),
)


@main.command()
@click.option("--root", type=click.Path(file_okay=False), default=None, help="Where to build the sample catalog (default: a temporary folder).")
@handles_errors(json_flag=None)
def demo(root: str | None) -> None:
    """Build the embedded sample catalog (profile SAMPLE), verify it, search and inspect it."""
    with tempfile.TemporaryDirectory(prefix="leanindex-demo-") as scratch:
        target = Path(root) if root else Path(scratch)
        stdout.rule("build")
        with open(sample_stream_path(), "rb") as handle:
            build_catalog(iter_lines(handle), target, "sample")
        paths = CatalogPaths.of(target, "sample")
        stdout.rule("verify")
        print_manifest_summary(verify_catalog(paths), paths)
        engine = Engine(target)
        for title, filters in _SEARCHES:
            stdout.rule(f"search: {title}")
            response = engine.search(SearchRequest(environment="SAMPLE", **filters))
            render_search(response)
            if response.next_cursor:
                stdout.print("— following next_cursor —")
                render_search(engine.search(SearchRequest(environment="SAMPLE", after=response.next_cursor, **filters)))
        stdout.rule("inspect: Nat.add_comm")
        render_inspect(engine.inspect(InspectRequest(environment="SAMPLE", declaration_name="Nat.add_comm")))
        engine.close()
