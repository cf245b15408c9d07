"""`catalog diff` on real data: the Lean core part (`Init`, `Std`, `Lean`, `Lake`) of the
April 2025 Mathlib doc-gen4 archive (Lean v4.19.0-rc3, imported with `--module-prefix`) against
the embedded Lean core v4.33.0 catalog (the session's `leanindex demo` import), spot-checked
against the raw `declaration-data-*.bmp` JSON read with plain `tarfile` + `json`: the module
gaps (the embedded catalog's recorded missing and host modules), added, removed and the names
whose printed type changed (retyped or reprinted).

Adds the core-part import (about 30 s of CPU here: the whole archive is decompressed, 1,424 of
its 7,927 files converted) and one raw read of each archive (about 10 s).
"""

from __future__ import annotations

import html
import json
import os
import re
import tarfile
from pathlib import Path

import pytest

from embedded_support import DemoRun
from leanindex.docgen import import_docgen
from leanindex.embedded import EMBEDDED_PROFILE, embedded_archive
from leanindex.engine.diff import DIFF_CATEGORIES, diff_declarations, open_verified
from realdata_support import MATHLIB_ARCHIVE, realdata_path

pytestmark = pytest.mark.realdata

CORE_PREFIXES = ["Init", "Std", "Lean", "Lake"]


def in_core(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in CORE_PREFIXES)


def raw_signatures(archive: Path, keep=lambda module: True) -> tuple[dict[str, str], dict[str, str]]:
    """name -> the text of doc-gen4's header without tags, kind, `extends` clause (parents of a
    structure are not part of its type) and extra whitespace, and name -> its module (the file's),
    for every declaration of the kept modules of an archive."""
    found: dict[str, str] = {}
    modules: dict[str, str] = {}
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            base = os.path.basename(member.name)
            if not (member.isfile() and base.startswith("declaration-data-") and base.endswith(".bmp")):
                continue
            module = base[len("declaration-data-") : -len(".bmp")]
            if not keep(module):
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            for declaration in json.load(handle)["declarations"]:
                header = re.sub(r'<span class="decl_kind">[^<]*</span>', "", declaration["header"])
                header = re.sub(r'<span class="decl_extends">.*?(?=<span class="decl_args"> :</span>)', "", header, flags=re.S)
                text = html.unescape(re.sub(r"<[^>]+>", "", header))
                found[declaration["info"]["name"]] = re.sub(r"\s+", " ", text).strip()
                modules[declaration["info"]["name"]] = module
    return found, modules


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory):
    archive = realdata_path(MATHLIB_ARCHIVE)
    root = tmp_path_factory.mktemp("core-of-mathlib")
    result = import_docgen(archive, root, "core-v4-19", lean_version="v4.19.0-rc3", module_prefixes=CORE_PREFIXES)
    assert all(in_core(module) for module in result.manifest.imports)
    return open_verified(root, "core-v4-19"), raw_signatures(archive, in_core)


@pytest.fixture(scope="module")
def newer(embedded_demo: DemoRun):
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    return open_verified(embedded_demo.root, EMBEDDED_PROFILE), raw_signatures(embedded_archive())


def spread(items: list, count: int = 8) -> list:
    return items[:: max(1, len(items) // count)][:count]


def test_core_v4_19_to_v4_33_counts_and_spot_checks(older, newer) -> None:
    (old_catalog, (old_raw, old_modules)), (new_catalog, (new_raw, new_modules)) = older, newer
    report = diff_declarations(old_catalog, new_catalog, limit=500)
    counts, gaps = report.counts, report.module_gaps
    # The gaps, from the raw names and files: a name only in one archive under a module the
    # other does not hold, or under a host module the embedded import records, is no change.
    hosts = set(report.newer.host_modules)
    assert len(hosts) == 10 and report.older.host_modules == []
    held_old, held_new = set(old_modules.values()), set(new_modules.values())
    only_old, only_new = old_raw.keys() - new_raw.keys(), new_raw.keys() - old_raw.keys()
    gap_old = {n for n in only_old if old_modules[n] not in held_new}
    gap_new = {n for n in only_new if new_modules[n] not in held_old or new_modules[n] in hosts}
    assert (gaps.declarations_only_in_older, gaps.declarations_only_in_newer) == (len(gap_old), len(gap_new))
    assert counts["added"] == len(only_new - gap_new) and counts["removed"] == len(only_old - gap_old)
    assert [m.module for m in gaps.modules_only_in_older] == sorted(held_old - held_new)
    assert [m.module for m in gaps.modules_only_in_newer] == sorted(held_new - held_old)
    # The case: the embedded catalog lacks four Std modules (recorded missing); the
    # older one's declarations there are not removals, and 35 of them are linked from v4.33.
    missing = {m.module: m for m in gaps.modules_only_in_older if m.missing_in_other}
    assert set(missing) <= set(report.newer.missing_modules) and len(missing) == 3
    missing_names = {n for n in only_old if old_modules[n] in missing}
    assert sum(m.not_in_other for m in missing.values()) == len(missing_names) > 2_000
    assert sum(m.linked_in_other for m in missing.values()) == 35
    host_names = {n for n in only_new if new_modules[n] in hosts}
    assert len(host_names) == 398 and all(m.host for m in gaps.modules_only_in_newer if m.module in hosts)
    assert counts["added"] > 10_000 and counts["removed"] > 1_000 and counts["retyped"] > 1_000
    # doc-gen4 records no deprecation: not counted as 0, said so.
    assert counts["deprecated"] is None and counts["renamed"] is None
    assert "doc-gen4" in report.not_recorded["renamed"]
    assert report.categories == ["added", "removed", "retyped", "reprinted"]
    assert [side.lean_version for side in (report.older, report.newer)] == ["4.19.0-rc3", "4.33.0"]

    pages = {category: diff_declarations(old_catalog, new_catalog, [category], limit=500) for category in report.categories}
    for change in spread(pages["added"].changes):
        assert change.name in new_raw and change.name not in old_raw and change.type_before is None
        assert change.module in held_old and change.module not in hosts
    for change in spread(pages["removed"].changes):
        assert change.name in old_raw and change.name not in new_raw and change.type_after is None
        assert change.module in held_new
    for change in spread(pages["retyped"].changes) + spread(pages["reprinted"].changes):
        assert old_raw[change.name] != new_raw[change.name], change.name
    # The converse: the names in both whose raw signatures differ are as many as the retyped
    # and reprinted (no name in both is under a host module here).
    assert report.compared == len(old_raw.keys() & new_raw.keys()) and gaps.host_declarations_in_both == 0
    raw_retyped = sum(old_raw[name] != new_raw[name] for name in old_raw.keys() & new_raw.keys())
    print(f"raw signatures differ for {raw_retyped} names in both; retyped {counts['retyped']}, reprinted {counts['reprinted']}")
    assert counts["retyped"] + counts["reprinted"] == raw_retyped
    # Most reprinted are constructors whose doc-gen4 rendering changed style:
    # `(a : A) (b : B) : S` in v4.19, `: A → B → S` in v4.33.
    page, reprinted = pages["reprinted"], list(pages["reprinted"].changes)
    while page.next_cursor is not None:
        page = diff_declarations(old_catalog, new_catalog, ["reprinted"], limit=500, after=page.next_cursor)
        reprinted.extend(page.changes)
    styled = [c for c in reprinted if c.kind == "constructor" and not c.type_before.startswith(":") and c.type_after.startswith(": ")]
    print(f"reprinted: {len(styled)} of {len(reprinted)} are constructors printed in doc-gen4's new style")
    assert len(reprinted) == counts["reprinted"] and len(styled) > len(reprinted) // 2

    # The first page of all categories is the first page of added, and its cursor continues it.
    assert [c.name for c in report.changes] == [c.name for c in pages["added"].changes]
    following = diff_declarations(old_catalog, new_catalog, limit=500, after=report.next_cursor)
    assert following.changes[0].category == "added" and following.changes[0].name not in {c.name for c in report.changes}
    print(f"core v4.19.0-rc3 -> v4.33.0: {', '.join(f'{c} {counts[c]}' for c in DIFF_CATEGORIES)}; "
          f"gaps: {gaps.declarations_only_in_older} only in older, {gaps.declarations_only_in_newer} only in newer")
