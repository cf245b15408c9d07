"""Locating `../shared/realdata` (doc-gen4 output) for the tests that read it, and counting
its declarations independently of the importer.

`shared/` lies beside the repository (the repo's parent folder holds it); the environment
variable LEANINDEX_SHARED points elsewhere. When it is absent, `realdata_path` skips the test
with the reason printed.
"""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

CORE_ARCHIVE = "docgen-core-v4.33.0.tar.xz"
MATHLIB_ARCHIVE = "docgen-mathlib-0cc1f97.tar.xz"
CORE_SAMPLE = "docgen-core-v4.33.0-sample"
MATHLIB_SAMPLE = "docgen-mathlib-0cc1f97-sample"


def shared_dir() -> Path:
    """`../shared` beside the repository, or `$LEANINDEX_SHARED` when that is not there."""
    beside = Path(__file__).resolve().parents[1].parent / "shared"
    if beside.is_dir() or "LEANINDEX_SHARED" not in os.environ:
        return beside
    return Path(os.environ["LEANINDEX_SHARED"])


def realdata_path(name: str) -> Path:
    """`shared/realdata/<name>`; skip the calling test (reason printed) when it is absent."""
    path = shared_dir() / "realdata" / name
    if not path.exists():
        reason = f"real doc-gen4 data not available: {path} is absent (a fresh clone without ../shared)"
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    return path


def archive_documents(archive: Path) -> Iterator[dict]:
    """Every `declaration-data-*.bmp` member of an archive as parsed JSON, in file order, read
    with plain `tarfile` + `json` (no importer code)."""
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar:
            base = os.path.basename(member.name)
            if member.isfile() and base.startswith("declaration-data-") and base.endswith(".bmp"):
                handle = tar.extractfile(member)
                assert handle is not None
                yield json.load(handle)


def archive_declaration_names(archive: Path) -> list[str]:
    """Every declaration name in every `declaration-data-*.bmp` member of an archive, in file
    order (`archive_documents`)."""
    names: list[str] = []
    for document in archive_documents(archive):
        names.extend(d["info"]["name"] for d in document["declarations"])
    return names


def sample_declarations(folder: Path) -> dict[str, dict]:
    """name -> the raw declaration object (`info`, `header`) plus its module, for a sample folder."""
    found: dict[str, dict] = {}
    for path in sorted(folder.glob("declaration-data-*.bmp")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for declaration in data["declarations"]:
            found[declaration["info"]["name"]] = {**declaration, "module": data["name"]}
    return found
