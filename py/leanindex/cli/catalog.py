"""`leanindex catalog ...`: build catalogs (from the extractor or a stream), verify and diff them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..codes import OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from . import main
from .output import emit_json, handles_errors, json_option, report_on_stderr, root_option, stdout
from .progress import constant_progress
from .shown import DIFF_CATEGORIES

if TYPE_CHECKING:
    from ..catalog.diff import CatalogDiff
    from ..catalog.layout import CatalogPaths
    from ..catalog.manifest import Manifest
    from ..engine.diff import DeclarationDiff


@main.group()
def catalog() -> None:
    """Build, verify and compare catalogs."""
    report_on_stderr("leanindex.catalog")


def print_manifest_summary(manifest: Manifest, paths: CatalogPaths) -> None:
    """A short human summary of a built or verified catalog."""
    from ..identity import display_profile  # pydantic models: not for `--help`

    c = manifest.catalog
    stdout.print(f"profile       {display_profile(manifest.profile)}  ({manifest.source.kind})")
    stdout.print(f"lean          {manifest.lean.version}  {manifest.lean.githash or ''}".rstrip())
    stdout.print(f"declarations  {c.declaration_count:,} ({c.visible_count:,} visible)")
    stdout.print(f"environment   {manifest.environment_digest}")
    stdout.print(f"catalog       {paths.catalog_dir}")
    stdout.print(f"manifest      {paths.manifest}")


def _previous_count(paths: CatalogPaths) -> int | None:
    """The declaration count of the profile's current manifest, for the progress ETA; None
    when there is no valid one (the progress then shows count and rate only)."""
    from ..catalog.manifest import read_manifest

    try:
        return read_manifest(paths.manifest).catalog.declaration_count
    except LeanIndexError:
        return None


_EXTRACTOR_ONLY = ("project", "imports", "lake", "extractor", "source", "without_values", "threads", "timeout_s")


@catalog.command("build")
@click.option("--profile", required=True, help="Profile id, e.g. core or mathlib (case-insensitive).")
@click.option("--input", "input_path", type=click.Path(exists=True, dir_okay=False, allow_dash=True), default=None, help="Read a ready declaration stream (NDJSON file, or - for stdin) instead of running the extractor.")
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=None, help="Lake project whose LEAN_PATH resolves the imports [core: the LeanIndex checkout; mathlib: ROOT/projects/mathlib].")
@click.option("--imports", multiple=True, metavar="MODULE", help="Module to extract (repeat for several) [pinned profiles: their imports].")
@click.option("--lake", default=None, help="lake executable [lake on PATH].")
@click.option("--extractor", type=click.Path(dir_okay=False, path_type=Path), default=None, help="A built leanindex-extract [build it with lake in the source checkout].")
@click.option("--source", type=click.Path(file_okay=False, path_type=Path), default=None, help="LeanIndex source checkout to build the extractor in and digest [the one leanindex runs from].")
@click.option("--without-values", is_flag=True, help="Do not record the constants each value uses (inspect's uses and used_by_count, the uses_constants filter).")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Extractor pretty-printing workers [extractor default: 4].")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None, help="Kill the extractor after this many seconds [no limit].")
@click.option("--progress/--no-progress", default=None, help="Draw progress on stderr [only on a terminal].")
@root_option
@json_option
@handles_errors()
def build(
    profile: str,
    input_path: str | None,
    project: Path | None,
    imports: tuple[str, ...],
    lake: str | None,
    extractor: Path | None,
    source: Path | None,
    without_values: bool,
    threads: int | None,
    timeout_s: float | None,
    progress: bool | None,
    root: str,
    as_json: bool,
) -> None:
    """Publish PROFILE's catalog and manifest, from the Lean extractor or a ready stream.

    Without --input: find lake, build the extractor, run it with `lake env` inside the
    profile's project and stream its output into the catalog. With --input: validate and
    publish that leanindex.declarations/v1 stream. Nothing is written unless the whole stream
    is valid and the extractor succeeded; an earlier catalog of the profile stays as it was on
    any failure.
    """
    from ..catalog.builder import build_catalog
    from ..catalog.layout import CatalogPaths
    from ..catalog.stream import iter_lines
    from ..lake.build import ProfileBuild, build_profile

    paths = CatalogPaths.of(root, profile)
    given = {"project": project, "imports": imports, "lake": lake, "extractor": extractor, "source": source,
             "without_values": without_values, "threads": threads, "timeout_s": timeout_s}
    if input_path is not None:
        extra = [f"--{name.removesuffix('_s').replace('_', '-')}" for name in _EXTRACTOR_ONLY if given[name]]
        if extra:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"--input reads a ready stream; {', '.join(extra)} only apply when leanindex runs the extractor",
                {"options": extra},
            )
    with constant_progress(f"building {paths.profile}", _previous_count(paths), progress) as on_line:
        if input_path is None:
            request = ProfileBuild(
                profile=paths.profile,
                root=paths.root,
                project=project,
                imports=list(imports),
                lake=lake,
                extractor=extractor,
                source=source,
                with_values=not without_values,
                threads=threads,
                timeout_s=timeout_s,
            )
            manifest = build_profile(request, on_line=on_line)
        elif input_path == "-":
            manifest = build_catalog(iter_lines(sys.stdin.buffer), root, profile, on_line=on_line)
        else:
            with open(Path(input_path), "rb") as handle:
                manifest = build_catalog(iter_lines(handle), root, profile, on_line=on_line)
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
    """Recompute every catalog file's sha256 and compare it with the served manifest; then make
    the pinned manifests/<profile>.json equal to it (`pinned_manifest`: current, written or
    rewritten), and remove build folders left by killed builds (`stale_builds`, with the bytes
    reclaimed; skipped while a build runs)."""
    from ..catalog.cleanup import clean_unless_building
    from ..catalog.layout import CatalogPaths
    from ..catalog.pinned import pin_manifest
    from ..catalog.verify import verify_catalog

    paths = CatalogPaths.of(root, profile)
    # First, so that a catalog that fails verification does not keep the space either (the
    # space reclaimed is then reported on stderr only).
    stale = clean_unless_building(paths.root)
    manifest = verify_catalog(paths)
    pinned = pin_manifest(paths, manifest)
    if as_json:
        emit_json(
            {
                "profile": manifest.profile,
                "verified": True,
                "environment_digest": manifest.environment_digest,
                "files": manifest.catalog.files,
                "pinned_manifest": pinned,
                "stale_builds": stale.model_dump(),
            }
        )
    else:
        stdout.print(f"verified: {len(manifest.catalog.files)} files match {paths.served_manifest}")
        stdout.print(f"pinned        {paths.manifest} {pinned}")
        stdout.print(f"builds        {stale.summary()}")
        print_manifest_summary(manifest, paths)


def print_diff(report: CatalogDiff) -> None:
    """A readable rendering of a catalog diff."""
    from ..identity import display_profile  # pydantic models: not for `--help`

    stdout.print(f"profile       {display_profile(report.profile)}  against {report.committed}")
    if not report.committed_found:
        stdout.print("committed     none: there is no committed manifest to compare with")
    env = report.environment_digest
    if env.before == env.after:
        stdout.print(f"environment   unchanged  {env.after}")
    else:
        stdout.print(f"environment   {env.before} -> {env.after}")
    for change in report.identity_changes:
        stdout.print(f"  {change.field}: {change.before} -> {change.after}")
    for label, count in report.counts.items():
        before = "none" if count.before is None else f"{count.before:,}"
        delta = "" if count.before is None else f" ({count.after - count.before:+,})"
        stdout.print(f"{label:<13} {before} -> {count.after:,}{delta}")
    if report.committed_found:
        stdout.print(f"table         declarations.parquet {'changed' if report.declarations_parquet_changed else 'unchanged'}")
    if report.names is None:
        stdout.print("names         not compared (give the older catalog with --against-catalog)")
    else:
        names = report.names
        stdout.print(f"names         +{names.added_count:,} -{names.removed_count:,} against {names.against_catalog}")
        for name in names.added:
            stdout.print(f"  + {name}")
        if names.added_count > len(names.added):
            stdout.print(f"  ... {names.added_count - len(names.added):,} more added")
        for name in names.removed:
            stdout.print(f"  - {name}")
        if names.removed_count > len(names.removed):
            stdout.print(f"  ... {names.removed_count - len(names.removed):,} more removed")
    stdout.print("identical" if report.identical else "drift")


def print_declaration_diff(report: DeclarationDiff) -> None:
    """A readable rendering of a per-declaration diff: both sides, the module gaps
    (`ModuleGaps.lines`), the names compared and the counts, then the page."""
    for label, side in (("older", report.older), ("newer", report.newer)):
        stdout.print(
            f"{label:<13} {side.profile}  Lean {side.lean_version}  {side.source}  {side.declaration_count:,} declarations"
            f" in {side.module_count:,} modules  {side.catalog}",
            markup=False, highlight=False,
        )
    for line in report.module_gaps.lines(report.older, report.newer):
        stdout.print(line, markup=False, highlight=False)
    stdout.print(f"{'compared':<13} {report.compared:,} names in both")
    for category, count in report.counts.items():
        shown = f"not recorded ({report.not_recorded[category]})" if count is None else f"{count:,}"
        stdout.print(f"{category:<13} {shown}", markup=False, highlight=False)
    marks = {"added": "+", "removed": "-", "retyped": "~", "reprinted": "≈", "deprecated": "!", "renamed": ">"}
    for change in report.changes:
        details = "".join(f"\n      {detail}" for detail in change.details())
        stdout.print(f"  {marks[change.category]} {change.category:<10} {change.name}{details}", markup=False, highlight=False)
    if report.next_cursor is not None:
        stdout.print(f"more          --after {report.next_cursor}")


@catalog.command("diff")
@click.argument("catalogs", nargs=-1, metavar="[OLDER NEWER]")
@click.option("--profile", default=None, help="Profile id (case-insensitive): compare its fresh build with the committed manifest.")
@click.option("--against", default=None, metavar="REF_OR_PATH", help="Committed manifest: a git revision (read at manifests/<profile>.json) or a manifest file [HEAD].")
@click.option("--against-catalog", type=click.Path(exists=True, path_type=Path), default=None, help="The older catalog (folder or declarations.parquet) to list added/removed names against.")
@click.option("--category", "categories", multiple=True, type=click.Choice(DIFF_CATEGORIES), help="With OLDER NEWER: list only these change categories (repeatable) [all recorded ones].")
@click.option("--after", default=None, metavar="CURSOR", help="With OLDER NEWER: continue after the page that printed this cursor.")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True, help="Names listed per side; with OLDER NEWER, changes per page (1-500).")
@root_option
@json_option
@handles_errors()
def diff(
    catalogs: tuple[str, ...],
    profile: str | None,
    against: str | None,
    against_catalog: Path | None,
    categories: tuple[str, ...],
    after: str | None,
    limit: int,
    root: str,
    as_json: bool,
) -> None:
    """Compare two catalogs declaration by declaration (OLDER NEWER), or PROFILE's freshly
    built manifest (and catalog) with the committed one (--profile).

    OLDER and NEWER are profile ids under --root or catalog folders; both are verified first.
    The report gives first the modules held by one catalog only and the missing and host
    modules the manifests record (their declarations are counted there, not as added or
    removed), then counts of added, removed, retyped, reprinted (printed type differs, same
    constants and binder count), deprecated and renamed declarations (docs/diff.md has the
    rules and what each count can and cannot know), then a page of the changes; --after
    continues it.

    With --profile: identity changes (Lean version and commit, toolchain, package revisions,
    modules_digest, extractor), declaration counts, and with --against-catalog the added and
    removed names.

    Exit status 0 when identical (no change; with OLDER NEWER, no declaration held by one side
    only either), 14 on drift (including no committed manifest), the error's status when the
    comparison itself fails.
    """
    from ..catalog.diff import diff_catalog
    from ..engine.diff import diff_declarations, open_verified

    if catalogs:
        mode_options = {"--profile": profile, "--against": against, "--against-catalog": against_catalog}
        extra = [option for option, value in mode_options.items() if value is not None]
        if len(catalogs) != 2 or extra:
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                "give OLDER and NEWER (two catalogs), without --profile, --against or --against-catalog",
                {"catalogs": list(catalogs), "options": extra},
            )
        changes = diff_declarations(
            open_verified(root, catalogs[0]), open_verified(root, catalogs[1]), list(categories) or None, limit, after
        )
        if as_json:
            emit_json(changes)
        else:
            print_declaration_diff(changes)
        if changes.differs():
            raise SystemExit(OUTCOME_EXIT[Outcome.DRIFTED])
        return
    if profile is None or categories or after is not None:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "give --profile (fresh build against the committed manifest) or OLDER NEWER (two catalogs); --category and --after need OLDER NEWER",
            {"options": [o for o, v in (("--category", categories), ("--after", after)) if v]},
        )
    report = diff_catalog(root, profile, against, against_catalog, limit)
    if as_json:
        emit_json(report)
    else:
        print_diff(report)
    if not report.identical:
        raise SystemExit(OUTCOME_EXIT[Outcome.DRIFTED])
