"""What the import of the shipped Lean core archive records about its gaps (issue 28), against
counts read from the archive independently of the importer: the four Std modules its own
modules import but that it lacks, the project the documentation was built in, what doc-gen4
never has, and no blind spot (core shows none of the big operators)."""

from __future__ import annotations

import json
import os
import re
import tarfile
from urllib.parse import unquote

import pytest

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import verify_catalog
from leanindex.embedded import EMBEDDED_PROFILE, embedded_archive

from embedded_support import DemoRun
from realdata_support import CORE_ARCHIVE, realdata_path

pytestmark = pytest.mark.realdata

LINK = re.compile(r'href="\./([^"#]*)\.html#([^"]+)"')


def _archive_gaps() -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, int]]:
    """(module -> modules importing it, module -> names linked into it, module -> declarations
    linking into it) over the modules the archive has no file for, read with `tarfile`+`json`."""
    imports: dict[str, list[str]] = {}
    linked: dict[str, set[str]] = {}
    linking: dict[str, int] = {}
    with tarfile.open(realdata_path(CORE_ARCHIVE), "r:xz") as tar:
        for member in tar:
            base = os.path.basename(member.name)
            if not (member.isfile() and base.startswith("declaration-data-") and base.endswith(".bmp")):
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            data = json.load(handle)
            imports[data["name"]] = data["imports"]
            for declaration in data["declarations"]:
                type_part = declaration["header"].split('class="decl_name"', 1)[1].split("</a>", 1)[1]
                targets = set()
                for page, name in LINK.findall(type_part):
                    module = unquote(page).replace("/", ".")
                    linked.setdefault(module, set()).add(unquote(name))
                    targets.add(module)
                for module in targets:
                    linking[module] = linking.get(module, 0) + 1
    importers: dict[str, set[str]] = {}
    for module, imported in imports.items():
        for target in imported:
            importers.setdefault(target, set()).add(module)
    absent = (set(importers) | set(linked)) - set(imports)
    return ({m: importers.get(m, set()) for m in absent}, {m: linked.get(m, set()) for m in absent},
            {m: linking.get(m, 0) for m in absent})


@pytest.fixture(scope="module")
def manifest(embedded_demo: DemoRun):
    assert realdata_path(CORE_ARCHIVE).read_bytes() == embedded_archive().read_bytes()
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    return verify_catalog(CatalogPaths.of(embedded_demo.root, EMBEDDED_PROFILE))


def test_the_missing_std_modules_are_recorded_with_their_links(manifest) -> None:
    importers, linked, linking = _archive_gaps()
    missing = manifest.gaps.missing_modules
    assert [m.module for m in missing] == sorted(importers) == [
        "Std.Data.DTreeMap.Internal.Lemmas", "Std.Data.DTreeMap.Lemmas",
        "Std.Data.DTreeMap.Raw.Lemmas", "Std.Data.Internal.List.Associative",
    ]
    for recorded in missing:
        assert set(recorded.imported_by) == importers[recorded.module]
        assert set(recorded.linked_names) == linked[recorded.module]
        assert recorded.linking_declarations == linking[recorded.module]
    # The figures: 44 of their names are linked from 191 signatures.
    assert sum(len(m.linked_names) for m in missing) == 44
    assert sum(m.linking_declarations for m in missing) == 191
    assert "Std.Internal.List.alterKey" in next(m for m in missing if m.module == "Std.Data.Internal.List.Associative").linked_names


def test_the_host_projects_ten_modules_are_recorded(manifest) -> None:
    hosts = manifest.gaps.host_modules
    assert len(hosts) == 10 and {h.module.split(".")[0] for h in hosts} == {"UnicodeBasic", "UnicodeData"}
    assert sum(h.declarations for h in hosts) == 398


def test_absent_facts_and_no_blind_spot(manifest) -> None:
    assert manifest.source.absent_facts == ["flag:deprecated", "hidden", "kind:recursor"]
    assert manifest.source.blind_spots == []
    assert "gaps" not in manifest.identity()
