"""`modules_digest`: every part of a module's `.olean` that exists is hashed, from the search
path entry where the `.olean` is found first."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from leanindex.errors import LeanIndexError
from leanindex.lake.oleans import modules_digest


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(base: Path, relative: str, data: bytes) -> None:
    path = base / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture
def search_path(tmp_path: Path) -> list[Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    _write(first, "A/B.olean", b"exported A.B")
    _write(second, "C.olean", b"exported C")
    return [first, second]


def test_digest_of_plain_oleans_is_the_sorted_module_lines(search_path: list[Path]) -> None:
    expected = f"A.B {_sha(b'exported A.B')}\nC {_sha(b'exported C')}\n"
    assert modules_digest(["C", "A.B"], search_path) == _sha(expected.encode())


@pytest.mark.parametrize("part", ["olean.server", "olean.private"])
def test_a_change_in_any_part_changes_the_digest(search_path: list[Path], part: str) -> None:
    before = modules_digest(["A.B", "C"], search_path)
    _write(search_path[0], f"A/B.{part}", b"docstrings or proofs, version 1")
    with_part = modules_digest(["A.B", "C"], search_path)
    _write(search_path[0], f"A/B.{part}", b"docstrings or proofs, version 2")
    changed = modules_digest(["A.B", "C"], search_path)
    assert len({before, with_part, changed}) == 3
    expected = f"A.B {_sha(b'exported A.B')} {part} {_sha(b'docstrings or proofs, version 2')}\nC {_sha(b'exported C')}\n"
    assert changed == _sha(expected.encode())


def test_both_parts_are_hashed_in_order(search_path: list[Path]) -> None:
    _write(search_path[1], "C.olean.private", b"proofs")
    _write(search_path[1], "C.olean.server", b"docs")
    expected = f"A.B {_sha(b'exported A.B')}\nC {_sha(b'exported C')} olean.server {_sha(b'docs')} olean.private {_sha(b'proofs')}\n"
    assert modules_digest(["A.B", "C"], search_path) == _sha(expected.encode())


def test_parts_come_from_where_the_olean_was_found(search_path: list[Path]) -> None:
    """A part lying in a later search-path entry belongs to another copy of the module."""
    before = modules_digest(["A.B"], search_path)
    _write(search_path[1], "A/B.olean.server", b"another copy's docstrings")
    assert modules_digest(["A.B"], search_path) == before


def test_a_part_without_its_olean_is_still_missing(search_path: list[Path]) -> None:
    _write(search_path[0], "D.olean.server", b"docs")
    with pytest.raises(LeanIndexError, match="no .olean on the search path, first 'D'"):
        modules_digest(["D"], search_path)
