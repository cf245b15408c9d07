"""Where a profile's catalog and manifest live under a root folder.

`ROOT/catalog/<profile>` is a symbolic link to a complete build folder under
`ROOT/catalog/.builds/`, which holds the catalog files AND the manifest that binds them to their
environment (`manifest.json`). Replacing the link is the one switch point of a publish: a
reader sees either the old complete catalog with its manifest or the new one with its own,
never a partial one or a catalog paired with another build's manifest. Serving reads only that
unit. `ROOT/manifests/<profile>.json` is the pinned copy of the served manifest that CI commits
and diffs; it is written after the switch and brought back in line by `catalog verify`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..models import PROFILE_ID_PATTERN, normalize_profile

DECLARATIONS_FILE = "declarations.parquet"
DATABASE_FILE = "catalog.duckdb"
MANIFEST_FILE = "manifest.json"


def connect_duckdb(path: Path | None = None, read_only: bool = False, memory_limit: str = "1GB") -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory when `path` is None) with two threads, a memory limit
    (`memory_limit`, DuckDB's syntax; beyond it DuckDB spills to disk instead of growing), and no
    progress bar: DuckDB draws it on stdout after two seconds, where `--json` output and the
    MCP stdio transport must carry nothing else."""
    con = duckdb.connect(
        str(path) if path is not None else ":memory:", read_only=read_only, config={"threads": 2, "memory_limit": memory_limit}
    )
    con.execute("SET enable_progress_bar = false")
    return con


@dataclass(frozen=True)
class CatalogPaths:
    """The files of one profile under `root`."""

    root: Path
    profile: str

    @property
    def catalog_dir(self) -> Path:
        """`ROOT/catalog/<profile>`: the link to the profile's current build."""
        return self.root / "catalog" / self.profile

    @property
    def builds_dir(self) -> Path:
        """`ROOT/catalog/.builds`: complete builds and the one in progress."""
        return self.root / "catalog" / ".builds"

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


def discover_profiles(root: str | Path) -> list[str]:
    """Profile ids (lower case, sorted) that have a pinned manifest under `root/manifests/` or a
    served catalog (a `catalog/<profile>` holding a manifest)."""
    pinned = {p.stem for p in (Path(root) / "manifests").glob("*.json")}
    served = {p.parent.name for p in (Path(root) / "catalog").glob(f"*/{MANIFEST_FILE}")}
    return sorted(p for p in pinned | served if re.fullmatch(PROFILE_ID_PATTERN, p) and p == p.lower())
