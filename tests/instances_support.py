"""doc-gen4's instance table read straight from an archive (plain `tarfile` + `json`, no
importer code), and the same table read back from a catalog, for the instance tests."""

from __future__ import annotations

from pathlib import Path

from leanindex.catalog.index import SearchIndex, joined_strings
from leanindex.catalog.instances import instance_counts, instance_positions
from leanindex.catalog.layout import CatalogPaths
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
    (`catalog.instances`) give them from its index, class by class."""
    index = SearchIndex.load(CatalogPaths.of(root, profile).catalog_dir)
    names = joined_strings(index.names, index.name_starts)
    return {cls: {names[int(pos)] for pos in instance_positions(index, cls)} for cls in instance_counts(index)}
