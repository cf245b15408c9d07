"""Source links of extractor catalogs: the GitHub rule, where Lake puts each package's sources,
which package holds a module, and the build filling `source_url` into the stored records.

The URLs expected here are written out by hand from the rule in `leanindex/catalog/links.py`
(repository, `/blob/`, revision, path, `#L<start>-L<end>`), not computed by the code under test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from lakefakes import FIXTURES, Sandbox, make_sandbox
from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.layout import DECLARATIONS_FILE, CatalogPaths
from leanindex.catalog.links import ModuleFiles, PackageTree, github_blob_base
from leanindex.engine import Engine
from leanindex.errors import ErrorCode, LeanIndexError
from leanindex.lake.build import ProfileBuild, build_profile
from leanindex.lake.project import package_trees
from leanindex.models import InspectRequest
from leanindex.sample import sample_stream_path
from streamkit import declaration, encode, footer, header

MATHLIB_REV = "8f3c1ab5d2e4f6a7b8c9d0e1f2a3b4c5d6e7f809"  # tests/fixtures/lake-manifest.json
BATTERIES_REV = "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d"
LEAN_GITHASH = "d8b18978322de05a8f3dba51ef03cf5461676c17"


@pytest.mark.parametrize(
    ("url", "rev", "expected"),
    [
        ("https://github.com/leanprover-community/mathlib4", "abc", "https://github.com/leanprover-community/mathlib4/blob/abc/"),
        ("https://github.com/leanprover-community/mathlib4.git", "abc", "https://github.com/leanprover-community/mathlib4/blob/abc/"),
        ("https://github.com/leanprover-community/batteries/", "abc", "https://github.com/leanprover-community/batteries/blob/abc/"),
        ("http://github.com/leanprover-community/mathlib4", "abc", None),
        ("git@github.com:leanprover-community/mathlib4.git", "abc", None),
        ("https://gitlab.com/someone/project", "abc", None),
        ("https://github.com/leanprover-community", "abc", None),
        ("https://github.com/leanprover-community/mathlib4", None, None),
        (None, None, None),
    ],
)
def test_only_github_https_repositories_get_a_blob_base(url: str | None, rev: str | None, expected: str | None) -> None:
    assert github_blob_base(url, rev) == expected


def _project(tmp_path: Path, manifest: dict | None = None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "lakefile.lean").write_text("import Lake\n")
    if manifest is None:
        shutil.copy(FIXTURES / "lake-manifest.json", project / "lake-manifest.json")
    else:
        (project / "lake-manifest.json").write_text(json.dumps(manifest))
    return project


def _write(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("-- source\n")


def test_package_trees_follow_lakes_layout(tmp_path: Path) -> None:
    project = _project(tmp_path)
    trees = package_trees(project)
    assert [(t.name, t.directory, t.blob_base) for t in trees] == [
        ("mathlib", project / ".lake/packages/mathlib", f"https://github.com/leanprover-community/mathlib4/blob/{MATHLIB_REV}/"),
        ("local-helpers", project / "helpers", None),
        ("batteries", project / ".lake/packages/batteries", f"https://github.com/leanprover-community/batteries/blob/{BATTERIES_REV}/"),
        ("Qq", project / ".lake/packages/Qq", "https://github.com/leanprover-community/quote4/blob/1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b/"),
    ]
    assert package_trees(tmp_path) == []  # no lake-manifest.json


def test_a_sub_directory_and_another_packages_dir(tmp_path: Path) -> None:
    manifest = json.loads((FIXTURES / "lake-manifest.json").read_text())
    manifest["packagesDir"] = "deps"
    manifest["packages"][0]["subDir"] = "lib/lean"
    manifest["packages"][0]["url"] = "https://example.org/mathlib4.git"
    manifest["packages"][2]["subDir"] = "src"
    trees = {t.name: t for t in package_trees(_project(tmp_path, manifest))}
    assert trees["mathlib"].directory == tmp_path / "project/deps/mathlib/lib/lean" and trees["mathlib"].blob_base is None
    assert trees["batteries"].directory == tmp_path / "project/deps/batteries/src"
    assert trees["batteries"].blob_base == f"https://github.com/leanprover-community/batteries/blob/{BATTERIES_REV}/src/"


def test_a_path_package_without_dir_is_refused(tmp_path: Path) -> None:
    manifest = json.loads((FIXTURES / "lake-manifest.json").read_text())
    del manifest["packages"][1]["dir"]
    with pytest.raises(LeanIndexError) as raised:
        package_trees(_project(tmp_path, manifest))
    assert raised.value.code is ErrorCode.INVALID_REQUEST and "'dir'" in raised.value.message


def test_a_module_links_into_the_package_that_holds_its_file(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _write(project / ".lake/packages/mathlib/Mathlib/Logic/Basic.lean")
    _write(project / ".lake/packages/batteries/Batteries/Data/List/Basic.lean")
    _write(project / ".lake/packages/batteries/Batteries/weird name/A.lean")  # module Batteries.«weird name».A
    _write(project / "helpers/Helpers/Tools.lean")
    _write(project / "Own/Module.lean")  # the project's own package: its repository is not named
    files = ModuleFiles(package_trees(project))
    assert files.file_url("Mathlib.Logic.Basic", LEAN_GITHASH) == (
        f"https://github.com/leanprover-community/mathlib4/blob/{MATHLIB_REV}/Mathlib/Logic/Basic.lean"
    )
    assert files.file_url("Batteries.Data.List.Basic", None) == (
        f"https://github.com/leanprover-community/batteries/blob/{BATTERIES_REV}/Batteries/Data/List/Basic.lean"
    )
    assert files.file_url("Batteries.«weird name».A", None) == (
        f"https://github.com/leanprover-community/batteries/blob/{BATTERIES_REV}/Batteries/weird%20name/A.lean"
    )
    assert files.file_url("Helpers.Tools", LEAN_GITHASH) is None  # a path package
    assert files.file_url("Own.Module", LEAN_GITHASH) is None
    assert files.file_url("Mathlib.Missing", LEAN_GITHASH) is None
    # Core modules no package holds come from lean4's src/ at the Lean that ran, when known.
    assert files.file_url("Init.Data.Nat.Basic", LEAN_GITHASH) == (
        f"https://github.com/leanprover/lean4/blob/{LEAN_GITHASH}/src/Init/Data/Nat/Basic.lean"
    )
    assert files.file_url("Lake.Config.Package", LEAN_GITHASH) == (
        f"https://github.com/leanprover/lean4/blob/{LEAN_GITHASH}/src/Lake/Config/Package.lean"
    )
    assert files.file_url("Init.Data.Nat.Basic", None) is None


def test_the_build_fills_source_url_into_the_stored_records(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _write(tree / "Init/Core.lean")
    _write(tree / "Init/Prelude.lean")
    files = ModuleFiles([PackageTree(name="lean4", directory=tree, blob_base="https://github.com/o/r/blob/c0ffee/src/")])
    given = "https://example.org/given#L1"
    records = [
        declaration(["A"]),  # Init.Core, lines 1-2
        declaration(["B"], module="Init.Prelude", range=None),
        declaration(["C"], source_url=given),
        declaration(["D"], source_url=None, range={"start": {"line": 7, "column": 0}, "end": {"line": 9, "column": 1}}),
        declaration(["E"], module="Init.Data.Nat.Basic"),  # in no tree, and the header's githash is not lean4's here
    ]
    lines = [encode(header(lean={"version": "4.35.0", "githash": None})), *map(encode, records), encode(footer(len(records)))]
    build_catalog(iter(lines), tmp_path / "root", "t", EnvironmentFacts(module_files=files))
    expected = {
        "A": "https://github.com/o/r/blob/c0ffee/src/Init/Core.lean#L1-L2",
        "B": "https://github.com/o/r/blob/c0ffee/src/Init/Prelude.lean",
        "C": given,
        "D": "https://github.com/o/r/blob/c0ffee/src/Init/Core.lean#L7-L9",
        "E": None,
    }
    engine = Engine(tmp_path / "root")
    try:
        for name, url in expected.items():
            answer = engine.inspect(InspectRequest(environment="t", declaration_name=name))
            assert (answer.source_url, answer.doc_url) == (url, None), name
    finally:
        engine.close()
    # The canonical table carries them too (so they are part of the catalog's digests).
    table = pq.read_table(CatalogPaths.of(tmp_path / "root", "t").catalog_dir / DECLARATIONS_FILE, columns=["name", "source_url"])
    assert dict(zip(table.column("name").to_pylist(), table.column("source_url").to_pylist())) == expected


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = make_sandbox(tmp_path)
    for key, value in box.env.items():
        monkeypatch.setenv(key, value)
    return box


def test_a_profile_build_links_core_and_package_modules(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The sample stream, as a Lean that names its commit would write it, with one declaration
    # moved to a Mathlib module that the project's mathlib checkout holds.
    lines = sample_stream_path().read_bytes().splitlines()
    first = json.loads(lines[0])
    first["lean"]["githash"] = LEAN_GITHASH
    first["modules"] = sorted([*first["modules"], "Mathlib.Logic.Basic"])
    moved = next(i for i, line in enumerate(lines) if json.loads(line).get("name") == "Nat.add_comm")
    lines[moved] = encode({**json.loads(lines[moved]), "module": "Mathlib.Logic.Basic"})
    stream = tmp_path / "linked.ndjson"
    stream.write_bytes(b"\n".join([encode(first), *lines[1:]]) + b"\n")
    monkeypatch.setenv("STANDIN_STREAM", str(stream))
    _write(sandbox.lean_path / "Mathlib/Logic/Basic.olean")
    _write(sandbox.project / ".lake/packages/mathlib/Mathlib/Logic/Basic.lean")

    build_profile(ProfileBuild(profile="demo", root=sandbox.root, project=sandbox.project, imports=["Init"],
                               lake=str(sandbox.lake), source=sandbox.source))
    engine = Engine(sandbox.root)
    try:
        moved_answer = engine.inspect(InspectRequest(environment="demo", declaration_name="Nat.add_comm"))
        core_answer = engine.inspect(InspectRequest(environment="demo", declaration_name="Nat.add_zero"))
    finally:
        engine.close()
    lines_of = [(a.range.start.line, a.range.end.line) for a in (moved_answer, core_answer)]
    assert moved_answer.source_url == (
        f"https://github.com/leanprover-community/mathlib4/blob/{MATHLIB_REV}/Mathlib/Logic/Basic.lean#L{lines_of[0][0]}-L{lines_of[0][1]}"
    )
    assert core_answer.source_url == (
        f"https://github.com/leanprover/lean4/blob/{LEAN_GITHASH}/src/{core_answer.module.replace('.', '/')}.lean"
        f"#L{lines_of[1][0]}-L{lines_of[1][1]}"
    )
    assert moved_answer.doc_url is None and core_answer.doc_url is None
