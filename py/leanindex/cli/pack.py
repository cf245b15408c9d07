"""`leanindex catalog pack` / `leanindex catalog pull`: published catalogs (`leanindex.catalog.pack`)."""

from __future__ import annotations

from pathlib import Path

import click

from .catalog import catalog, print_manifest_summary
from .output import emit_json, handles_errors, json_option, root_option, stdout
from .progress import transfer_progress
from .shown import DEFAULT_MAX_BYTES, PACK_SUFFIX


@catalog.command("pack")
@click.option("--profile", required=True, help="Profile id (case-insensitive).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None, help=f"Pack file to write [<profile>{PACK_SUFFIX} in the current folder].")
@root_option
@json_option
@handles_errors()
def pack(profile: str, output: Path | None, root: str, as_json: bool) -> None:
    """Write PROFILE's catalog and its manifest as one pack file (verified first), ready to
    publish; `leanindex catalog pull` installs it elsewhere."""
    from ..catalog.layout import CatalogPaths
    from ..catalog.pack import pack_catalog

    paths = CatalogPaths.of(root, profile)
    written = pack_catalog(root, profile, output or Path(f"{paths.profile}{PACK_SUFFIX}"))
    if as_json:
        emit_json({"profile": paths.profile, "pack": str(written), "bytes": written.stat().st_size})
    else:
        stdout.print(f"pack          {written} ({written.stat().st_size:,} bytes)", markup=False)


@catalog.command("pull")
@click.argument("source")
@click.option("--profile", default=None, help="The profile the pack must hold (case-insensitive) [the one its manifest names].")
@click.option("--max-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True, help="Refuse a pack larger than this.")
@root_option
@json_option
@handles_errors()
def pull(source: str, profile: str | None, max_bytes: int, root: str, as_json: bool) -> None:
    """Install the catalog pack at SOURCE (an http(s) URL or a file): downloaded with a progress
    bar (resumed after a dropped connection, size-capped), every digest checked against the
    pack's manifest, the catalog verified as `catalog verify` would, then published atomically
    as the profile the manifest names (replacing that profile's catalog, like a build). A
    tampered, truncated or mismatched pack, or one whose manifest names paths or another
    profile, is refused (digest_mismatch) and the root stays as it was; a full disk is
    storage_full."""
    from ..catalog.layout import CatalogPaths
    from ..catalog.pack import pull_catalog

    with transfer_progress("pulling") as on_progress:
        result = pull_catalog(source, root, profile, max_bytes=max_bytes, on_progress=on_progress)
    if as_json:
        emit_json(result)
    else:
        print_manifest_summary(result.manifest, CatalogPaths.of(root, result.manifest.profile))
        stdout.print(f"pulled        {result.pack_bytes:,} bytes from {result.source}", markup=False)
