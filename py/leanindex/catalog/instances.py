"""The instance table of a catalog: which class each instance is an instance of.

A record's `instance_class` (doc-gen4's instance table, `records.DeclarationRecord`) is stored in
`declarations.parquet` like every field; the build also writes it to the serving database as the
table `instances (pos INTEGER, class_name VARCHAR)`: one row per instance declaration (the
`instance` flag) in `pos` order, `class_name` null where the producer did not record the class,
indexed on `class_name`. `catalog.duckdb` is digested in the manifest, so the table is covered.

These functions are the one reading of that table; each takes a DuckDB connection or cursor on
a verified catalog's database (`engine.loaded.LoadedCatalog.cursor()`).
"""

from __future__ import annotations

import duckdb
import numpy as np


def instances_recorded(con: duckdb.DuckDBPyConnection) -> bool:
    """True when every instance of the catalog has its class recorded (vacuously true without
    instances): then `instance_positions` is exact, and an instance search may answer from it."""
    row = con.execute("SELECT count(*) FROM instances WHERE class_name IS NULL").fetchone()
    return row is not None and row[0] == 0


def instance_positions(con: duckdb.DuckDBPyConnection, class_name: str) -> np.ndarray:
    """The positions (`pos`, int64, ascending) of the instances of exactly `class_name` (a
    printed class name, e.g. `Decidable`); empty when it has none."""
    found = con.execute("SELECT pos FROM instances WHERE class_name = ? ORDER BY pos", [class_name]).fetchnumpy()
    return np.asarray(found["pos"], dtype=np.int64)


def instance_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Class name -> how many instances the catalog records for it (classes without a recorded
    instance are absent), sorted by class name (code points)."""
    rows = con.execute(
        "SELECT class_name, count(*) FROM instances WHERE class_name IS NOT NULL GROUP BY class_name ORDER BY class_name"
    ).fetchall()
    return {name: int(count) for name, count in rows}
