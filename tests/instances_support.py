"""doc-gen4's instance table read straight from an archive (plain `tarfile` + `json`, no
importer code), and the same table read back from a catalog, for the instance tests."""

from __future__ import annotations

from pathlib import Path

from leanindex.catalog.instances import instance_counts, instance_positions
from leanindex.catalog.layout import CatalogPaths, connect_duckdb
from realdata_support import archive_documents


def archive_instance_table(archive: Path) -> dict[str, set[str]]:
    """Class name -> the names of its instances, from every `instances` list of the archive's
    `declaration-data-*.bmp` files."""
    table: dict[str, set[str]] = {}
    for document in archive_documents(archive):
        for entry in document.get("instances", []):
            table.setdefault(entry["className"], set()).add(entry["name"])
    return table


def catalog_instance_table(root: Path, profile: str) -> dict[str, set[str]]:
    """Class name -> the names of its instances, as the catalog's accessors
    (`catalog.instances`) give them, class by class."""
    con = connect_duckdb(CatalogPaths.of(root, profile).database, read_only=True)
    try:
        names = dict(con.execute("SELECT pos, name FROM declarations").fetchall())
        return {
            cls: {names[int(pos)] for pos in instance_positions(con, cls)}
            for cls in instance_counts(con)
        }
    finally:
        con.close()
