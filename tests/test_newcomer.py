"""A newcomer's first steps: the embedded Lean core catalog, the default root, the wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import platformdirs
import pytest

from embedded_support import DemoRun, run_leanindex
from leanindex import Client
from leanindex.embedded import EMBEDDED_ARCHIVE, EMBEDDED_PROFILE, embedded_archive
from leanindex.engine import Engine
from leanindex.home import ROOT_ENV, default_root
from leanindex.models import SearchRequest

REPO = Path(__file__).resolve().parents[1]


def test_first_demo_imports_lean_core_and_searches_it(embedded_demo: DemoRun) -> None:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    out = embedded_demo.stdout
    assert "86,957 (86,957 visible)" in out
    assert "d8b18978322de05a8f3dba51ef03cf5461676c17" in out
    # Real answers from Lean core: a theorem, a cursor followed, a misspelt constant's suggestion.
    assert "Nat.add_comm" in out and "(n m : Nat) : n + m = m + n" in out
    assert "— following next_cursor —" in out
    assert "close names: List.length" in out
    catalog = embedded_demo.root.resolve() / "catalog" / EMBEDDED_PROFILE
    assert f"the catalog is in {catalog}" in out
    assert "leanindex search -e CORE-DOCGEN" in out and "leanindex serve" in out


def test_second_demo_reuses_the_verified_catalog(embedded_demo: DemoRun) -> None:
    again = run_leanindex(embedded_demo.root, "demo")
    assert again.returncode == 0, again.stderr
    assert "catalog already imported and verified" in again.stdout
    assert "import: Lean core" not in again.stdout


def test_every_surface_uses_the_default_root(embedded_demo: DemoRun, monkeypatch: pytest.MonkeyPatch) -> None:
    found = run_leanindex(embedded_demo.root, "search", "-e", "core-docgen", "-n", "add_comm", "--namespace", "Nat", "--json")
    assert found.returncode == 0, found.stderr
    names = [row["name"] for row in json.loads(found.stdout)["results"]]
    assert "Nat.add_comm" in names
    monkeypatch.setenv(ROOT_ENV, str(embedded_demo.root))
    assert default_root() == embedded_demo.root
    assert Engine().root == embedded_demo.root.resolve()
    with Client.local() as client:
        assert [e.environment for e in client.environments().environments] == ["CORE-DOCGEN"]
        assert client.search(environment="CORE-DOCGEN", name_contains="add_comm", namespace_prefixes=["Nat"]).total_matches == len(names)
    engine = Engine()
    try:
        assert engine.search(SearchRequest(environment="CORE-DOCGEN", name_contains="Nat.add_comm")).results[0].name == "Nat.add_comm"
    finally:
        engine.close()


def test_without_the_variable_the_root_is_the_user_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected = Path(platformdirs.user_data_dir("leanindex", appauthor=False))
    if sys.platform.startswith("linux"):
        assert expected == tmp_path / "xdg" / "leanindex"
    monkeypatch.delenv(ROOT_ENV, raising=False)
    assert default_root() == expected
    monkeypatch.setenv(ROOT_ENV, "")  # set but empty: not a folder name
    assert default_root() == expected
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "mine"))
    assert default_root() == tmp_path / "mine"


def test_the_wheel_ships_the_archive_and_works_unpacked(tmp_path: Path) -> None:
    """A non-editable install: build the wheel, unpack it, and run the package from there."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("leanindex-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert f"leanindex/data/{EMBEDDED_ARCHIVE}" in names and "leanindex/data/NOTICE-docgen-core.md" in names
        assert archive.read(f"leanindex/data/{EMBEDDED_ARCHIVE}") == embedded_archive().read_bytes()
        archive.extractall(tmp_path / "site")
    probe = (
        "import leanindex, sys\n"
        "from leanindex.embedded import embedded_archive\n"
        "from leanindex.docgen.files import iter_docgen_files\n"
        "print(leanindex.__file__)\n"
        "print(embedded_archive())\n"
        "print(next(iter(iter_docgen_files(embedded_archive()))).name)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
    )
    assert ran.returncode == 0, ran.stderr
    module_file, archive_path, first_file = ran.stdout.splitlines()
    assert module_file.startswith(str(tmp_path / "site")) and archive_path.startswith(str(tmp_path / "site"))
    assert first_file.startswith("declaration-data-")
