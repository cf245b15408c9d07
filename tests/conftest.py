"""Session-wide fixtures, and a check of the collection (one test per node id)."""

from __future__ import annotations

from collections import Counter

import pytest

from embedded_support import DemoRun, first_demo


@pytest.fixture(scope="session")
def embedded_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`leanindex demo` run once (a real process) into a fresh `LEANINDEX_ROOT`: it imports the
    embedded Lean core catalog there; the tests that need that catalog share it."""
    return first_demo(tmp_path_factory.mktemp("embedded") / "root")


#: Test files that take minutes (the Mathlib import): collected first, so that a pytest-xdist
#: worker starts them at once instead of finishing the run alone with them.
LONGEST_FIRST = ("test_realdata_mathlib.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the `LONGEST_FIRST` files first (otherwise collection order), and refuse a collection
    in which two tests share a node id: pytest-xdist schedules tests by node id and runs one of
    each id, silently. (schemathesis under pytest 9 named all 17 operations of the API fuzz test
    alike, and a two-worker run executed one of them.)"""
    items.sort(key=lambda item: item.path.name not in LONGEST_FIRST)
    counts = Counter(item.nodeid for item in items)
    repeated = sorted(nodeid for nodeid, count in counts.items() if count > 1)
    if repeated:
        raise pytest.UsageError(f"{len(repeated)} node ids name several tests (xdist would run one of each): {repeated[:5]}")
