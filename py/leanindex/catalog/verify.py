"""Checking a catalog's files against its manifest (fail closed)."""

from __future__ import annotations

from .layout import CatalogPaths
from .manifest import Manifest, file_sha256, read_manifest
from ..errors import ErrorCode, LeanIndexError


def verify_catalog(paths: CatalogPaths) -> Manifest:
    """Recompute the sha256 of every file the manifest lists and compare.

    Returns the manifest when every digest matches. Raises `LeanIndexError`:
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
    for relative, recorded in sorted(manifest.catalog.files.items()):
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
