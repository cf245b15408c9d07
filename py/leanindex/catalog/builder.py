"""Build a catalog from a declaration stream: Parquet, serving database, index, manifest.

The stream is validated and written in fixed-size row groups while it is read (memory bounded
by `ROW_GROUP_ROWS` records), then DuckDB builds the serving tables from the Parquet file
(out of core), then the index arrays and the manifest are written. Everything happens in a
fresh folder under `catalog/.builds/`; only when all of it succeeded is `catalog/<profile>`
switched to it (an atomic symlink replacement: the one switch point, carrying the catalog and
its manifest together), then the pinned copy `manifests/<profile>.json` is written. Any failure,
including one writing the pinned copy, switches the link back, removes the folder and leaves an
earlier catalog of the profile served exactly as it was; a build killed at any moment leaves
the old or the new unit served, whole.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import ErrorCode, LeanIndexError
from ..names import namespace_key
from ..records import FLAG_FIELDS, KIND_ORDER, DeclarationRecord
from ..storage import free_bytes, storage_failure, tree_bytes
from ..version import __version__
from . import columns
from .cleanup import builds_lock, remove_stale_builds
from .index import write_index
from .layout import BUILD_DATABASE_FILE, DATABASE_FILE, DECLARATIONS_FILE, MANIFEST_FILE, CatalogPaths, connect_duckdb
from .links import ModuleFiles, with_source_urls
from .manifest import (
    BlindSpot,
    CatalogDigests,
    CatalogGaps,
    ExtractorIdentity,
    Manifest,
    PackageRevision,
    SourceInfo,
    SourceKind,
    file_sha256,
    mathlib_commit_of,
    module_list_sha256,
    write_atomically,
)
from .memory import release_freed_memory
from .stream import StreamSummary, read_stream
from .text import write_text_index

_SERVING_SCHEMA = pa.schema(
    [
        ("pos", pa.int64()),
        ("module", pa.string()),
        ("ns_key", pa.string()),
        ("kind_code", pa.uint8()),
        ("hidden", pa.bool_()),
        ("flag_bits", pa.uint16()),
    ]
)


BUILD_MEMORY_LIMIT = "128MB"
"""DuckDB's memory limit while a build writes the database: beyond it DuckDB spills to the build
folder, so a Mathlib-sized build stays within the peak RSS the docs quote (docs/docgen.md)."""
#: Records parsed and inserted at a time (`_write_tables`): a few MB of lines each.
BATCH_ROWS = 8192
#: DuckDB's checkpoint threshold while `_write_tables` inserts: never reached.
_NO_AUTOMATIC_CHECKPOINT = "1TB"


@dataclass
class EnvironmentFacts:
    """What the stream itself cannot tell, supplied by whoever ran the extractor.

    `packages` (from `lake-manifest.json`), `toolchain` (the `lean-toolchain` line),
    `modules_digest` (over every loaded `.olean`), `extractor_digest` (sha256 of the extractor
    sources), `platform` (where Lean ran), `source` (`lean`, `doc-gen4` or `stream`), and
    `imports` when they differ from the header's, and `module_files` (where the project's
    modules are, so the build fills each record's `source_url`: `catalog/links.py`). Unknown
    facts stay None (null in the manifest). `absent_facts`, `blind_spots` and `gaps` are what
    the producer knows its data lacks (the manifest's `source.absent_facts`,
    `source.blind_spots` and `gaps`; the doc-gen4 import fills them, the Lean extractor's data
    has none).
    """

    source: SourceKind = "stream"
    packages: list[PackageRevision] | None = None
    toolchain: str | None = None
    modules_digest: str | None = None
    extractor_digest: str | None = None
    platform: str | None = None
    imports: list[str] | None = None
    mathlib_commit: str | None = None
    extra_approximate_fields: list[str] = field(default_factory=list)
    module_files: ModuleFiles | None = None
    absent_facts: list[str] = field(default_factory=list)
    blind_spots: list[BlindSpot] = field(default_factory=list)
    gaps: CatalogGaps = field(default_factory=CatalogGaps)


def host_platform() -> str:
    """`<machine>-<system>` of this host in Lean's style, e.g. `x86_64-linux`."""
    return f"{platform.machine().lower()}-{platform.system().lower()}"


def build_catalog(
    lines: Iterable[bytes],
    root: str | Path,
    profile: str,
    facts: EnvironmentFacts | None = None,
    on_line: Callable[[int], None] | None = None,
) -> Manifest:
    """Validate `lines` (a `leanindex.declarations/v1` stream) and publish it as `profile`.

    Returns the new manifest (also written to `ROOT/manifests/<profile>.json`). Raises
    `LeanIndexError(invalid_stream)` naming the first bad line, `invalid_request` for a bad
    profile id, `storage_full` (with the path, the free bytes and a lower bound on the bytes
    needed) or `io_error` when a write fails; in every failure nothing under `root` changes
    except that build folders left by killed builds are removed first (logged on
    `leanindex.catalog` with the bytes reclaimed). `on_line(n)` is called as lines
    are read, for progress reporting. With `facts.module_files`, records without a `source_url`
    get one (`catalog.links.with_source_urls`) before they are written.
    """
    facts = facts or EnvironmentFacts()
    with staged_build(root, profile) as (paths, build_dir):
        summary = StreamSummary()
        records = read_stream(lines, summary, on_line)
        if facts.module_files is not None:
            records = with_source_urls(records, facts.module_files, lambda: summary.header)
        visible = _write_tables(records, build_dir)
        assert summary.header is not None  # read_stream raises before yielding without one
        _write_database(build_dir)
        index_files = write_index_from(build_dir)
        manifest = _manifest(paths.profile, summary, facts, build_dir, visible, index_files)
        publish(paths, build_dir, manifest)
        return manifest


@contextmanager
def staged_build(root: str | Path, profile: str) -> Iterator[tuple[CatalogPaths, Path]]:
    """A fresh, empty build folder for `profile` under `ROOT/catalog/.builds/`, held under the
    builds lock: the one place every catalog (built, imported, pulled) is staged before
    `publish`. Yields `(paths, build_dir)`. Build folders left by killed builds are removed
    first (logged on `leanindex.catalog` with the bytes reclaimed). When the body raises, the
    folder (and any folder this created) is removed, so nothing else under `root` changes; a
    write that failed becomes `storage_full` (with the path, the free bytes and a lower bound on
    the bytes needed) or `io_error`. Raises `invalid_request` for a bad profile id."""
    paths = CatalogPaths.of(root, profile)
    created: list[Path] = []  # deepest first, so they can be removed in order
    folder = paths.builds_dir
    while not folder.exists():
        created.append(folder)
        folder = folder.parent
    paths.builds_dir.mkdir(parents=True, exist_ok=True)
    # Builds under one root run one at a time (the lock), so two builds of a profile cannot
    # interleave their switch and pinned write, and every unlinked build folder is stale.
    with builds_lock(paths.builds_dir):
        remove_stale_builds(paths.root)
        free_at_start = free_bytes(paths.builds_dir)
        build_dir = paths.builds_dir / f"{paths.profile}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        build_dir.mkdir()
        try:
            yield paths, build_dir
        except BaseException as error:
            # A build that ran out of space needed more than was free when it started (and more
            # than it had written, should another writer have freed space meanwhile).
            needed = max(free_at_start, tree_bytes(build_dir)) + 1
            shutil.rmtree(build_dir, ignore_errors=True)
            _remove_if_empty(created)
            coded = storage_failure(error, fallback=build_dir, needed_bytes=needed) if not isinstance(error, LeanIndexError) else None
            if coded is not None:
                raise coded from None
            raise


def publish(paths: CatalogPaths, build_dir: Path, manifest: Manifest) -> None:
    """Inside `staged_build` only: write `manifest` into `build_dir` (the manifest served with
    the catalog), then switch the profile to it (`_publish`)."""
    write_atomically(build_dir / MANIFEST_FILE, manifest.to_json())
    _publish(paths, build_dir, manifest)


def _remove_if_empty(folders: Iterable[Path]) -> None:
    """Remove folders a failed build created, so a refused stream leaves the root as it was;
    a folder another build has meanwhile put something in stays."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _write_tables(records: Iterable[tuple[DeclarationRecord, bytes]], build_dir: Path) -> int:
    """Write records to `declarations.parquet`, the derived serving columns to a scratch Parquet
    file, and each record's JSON line to the build database's `declarations` table, `BATCH_ROWS`
    records at a time; return the number of visible (neither private nor internal) records.

    Each batch is parsed into Arrow and inserted on its own; a Parquet row group
    (`columns.ROW_GROUP_ROWS` records, which fixes the file's bytes) is written from its
    batches' Arrow tables once they are all parsed, so memory is bounded by one row group's
    Arrow columns and one batch's lines. The database insert of a batch runs on a second thread
    while the next batch is validated (DuckDB works outside the GIL), with at most one insert
    in flight.
    """
    lines: list[bytes] = []
    serving: dict[str, list] = {name: [] for name in _SERVING_SCHEMA.names}
    group: list[pa.Table] = []  # the parsed batches of the row group being assembled
    kind_codes = {kind: code for code, kind in enumerate(KIND_ORDER)}
    visible = 0
    con = connect_duckdb(build_dir / BUILD_DATABASE_FILE, memory_limit=BUILD_MEMORY_LIMIT)
    # No automatic checkpoint between batches (each would rewrite the table's last, partly
    # filled row group: 70% more insert CPU and a larger file); the connection's close writes
    # every row group once, from the write-ahead log.
    con.execute(f"SET checkpoint_threshold = '{_NO_AUTOMATIC_CHECKPOINT}'")
    con.execute("CREATE TABLE declarations (pos BIGINT, name VARCHAR, record VARCHAR)")
    pending: Future[None] | None = None
    try:
        with (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="leanindex-insert") as inserter,
            pq.ParquetWriter(build_dir / DECLARATIONS_FILE, columns.SCHEMA, **columns.PARQUET_OPTIONS) as writer,
            pq.ParquetWriter(build_dir / "serving.parquet", _SERVING_SCHEMA, compression="zstd") as side,
        ):
            written = grouped = 0

            def write_group() -> None:
                nonlocal grouped
                # One table in one chunk per column, as a row group parsed at once would be.
                writer.write_table(pa.concat_tables(group).combine_chunks(), row_group_size=columns.ROW_GROUP_ROWS)
                group.clear()
                grouped = 0
                release_freed_memory()

            def flush() -> None:
                nonlocal lines, serving, written, grouped, pending
                table = _table(lines, written)
                group.append(table)
                side.write_table(pa.Table.from_pydict(serving, schema=_SERVING_SCHEMA))
                # The lines were validated as UTF-8 JSON: cast in Arrow, without a Python str per line.
                rows = pa.table({"pos": table.column("pos"), "name": table.column("name"), "record": pa.array(lines, pa.binary()).cast(pa.string())})
                if pending is not None:
                    pending.result()
                pending = inserter.submit(_insert, con, rows)
                written += len(lines)
                grouped += len(lines)
                lines, serving = [], {name: [] for name in _SERVING_SCHEMA.names}
                if grouped == columns.ROW_GROUP_ROWS:
                    write_group()

            for record, raw in records:
                hidden = record.is_private or record.is_internal
                visible += not hidden
                lines.append(raw)
                serving["pos"].append(written + len(lines) - 1)
                serving["module"].append(record.module)
                serving["ns_key"].append(namespace_key(record.components))
                serving["kind_code"].append(kind_codes[record.kind])
                serving["hidden"].append(hidden)
                serving["flag_bits"].append(sum(1 << i for i, flag in enumerate(FLAG_FIELDS) if getattr(record, flag)))
                if len(lines) == min(BATCH_ROWS, columns.ROW_GROUP_ROWS - grouped):
                    flush()
            if lines:
                flush()
            if group:
                write_group()
            if pending is not None:
                pending.result()
    finally:
        con.close()
    release_freed_memory()
    return visible


def _insert(con: duckdb.DuckDBPyConnection, rows: pa.Table) -> None:
    """Append one row group of (pos, name, record) to `declarations`, on a cursor of its own."""
    cur = con.cursor()
    try:
        cur.register("row_group", rows)
        cur.execute("INSERT INTO declarations SELECT pos, name, record FROM row_group")
    finally:
        cur.close()


def _table(lines: list[bytes], start_pos: int) -> pa.Table:
    """`columns.table_from_lines`, turning pyarrow's refusal of a line the record model accepted
    (an object with a repeated key, which the model reads last-wins) into `invalid_stream` naming
    that line (declaration `pos` is on stream line `pos + 2`)."""
    try:
        return columns.table_from_lines(lines, start_pos)
    except pa.ArrowInvalid as error:
        for offset, raw in enumerate(lines):
            try:
                json.loads(raw, object_pairs_hook=_unique_keys)
            except ValueError as duplicate:
                line = start_pos + offset + 2
                raise LeanIndexError(ErrorCode.INVALID_STREAM, f"line {line}: {duplicate}", {"line": line}) from None
        first, last = start_pos + 2, start_pos + len(lines) + 1
        raise LeanIndexError(
            ErrorCode.INVALID_STREAM, f"lines {first}-{last}: {error}", {"line": first, "last_line": last}
        ) from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a JSON object repeats the key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


# `declarations` (written while the stream is read) keeps each validated record as its JSON
# line: one column to read per answer is what makes inspect and result rows cheap (the
# canonical Parquet file stays columnar).
_SERVING_SQL = """
CREATE TABLE modules AS
    SELECT (row_number() OVER (ORDER BY module) - 1)::INTEGER AS id, module AS name
    FROM (SELECT DISTINCT module FROM read_parquet($serving) WHERE module IS NOT NULL);
CREATE TABLE search_columns AS
    SELECT s.pos, s.ns_key, s.kind_code, s.hidden, s.flag_bits, coalesce(m.id, -1)::INTEGER AS module_id
    FROM read_parquet($serving) s
    LEFT JOIN modules m ON m.name = s.module
    ORDER BY s.pos;
CREATE TABLE constants AS
    SELECT (row_number() OVER (ORDER BY name) - 1)::INTEGER AS id, name
    FROM (SELECT unnest(type_constants) AS name FROM read_parquet($decls)
          UNION SELECT unnest(value_constants) AS name FROM read_parquet($decls));
{postings}
CREATE TABLE recorded AS
    SELECT d.pos, CASE WHEN d.conclusion_constants IS NULL THEN -2 ELSE coalesce(c.id, -1) END::INTEGER AS head_id,
           d.value_constants IS NOT NULL AS has_values
    FROM read_parquet($decls) d
    LEFT JOIN constants c ON c.name = d.conclusion_head
    ORDER BY d.pos;
CREATE TABLE instances AS
    SELECT pos::INTEGER AS pos, instance_class AS class_name
    FROM read_parquet($decls)
    WHERE is_instance
    ORDER BY pos;
CREATE INDEX instances_class ON instances (class_name);
CREATE UNIQUE INDEX constants_name ON constants (name);
""".format(
    # One posting table per list of constants: (constant id, position) pairs in that order.
    postings="".join(
        f"""CREATE TABLE {kind}_postings AS
    SELECT c.id AS constant_id, t.pos::INTEGER AS pos
    FROM (SELECT pos, unnest({kind}_constants) AS name FROM read_parquet($decls)) t
    JOIN constants c USING (name)
    ORDER BY constant_id, pos;
"""
        for kind in ("type", "conclusion", "value")
    )
)


def _write_database(build_dir: Path) -> None:
    """Complete the build database (modules, search columns, constants, type postings, the
    `instances` table that `catalog.instances` reads, indexes) from the Parquet files in
    `build_dir`."""
    con = connect_duckdb(build_dir / BUILD_DATABASE_FILE, memory_limit=BUILD_MEMORY_LIMIT)
    try:
        params = {"decls": str(build_dir / DECLARATIONS_FILE), "serving": str(build_dir / "serving.parquet")}
        for statement in _SERVING_SQL.split(";"):
            if statement.strip():
                con.execute(statement, {k: v for k, v in params.items() if f"${k}" in statement})
        con.execute("CHECKPOINT")
    finally:
        con.close()


def write_index_from(build_dir: Path) -> list[str]:
    """Write the index arrays of the build database in `build_dir`, then the text index, then
    `catalog.duckdb` (`_write_served_database`); drop the scratch files. The text index is read
    after the database is closed and the other arrays are freed, and before DuckDB runs again:
    its worker processes are the build's largest, and nothing else is held meanwhile."""
    con = connect_duckdb(build_dir / BUILD_DATABASE_FILE, read_only=True)
    try:
        files = write_index(con, build_dir)
    finally:
        con.close()
    (build_dir / "serving.parquet").unlink()
    files += write_text_index(build_dir)
    _write_served_database(build_dir)
    return files


def _write_served_database(build_dir: Path) -> None:
    """`catalog.duckdb`: every table and index of the build database, with `declarations`
    reduced to (pos, name), then the build database removed.

    The record lines (on Mathlib 179 of the build database's 217 MiB) are the source of the
    index's result and record blocks, which hold every field of them, so the catalog (and each
    pack) does not carry them twice. `declarations` has no index: nothing reads it by name but
    a user's SQL, for which a scan of its two columns takes milliseconds, and indexes by name and
    position would take 21 MiB on Mathlib."""
    con = connect_duckdb(build_dir / BUILD_DATABASE_FILE, memory_limit=BUILD_MEMORY_LIMIT)
    try:
        con.execute("ALTER TABLE declarations DROP COLUMN record")
        served = str(build_dir / DATABASE_FILE).replace("'", "''")
        con.execute(f"ATTACH '{served}' AS served")
        con.execute("COPY FROM DATABASE build TO served")
        con.execute("DETACH served")
    finally:
        con.close()
    (build_dir / BUILD_DATABASE_FILE).unlink()


def _manifest(
    profile: str,
    summary: StreamSummary,
    facts: EnvironmentFacts,
    build_dir: Path,
    visible: int,
    index_files: list[str],
) -> Manifest:
    header = summary.header
    assert header is not None
    files = {name: file_sha256(build_dir / name) for name in (DECLARATIONS_FILE, DATABASE_FILE, *index_files)}
    approximate = sorted(set(header.approximate_fields) | set(facts.extra_approximate_fields))
    fields = {
        "schema": "leanindex.environment-manifest/v1",
        "profile": profile,
        "imports": facts.imports if facts.imports is not None else list(header.imports),
        "platform": facts.platform,
        "lean": header.lean,
        "toolchain": facts.toolchain,
        "packages": facts.packages,
        "mathlib_commit": facts.mathlib_commit or mathlib_commit_of(facts.packages),
        "modules_digest": facts.modules_digest,
        "module_list_sha256": module_list_sha256(header.modules),
        "module_count": len(header.modules),
        "extractor": ExtractorIdentity(
            name=header.extractor.name, version=header.extractor.version, digest=facts.extractor_digest
        ),
        "source": SourceInfo(
            kind=facts.source, approximate_fields=approximate, commits=dict(header.source_commits),
            absent_facts=sorted(set(facts.absent_facts)), blind_spots=list(facts.blind_spots),
        ),
        "gaps": facts.gaps,
    }
    draft = Manifest.model_validate(
        {**fields, "environment_digest": "", "manifest_digest": "", "catalog": _digests(summary.count, visible, files)}
    )
    return draft.sealed()


def _digests(count: int, visible: int, files: dict[str, str]) -> CatalogDigests:
    return CatalogDigests(
        declaration_count=count,
        visible_count=visible,
        declarations_parquet_sha256=files[DECLARATIONS_FILE],
        catalog_duckdb_sha256=files[DATABASE_FILE],
        files=files,
        builder_version=__version__,
        built_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _publish(paths: CatalogPaths, build_dir: Path, manifest: Manifest) -> None:
    """Point `catalog/<profile>` at `build_dir` (which holds its manifest) atomically, write the
    pinned manifest, and remove the build folders no link points at any more.

    When the pinned manifest cannot be written, the link is switched back to what it was (or
    removed, on a first build) before the error propagates, so the failed build is not served."""
    link = paths.catalog_dir
    aside = None
    if link.exists() and not link.is_symlink():
        # A catalog folder from elsewhere (copied in by hand): keep it aside, never delete it.
        aside = paths.builds_dir / f"{paths.profile}-replaced-{uuid.uuid4().hex[:8]}"
        link.rename(aside)
    previous = os.readlink(link) if link.is_symlink() else None
    _switch_link(link, os.path.relpath(build_dir, link.parent))
    try:
        write_atomically(paths.manifest, manifest.to_json())
    except BaseException:
        if previous is not None:
            _switch_link(link, previous)
        else:
            link.unlink()
            if aside is not None:
                aside.rename(link)
        raise
    # The folder the link pointed at is now stale too.
    remove_stale_builds(paths.root)


def _switch_link(link: Path, target: str) -> None:
    """Make `link` a symlink to `target` in one `rename` (readers see the old or the new one)."""
    staged = link.parent / f".{link.name}.link-{uuid.uuid4().hex[:8]}"
    os.symlink(target, staged)
    os.replace(staged, link)
