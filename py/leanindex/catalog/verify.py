"""Checking a catalog's files against its manifest (fail closed)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ErrorCode, LeanIndexError
from ..small_files import read_small_json
from .files import (
    STALL_S,
    CatalogFile,
    CatalogFolder,
    DeadlineExceeded,
    FileChanged,
    run_with_deadline,
)
from .index import INDEX_DIR
from .layout import (
    DATABASE_FILE,
    DATABASE_WAL_FILE,
    DECLARATIONS_FILE,
    MANIFEST_FILE,
    CatalogPaths,
    catalog_files,
    manifest_label,
)
from .manifest import Manifest, parse_manifest, write_atomically

log = logging.getLogger("leanindex.catalog")

#: `ROOT/catalog/.verified/<profile>.json`: what the last verification that read a profile's
#: files found (`verified_catalog(reuse=True)`).
VERIFIED_FOLDER = ".verified"
#: The largest verification record read (bytes); a real one is a few KiB.
MAX_RECORD_BYTES = 1 << 20

#: The index file whose length is the declaration count and whose false entries are the
#: visible declarations (`visible_count` is checked against it).
HIDDEN_FILE = f"{INDEX_DIR}/hidden.npy"


@dataclass(frozen=True)
class VerifiedCatalog:
    """A manifest whose catalog verified, and the stamps (`files.catalog_stamps`' shape) of the
    very files that were read: the manifest, the link target, each catalog file, as they were
    when opened. A later `catalog_stamps` that differs means something changed since."""

    manifest: Manifest
    stamps: dict[str, object]


def verify_catalog(paths: CatalogPaths) -> Manifest:
    """The served manifest (`catalog/<profile>/manifest.json`) of a catalog that verifies; see
    `verified_catalog` for the checks and errors."""
    return verified_catalog(paths).manifest


def verified_catalog(paths: CatalogPaths, reuse: bool = False) -> VerifiedCatalog:
    """Recompute the sha256 of every file the served manifest lists and compare; check its
    counts against the catalog's own files.

    With `reuse` (opening a catalog to serve it), a file is not read again when the
    verification record (`record_path`) says an earlier verification found it with the digest
    the manifest lists and the file's stamp is the same now: device, inode, type, size,
    modification and status-change time (`files.FileStamp`; the change time cannot be set back,
    so an edit in place is re-read). The record counts only for the same link target and the same
    manifest stamp; any other file is hashed as without it. A verification that hashed anything
    writes the record again (best effort: a root it cannot write to is logged and verifies in
    full each time). `leanindex catalog verify`, packs and the doctor read every file, and a file
    found not to match its digest removes the record. The record is trusted as the catalog folder
    is: whoever can write `catalog/.verified/` can also write the catalog.

    Every file is opened as hostile input (`files.CatalogFolder`: regular files only, no link
    inside the build folder, read within its size, given up after `files.STALL_S` seconds
    without progress), so a FIFO or device in a file's place is refused at once. Every file of
    a complete catalog must be listed (a manifest that leaves one out is not trusted; one that
    lists another name is refused by `parse_manifest`), the manifest's two headline digests must equal
    its file list's, `declaration_count` must equal the row count of `declarations.parquet`
    (its footer) and the length of `index/hidden.npy`, and `visible_count` the number of
    false entries of the latter; the folder must hold no DuckDB write-ahead log
    (`layout.DATABASE_WAL_FILE`). Messages and details name the profile and catalog-relative
    file names, never a server path. Raises `LeanIndexError`:
    `catalog_unavailable` when the catalog, the manifest or a catalog file is missing,
    unreadable, no regular file, changed while read, or too slow;
    `digest_mismatch` when a file's digest, the manifest's own digests, its profile or a count
    (`details.field`) differs. The counts are not read again when every file is as the record
    says (the verification that wrote it checked them against these very files).
    """
    with CatalogFolder(paths) as folder:
        manifest_file = folder.open_manifest()
        manifest = _read_manifest(paths, folder, manifest_file)
        _check_whole(paths, manifest)
        if folder.holds(DATABASE_WAL_FILE):
            raise folder.refusal(
                DATABASE_WAL_FILE,
                "is a DuckDB write-ahead log, which no digest covers and a read-only open would replay into what is served",
                ErrorCode.DIGEST_MISMATCH,
            )
        files = manifest.catalog.files
        opened = {relative: folder.open(relative) for relative in sorted(files)}
        known = _recorded(paths, folder.link, manifest_file.stamp) if reuse else {}
        # A file whose stamp is what a verification recorded with the digest the manifest lists.
        unchanged = {r: files[r] for r, file in opened.items() if known.get(r) == [*file.stamp, files[r]]}
        computed = {**unchanged, **folder.digests([file for r, file in opened.items() if r not in unchanged])}
        for relative, recorded in sorted(files.items()):
            if computed[relative] != recorded:
                _forget(paths)  # whatever vouched for this catalog's files vouches no more
                raise LeanIndexError(
                    ErrorCode.DIGEST_MISMATCH,
                    f"catalog file {relative} of profile {paths.profile!r} does not match its manifest",
                    {"profile": paths.profile, "file": relative, "recorded": recorded, "computed": computed[relative]},
                )
        if len(unchanged) < len(opened):
            # With every file as a verification that checked the counts recorded it, they hold.
            _check_counts(paths, folder, manifest, opened)
        stamps: dict[str, object] = {"manifest": manifest_file.stamp, "link": folder.link, DATABASE_WAL_FILE: None}
        stamps.update((relative, file.stamp) for relative, file in opened.items())
        if reuse and len(unchanged) < len(opened):
            _record(paths, folder.link, manifest_file.stamp, {r: [*file.stamp, files[r]] for r, file in opened.items()})
    return VerifiedCatalog(manifest, stamps)


def record_path(paths: CatalogPaths) -> Path:
    """`ROOT/catalog/.verified/<profile>.json`, the profile's verification record."""
    return paths.root / "catalog" / VERIFIED_FOLDER / f"{paths.profile}.json"


def _recorded(paths: CatalogPaths, link: str | None, manifest_stamp: tuple[int, ...]) -> dict[str, list[object]]:
    """The record's entries (relative name -> [*stamp, digest]) when it was written for this link
    target and manifest stamp; else none. A record that is not a small regular JSON file of that
    shape is ignored (logged): the files are then all hashed."""
    if paths.staged is not None:
        return {}
    try:
        data = read_small_json(record_path(paths), MAX_RECORD_BYTES)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.warning("verification record of profile %r unreadable (%s): every file is hashed", paths.profile, error)
        return {}
    if not isinstance(data, dict) or data.get("link") != link or data.get("manifest") != list(manifest_stamp) or not isinstance(data.get("files"), dict):
        return {}
    return data["files"]


def _forget(paths: CatalogPaths) -> None:
    """Remove the profile's verification record (a file found not to match its digest)."""
    if paths.staged is None:
        try:
            record_path(paths).unlink(missing_ok=True)
        except OSError as error:
            log.warning("verification record of profile %r not removed (%s)", paths.profile, error.strerror)


def _record(paths: CatalogPaths, link: str | None, manifest_stamp: tuple[int, ...], entries: dict[str, list[object]]) -> None:
    """Write the verification record (`record_path`) of a catalog that just verified."""
    if paths.staged is not None:
        return
    try:
        write_atomically(record_path(paths), json.dumps({"link": link, "manifest": list(manifest_stamp), "files": entries}, sort_keys=True))
    except LeanIndexError as error:
        log.info("verification record of profile %r not written (%s): the next open hashes every file again", paths.profile, error.code.value)


def _read_manifest(paths: CatalogPaths, folder: CatalogFolder, file: CatalogFile) -> Manifest:
    """The served manifest, read from `file` (already checked: a regular file of bounded size)
    within `STALL_S` seconds and validated by `parse_manifest` (named by its root-relative
    label, with the profile in `details`)."""
    label = manifest_label(paths.served_manifest)

    def read() -> str:
        with file.reader() as handle:
            data = handle.read(file.stat.st_size + 1)
        if len(data) != file.stat.st_size:
            raise FileChanged(0, "it changed while it was read")
        return data.decode("utf-8")

    try:
        text = run_with_deadline(read, STALL_S)
    except DeadlineExceeded:
        raise folder.refusal(MANIFEST_FILE, f"could not be read within {STALL_S:g} s") from None
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE, f"cannot read {label}: {reason}", {"profile": paths.profile, "manifest": label}
        ) from None
    return parse_manifest(text, label, {"profile": paths.profile, "manifest": label})


def _check_whole(paths: CatalogPaths, manifest: Manifest) -> None:
    """The manifest is about this profile and lists a whole catalog (`parse_manifest` refused
    any key that is not a catalog file's name)."""
    about = f"the manifest ({MANIFEST_FILE}) of profile {paths.profile!r}"
    if manifest.profile != paths.profile:
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{about} describes profile {manifest.profile!r}",
            {"profile": paths.profile, "file": MANIFEST_FILE},
        )
    files = manifest.catalog.files
    missing = sorted(set(catalog_files()) - set(files))
    if missing or files.get(DECLARATIONS_FILE) != manifest.catalog.declarations_parquet_sha256 or files.get(
        DATABASE_FILE
    ) != manifest.catalog.catalog_duckdb_sha256:
        # A catalog built before a file was added to the layout lacks it too: say how to rebuild.
        rebuild = (
            f"; a catalog built by an earlier leanindex (this one was built by {manifest.catalog.builder_version}) lacks them:"
            " build it again with this version (`leanindex catalog build` or `import-docgen`; `leanindex demo` for the embedded core)"
        )
        raise LeanIndexError(
            ErrorCode.DIGEST_MISMATCH,
            f"{about} does not describe a whole catalog"
            + (f" (files not listed: {', '.join(missing)}){rebuild}" if missing else " (its digests disagree)"),
            {"profile": paths.profile, "unlisted": missing, "builder_version": manifest.catalog.builder_version},
        )


def _check_counts(paths: CatalogPaths, folder: CatalogFolder, manifest: Manifest, opened: dict[str, CatalogFile]) -> None:
    """`declaration_count` and `visible_count` against the files just verified, read from the
    same open files: the Parquet footer's row count and `index/hidden.npy` (one byte per
    declaration)."""

    # Imported here: an open that finds every file as recorded checks no counts, and a CLI
    # search then loads no Parquet reader.
    import pyarrow as pa
    import pyarrow.parquet as pq

    def count() -> tuple[int, int, int]:
        with opened[DECLARATIONS_FILE].reader() as handle:
            rows = pq.read_metadata(handle).num_rows
        with opened[HIDDEN_FILE].reader() as handle:
            hidden = np.lib.format.read_array(handle, allow_pickle=False)
        if hidden.ndim != 1 or hidden.dtype != np.bool_:
            raise ValueError(f"an array of {hidden.dtype} and shape {hidden.shape}, not a flag per declaration")
        return rows, len(hidden), len(hidden) - int(np.count_nonzero(hidden))

    try:
        rows, flagged, visible = run_with_deadline(count, STALL_S)
    except DeadlineExceeded:
        raise folder.refusal(f"{DECLARATIONS_FILE} or {HIDDEN_FILE}", f"could not be read within {STALL_S:g} s") from None
    except (OSError, ValueError, pa.ArrowException) as error:
        raise LeanIndexError(
            ErrorCode.CATALOG_UNAVAILABLE,
            f"the counts of profile {paths.profile!r} cannot be read from {DECLARATIONS_FILE} and {HIDDEN_FILE}: {error}",
            {"profile": paths.profile},
        ) from None
    recorded = manifest.catalog
    for field, claimed, actual, source in (
        ("declaration_count", recorded.declaration_count, rows, DECLARATIONS_FILE),
        ("declaration_count", recorded.declaration_count, flagged, HIDDEN_FILE),
        ("visible_count", recorded.visible_count, visible, HIDDEN_FILE),
    ):
        if claimed != actual:
            raise LeanIndexError(
                ErrorCode.DIGEST_MISMATCH,
                f"the manifest of profile {paths.profile!r} records {field} {claimed}, but its {source} holds {actual}",
                {"profile": paths.profile, "field": field, "file": source, "recorded": claimed, "computed": actual},
            )
