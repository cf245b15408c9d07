"""`leanindex catalog import-docgen`: build a catalog from doc-gen4's declaration data."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .catalog import catalog, print_manifest_summary
from .output import emit_json, handles_errors, json_option, root_option, stdout
from .progress import import_progress
from .shown import DEFAULT_DOC_BASE

if TYPE_CHECKING:
    from ..docgen import DocgenImport


def print_import_summary(result: DocgenImport) -> None:
    """What was read and merged, for people."""
    stdout.print(f"read          {result.files:,} files, {result.declarations_read:,} declarations")
    for merged in result.merged:
        stdout.print(f"merged        {merged.name} (same theorem in {merged.kept_module} and {merged.dropped_module}; kept the first)")
    stdout.print(f"approximate   {', '.join(result.manifest.source.approximate_fields)}")
    source, gaps = result.manifest.source, result.manifest.gaps
    if source.absent_facts:
        stdout.print(f"not recorded  {', '.join(source.absent_facts)} (searches asking for them are refused)")
    for spot in source.blind_spots:
        stdout.print(f"blind spot    {spot.description}")
    if gaps.missing_modules:
        names = sum(len(module.linked_names) for module in gaps.missing_modules)
        stdout.print(
            f"missing       {len(gaps.missing_modules):,} modules imported or linked but without data "
            f"({names:,} of their names linked): {', '.join(module.module for module in gaps.missing_modules[:8])}"
            + (" ..." if len(gaps.missing_modules) > 8 else "")
        )
    if gaps.host_modules:
        declarations = sum(module.declarations for module in gaps.host_modules)
        stdout.print(
            f"host          {len(gaps.host_modules):,} modules outside the profile's packages, {declarations:,} declarations "
            "(the project the documentation was built in)"
        )
    for repository, commit in result.manifest.source.commits.items():
        stdout.print(f"source        {repository} @ {commit}")


@catalog.command("import-docgen")
@click.argument("path", type=click.Path(path_type=str))
@click.option("--profile", required=True, help="Profile id, e.g. core or mathlib (case-insensitive).")
@click.option(
    "--lean-version",
    default=None,
    help="Lean version of the documented environment, 4.33.0 or v4.33.0 (stored as 4.33.0, the way Lean prints it); doc-gen4 data names only the lean4 commit, so it is 'unknown' otherwise.",
)
@click.option(
    "--doc-base",
    default=DEFAULT_DOC_BASE,
    show_default=True,
    help="The doc-gen4 site each declaration's doc_url points into (doc-gen4's relative docLink resolved against it); "
    "an absolute http(s) URL. The default serves Lean core and the newest Mathlib, so a link to a declaration "
    "since removed may not resolve.",
)
@click.option("--module-prefix", "module_prefixes", multiple=True, metavar="MODULE", help="Keep only modules equal to or under MODULE (repeatable), e.g. Init, Std, Lean, Lake for the core part [all].")
@click.option(
    "--package-root", "package_roots", multiple=True, metavar="ROOT",
    help="A root module component of the profile's own packages (repeatable), e.g. Mathlib; modules under other roots "
    "(beyond Lean core's and what these import) are listed as host modules in the manifest [none listed].",
)
@click.option("--progress/--no-progress", default=None, help="Show progress on stderr [a bar on a terminal, else a line every few seconds].")
@root_option
@json_option
@handles_errors()
def import_docgen_command(
    path: str, profile: str, lean_version: str | None, doc_base: str, module_prefixes: tuple[str, ...],
    package_roots: tuple[str, ...], progress: bool | None, root: str, as_json: bool,
) -> None:
    """Import doc-gen4 declaration data (a doc-data folder or a .tar.xz of its
    declaration-data-*.bmp files) as PROFILE's catalog.

    Every declaration is converted to the record contract and built through the same
    validation as `catalog build`; the manifest says the source is doc-gen4 and which fields are
    approximate, which facts it lacks, which modules are missing or the host project's
    (`--package-root`). Each declaration keeps doc-gen4's source link (source_url) and its
    documentation link resolved against --doc-base (doc_url). Nothing is written unless the
    whole input is valid.
    """
    from ..catalog.layout import CatalogPaths
    from ..docgen import import_docgen

    paths = CatalogPaths.of(root, profile)
    with import_progress(paths.profile, progress) as (on_read, on_build, on_line):
        result = import_docgen(
            path, root, profile, lean_version=lean_version, doc_base=doc_base, on_read=on_read, on_build=on_build,
            on_line=on_line, module_prefixes=list(module_prefixes) or None, package_roots=list(package_roots) or None,
        )
    if as_json:
        emit_json(result.model_dump(mode="json", by_alias=True))
    else:
        print_manifest_summary(result.manifest, paths)
        print_import_summary(result)
