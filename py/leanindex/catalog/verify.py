"""Checking a catalog's files against its manifest (fail closed)."""

from __future__ import annotations

from .index import index_files
from .layout import DATABASE_FILE, DECLARATIONS_FILE, CatalogPaths
from .manifest import Manifest, file_sha256, read_manifest
from ..errors import ErrorCode, LeanIndexError


def catalog_files() -> list[str]:
    """Every file a complete catalog has, relative to `catalog/<profile>/`."""
    return [DECLARATIONS_FILE, DATABASE_FILE, *index_files()]


def verify_catalog(paths: CatalogPaths) -> Manifest:
    """Recompute the sha256 of every file the manifest lists and compare.

    Every file of a complete catalog must be listed (a manifest that leaves one out is not
    trusted) and the manifest's two headline digests must equal its file list's. Changes that
    keep a file's inode, size and modification time are only seen by this full check, not by the
    engine's per-request stat check. Returns the manifest when every digest matches. Raises
    `LeanIndexError`:
    `catalog_unavailable` when the manifest or a catalog file is missing or unreadable,
    `digest_mismatch` when a file's digest (or the manifest's own environment digest) differs.
    """
    manifest = read_manifest(paths.manifest)
    if manifest.profile != paths.profile:
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{paths.manifest} describes profile {manifest.profile!r}, not {paths.profile!r}",
            {"profile": paths.profile},
        )
    if not paths.catalog_dir.is_dir():
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            f"no catalog for profile {paths.profile!r} at {paths.catalog_dir}; build it with "
            f"`leanindex catalog build --profile {paths.profile}`",
            {"profile": paths.profile, "path": str(paths.catalog_dir)},
        )
    files = manifest.catalog.files
    missing = sorted(set(catalog_files()) - set(files))
    if missing or files.get(DECLARATIONS_FILE) != manifest.catalog.declarations_parquet_sha256 or files.get(
        DATABASE_FILE
    ) != manifest.catalog.catalog_duckdb_sha256:
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{paths.manifest} does not describe a whole catalog"
            + (f" (files not listed: {', '.join(missing)})" if missing else " (its digests disagree)"),
            {"profile": paths.profile, "unlisted": missing},
        )
    for relative, recorded in sorted(files.items()):
        path = paths.catalog_dir / relative
        try:
            computed = file_sha256(path)
        except OSError as error:
            raise LeanIndexError(
                ErrorCode.CATALOG_UNAVAILABLE,
                f"catalog file {path} is unreadable: {error.strerror or error}",
                {"profile": paths.profile, "file": relative},
            ) from None
        if computed != recorded:
            raise LeanIndexError(
                ErrorCode.DIGEST_MISMATCH,
                f"catalog file {relative} of profile {paths.profile!r} does not match its manifest",
                {"profile": paths.profile, "file": relative, "recorded": recorded, "computed": computed},
            )
    return manifest
