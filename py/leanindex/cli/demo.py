"""`leanindex demo`: search real Lean in one command, no Lean needed.

By default it imports the embedded Lean core catalog (doc-gen4 data of Lean v4.33.0, 86,957
declarations; `leanindex.embedded`) into the root on first use, with a progress bar, then runs
real searches and an inspect on it and prints where the catalog is and what to try next. With
`--sample` it builds the 76-declaration sample instead (the team's test stream) and runs the
same tour on it.
"""

from __future__ import annotations

import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..home import ROOT_ENV, default_root
from . import main
from .catalog import print_manifest_summary
from .docgen import print_import_summary
from .output import handles_errors, stdout
from .progress import import_progress

if TYPE_CHECKING:
    from ..engine import Engine

Search = tuple[str, dict[str, Any]]

_CORE_SEARCHES: tuple[Search, ...] = (
    ("name contains `add_comm`, namespace Nat", {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]}),
    ("type mentions List.length and HAppend.hAppend, theorems", {"type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}, "kinds": ["theorem"], "result_limit": 5}),
    ("name contains `succ_le`, module Init.Data.Nat, 3 per page", {"name_contains": "succ_le", "module_prefixes": ["Init.Data.Nat"], "result_limit": 3}),
    ("a misspelt constant", {"type_pattern": {"constants": ["List.lenght"]}}),
)
_SAMPLE_SEARCHES: tuple[Search, ...] = (
    ("name contains `add_comm`, namespace Nat", {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]}),
    ("type mentions List.length and HAppend.hAppend", {"type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}}),
    ("theorems whose name contains `add`, 3 per page", {"name_contains": "add", "kinds": ["theorem"], "result_limit": 3}),
    ("a misspelt constant", {"type_pattern": {"constants": ["List.lenght"]}}),
)


@main.command()
@click.option("--root", type=click.Path(file_okay=False), default=None,
              help=f"Where the catalog goes [${ROOT_ENV}, else the user data folder; with --sample: a temporary folder].")
@click.option("--sample", is_flag=True, help="Build the 76-declaration sample catalog (profile SAMPLE) instead of Lean core.")
@handles_errors(json_flag=None)
def demo(root: str | None, sample: bool) -> None:
    """Search real Lean core (86,957 declarations, Lean v4.33.0) with no Lean installed: imports
    the embedded catalog into the root on first use (printing what its data lacks: 4 missing Std
    modules, 10 host-project modules), then searches, follows a cursor and inspects; prints
    where the catalog is and the next commands to try."""
    from ..catalog.layout import CatalogPaths
    from ..embedded import EMBEDDED_PROFILE, embedded_catalog, import_embedded
    from ..engine import Engine
    from ..identity import display_profile

    if sample:
        with tempfile.TemporaryDirectory(prefix="leanindex-demo-") as scratch:
            _sample_tour(Path(root) if root else Path(scratch))
        return
    target = Path(root) if root else default_root()
    started = time.monotonic()
    paths = CatalogPaths.of(target, EMBEDDED_PROFILE)
    manifest = embedded_catalog(target)
    if manifest is None:
        stdout.rule(f"import: Lean core v4.33.0 (doc-gen4 data shipped with leanindex) into {paths.root}")
        with import_progress(display_profile(EMBEDDED_PROFILE)) as (on_read, on_build, on_line):
            result = import_embedded(target, on_read=on_read, on_build=on_build, on_line=on_line)
        print_manifest_summary(result.manifest, paths)
        print_import_summary(result)
    else:
        stdout.rule("catalog already imported and verified")
        print_manifest_summary(manifest, paths)
    with closing(Engine(target)) as engine:
        _tour(engine, display_profile(EMBEDDED_PROFILE), _CORE_SEARCHES, "Nat.add_comm")
    stdout.rule("next")
    root_flag = "" if not root else f" --root {paths.root}"
    environment = display_profile(EMBEDDED_PROFILE)
    stdout.print(f"done in {time.monotonic() - started:.1f} s; the catalog is in {paths.catalog_dir} (manifest {paths.manifest})", markup=False)
    for command in (
        f"leanindex search -e {environment} -n mul_comm --namespace Nat{root_flag}",
        f"leanindex search -e {environment} -c List.map -c List.length --kind theorem{root_flag}",
        f"leanindex inspect -e {environment} List.length_append{root_flag}",
        f"leanindex serve{root_flag}        # then open http://127.0.0.1:8000/ in a browser",
        f"leanindex doctor{root_flag}",
    ):
        stdout.print(f"  {command}", markup=False)


def _sample_tour(target: Path) -> None:
    from ..catalog.builder import build_catalog
    from ..catalog.layout import CatalogPaths
    from ..catalog.stream import iter_lines
    from ..catalog.verify import verify_catalog
    from ..engine import Engine
    from ..sample import sample_stream_path

    stdout.rule("build")
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), target, "sample")
    paths = CatalogPaths.of(target, "sample")
    stdout.rule("verify")
    print_manifest_summary(verify_catalog(paths), paths)
    with closing(Engine(target)) as engine:
        _tour(engine, "SAMPLE", _SAMPLE_SEARCHES, "Nat.add_comm")


def _tour(engine: Engine, environment: str, searches: tuple[Search, ...], inspected: str) -> None:
    from ..models import InspectRequest, SearchRequest
    from .query import render_inspect, render_search

    for title, filters in searches:
        stdout.rule(f"search: {title}")
        response = engine.search(SearchRequest(environment=environment, **filters))
        render_search(response)
        if response.next_cursor:
            stdout.print("— following next_cursor —")
            render_search(engine.search(SearchRequest(environment=environment, after=response.next_cursor, **filters)))
    stdout.rule(f"inspect: {inspected}")
    render_inspect(engine.inspect(InspectRequest(environment=environment, declaration_name=inspected)))
