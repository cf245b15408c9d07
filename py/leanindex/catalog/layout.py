"""Where a profile's catalog and manifest live under a root folder.

`ROOT/catalog/<profile>` is a symbolic link to a complete build folder under
`ROOT/catalog/.builds/`, which holds the catalog files AND the manifest that binds them to their
environment (`manifest.json`). Replacing the link is the one switch point of a publish: a
reader sees either the old complete catalog with its manifest or the new one with its own,
never a partial one or a catalog paired with another build's manifest. Serving reads only that
unit. `ROOT/manifests/<profile>.json` is the pinned copy of the served manifest that CI commits
and diffs; it is written after the switch and brought back in line by `catalog verify`.

A catalog's files have fixed names (`catalog_files`). A manifest keys its file digests by those
names, and only by them: a key is a name, never a path (`catalog_file_problem`), so no manifest,
pack or stream can make a reader or a pull touch anything outside the catalog folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..identity import PROFILE_ID_PATTERN, normalize_profile

if TYPE_CHECKING:
    import duckdb

DECLARATIONS_FILE = "declarations.parquet"
DATABASE_FILE = "catalog.duckdb"
DATABASE_WAL_FILE = DATABASE_FILE + ".wal"
"""DuckDB's write-ahead log beside its database: replayed even by a read-only open, so a catalog
must not have one (no digest covers it; `verify.verified_catalog` refuses it)."""
MANIFEST_FILE = "manifest.json"
BUILDS_FOLDER = ".builds"
BUILD_DATABASE_FILE = "build.duckdb"
"""The build's working database (`catalog.builder`): `catalog.duckdb` plus each record's JSON
line, which the result and record blocks are written from. Removed before a catalog is
published; never a catalog file."""


def catalog_files() -> list[str]:
    """Every file a complete catalog has, relative to `catalog/<profile>/` (POSIX names such as
    `declarations.parquet` or `index/names.npy`): the only keys a manifest's `catalog.files`
    may hold."""
    # The index's modules import this one's file names, so the index is imported when needed.
    from .index import index_files

    return [DECLARATIONS_FILE, DATABASE_FILE, *index_files()]


def catalog_file_problem(key: str) -> str | None:
    """Why `key` cannot key a manifest's `catalog.files`, or None when it is one of
    `catalog_files()` (the one rule every reader of a manifest applies). A key is a name, never
    a path: an absolute path, a `..`, `.` or empty component, a backslash or a NUL is named as
    such; any other key that is not a catalog file's name is "not a catalog file"."""
    if key in catalog_files():
        return None
    parts = key.split("/")
    if "\x00" in key:
        return "it holds a NUL byte"
    if "\\" in key:
        return "it holds a backslash"
    if key.startswith("/"):
        return "it is an absolute path"
    if ".." in parts:
        return "it leaves the catalog folder ('..')"
    if "." in parts or "" in parts:
        return "it is not a normalised relative name (an empty or '.' component)"
    return "it is not a catalog file"


def connect_duckdb(path: Path | None = None, read_only: bool = False, memory_limit: str = "1GB") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory when `path` is None) with two threads, a memory limit
    (`memory_limit`, DuckDB's syntax; beyond it DuckDB spills to disk instead of growing), and no
    progress bar: DuckDB draws it on stdout after two seconds, where `--json` output and the
    MCP stdio transport must carry nothing else."""
    # Imported here: serving opens no database, so a search never loads DuckDB.
    import duckdb

    con = duckdb.connect(
        str(path) if path is not None else ":memory:", read_only=read_only, config={"threads": 2, "memory_limit": memory_limit}
    )
    con.execute("SET enable_progress_bar = false")
    return con


@dataclass(frozen=True)
class CatalogPaths:
    """The files of one profile under `root`; with `staged` (a build folder under
    `ROOT/catalog/.builds/`), those of that build before it is published, so it can be checked
    exactly as the published catalog will be (`staged_at`)."""

    root: Path
    profile: str
    staged: Path | None = None

    @property
    def catalog_dir(self) -> Path:
        """`ROOT/catalog/<profile>`: the link to the profile's current build (the staged build
        folder itself when `staged` is set)."""
        return self.staged if self.staged is not None else self.root / "catalog" / self.profile

    @property
    def builds_dir(self) -> Path:
        """`ROOT/catalog/.builds`: complete builds and the one in progress."""
        return self.root / "catalog" / BUILDS_FOLDER

    @property
    def declarations(self) -> Path:
        """The canonical Parquet table of the current build."""
        return self.catalog_dir / DECLARATIONS_FILE

    @property
    def database(self) -> Path:
        """The serving DuckDB file of the current build."""
        return self.catalog_dir / DATABASE_FILE

    @property
    def manifest(self) -> Path:
        """`ROOT/manifests/<profile>.json`: the pinned copy of the served manifest (for CI and
        people; serving never reads it)."""
        return self.root / "manifests" / f"{self.profile}.json"

    @property
    def served_manifest(self) -> Path:
        """`ROOT/catalog/<profile>/manifest.json`: the manifest switched in with the catalog."""
        return self.catalog_dir / MANIFEST_FILE

    @classmethod
    def of(cls, root: str | Path, profile: str) -> CatalogPaths:
        """Paths for `profile` (any case) under `root`; raises `invalid_request` on a bad id."""
        return cls(Path(root).resolve(), normalize_profile(profile))

    def staged_at(self, build_dir: Path) -> CatalogPaths:
        """These paths with the catalog (and its served manifest) read from `build_dir`, a
        build folder not yet published."""
        return CatalogPaths(self.root, self.profile, build_dir)


def manifest_label(path: Path) -> str:
    """How a manifest file is named in messages: relative to its root for a root's manifests
    (`catalog/<profile>/manifest.json`, `catalog/.builds/<build>/manifest.json`,
    `manifests/<profile>.json`), else the path as given (a file the user named)."""
    parent = path.parent
    if path.name == MANIFEST_FILE and parent.parent.name == "catalog":
        return f"catalog/{parent.name}/{MANIFEST_FILE}"
    if path.name == MANIFEST_FILE and parent.parent.name == BUILDS_FOLDER and parent.parent.parent.name == "catalog":
        return f"catalog/{BUILDS_FOLDER}/{parent.name}/{MANIFEST_FILE}"
    if path.suffix == ".json" and parent.name == "manifests":
        return f"manifests/{path.name}"
    return str(path)


def discover_profiles(root: str | Path) -> list[str]:
    """Profile ids (lower case, sorted) that have a pinned manifest under `root/manifests/` or a
    served catalog (a `catalog/<profile>` holding a manifest)."""
    pinned = {p.stem for p in (Path(root) / "manifests").glob("*.json")}
    served = {p.parent.name for p in (Path(root) / "catalog").glob(f"*/{MANIFEST_FILE}")}
    return sorted(p for p in pinned | served if re.fullmatch(PROFILE_ID_PATTERN, p) and p == p.lower())
