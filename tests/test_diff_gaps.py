"""`catalog diff` separates gaps from changes (issue 28): declarations under modules only one
catalog holds, under modules a manifest records as missing, and under host modules are counted
in `module_gaps`, not as added or removed; a printed type that differs with the same constants
and binder count is `reprinted`, not `retyped`. Each rule on small built catalogs, the counts
worked out independently in the test."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.manifest import CatalogGaps, HostModule, MissingModule
from leanindex.cli import main
from leanindex.engine.diff import DIFF_CATEGORIES, diff_declarations, open_verified
from leanindex.errors import OUTCOME_EXIT, Outcome
from leanindex.names import name_sort_key
from leanindex.render import render_diff
from streamkit import declaration, encode, footer, header

MODULES = ["Core.A", "Core.B", "Core.C", "Host.X"]

# Printed types with their binders counted by hand (whitespace normalized) and their constants.
TYPES: dict[str, tuple[int, list[str]]] = {
    "True": (0, ["True"]),
    "False": (0, ["False"]),
    "Nat → Nat": (1, ["Nat"]),
    "(n : Nat) : Nat": (1, ["Nat"]),
    "(n m : Nat) : Nat": (2, ["Nat"]),
    "Nat → Int": (1, ["Int", "Nat"]),
}


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def rec(name: str, module: str = "Core.A", type_: str = "True", conclusion: list[str] | None = None) -> dict[str, Any]:
    return declaration(name.split("."), module=module, type=type_, type_constants=TYPES[normalize(type_)][1],
                       conclusion_constants=conclusion)


def build(root: Path, profile: str, records: list[dict[str, Any]], missing: dict[str, list[str]] | None = None,
          hosts: list[str] | None = None) -> tuple:
    """A catalog of `records` whose manifest records `missing` (module -> its linked names) and
    `hosts` (modules), verified."""
    ordered = sorted(records, key=lambda r: name_sort_key(r["components"]))
    gaps = CatalogGaps(
        missing_modules=[MissingModule(module=m, imported_by=[], linked_names=names, linking_declarations=len(names))
                         for m, names in sorted((missing or {}).items())],
        host_modules=[HostModule(module=m, declarations=sum(r["module"] == m for r in records)) for m in sorted(hosts or [])],
    )
    lines = [encode(header(modules=MODULES)), *map(encode, ordered), encode(footer(len(ordered)))]
    build_catalog(iter(lines), root, profile, facts=EnvironmentFacts(gaps=gaps))
    return open_verified(root, profile)


def every_change(older, newer) -> list[tuple[str, str]]:
    report, changes = diff_declarations(older, newer, limit=3), []
    while True:
        changes.extend((c.category, c.name) for c in report.changes)
        if report.next_cursor is None:
            return changes
        report = diff_declarations(older, newer, limit=3, after=report.next_cursor)


def oracle(old: list[dict], new: list[dict], hosts: set[str], old_missing: dict, new_missing: dict) -> dict[str, Any]:
    """The gap and category rules written out over the record lists."""
    before, after = {r["name"]: r for r in old}, {r["name"]: r for r in new}
    held_before, held_after = {r["module"] for r in old}, {r["module"] for r in new}
    only_before = [n for n in before if n not in after]
    only_after = [n for n in after if n not in before]
    gap_before = {n for n in only_before if before[n]["module"] not in held_after or before[n]["module"] in hosts}
    gap_after = {n for n in only_after if after[n]["module"] not in held_before or after[n]["module"] in hosts}
    both = [n for n in after if n in before]
    host_both = {n for n in both if before[n]["module"] in hosts or after[n]["module"] in hosts}
    compared = [n for n in both if n not in host_both]
    differ = [n for n in compared if normalize(before[n]["type"]) != normalize(after[n]["type"])]
    reprinted = [n for n in differ if TYPES[normalize(before[n]["type"])] == TYPES[normalize(after[n]["type"])]
                 and before[n]["conclusion_constants"] == after[n]["conclusion_constants"]]

    def modules_only(side: dict, other: dict, other_held: set, other_missing: dict) -> list[dict]:
        linked = {name for names in other_missing.values() for name in names}
        found = []
        for module in sorted({r["module"] for r in side.values()} - other_held):
            names = [n for n, r in side.items() if r["module"] == module]
            absent = [n for n in names if n not in other]
            found.append({"module": module, "declarations": len(names), "not_in_other": len(absent),
                          "linked_in_other": sum(n in linked for n in absent),
                          "missing_in_other": module in other_missing, "host": module in hosts})
        return found

    in_order = lambda names, side: sorted(names, key=lambda n: name_sort_key(side[n]["components"]))  # noqa: E731
    return {
        "changes": [
            *(("added", n) for n in in_order([n for n in only_after if n not in gap_after], after)),
            *(("removed", n) for n in in_order([n for n in only_before if n not in gap_before], before)),
            *(("retyped", n) for n in in_order([n for n in differ if n not in reprinted], after)),
            *(("reprinted", n) for n in in_order(reprinted, after)),
        ],
        "compared": len(compared),
        "module_gaps": {
            "modules_only_in_older": modules_only(before, after, held_after, new_missing),
            "modules_only_in_newer": modules_only(after, before, held_before, old_missing),
            "declarations_only_in_older": len(gap_before),
            "declarations_only_in_newer": len(gap_after),
            "host_declarations_in_both": len(host_both),
        },
    }


NAMES = ["A", "A.b", "B", "B.x", "C", "D.e", "E", "F.g"]


@st.composite
def gapped_pair(draw: Any) -> tuple:
    def side() -> list[dict]:
        names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=len(NAMES)))
        records = []
        for name in names:
            type_ = draw(st.sampled_from(sorted(TYPES)))
            conclusion = draw(st.sampled_from([None, [], TYPES[type_][1][-1:]]))  # among the type's constants
            records.append(rec(name, draw(st.sampled_from(MODULES)), type_, conclusion))
        return records

    old, new = side(), side()
    hosts = set(draw(st.lists(st.sampled_from(MODULES), unique=True, max_size=2)))
    # A catalog records as missing only modules it does not hold, linking names of any side.
    missing = [{m: draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
                for m in draw(st.lists(st.sampled_from(MODULES), unique=True)) if m not in {r["module"] for r in records}}
               for records in (old, new)]
    return old, new, hosts, missing[0], missing[1]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=gapped_pair())
def test_gaps_counts_and_pages_equal_the_oracle(pair: tuple) -> None:
    old, new, hosts, old_missing, new_missing = pair
    old_hosts = sorted(m for m in hosts if m in {r["module"] for r in old})
    new_hosts = sorted(hosts - set(old_hosts)) or sorted(hosts)  # each host module recorded by one side or both
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        older = build(root, "old", old, old_missing, old_hosts)
        newer = build(root, "new", new, new_missing, new_hosts)
        expected = oracle(old, new, set(old_hosts) | set(new_hosts), old_missing, new_missing)
        report = diff_declarations(older, newer)
        assert report.module_gaps.model_dump() == expected["module_gaps"]
        assert report.compared == expected["compared"]
        assert report.counts == {c: sum(1 for k, _ in expected["changes"] if k == c) for c in DIFF_CATEGORIES}
        assert every_change(older, newer) == expected["changes"]
        # Every name is exactly one of: a gap, added, removed, compared.
        gaps = report.module_gaps
        names = {r["name"] for r in old} | {r["name"] for r in new}
        assert len(names) == (gaps.declarations_only_in_older + gaps.declarations_only_in_newer
                              + gaps.host_declarations_in_both + report.counts["added"] + report.counts["removed"]
                              + report.compared)
        assert (report.older.missing_modules, report.newer.host_modules) == (sorted(old_missing), new_hosts)


def test_declarations_of_a_module_the_newer_catalog_records_missing_are_not_removed(tmp_path: Path) -> None:
    """The issue's case: the newer catalog lacks `Core.B` (its manifest says so, and its
    signatures link one of its names); the older one's 3 declarations there are no removals."""
    old = [rec("A"), rec("B", "Core.B"), rec("B.x", "Core.B"), rec("B.y", "Core.B"), rec("C")]
    new = [rec("A"), rec("E")]
    report = diff_declarations(build(tmp_path, "old", old), build(tmp_path, "new", new, {"Core.B": ["B.x", "Zzz"]}))
    assert report.counts["removed"] == 1 and [c.name for c in report.changes if c.category == "removed"] == ["C"]
    assert report.counts["added"] == 1
    (gap,) = report.module_gaps.modules_only_in_older
    assert gap.model_dump() == {"module": "Core.B", "declarations": 3, "not_in_other": 3, "linked_in_other": 1,
                                "missing_in_other": True, "host": False}
    assert report.module_gaps.declarations_only_in_older == 3 and report.module_gaps.modules_only_in_newer == []
    assert report.newer.missing_modules == ["Core.B"] and report.older.missing_modules == []
    assert (report.older.module_count, report.newer.module_count) == (2, 1)


def test_host_module_code_is_neither_added_nor_removed_nor_compared(tmp_path: Path) -> None:
    old = [rec("A"), rec("H.kept", "Host.X"), rec("H.gone", "Host.X")]
    new = [rec("A"), rec("H.kept", "Host.X", "False"), rec("H.new", "Host.X"), rec("N", "Core.B")]
    report = diff_declarations(build(tmp_path, "old", old), build(tmp_path, "new", new, hosts=["Host.X"]))
    assert report.counts == {"added": 0, "removed": 0, "retyped": 0, "reprinted": 0, "deprecated": 0, "renamed": 0}
    gaps = report.module_gaps
    assert (gaps.declarations_only_in_older, gaps.declarations_only_in_newer, gaps.host_declarations_in_both) == (1, 2, 1)
    assert [m.module for m in gaps.modules_only_in_newer] == ["Core.B"] and gaps.modules_only_in_older == []
    assert report.compared == 1 and report.newer.host_modules == ["Host.X"] and report.differs()


def test_a_module_held_by_one_side_only_keeps_its_moved_declarations_compared(tmp_path: Path) -> None:
    """`Core.C` is gone from the newer catalog: `C.moved` now lives in `Core.A` and is compared
    (retyped), `C.gone` is counted under the module; `Core.B` is new: its names are not added."""
    old = [rec("A"), rec("C.moved", "Core.C", "True"), rec("C.gone", "Core.C"), rec("R")]
    new = [rec("A"), rec("C.moved", "Core.A", "False"), rec("B.new", "Core.B"), rec("N")]
    report = diff_declarations(build(tmp_path, "old", old), build(tmp_path, "new", new))
    assert report.counts == {"added": 1, "removed": 1, "retyped": 1, "reprinted": 0, "deprecated": 0, "renamed": 0}
    assert [(c.category, c.name) for c in report.changes] == [("added", "N"), ("removed", "R"), ("retyped", "C.moved")]
    (gone,) = report.module_gaps.modules_only_in_older
    assert (gone.module, gone.declarations, gone.not_in_other, gone.missing_in_other) == ("Core.C", 2, 1, False)
    (new_module,) = report.module_gaps.modules_only_in_newer
    assert (new_module.module, new_module.declarations, new_module.not_in_other) == ("Core.B", 1, 1)


def test_reprinted_needs_the_same_constants_conclusion_and_binder_count(tmp_path: Path) -> None:
    old = [
        rec("Ctor.mk", type_="Nat → Nat"),  # doc-gen4's two styles of the same constructor
        rec("More", type_="Nat → Nat"),  # a binder more
        rec("Other", type_="Nat → Nat"),  # another constant
        rec("Concl", type_="Nat → Nat", conclusion=["Nat"]),  # another conclusion
        rec("Same", type_="Nat → Nat"),
    ]
    new = [
        rec("Ctor.mk", type_="(n : Nat) : Nat"),
        rec("More", type_="(n m : Nat) : Nat"),
        rec("Other", type_="Nat → Int"),
        rec("Concl", type_="(n : Nat) : Nat", conclusion=[]),
        rec("Same", type_="Nat  →\n Nat"),
    ]
    report = diff_declarations(build(tmp_path, "old", old), build(tmp_path, "new", new))
    assert report.counts["reprinted"] == 1 and report.counts["retyped"] == 3
    listed = {c.name: c for c in report.changes}
    assert listed["Ctor.mk"].category == "reprinted" and listed["Ctor.mk"].details() == ["Nat → Nat -> (n : Nat) : Nat"]
    assert {n for n, c in listed.items() if c.category == "retyped"} == {"More", "Other", "Concl"}
    only = diff_declarations(build(tmp_path, "o2", old), build(tmp_path, "n2", new), ["reprinted"])
    assert [c.name for c in only.changes] == ["Ctor.mk"] and only.categories == ["reprinted"]


def test_cli_json_text_and_render_give_the_gaps_first(tmp_path: Path) -> None:
    build(tmp_path, "old", [rec("A"), rec("B", "Core.B"), rec("B.x", "Core.B")])
    build(tmp_path, "new", [rec("A"), rec("H", "Host.X")], {"Core.B": ["B.x"]}, ["Host.X"])
    build(tmp_path, "same", [rec("A")])
    runner = CliRunner()
    result = runner.invoke(main, ["catalog", "diff", "old", "new", "--root", str(tmp_path), "--json"], catch_exceptions=False)
    # No change in any category, yet the catalogs differ: drift.
    assert result.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]
    answer = json.loads(result.stdout)
    assert list(answer)[:4] == ["older", "newer", "module_gaps", "compared"]
    assert set(answer["counts"].values()) == {0}
    assert answer["module_gaps"]["declarations_only_in_older"] == 2 and answer["module_gaps"]["declarations_only_in_newer"] == 1
    text = runner.invoke(main, ["catalog", "diff", "old", "new", "--root", str(tmp_path)], catch_exceptions=False).stdout
    lines = text.splitlines()
    gap_line = lines.index("modules only in OLD: 1 (2 declarations); 2 declarations not in NEW counted here, not as removed")
    assert gap_line < next(i for i, line in enumerate(lines) if line.startswith("removed"))
    assert "  Core.B: 2 declarations, 2 not in NEW, 1 of them linked from NEW's signatures (recorded missing in NEW)" in lines
    assert "  Host.X: 1 declarations, 1 not in OLD (host module)" in lines
    assert "NEW records missing modules: Core.B" in lines and "NEW records host modules: Host.X" in lines
    rendered = render_diff(diff_declarations(open_verified(tmp_path, "old"), open_verified(tmp_path, "new"))).splitlines()
    assert rendered[0].endswith("added 0, removed 0, retyped 0, reprinted 0, deprecated 0, renamed 0; compared 1")
    assert rendered[1] == lines[gap_line]
    same = runner.invoke(main, ["catalog", "diff", "old", "same", "--root", str(tmp_path)], catch_exceptions=False)
    assert same.exit_code == OUTCOME_EXIT[Outcome.DRIFTED]  # Core.B is held by OLD only
    assert runner.invoke(main, ["catalog", "diff", "same", "same", "--root", str(tmp_path)]).exit_code == 0
