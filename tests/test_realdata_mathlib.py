"""The MATHLIB catalog built from real doc-gen4 output of Mathlib at commit 0cc1f97 with its
dependencies (`../shared/realdata/docgen-mathlib-0cc1f97.tar.xz`, 7,927 modules, 306,809
declarations), checked against facts a Lean user knows and counts taken from the archive
independently of the importer.

The whole archive is imported once per session in a temporary folder (about 65 s here, the
longest single step of these tests).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.verify import verify_catalog
from leanindex.docgen import DocgenImport, import_docgen
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest

from realdata_support import MATHLIB_ARCHIVE, archive_declaration_names, realdata_path

pytestmark = pytest.mark.realdata

MATHLIB_COMMIT_PREFIX = "0cc1f97"
LEAN_COMMIT = "045d07d2349b9989278991fbcd79a6430032930d"


@pytest.fixture(scope="session")
def mathlib_archive() -> Path:
    return realdata_path(MATHLIB_ARCHIVE)


@pytest.fixture(scope="session")
def mathlib_build(mathlib_archive: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DocgenImport]:
    root = tmp_path_factory.mktemp("docgen-mathlib")
    return root, import_docgen(mathlib_archive, root, "mathlib")


@pytest.fixture(scope="session")
def mathlib_names(mathlib_archive: Path) -> list[str]:
    return archive_declaration_names(mathlib_archive)


@pytest.fixture(scope="session")
def engine(mathlib_build: tuple[Path, DocgenImport]):
    engine = Engine(mathlib_build[0])
    yield engine
    engine.close()


def test_declaration_count_equals_the_distinct_declarations_in_the_files(mathlib_build, mathlib_names: list[str]) -> None:
    _, result = mathlib_build
    assert len(mathlib_names) == 306_809  # the README's figure
    twice = sorted(name for name, seen in Counter(mathlib_names).items() if seen > 1)
    # doc-gen4 documents these theorems in two modules each; Lean keeps one constant.
    assert twice == ["List.take_one_drop_eq_of_lt_length", "Subtype.ext_val_iff"]
    assert result.declarations_read == len(mathlib_names)
    assert sorted(m.name for m in result.merged) == twice
    assert result.manifest.catalog.declaration_count == len(set(mathlib_names))


def test_manifest_names_mathlib_and_lean_commits(mathlib_build) -> None:
    root, result = mathlib_build
    manifest = verify_catalog(CatalogPaths.of(root, "mathlib"))
    assert manifest == result.manifest
    assert manifest.source.kind == "doc-gen4"
    assert manifest.mathlib_commit is not None and manifest.mathlib_commit.startswith(MATHLIB_COMMIT_PREFIX)
    assert manifest.source.commits["leanprover-community/mathlib4"] == manifest.mathlib_commit
    assert manifest.lean.githash == LEAN_COMMIT
    assert manifest.lean.version == "unknown"  # doc-gen4's data names the commit only
    assert {"type", "type_constants", "range", "is_private", "is_internal", "module"} <= set(manifest.source.approximate_fields)
    assert manifest.module_count == 7927


def test_mathlib_facts(engine: Engine) -> None:
    prime = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Nat.Prime"))
    assert (prime.kind.value, prime.module) == ("definition", "Mathlib.Data.Nat.Prime.Defs")
    add_comm = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="add_comm"))
    assert add_comm.kind.value == "theorem" and add_comm.namespace is None
    assert add_comm.module == "Mathlib.Algebra.Group.Defs"
    assert {"AddCommMagma", "Eq", "HAdd.hAdd"} <= set(add_comm.type_constants)
    group = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Group"))
    assert group.flags.is_class and group.flags.is_structure
    core = engine.inspect(InspectRequest(environment="MATHLIB", declaration_name="Nat.add_comm"))
    assert core.module is not None and core.module.startswith("Init.")


def test_search_prime_theorems_under_nat(engine: Engine) -> None:
    response = engine.search(
        SearchRequest(environment="MATHLIB", name_contains="prime", namespace_prefixes=["Nat"], kinds=["theorem"], result_limit=10)
    )
    assert response.total_matches > 100
    assert len(response.results) == 10 and response.next_cursor is not None
    assert all(r.name.startswith("Nat.") and "prime" in r.name and r.kind.value == "theorem" for r in response.results)
