"""Where a profile's catalog and manifest live under a root folder.

`ROOT/catalog/<profile>` is a symbolic link to a complete build folder under
`ROOT/catalog/.builds/`; replacing the link is atomic, so a reader sees either the old
complete catalog or the new complete one, never a partial one. `ROOT/manifests/<profile>.json`
binds the catalog to its environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..models import PROFILE_ID_PATTERN, normalize_profile

DECLARATIONS_FILE = "declarations.parquet"
DATABASE_FILE = "catalog.duckdb"


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
        """`ROOT/manifests/<profile>.json`."""
        return self.root / "manifests" / f"{self.profile}.json"

    @classmethod
    def of(cls, root: str | Path, profile: str) -> CatalogPaths:
        """Paths for `profile` (any case) under `root`; raises `invalid_request` on a bad id."""
        return cls(Path(root).resolve(), normalize_profile(profile))


def discover_profiles(root: str | Path) -> list[str]:
    """Profile ids (lower case, sorted) that have a manifest under `root/manifests/`."""
    manifests = Path(root) / "manifests"
    if not manifests.is_dir():
        return []
    return sorted(
        p.stem for p in manifests.glob("*.json") if re.fullmatch(PROFILE_ID_PATTERN, p.stem) and p.stem == p.stem.lower()
    )
