"""Session-wide fixtures."""

from __future__ import annotations

import pytest

from embedded_support import DemoRun, first_demo


@pytest.fixture(scope="session")
def embedded_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`leanindex demo` run once (a real process) into a fresh `LEANINDEX_ROOT`: it imports the
    embedded Lean core catalog there; the tests that need that catalog share it."""
    return first_demo(tmp_path_factory.mktemp("embedded") / "root")
