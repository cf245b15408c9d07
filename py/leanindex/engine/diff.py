"""Per-declaration changes between two verified catalogs (`lean.catalog.diff`, `leanindex
catalog diff OLDER NEWER`, `GET /v1/environments/{older}/diff/{newer}`): first the module gaps
(modules held by one catalog only, the missing and host modules the manifests record, and the
declarations counted under them), then counts of added, removed, retyped, reprinted, deprecated
and renamed declarations, then pages of them (docs/diff.md).

A query over two catalogs the engine has leased and verified (`Engine.diff`), or two the CLI
named (`open_verified`); pages continue with the one cursor codec of `engine.cursor`, bound to
both catalogs and the categories asked. Each side is named by its profile and root-relative
folder (`catalog/<profile>`), never a server path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, cast

import numpy as np
import pyarrow as pa
from pydantic import Field

from ..base import Frozen
from ..catalog.index import INDEX_DIR
from ..catalog.layout import CatalogPaths, connect_duckdb
from ..catalog.manifest import Manifest
from ..catalog.verify import verify_catalog
from ..errors import ErrorCode, LeanIndexError
from ..models import ProfileId, display_profile
from .cursor import malformed_cursor, pack_cursor, unpack_cursor

DIFF_CATEGORIES: tuple[str, ...] = ("added", "removed", "retyped", "reprinted", "deprecated", "renamed")
"""The change categories, in the order counts and lists are given (see `diff_declarations`)."""

DEPRECATION_CATEGORIES: tuple[str, ...] = ("deprecated", "renamed")
"""The categories that need both catalogs to record deprecation (`DiffSide.deprecation_recorded`)."""

DIFF_LIMIT_MAX = 500
"""The most changes one page lists."""

_DIFF_CURSOR_VERSION = 1
# Retyped compares printed types with runs of whitespace made one space and the ends trimmed:
# printers break long types at a width, which is layout, not a change of the statement.
_NORMALIZED = "regexp_replace(trim({0}), '\\s+', ' ', 'g')"


ChangeCategory = Literal["added", "removed", "retyped", "reprinted", "deprecated", "renamed"]


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
    """One catalog of a diff: its profile, where its catalog is under its root, its identity, its
    declaration and module counts, whether it records deprecation (`deprecation_recorded`; when
    false, `deprecation_reason` says why), and the gaps its manifest records (`missing_modules`,
    `host_modules`: `Manifest.gaps`)."""

    profile: str = Field(description="Profile id, upper case.")
    catalog: str = Field(description="The catalog compared, relative to its root: `catalog/<profile>`.")
    environment_digest: str = Field(description="sha256 of the manifest's identity fields.")
    lean_version: str = Field(description="Lean version of the environment.")
    source: str = Field(description="`lean`, `doc-gen4` or `stream`.")
    declaration_count: int = Field(description="Declarations in the catalog.")
    module_count: int = Field(description="Modules holding at least one of its declarations.")
    deprecation_recorded: bool = Field(description="The catalog records deprecation.")
    deprecation_reason: str | None = Field(default=None, description="Why it does not; null when it does.")
    missing_modules: list[str] = Field(
        default_factory=list,
        description="Modules its manifest records as imported or linked but not held (`gaps.missing_modules`), sorted.",
    )
    host_modules: list[str] = Field(
        default_factory=list,
        description="Modules its manifest records as the host project's, outside the profile's packages "
        "(`gaps.host_modules`), sorted.",
    )


class GapModule(Frozen):
    """A module one catalog holds declarations of and the other holds none of. Its declarations
    that the other catalog does not hold under any module (`not_in_other`) are counted here, not
    as added or removed: the module may be new or gone, or left out of one catalog (`missing_in_other`
    says when the other's manifest records that), or host-project code (`host`)."""

    module: str = Field(description="The module's name.")
    declarations: int = Field(description="Its declarations in the catalog that holds it.")
    not_in_other: int = Field(
        description="Of those, names the other catalog does not hold at all: counted here instead of as removed "
        "(a module only in the older catalog) or added (only in the newer). The rest moved to another module "
        "and are compared as usual."
    )
    linked_in_other: int = Field(
        description="Of `not_in_other`, names the other catalog's signatures link (its manifest's missing modules "
        "list them): known to exist in the other environment."
    )
    missing_in_other: bool = Field(description="The other catalog's manifest records this module as missing.")
    host: bool = Field(description="A catalog's manifest records this module as a host module (the project its docs were built in).")

    def describe(self, other: str) -> str:
        """`declarations` and what is known about them, for text renderings; `other` names the
        other catalog."""
        why = [*(["recorded missing in " + other] if self.missing_in_other else []), *(["host module"] if self.host else [])]
        linked = f", {self.linked_in_other:,} of them linked from {other}'s signatures" if self.linked_in_other else ""
        return f"{self.declarations:,} declarations, {self.not_in_other:,} not in {other}{linked} ({'; '.join(why)})"


class ModuleGaps(Frozen):
    """What the diff sets apart before comparing declarations: the modules held by one catalog
    only (sorted by name) and the declarations counted under gaps instead of as changes.

    `declarations_only_in_older` are names only in the older catalog under a module the newer
    one does not hold or under a host module (of either manifest): not `removed`; likewise
    `declarations_only_in_newer`, not `added`. `host_declarations_in_both` are names both hold
    where either side's module is a host module: not compared.
    """

    modules_only_in_older: list[GapModule] = Field(description="Modules with declarations in the older catalog only.")
    modules_only_in_newer: list[GapModule] = Field(description="Modules with declarations in the newer catalog only.")
    declarations_only_in_older: int = Field(
        description="Names only in the older catalog under a module the newer does not hold or a host module: not counted as removed."
    )
    declarations_only_in_newer: int = Field(
        description="Names only in the newer catalog under a module the older does not hold or a host module: not counted as added."
    )
    host_declarations_in_both: int = Field(
        description="Names in both catalogs under a host module of either: not compared (no retyped, reprinted, deprecated, renamed)."
    )

    def lines(self, older: DiffSide, newer: DiffSide, shown: int = 10) -> list[str]:
        """The gaps as text, one fact a line, for every text rendering of a diff: each side's
        modules held by it only (count, declarations, those counted here, the recorded
        missing and host ones by name, then the `shown` largest others), then each side's
        recorded missing and host modules."""
        lines = []
        for side, other, modules, count in (
            (older, newer, self.modules_only_in_older, self.declarations_only_in_older),
            (newer, older, self.modules_only_in_newer, self.declarations_only_in_newer),
        ):
            held = sum(m.declarations for m in modules)
            lines.append(
                f"modules only in {side.profile}: {len(modules):,} ({held:,} declarations); "
                f"{count:,} declarations not in {other.profile} counted here, not as {'removed' if side is older else 'added'}"
            )
            for module in modules:
                if module.missing_in_other or module.host:
                    lines.append(f"  {module.module}: {module.describe(other.profile)}")
            others = sorted((m for m in modules if not (m.missing_in_other or m.host)), key=lambda m: (-m.declarations, m.module))
            if others:
                largest = ", ".join(f"{m.module} {m.declarations:,}" for m in others[:shown])
                more = f", and {len(others) - shown:,} more" if len(others) > shown else ""
                lines.append(f"  {len(others):,} without a record saying why (largest: {largest}{more})")
        if self.host_declarations_in_both:
            lines.append(f"host-module declarations in both, not compared: {self.host_declarations_in_both:,}")
        for side in (older, newer):
            if side.missing_modules:
                lines.append(f"{side.profile} records missing modules: {', '.join(side.missing_modules)}")
            if side.host_modules:
                lines.append(f"{side.profile} records host modules: {', '.join(side.host_modules)}")
        return lines


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
        `retyped` and `reprinted`, `deprecated_to X since Y` (`-` for a part Lean did not record) when there is a
        deprecation entry; empty otherwise."""
        details = []
        if self.category in ("retyped", "reprinted"):
            details.append(f"{self.type_before} -> {self.type_after}")
        if self.deprecated_to is not None or self.deprecated_since is not None:
            details.append(f"deprecated_to {self.deprecated_to or '-'} since {self.deprecated_since or '-'}")
        return details


class DeclarationDiff(Frozen):
    """What changed from the `older` to the `newer` catalog, per declaration.

    `module_gaps` come first: the modules one catalog holds and the other does not, and the
    declarations counted under them (and under host modules) instead of as changes. `compared`
    is how many names both catalogs hold outside host modules. `counts` has every category of
    `DIFF_CATEGORIES`; a count is null when the category cannot be decided (`deprecated` and
    `renamed` when a side does not record deprecation) and `not_recorded` then says why, per
    category. `changes` lists at most `limit` changes of the requested `categories` (categories
    in `DIFF_CATEGORIES` order, each in `Name.lt` order); `next_cursor` continues the list (null
    on the last page). `complete` is true when this page ends the list.
    """

    older: DiffSide = Field(description="The older catalog.")
    newer: DiffSide = Field(description="The newer catalog.")
    module_gaps: ModuleGaps = Field(
        description="Modules held by one catalog only, and the declarations counted under them and under host modules "
        "instead of as added, removed or compared."
    )
    compared: int = Field(description="Names both catalogs hold outside host modules: those retyped, reprinted, deprecated and renamed are among them.")
    counts: dict[str, int | None] = Field(description="Changes per category, all pages; null when undecidable.")
    not_recorded: dict[str, str] = Field(default_factory=dict, description="Category -> why its count is null.")
    categories: list[str] = Field(description="The categories listed.")
    limit: int = Field(description="Most changes per page.")
    changes: list[DeclarationChange] = Field(description="This page's changes.")
    next_cursor: str | None = Field(description="Pass as `after` for the next page; null on the last.")
    complete: bool = Field(description="This page ends the list.")

    def differs(self) -> bool:
        """Whether the catalogs differ in any declaration: a non-zero count, or a declaration
        only one side holds under a gap module (what `catalog diff` exits 14 on)."""
        gaps = self.module_gaps
        return any(self.counts.values()) or bool(gaps.declarations_only_in_older or gaps.declarations_only_in_newer)


def _columns(con: Any, parquet: Path) -> set[str]:
    rows = con.execute("SELECT name FROM parquet_schema($p)", {"p": str(parquet)}).fetchall()
    return {row[0] for row in rows}


def diff_side(paths: CatalogPaths, manifest: Manifest, columns: set[str], module_count: int) -> DiffSide:
    """The `DiffSide` of a verified catalog with `module_count` modules holding declarations.
    Deprecation is recorded when the source does not list `is_deprecated` as approximate
    (doc-gen4's data carries no deprecation attribute) and the table has the `deprecated_to`
    and `deprecated_since` columns (catalogs built before they existed lack them)."""
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
        module_count=module_count,
        deprecation_recorded=reason is None,
        deprecation_reason=reason,
        missing_modules=sorted(m.module for m in manifest.gaps.missing_modules),
        host_modules=sorted(m.module for m in manifest.gaps.host_modules),
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


# One row per name of either catalog, with what the category filters (`_CATEGORY_FILTER`) read.
# `obind`/`nbind` (pos, binders: the catalogs' `index/binders.npy`), `hosts` (module),
# `linked` (side, name) and the module tables `omods`/`nmods` (module) exist when it runs.
_CHANGES_SQL = """
CREATE TEMP TABLE changes AS
WITH o AS (SELECT pos, name, kind, module, type, type_constants, conclusion_constants, is_deprecated,
                  {o_to} AS deprecated_to, {o_since} AS deprecated_since
           FROM read_parquet($older)),
     n AS (SELECT pos, name, kind, module, type, type_constants, conclusion_constants, is_deprecated,
                  {n_to} AS deprecated_to, {n_since} AS deprecated_since
           FROM read_parquet($newer)),
     j AS (SELECT coalesce(n.name, o.name) AS name, o.pos AS opos, n.pos AS npos,
                  coalesce(n.kind, o.kind) AS kind, o.module AS omodule, n.module AS nmodule,
                  o.type AS type_before, n.type AS type_after,
                  o.type_constants = n.type_constants
                    AND o.conclusion_constants IS NOT DISTINCT FROM n.conclusion_constants AS same_constants,
                  o.is_deprecated AS odep, n.is_deprecated AS ndep,
                  o.deprecated_to AS oto, o.deprecated_since AS osince,
                  n.deprecated_to AS nto, n.deprecated_since AS nsince
           FROM o FULL OUTER JOIN n ON o.name = n.name)
SELECT j.*, CASE WHEN npos IS NULL THEN omodule ELSE nmodule END AS module,
       coalesce(omodule IN (SELECT module FROM hosts), false) AS ohost,
       coalesce(nmodule IN (SELECT module FROM hosts), false) AS nhost,
       coalesce(omodule NOT IN (SELECT module FROM nmods), false) AS oonly,
       coalesce(nmodule NOT IN (SELECT module FROM omods), false) AS nonly,
       -- CASE, not AND: DuckDB then normalizes only the types that differ as stored (most do not).
       CASE WHEN opos IS NULL OR npos IS NULL OR type_before = type_after THEN false
            ELSE {norm_before} <> {norm_after} END AS differs,
       same_constants AND ob.binders = nb.binders AS same_shape
FROM j LEFT JOIN obind ob ON ob.pos = j.opos LEFT JOIN nbind nb ON nb.pos = j.npos
"""

# Each filter over `changes` (after `_FLAGS_SQL`), for counting and for listing.
_CATEGORY_FILTER = {
    "added": "opos IS NULL AND NOT gap",
    "removed": "npos IS NULL AND NOT gap",
    "retyped": "compared AND differs AND NOT coalesce(same_shape, false)",
    "reprinted": "compared AND differs AND coalesce(same_shape, false)",
    "deprecated": "newly_deprecated AND NOT renamed",
    "renamed": "renamed",
}

_FLAGS_SQL = """
ALTER TABLE changes ADD COLUMN gap BOOLEAN;
UPDATE changes SET gap = CASE WHEN opos IS NULL THEN nonly OR nhost WHEN npos IS NULL THEN oonly OR ohost ELSE ohost OR nhost END;
ALTER TABLE changes ADD COLUMN compared BOOLEAN;
UPDATE changes SET compared = opos IS NOT NULL AND npos IS NOT NULL AND NOT gap;
ALTER TABLE changes ADD COLUMN newly_deprecated BOOLEAN;
UPDATE changes SET newly_deprecated = compared AND ndep AND NOT odep;
CREATE TEMP TABLE new_names AS SELECT name FROM changes WHERE opos IS NULL;
ALTER TABLE changes ADD COLUMN renamed BOOLEAN;
UPDATE changes SET renamed = newly_deprecated AND coalesce(nto IN (SELECT name FROM new_names), false);
"""

# The modules one side holds only, with their declarations, those the other side lacks by
# name, and of those the ones the other side's signatures link ({side}: o or n; {other}: n or o).
_GAP_MODULES_SQL = """
SELECT {side}module, count(*), count(*) FILTER ({other}pos IS NULL),
       count(*) FILTER ({other}pos IS NULL AND name IN (SELECT name FROM linked WHERE side = '{other}'))
FROM changes WHERE {side}only GROUP BY {side}module ORDER BY {side}module
"""


def _binders(paths: CatalogPaths) -> pa.Table:
    """(pos, binders) of a verified catalog: its `index/binders.npy`, each position's
    `catalog.ranking.binder_count` of the printed type, computed at build time."""
    binders = np.load(paths.catalog_dir / INDEX_DIR / "binders.npy", allow_pickle=False)
    return pa.table({"pos": pa.array(np.arange(len(binders), dtype=np.int64)), "binders": pa.array(binders)})


def _register_gaps(con: Any, old_manifest: Manifest, new_manifest: Manifest) -> None:
    """The recorded gaps as tables: `hosts` (module: a host module of either manifest) and
    `linked` (side `o`/`n`, name: a name that side's signatures link into its missing modules)."""
    hosts = sorted({m.module for manifest in (old_manifest, new_manifest) for m in manifest.gaps.host_modules})
    linked = [(side, name) for side, manifest in (("o", old_manifest), ("n", new_manifest))
              for missing in manifest.gaps.missing_modules for name in missing.linked_names]
    con.register("hosts", pa.table({"module": pa.array(hosts, pa.string())}))
    con.register("linked", pa.table({"side": pa.array([s for s, _ in linked], pa.string()),
                                     "name": pa.array([n for _, n in linked], pa.string())}))


def _gap_modules(con: Any, side: str, other: Manifest) -> list[GapModule]:
    """The modules only side `side` (`o` or `n`) holds; `other` is the other side's manifest."""
    missing = {m.module for m in other.gaps.missing_modules}
    hosts = {module for (module,) in con.execute("SELECT module FROM hosts").fetchall()}
    rows = con.execute(_GAP_MODULES_SQL.format(side=side, other="n" if side == "o" else "o")).fetchall()
    return [
        GapModule(module=module, declarations=held, not_in_other=absent, linked_in_other=linked,
                  missing_in_other=module in missing, host=module in hosts)
        for module, held, absent, linked in rows
    ]


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

    The rules (docs/diff.md), for a name N; a module is *held* by a catalog when it has one of
    its declarations, and a *host module* is one either manifest lists in `gaps.host_modules`:
    - gaps first: N only in `older` under a module `newer` does not hold or a host module, N
      only in `newer` under a module `older` does not hold or a host module, and N in both
      under a host module (on either side) are counted in `module_gaps`, in no category. A
      module a manifest records as missing is never held by that catalog, so the other side's
      declarations under it are gaps (`GapModule.missing_in_other` says so).
    - added: N is in `newer` only (not a gap); removed: N is in `older` only (not a gap).
    - compared: N is in both, not under a host module. Of those:
    - retyped: its printed type differs after whitespace normalization (runs of whitespace
      become one space, ends trimmed), and its recorded constants (`type_constants`,
      `conclusion_constants`) or its binder count (`catalog.ranking.binder_count`, stored as
      `index/binders.npy`) differ too.
    - reprinted: its printed type differs after whitespace normalization, with the same
      constants and the same binder count: a change of notation or printing style, or a change
      neither shows (binder explicitness, universe names, argument order, operators the source
      does not link).
    - renamed: not deprecated in `older`, deprecated in `newer` with a replacement
      (`deprecated_to`, Lean's `DeprecationEntry.newName?` of the `@[deprecated]` attribute,
      lean4 `src/Lean/Linter/Deprecated.lean`) that only `newer` holds (added or a gap): Lean's
      rename pattern `@[deprecated new (since := "...")] theorem old := new` keeps the old name
      as an alias.
    - deprecated: not deprecated in `older`, deprecated in `newer`, and not renamed.
    Gaps, added, removed and compared partition the names; retyped and reprinted exclude each
    other, as do deprecated and renamed (a renamed alias may also be retyped or reprinted).
    deprecated and renamed need both sides to record deprecation; otherwise their counts are
    null with the reason in `not_recorded`.

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
        for table, parquet in (("omods", old_parquet), ("nmods", new_parquet)):
            con.execute(
                f"CREATE TEMP TABLE {table} AS SELECT DISTINCT module FROM read_parquet($p) WHERE module IS NOT NULL",
                {"p": str(parquet)},
            )
        module_counts = [len(con.execute(f"SELECT module FROM {t}").fetchall()) for t in ("omods", "nmods")]
        sides = (
            diff_side(old_paths, old_manifest, old_columns, module_counts[0]),
            diff_side(new_paths, new_manifest, new_columns, module_counts[1]),
        )
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

        con.register("obind", _binders(old_paths))
        con.register("nbind", _binders(new_paths))
        _register_gaps(con, old_manifest, new_manifest)
        con.execute(
            _CHANGES_SQL.format(
                o_to=column(old_columns, "deprecated_to"), o_since=column(old_columns, "deprecated_since"),
                n_to=column(new_columns, "deprecated_to"), n_since=column(new_columns, "deprecated_since"),
                norm_before=_NORMALIZED.format("type_before"), norm_after=_NORMALIZED.format("type_after"),
            ),
            {"older": str(old_parquet), "newer": str(new_parquet)},
        )
        con.execute(_FLAGS_SQL)
        row = con.execute(
            "SELECT " + ", ".join(f"count(*) FILTER ({_CATEGORY_FILTER[c]})" for c in DIFF_CATEGORIES)
            + ", count(*) FILTER (compared), count(*) FILTER (gap AND npos IS NULL),"
            " count(*) FILTER (gap AND opos IS NULL), count(*) FILTER (gap AND opos IS NOT NULL AND npos IS NOT NULL)"
            " FROM changes"
        ).fetchone()
        assert row is not None
        counts = {c: (None if c in not_recorded else int(n)) for c, n in zip(DIFF_CATEGORIES, row, strict=False)}
        compared, only_older, only_newer, host_both = (int(n) for n in row[len(DIFF_CATEGORIES):])
        module_gaps = ModuleGaps(
            modules_only_in_older=_gap_modules(con, "o", new_manifest),
            modules_only_in_newer=_gap_modules(con, "n", old_manifest),
            declarations_only_in_older=only_older,
            declarations_only_in_newer=only_newer,
            host_declarations_in_both=host_both,
        )
        changes, next_cursor = _page(con, wanted, limit, start, binding)
    finally:
        con.close()
    return DeclarationDiff(
        older=sides[0],
        newer=sides[1],
        module_gaps=module_gaps,
        compared=compared,
        counts=counts,
        not_recorded=not_recorded,
        categories=wanted,
        limit=limit,
        changes=changes,
        next_cursor=next_cursor,
        complete=next_cursor is None,
    )


def _page(
    con: Any, wanted: list[str], limit: int, start: tuple[int, int] | None, binding: dict[str, str]
) -> tuple[list[DeclarationChange], str | None]:
    """One page of changes: categories in order, each by its `Name.lt` position (the older
    catalog's for removed, the newer's otherwise), after the cursor's (category, position)."""
    changes: list[DeclarationChange] = []
    last: tuple[int, int] | None = None
    for index in range(start[0] if start else 0, len(wanted)):
        category = cast(ChangeCategory, wanted[index])
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
