"""Checking a catalog's files against its manifest (fail closed)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..errors import ErrorCode, LeanIndexError
from .index import index_files
from .layout import DATABASE_FILE, DECLARATIONS_FILE, CatalogPaths
from .manifest import Manifest, file_sha256, read_manifest


def catalog_files() -> list[str]:
    """Every file a complete catalog has, relative to `catalog/<profile>/`."""
    return [DECLARATIONS_FILE, DATABASE_FILE, *index_files()]


def verify_catalog(paths: CatalogPaths) -> Manifest:
    """Recompute the sha256 of every file the served manifest (`catalog/<profile>/manifest.json`)
    lists and compare.

    Every file of a complete catalog must be listed (a manifest that leaves one out is not
    trusted) and the manifest's two headline digests must equal its file list's. Changes that
    keep a file's inode, size and modification time are only seen by this full check, not by the
    engine's per-request stat check. Returns the manifest when every digest matches. Raises
    `LeanIndexError`:
    `catalog_unavailable` when the manifest or a catalog file is missing or unreadable,
    `digest_mismatch` when a file's digest (or the manifest's own environment digest) differs.
    """
    if not paths.catalog_dir.is_dir():
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            f"no catalog for profile {paths.profile!r} at {paths.catalog_dir}; build it with "
            f"`leanindex catalog build --profile {paths.profile}`",
            {"profile": paths.profile, "path": str(paths.catalog_dir)},
        )
    manifest = read_manifest(paths.served_manifest)
    if manifest.profile != paths.profile:
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{paths.served_manifest} describes profile {manifest.profile!r}, not {paths.profile!r}",
            {"profile": paths.profile},
        )
    files = manifest.catalog.files
    missing = sorted(set(catalog_files()) - set(files))
    if missing or files.get(DECLARATIONS_FILE) != manifest.catalog.declarations_parquet_sha256 or files.get(
        DATABASE_FILE
    ) != manifest.catalog.catalog_duckdb_sha256:
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{paths.served_manifest} does not describe a whole catalog"
            + (f" (files not listed: {', '.join(missing)})" if missing else " (its digests disagree)"),
            {"profile": paths.profile, "unlisted": missing},
        )
    # hashlib releases the GIL on large reads, so two threads hash about twice as fast.
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="leanindex-verify") as pool:
        computed = dict(zip(sorted(files), pool.map(_digest_or_error, [paths.catalog_dir / r for r in sorted(files)])))
    for relative, recorded in sorted(files.items()):
        digest = computed[relative]
        if isinstance(digest, OSError):
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE,
                f"catalog file {paths.catalog_dir / relative} is unreadable: {digest.strerror or digest}",
                {"profile": paths.profile, "file": relative},
            )
        if digest != recorded:
            raise LeanIndexError(
                ErrorCode.DIGEST_MISMATCH,
                f"catalog file {relative} of profile {paths.profile!r} does not match its manifest",
                {"profile": paths.profile, "file": relative, "recorded": recorded, "computed": digest},
            )
    return manifest


def _digest_or_error(path: Path) -> str | OSError:
    """A file's sha256, or the error that kept it from being read."""
    try:
        return file_sha256(path)
    except OSError as error:
        return error
