"""`leanindex catalog ...`: build catalogs from a declaration stream, verify them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import BinaryIO

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..catalog.builder import build_catalog
from ..catalog.layout import CatalogPaths
from ..catalog.manifest import Manifest
from ..catalog.stream import iter_lines
from ..catalog.verify import verify_catalog
from . import main
from .output import emit_json, handles_errors, json_option, root_option, stderr, stdout


@main.group()
def catalog() -> None:
    """Build, verify and compare catalogs."""


@contextmanager
def line_progress(label: str, total: int | None = None) -> Iterator[Callable[[int], None] | None]:
    """A progress callback drawing a bar on stderr when it is a terminal; None (quiet) otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn() if total else TextColumn("{task.completed:,} lines"), TimeElapsedColumn()]
    with Progress(*columns, console=stderr, transient=True) as progress:
        task = progress.add_task(label, total=total)

        def advance(line: int) -> None:
            if line % 2048 == 0:
                progress.update(task, completed=line)

        yield advance


def print_manifest_summary(manifest: Manifest, paths: CatalogPaths) -> None:
    """A short human summary of a built or verified catalog."""
    c = manifest.catalog
    stdout.print(f"profile       {manifest.profile.upper()}  ({manifest.source.kind})")
    stdout.print(f"lean          {manifest.lean.version}  {manifest.lean.githash or ''}".rstrip())
    stdout.print(f"declarations  {c.declaration_count:,} ({c.visible_count:,} visible)")
    stdout.print(f"environment   {manifest.environment_digest}")
    stdout.print(f"catalog       {paths.catalog_dir}")
    stdout.print(f"manifest      {paths.manifest}")


@catalog.command("build")
@click.option("--input", "input_file", type=click.File("rb"), required=True, help="Declaration stream (NDJSON) file, or - for stdin.")
@click.option("--profile", required=True, help="Profile id, e.g. core or mathlib (case-insensitive).")
@root_option
@json_option
@handles_errors()
def build(input_file: BinaryIO, profile: str, root: str, as_json: bool) -> None:
    """Validate a leanindex.declarations/v1 stream and publish it as PROFILE's catalog.

    Nothing is written unless the whole stream is valid; an earlier catalog of the profile
    stays as it was on any failure.
    """
    paths = CatalogPaths.of(root, profile)
    with line_progress(f"building {paths.profile}") as on_line:
        manifest = build_catalog(iter_lines(input_file), root, profile, on_line=on_line)
    if as_json:
        emit_json(manifest.model_dump(mode="json", by_alias=True))
    else:
        print_manifest_summary(manifest, paths)


@catalog.command("verify")
@click.option("--profile", required=True, help="Profile id (case-insensitive).")
@root_option
@json_option
@handles_errors()
def verify(profile: str, root: str, as_json: bool) -> None:
    """Recompute every catalog file's sha256 and compare it with the manifest."""
    paths = CatalogPaths.of(root, profile)
    manifest = verify_catalog(paths)
    if as_json:
        emit_json({"profile": manifest.profile, "verified": True, "environment_digest": manifest.environment_digest, "files": manifest.catalog.files})
    else:
        stdout.print(f"verified: {len(manifest.catalog.files)} files match {paths.manifest}")
        print_manifest_summary(manifest, paths)
