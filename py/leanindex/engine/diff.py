"""Per-declaration changes between two verified catalogs (`lean.catalog.diff`, `leanindex
catalog diff OLDER NEWER`, `GET /v1/environments/{older}/diff/{newer}`): counts of added,
removed, retyped, deprecated and renamed declarations, then pages of them (docs/diff.md).

A query over two catalogs the engine has leased and verified (`Engine.diff`), or two the CLI
named (`open_verified`); pages continue with the one cursor codec of `engine.cursor`, bound to
both catalogs and the categories asked. Each side is named by its profile and root-relative
folder (`catalog/<profile>`), never a server path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..base import Frozen
from ..catalog.layout import CatalogPaths, connect_duckdb
from ..catalog.manifest import Manifest
from ..catalog.verify import verify_catalog
from ..errors import ErrorCode, LeanIndexError
from ..models import ProfileId, display_profile
from .cursor import malformed_cursor, pack_cursor, unpack_cursor

DIFF_CATEGORIES: tuple[str, ...] = ("added", "removed", "retyped", "deprecated", "renamed")
"""The change categories, in the order counts and lists are given (see `diff_declarations`)."""

DEPRECATION_CATEGORIES: tuple[str, ...] = ("deprecated", "renamed")
"""The categories that need both catalogs to record deprecation (`DiffSide.deprecation_recorded`)."""

DIFF_LIMIT_MAX = 500
"""The most changes one page lists."""

_DIFF_CURSOR_VERSION = 1
# Retyped compares printed types with runs of whitespace made one space and the ends trimmed:
# printers break long types at a width, which is layout, not a change of the statement.
_NORMALIZED = "regexp_replace(trim({0}), '\\s+', ' ', 'g')"


ChangeCategory = Literal["added", "removed", "retyped", "deprecated", "renamed"]


class DiffRequest(Frozen):
    """A per-declaration diff of two served profiles (`lean.catalog.diff`, `GET
    /v1/environments/{older}/diff/{newer}`): `older` and `newer` profile ids (case-insensitive),
    the `categories` to list (empty: every recorded one; counts always cover all), `limit`
    changes per page, and `after`, the previous page's `next_cursor`."""

    older: ProfileId
    newer: ProfileId
    categories: list[ChangeCategory] = Field(
        default_factory=list, max_length=len(DIFF_CATEGORIES), description="Categories to list; empty: every recorded one."
    )
    limit: Annotated[int, Field(ge=1, le=DIFF_LIMIT_MAX)] = Field(default=100, description="Most changes in this page.")
    after: Annotated[str, Field(min_length=1, max_length=512)] | None = Field(
        default=None, description="`next_cursor` of the previous page."
    )


class DiffSide(Frozen):
    """One catalog of a diff: its profile, where its catalog is under its root, its identity, its declaration
    count, and whether it records deprecation (`deprecation_recorded`; when false,
    `deprecation_reason` says why)."""

    profile: str = Field(description="Profile id, upper case.")
    catalog: str = Field(description="The catalog compared, relative to its root: `catalog/<profile>`.")
    environment_digest: str = Field(description="sha256 of the manifest's identity fields.")
    lean_version: str = Field(description="Lean version of the environment.")
    source: str = Field(description="`lean`, `doc-gen4` or `stream`.")
    declaration_count: int = Field(description="Declarations in the catalog.")
    deprecation_recorded: bool = Field(description="The catalog records deprecation.")
    deprecation_reason: str | None = Field(default=None, description="Why it does not; null when it does.")


class DeclarationChange(Frozen):
    """One declaration in one change category.

    `kind` and `module` are the newer catalog's (the older one's for `removed`). `type_before`
    and `type_after` are the printed types in the older and newer catalog (null on the side
    that lacks the name). `deprecated_to` and `deprecated_since` are the newer catalog's
    deprecation entry (Lean's `DeprecationEntry.newName?` and `since?`) for `deprecated` and
    `renamed`, and the older catalog's for `removed` (what a removed deprecated alias pointed
    to); null otherwise or when not recorded.
    """

    category: ChangeCategory = Field(description="The change.")
    name: str = Field(description="Full name as Lean prints it.")
    kind: str = Field(description="Kernel kind.")
    module: str | None = Field(description="Declaring module; null when unknown.")
    type_before: str | None = Field(description="Printed type in the older catalog; null when absent there.")
    type_after: str | None = Field(description="Printed type in the newer catalog; null when absent there.")
    deprecated_to: str | None = Field(default=None, description="`@[deprecated]` replacement name; null when none or not recorded.")
    deprecated_since: str | None = Field(default=None, description="`@[deprecated]` `since` text; null when none or not recorded.")

    def details(self) -> list[str]:
        """What a one-line rendering adds after the name: `type_before -> type_after` for
        `retyped`, `deprecated_to X since Y` (`-` for a part Lean did not record) when there is a
        deprecation entry; empty otherwise."""
        details = []
        if self.category == "retyped":
            details.append(f"{self.type_before} -> {self.type_after}")
        if self.deprecated_to is not None or self.deprecated_since is not None:
            details.append(f"deprecated_to {self.deprecated_to or '-'} since {self.deprecated_since or '-'}")
        return details


class DeclarationDiff(Frozen):
    """What changed from the `older` to the `newer` catalog, per declaration.

    `counts` has every category of `DIFF_CATEGORIES`; a count is null when the category cannot
    be decided (`deprecated` and `renamed` when a side does not record deprecation) and
    `not_recorded` then says why, per category. `changes` lists at most `limit` changes of the
    requested `categories` (categories in `DIFF_CATEGORIES` order, each in `Name.lt` order);
    `next_cursor` continues the list (null on the last page). `complete` is true when this page
    ends the list.
    """

    older: DiffSide = Field(description="The older catalog.")
    newer: DiffSide = Field(description="The newer catalog.")
    counts: dict[str, int | None] = Field(description="Changes per category, all pages; null when undecidable.")
    not_recorded: dict[str, str] = Field(default_factory=dict, description="Category -> why its count is null.")
    categories: list[str] = Field(description="The categories listed.")
    limit: int = Field(description="Most changes per page.")
    changes: list[DeclarationChange] = Field(description="This page's changes.")
    next_cursor: str | None = Field(description="Pass as `after` for the next page; null on the last.")
    complete: bool = Field(description="This page ends the list.")


def _columns(con: Any, parquet: Path) -> set[str]:
    rows = con.execute("SELECT name FROM parquet_schema($p)", {"p": str(parquet)}).fetchall()
    return {row[0] for row in rows}


def diff_side(paths: CatalogPaths, manifest: Manifest, columns: set[str]) -> DiffSide:
    """The `DiffSide` of a verified catalog. Deprecation is recorded when the source does not
    list `is_deprecated` as approximate (doc-gen4's data carries no deprecation attribute) and
    the table has the `deprecated_to` and `deprecated_since` columns (catalogs built before
    they existed lack them)."""
    reason = None
    if "is_deprecated" in manifest.source.approximate_fields:
        reason = f"{display_profile(manifest.profile)} comes from {manifest.source.kind}, whose data does not record deprecation"
    elif not {"deprecated_to", "deprecated_since"} <= columns:
        reason = f"{display_profile(manifest.profile)} was built before catalogs recorded deprecated_to and deprecated_since; rebuild it"
    return DiffSide(
        profile=display_profile(manifest.profile),
        catalog=f"catalog/{paths.profile}",
        environment_digest=manifest.environment_digest,
        lean_version=manifest.lean.version,
        source=manifest.source.kind,
        declaration_count=manifest.catalog.declaration_count,
        deprecation_recorded=reason is None,
        deprecation_reason=reason,
    )


def _cursor_binding(older: Manifest, newer: Manifest, categories: list[str]) -> dict[str, str]:
    return {
        "o": older.catalog.declarations_parquet_sha256[:16],
        "n": newer.catalog.declarations_parquet_sha256[:16],
        "q": ",".join(categories),
    }


def _encode_cursor(binding: dict[str, str], category: int, pos: int) -> str:
    return pack_cursor({"v": _DIFF_CURSOR_VERSION, **binding, "k": category, "p": pos})


def _decode_cursor(cursor: str, binding: dict[str, str], categories: int) -> tuple[int, int]:
    """(category index, position) a cursor continues after; `invalid_request` with
    `details.field: after` for a malformed cursor or one from other catalogs or categories."""
    payload = unpack_cursor(cursor, _DIFF_CURSOR_VERSION, {"k": int, "p": int, **dict.fromkeys(binding)})
    category, pos = payload["k"], payload["p"]
    if not (0 <= category < categories and pos >= 0):
        raise malformed_cursor()
    if payload["o"] != binding["o"] or payload["n"] != binding["n"]:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "cursor belongs to other catalogs (one of them was rebuilt or differs); start the diff again",
            {"field": "after"},
        )
    if payload["q"] != binding["q"]:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            "cursor belongs to a diff of other categories; send the same categories as the request that returned it",
            {"field": "after"},
        )
    return category, pos


def _check_categories(categories: list[str] | None) -> list[str]:
    if categories is None or len(categories) == 0:
        return list(DIFF_CATEGORIES)
    unknown = [c for c in categories if c not in DIFF_CATEGORIES]
    if unknown:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"unknown change categories: {', '.join(unknown)} (known: {', '.join(DIFF_CATEGORIES)})",
            {"field": "categories", "known": list(DIFF_CATEGORIES)},
        )
    return [c for c in DIFF_CATEGORIES if c in categories]


# One row per name of either catalog; the category flags follow the rules of `diff_declarations`.
_CHANGES_SQL = """
CREATE TEMP TABLE changes AS
WITH o AS (SELECT pos, name, kind, module, type, is_deprecated, {o_to} AS deprecated_to, {o_since} AS deprecated_since
           FROM read_parquet($older)),
     n AS (SELECT pos, name, kind, module, type, is_deprecated, {n_to} AS deprecated_to, {n_since} AS deprecated_since
           FROM read_parquet($newer)),
     j AS (SELECT coalesce(n.name, o.name) AS name, o.pos AS opos, n.pos AS npos,
                  coalesce(n.kind, o.kind) AS kind, CASE WHEN n.pos IS NULL THEN o.module ELSE n.module END AS module,
                  o.type AS type_before, n.type AS type_after,
                  o.is_deprecated AS odep, n.is_deprecated AS ndep,
                  o.deprecated_to AS oto, o.deprecated_since AS osince,
                  n.deprecated_to AS nto, n.deprecated_since AS nsince
           FROM o FULL OUTER JOIN n ON o.name = n.name)
SELECT j.*,
       opos IS NULL AS added,
       npos IS NULL AS removed,
       -- CASE, not AND: DuckDB then normalizes only the types that differ as stored (most do not).
       CASE WHEN opos IS NULL OR npos IS NULL OR type_before = type_after THEN false
            ELSE {norm_before} <> {norm_after} END AS retyped,
       (opos IS NOT NULL AND npos IS NOT NULL AND ndep AND NOT odep) AS newly_deprecated
FROM j
"""


def diff_declarations(
    older: tuple[CatalogPaths, Manifest],
    newer: tuple[CatalogPaths, Manifest],
    categories: list[str] | None = None,
    limit: int = 100,
    after: str | None = None,
) -> DeclarationDiff:
    """Per-declaration changes from `older` to `newer`, two catalogs already verified against
    their manifests (each a `(paths, manifest)`), compared by full name over their
    `declarations.parquet` tables with DuckDB.

    The rules (docs/diff.md), for a name N:
    - added: N is in `newer` only; removed: N is in `older` only.
    - retyped: N is in both and its printed type differs after whitespace normalization (runs
      of whitespace become one space, ends trimmed); any other difference counts.
    - renamed: N is in both, not deprecated in `older`, deprecated in `newer` with a
      replacement (`deprecated_to`, Lean's `DeprecationEntry.newName?` of the `@[deprecated]`
      attribute, lean4 `src/Lean/Linter/Deprecated.lean`) that is added: Lean's rename pattern
      `@[deprecated new (since := "...")] theorem old := new` keeps the old name as an alias.
    - deprecated: N is in both, not deprecated in `older`, deprecated in `newer`, and not
      renamed (no replacement, or one that exists in `older` too).
    added, removed and the names in both partition the names; retyped, deprecated and renamed
    are among the names in both, deprecated and renamed exclusive (a renamed alias may also be
    retyped). deprecated and renamed need both sides to record deprecation; otherwise their
    counts are null with the reason in `not_recorded`.

    `categories` selects the lists (default all; counts always cover all), `limit` (1 to
    `DIFF_LIMIT_MAX`) bounds a page, `after` is the `next_cursor` of the previous page. Raises
    `LeanIndexError(invalid_request)` for an unknown category, a bad limit or cursor (details
    name the field), and `not_recorded` when a requested category needs deprecation that a side
    does not record. Takes about a second on a Mathlib-size pair (benchmarks/diff_bench.py).
    """
    if type(limit) is not int or not 1 <= limit <= DIFF_LIMIT_MAX:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST, f"limit must be an integer from 1 to {DIFF_LIMIT_MAX}", {"field": "limit"}
        )
    wanted = _check_categories(categories)
    (old_paths, old_manifest), (new_paths, new_manifest) = older, newer
    old_parquet, new_parquet = old_paths.declarations.resolve(), new_paths.declarations.resolve()
    con = connect_duckdb()
    try:
        old_columns, new_columns = _columns(con, old_parquet), _columns(con, new_parquet)
        sides = diff_side(old_paths, old_manifest, old_columns), diff_side(new_paths, new_manifest, new_columns)
        recorded = all(side.deprecation_recorded for side in sides)
        not_recorded = {} if recorded else {
            category: "; ".join(side.deprecation_reason for side in sides if side.deprecation_reason)
            for category in DEPRECATION_CATEGORIES
        }
        refused = [c for c in wanted if c in not_recorded] if categories else []
        if refused:
            raise LeanIndexError(
                ErrorCode.NOT_RECORDED,
                f"cannot list {', '.join(refused)}: {not_recorded[refused[0]]}",
                {"field": "categories", "categories": refused},
            )
        wanted = [c for c in wanted if c not in not_recorded]
        binding = _cursor_binding(old_manifest, new_manifest, wanted)
        start = _decode_cursor(after, binding, len(wanted)) if after is not None else None

        def column(columns: set[str], name: str) -> str:
            return name if name in columns else "NULL::VARCHAR"

        con.execute(
            _CHANGES_SQL.format(
                o_to=column(old_columns, "deprecated_to"), o_since=column(old_columns, "deprecated_since"),
                n_to=column(new_columns, "deprecated_to"), n_since=column(new_columns, "deprecated_since"),
                norm_before=_NORMALIZED.format("type_before"), norm_after=_NORMALIZED.format("type_after"),
            ),
            {"older": str(old_parquet), "newer": str(new_parquet)},
        )
        con.execute(
            "CREATE TEMP TABLE added_names AS SELECT name FROM changes WHERE added;"
            "ALTER TABLE changes ADD COLUMN renamed BOOLEAN;"
            "UPDATE changes SET renamed = newly_deprecated AND coalesce(nto IN (SELECT name FROM added_names), false);"
        )
        row = con.execute(
            "SELECT count(*) FILTER (added), count(*) FILTER (removed), count(*) FILTER (retyped),"
            " count(*) FILTER (newly_deprecated AND NOT renamed), count(*) FILTER (renamed) FROM changes"
        ).fetchone()
        assert row is not None
        counts = {c: (None if c in not_recorded else int(n)) for c, n in zip(DIFF_CATEGORIES, row, strict=True)}
        changes, next_cursor = _page(con, wanted, limit, start, binding)
    finally:
        con.close()
    return DeclarationDiff(
        older=sides[0],
        newer=sides[1],
        counts=counts,
        not_recorded=not_recorded,
        categories=wanted,
        limit=limit,
        changes=changes,
        next_cursor=next_cursor,
        complete=next_cursor is None,
    )


_CATEGORY_FILTER = {
    "added": "added",
    "removed": "removed",
    "retyped": "retyped",
    "deprecated": "newly_deprecated AND NOT renamed",
    "renamed": "renamed",
}


def _page(
    con: Any, wanted: list[str], limit: int, start: tuple[int, int] | None, binding: dict[str, str]
) -> tuple[list[DeclarationChange], str | None]:
    """One page of changes: categories in order, each by its `Name.lt` position (the older
    catalog's for removed, the newer's otherwise), after the cursor's (category, position)."""
    changes: list[DeclarationChange] = []
    last: tuple[int, int] | None = None
    for index in range(start[0] if start else 0, len(wanted)):
        category = wanted[index]
        pos_column = "opos" if category == "removed" else "npos"
        after_pos = start[1] if start and index == start[0] else -1
        replacement = "oto, osince" if category == "removed" else (
            "nto, nsince" if category in DEPRECATION_CATEGORIES else "NULL, NULL"
        )
        rows = con.execute(
            f"SELECT {pos_column}, name, kind, module, type_before, type_after, {replacement} FROM changes"
            f" WHERE {_CATEGORY_FILTER[category]} AND {pos_column} > $after ORDER BY {pos_column} LIMIT $n",
            {"after": after_pos, "n": limit - len(changes) + 1},
        ).fetchall()
        for pos, name, kind, module, before, after_type, to, since in rows:
            if len(changes) == limit:
                assert last is not None
                return changes, _encode_cursor(binding, *last)
            changes.append(
                DeclarationChange(
                    category=category, name=name, kind=kind, module=module, type_before=before,
                    type_after=after_type, deprecated_to=to, deprecated_since=since,
                )
            )
            last = (index, pos)
    return changes, None


def open_verified(root: str | Path, catalog: str) -> tuple[CatalogPaths, Manifest]:
    """A catalog named on the command line, verified against its manifest: a catalog folder
    (`ROOT/catalog/<profile>`, holding `manifest.json`) or a profile id under `root`. Raises
    `LeanIndexError`: `invalid_request` for a folder that is not a catalog folder or a bad id,
    `catalog_unavailable` or `digest_mismatch` from `verify_catalog`."""
    folder = Path(catalog)
    if folder.is_dir():
        absolute = folder.absolute()
        paths = CatalogPaths(absolute.parent.parent, absolute.name)
        if absolute.parent.name != "catalog" or not paths.served_manifest.is_file():
            raise LeanIndexError(
                ErrorCode.INVALID_REQUEST,
                f"{catalog} is not a catalog folder (ROOT/catalog/<profile> with a manifest.json); give one or a profile id",
                {"catalog": catalog},
            )
        paths = CatalogPaths.of(paths.root, paths.profile)
    else:
        paths = CatalogPaths.of(root, catalog)
    return paths, verify_catalog(paths)
