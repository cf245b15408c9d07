"""Session-wide fixtures, and a check of the collection (one test per node id)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest
from filelock import FileLock

from embedded_support import DemoRun, first_demo


@pytest.fixture(scope="session")
def embedded_demo(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> DemoRun:
    """`leanindex demo` run once (a real process) into a fresh `LEANINDEX_ROOT`: it imports the
    embedded Lean core catalog there; the tests that need that catalog share it. Under
    pytest-xdist the workers share it too (about 45 s of CPU each import): the first to need
    it runs the demo under a lock in the run's common temporary folder and records what it
    printed; the others wait for the lock and read that record."""
    run_folder = tmp_path_factory.getbasetemp()
    shared = run_folder.parent if worker_id != "master" else run_folder
    record = shared / "embedded-demo.json"
    with FileLock(shared / "embedded-demo.lock"):
        if record.exists():
            fields = json.loads(record.read_text())
            return DemoRun(**{**fields, "root": Path(fields["root"])})
        done = first_demo(shared / "embedded-demo" / "root")
        record.write_text(json.dumps({**dataclasses.asdict(done), "root": str(done.root)}))
        return done


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
