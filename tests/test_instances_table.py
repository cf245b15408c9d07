"""doc-gen4's instance table is stored exactly: on the shipped Lean core catalog, every class's
instances in the catalog (`catalog.instances`) are the instances doc-gen4's table lists for it,
read independently from the archive. (The same check on Mathlib's archive is in
`test_realdata_mathlib.py`, which imports that archive once per session.)"""

from __future__ import annotations

import pytest

from embedded_support import DemoRun
from instances_support import archive_instance_table, catalog_instance_table
from leanindex.catalog.index import SearchIndex
from leanindex.catalog.instances import instances_recorded
from leanindex.catalog.layout import CatalogPaths
from leanindex.embedded import EMBEDDED_PROFILE, embedded_archive
from realdata_support import CORE_ARCHIVE, realdata_path

pytestmark = pytest.mark.realdata


def test_every_class_has_exactly_the_instances_of_docgens_table(embedded_demo: DemoRun) -> None:
    archive = realdata_path(CORE_ARCHIVE)
    assert archive.read_bytes() == embedded_archive().read_bytes()
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    table = archive_instance_table(archive)
    assert (len(table), sum(map(len, table.values()))) == (422, 7977)
    assert catalog_instance_table(embedded_demo.root, EMBEDDED_PROFILE) == table
    assert len(table["Decidable"]) == 435
    assert instances_recorded(SearchIndex.load(CatalogPaths.of(embedded_demo.root, EMBEDDED_PROFILE).catalog_dir))
