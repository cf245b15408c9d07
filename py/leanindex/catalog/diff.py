"""Compare a freshly built manifest (and catalog) with a committed one: what a toolchain or
Mathlib bump changed.

The committed manifest comes from git (`<ref>:manifests/<profile>.json`, `HEAD` by default) or
from a file. A manifest says who the environment is and how many declarations it has, not
their names, so added and removed names need the older catalog too (its folder or its
`declarations.parquet`); without one the names part is left out and says so.

A diff is *identical* when the environment digests, the declaration counts and the sha256 of
`declarations.parquet` (the canonical table; its writer is pinned) all agree; anything else,
including a missing committed manifest, is drift.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pydantic import Field

from ..base import Frozen
from ..errors import ErrorCode, LeanIndexError
from .layout import DECLARATIONS_FILE, CatalogPaths, connect_duckdb
from .manifest import Manifest, read_manifest
from .verify import verify_catalog


class FieldChange(Frozen):
    """One identity field that differs (`field` is a dotted path, e.g. `lean.githash` or
    `packages.mathlib`; a package absent on one side is null there)."""

    field: str
    before: Any
    after: Any


class CountChange(Frozen):
    """A count before (committed; null when there is no committed manifest) and after (fresh)."""

    before: int | None
    after: int


class NamesDiff(Frozen):
    """Declarations present on one side only, in `Name.lt` order, the first `limit` of each."""

    against_catalog: str
    added_count: int
    removed_count: int
    added: list[str]
    removed: list[str]
    limit: int


class CatalogDiff(Frozen):
    """The result of `leanindex catalog diff`: `identical` is false on any drift (see the
    module docstring); `committed` describes where the committed manifest came from and
    `committed_found` whether it existed there."""

    profile: str
    committed: str
    committed_found: bool
    identical: bool
    environment_digest: FieldChange
    identity_changes: list[FieldChange] = Field(default_factory=list)
    counts: dict[str, CountChange]
    declarations_parquet_changed: bool
    names: NamesDiff | None = None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    except OSError as error:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"cannot run git: {error}") from None


def committed_manifest(paths: CatalogPaths, against: str | None) -> tuple[str, Manifest | None]:
    """The committed manifest of `paths.profile` and a description of where it came from.

    `against` is a manifest file path, or a git revision (default `HEAD`) of the repository
    holding `paths.root`, read at `manifests/<profile>.json` relative to the root. Returns
    `(description, None)` when the revision has no such file. Raises `LeanIndexError`:
    `invalid_request` when `against` is neither a file nor a revision (or git fails),
    `catalog_unavailable`/`digest_mismatch` for an invalid manifest.
    """
    if against is not None and Path(against).is_file():
        return str(Path(against)), read_manifest(Path(against))
    revision = against or "HEAD"
    relative = f"./manifests/{paths.profile}.json"
    where = f"git {revision}:manifests/{paths.profile}.json"
    check = _git(paths.root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if check.returncode != 0:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"{revision!r} is neither a manifest file nor a git revision of {paths.root}"
            + (f" ({check.stderr.strip()})" if check.stderr.strip() else ""),
            {"against": revision},
        )
    shown = _git(paths.root, "show", f"{revision}:{relative}")
    if shown.returncode != 0:
        return where, None
    with tempfile.TemporaryDirectory(prefix="leanindex-diff-") as scratch:
        copy = Path(scratch) / f"{paths.profile}.json"
        copy.write_text(shown.stdout, encoding="utf-8")
        try:
            return where, read_manifest(copy)
        except LeanIndexError as error:
            error.message = error.message.replace(str(copy), where)
            error.args = (error.message,)
            raise


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else key, out)
    else:
        out[prefix] = value


def _identity_fields(manifest: Manifest) -> dict[str, Any]:
    identity = manifest.identity()
    packages = identity.pop("packages")
    flat: dict[str, Any] = {}
    _flatten(identity, "", flat)
    if packages is None:
        flat["packages"] = None
    else:
        for package in packages:
            flat[f"packages.{package['name']}"] = package["rev"]
    return flat


def identity_changes(before: Manifest, after: Manifest) -> list[FieldChange]:
    """Every identity field (dotted path, packages by name) whose value differs, sorted by field."""
    old, new = _identity_fields(before), _identity_fields(after)
    return [
        FieldChange(field=key, before=old.get(key), after=new.get(key))
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key)
    ]


def _parquet_of(catalog: Path) -> Path:
    path = catalog / DECLARATIONS_FILE if catalog.is_dir() else catalog
    if not path.is_file():
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"no {DECLARATIONS_FILE} at {catalog} (give a catalog folder or the Parquet file)",
            {"against_catalog": str(catalog)},
        )
    return path


def names_diff(fresh: Path, older: Path, limit: int) -> NamesDiff:
    """Names in `fresh` but not `older` (added) and the reverse (removed), each in `Name.lt`
    order (the tables' `pos`), the first `limit` listed and all counted. Both are
    `declarations.parquet` files or catalog folders."""
    new, old = _parquet_of(fresh), _parquet_of(older)
    con = connect_duckdb()
    try:

        def one_side(a: Path, b: Path) -> tuple[int, list[str]]:
            query = "FROM read_parquet($a) x ANTI JOIN read_parquet($b) y USING (name)"
            params = {"a": str(a), "b": str(b)}
            row = con.execute(f"SELECT count(*) {query}", params).fetchone()
            assert row is not None
            names = [r[0] for r in con.execute(f"SELECT x.name {query} ORDER BY x.pos LIMIT {int(limit)}", params).fetchall()]
            return row[0], names

        added_count, added = one_side(new, old)
        removed_count, removed = one_side(old, new)
    finally:
        con.close()
    return NamesDiff(
        against_catalog=str(old),
        added_count=added_count,
        removed_count=removed_count,
        added=added,
        removed=removed,
        limit=limit,
    )


def diff_catalog(
    root: str | Path,
    profile: str,
    against: str | None = None,
    against_catalog: Path | None = None,
    limit: int = 20,
) -> CatalogDiff:
    """Compare `ROOT/manifests/<profile>.json` (the fresh build) with the committed manifest
    (see `committed_manifest`) and, when `against_catalog` is given, the fresh catalog's names
    with that older catalog's (the fresh catalog is verified against its manifest first).

    Raises `LeanIndexError`: `catalog_unavailable` when the fresh manifest is missing,
    `digest_mismatch` when it or the fresh catalog fails verification, `invalid_request` for a
    bad `against` or `against_catalog`.
    """
    paths = CatalogPaths.of(root, profile)
    fresh = verify_catalog(paths) if against_catalog is not None else read_manifest(paths.manifest)
    where, committed = committed_manifest(paths, against)
    counts = {
        "declarations": CountChange(before=committed.catalog.declaration_count if committed else None, after=fresh.catalog.declaration_count),
        "visible": CountChange(before=committed.catalog.visible_count if committed else None, after=fresh.catalog.visible_count),
    }
    parquet_changed = committed is None or (
        committed.catalog.declarations_parquet_sha256 != fresh.catalog.declarations_parquet_sha256
    )
    names = names_diff(paths.declarations, against_catalog, limit) if against_catalog is not None else None
    changes = identity_changes(committed, fresh) if committed is not None else []
    identical = (
        committed is not None
        and committed.environment_digest == fresh.environment_digest
        and all(c.before == c.after for c in counts.values())
        and not parquet_changed
        and (names is None or names.added_count == names.removed_count == 0)
    )
    return CatalogDiff(
        profile=paths.profile,
        committed=where,
        committed_found=committed is not None,
        identical=identical,
        environment_digest=FieldChange(
            field="environment_digest",
            before=committed.environment_digest if committed else None,
            after=fresh.environment_digest,
        ),
        identity_changes=changes,
        counts=counts,
        declarations_parquet_changed=parquet_changed,
        names=names,
    )



# --- Per-declaration changes between two verified catalogs -----------------------------------
