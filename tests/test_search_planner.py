"""The search planner's kept masks and fast paths on the embedded sample of Lean core, each
against a brute-force answer over the sample's records (`engine.filters`, `catalog.index`):
one-byte name masks, occurrences read from the range the estimate found, probes answered from
a kept byte mask, and the byte budget of kept masks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from leanindex.catalog import index as index_module
from leanindex.engine import Engine, filters
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import build

SAMPLE_LINES = sample_stream_path().read_bytes().splitlines()
SAMPLE = [r for r in map(json.loads, SAMPLE_LINES) if r["record"] == "declaration"]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root: Path = tmp_path_factory.mktemp("planner")
    build(root, "core", SAMPLE_LINES)
    engine = Engine(root)
    yield engine
    engine.close()


def _names(engine: Engine) -> list[str]:
    index = engine.catalog("core").index
    starts = np.asarray(index.name_starts)
    text = np.asarray(index.names).tobytes()
    return [text[starts[i] : starts[i + 1] - 1].decode() for i in range(index.size)]


def test_byte_masks_hold_the_names_containing_the_byte(engine: Engine) -> None:
    index = engine.catalog("core").index
    names = _names(engine)
    for byte in sorted({b for n in names for b in n.encode()}):
        want = [byte in n.encode() for n in names]
        assert index.byte_mask(byte).tolist() == want, chr(byte)
        if not 65 <= byte <= 90:  # folded names hold no ASCII capitals
            assert index.byte_mask(byte, case_sensitive=False).tolist() == [byte in n.lower().encode() for n in names], chr(byte)


def test_a_fragments_occurrences_are_read_from_the_range_its_estimate_found(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    index = engine.catalog("core").index
    searches: list[bytes] = []
    real = index_module._suffix_range

    def counted(sa: np.ndarray, text: np.ndarray, needle: bytes, lo: int, hi: int) -> tuple[int, int]:
        searches.append(needle)
        return real(sa, text, needle, lo, hi)

    monkeypatch.setattr(index_module, "_suffix_range", counted)
    term = filters.FragmentTerm(index, "succ", True)
    term.occurrences()
    # One search for the range (the estimate), one within it for the occurrences ending a name.
    assert searches == [b"succ", b"succ\x00"]
    names = _names(engine)
    assert sorted(set(term.occurrences().owners.tolist())) == [i for i, n in enumerate(names) if "succ" in n]


def test_a_kept_byte_mask_answers_probes_without_reading_names(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    index = engine.catalog("core").index
    names = _names(engine)
    term = filters.FragmentTerm(index, "e", True)
    assert term.dense_first
    index.byte_mask(ord("e"))
    # Names would be read for any number of candidates (ratio 0); the kept mask is cheaper still.
    monkeypatch.setattr(filters, "NAME_PROBE_RATIO", 0)

    def refused(*args: object) -> None:
        raise AssertionError("names read although the byte's mask is kept")

    monkeypatch.setattr(index, "names_contain", refused)
    candidates = np.arange(0, index.size, 7, dtype=np.int64)
    assert term.probe(candidates).tolist() == ["e" in names[int(c)] for c in candidates]
    # And through a whole search: a rare constant first, the fragment probed on what is left.
    response = engine.search(SearchRequest(environment="core", name_contains="e", type_pattern={"constants": ["Nat.succ"]}, result_limit=50))
    want = [r["name"] for r in SAMPLE if "e" in r["name"] and "Nat.succ" in r["type_constants"] and not (r["is_private"] or r["is_internal"])]
    assert 0 < response.total_matches == len(want)
    assert {r.name for r in response.results} <= set(want)


def test_kept_masks_stay_within_their_byte_budget(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = engine.catalog("core")
    index = catalog.index
    monkeypatch.setattr(index_module, "KEPT_MASK_BYTES", 2 * index.size)
    counts = np.diff(np.asarray(index.postings_offsets))
    constants = [int(c) for c in np.argsort(-counts)[:5]]
    for constant in constants:
        mask = index.posting_mask(constant)
        assert np.flatnonzero(mask).tolist() == np.asarray(index.posting_list(constant)).tolist()
    kept = [c for c in constants if index.mask_kept(("posting", c, "type"))]
    assert kept == constants[-2:]  # the two used last
    index.byte_mask(ord("a"))
    assert [c for c in constants if index.mask_kept(("posting", c, "type"))] == constants[-1:]
    assert index.mask_kept(("byte", ord("a"), True))


def test_a_fragment_in_many_names_is_answered_from_its_kept_mask(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    index = engine.catalog("core").index
    names = _names(engine)
    monkeypatch.setattr(filters, "DENSE_FRACTION", 10**9)  # every fragment is "in many names"
    for fragment, case_sensitive in (("Nat", True), ("nat", False), ("NAT", False), ("nat", True)):
        term = filters.FragmentTerm(index, fragment, case_sensitive)
        want = [(fragment in n) if case_sensitive else (fragment.lower() in n.lower()) for n in names]
        assert term.dense().tolist() == want, (fragment, case_sensitive)
    # `nat` and `NAT` without case are one mask, apart from `Nat` with case (`nat` with case is
    # in no name: no mask); the second use of each reads no occurrence.
    assert index.mask_kept(("fragment", b"nat", False)) and index.mask_kept(("fragment", b"Nat", True))
    assert not index.mask_kept(("fragment", b"nat", True))

    def refused(*args: object) -> None:
        raise AssertionError("occurrences looked up although the fragment's mask is kept")

    monkeypatch.setattr(index, "occurrences", refused)
    assert filters.FragmentTerm(index, "Nat", False).dense().tolist() == ["nat" in n.lower() for n in names]
    candidates = np.arange(0, index.size, 3, dtype=np.int64)
    assert filters.FragmentTerm(index, "Nat", True).probe(candidates).tolist() == ["Nat" in names[int(c)] for c in candidates]


def test_a_fragment_started_from_keeps_its_sorted_positions(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    index = engine.catalog("core").index
    names = _names(engine)
    monkeypatch.setattr(filters, "DENSE_FRACTION", 0)  # never a mask first
    monkeypatch.setattr(filters, "KEPT_FRAGMENT_FRACTION", 10**9)  # every fragment kept
    for fragment, case_sensitive in (("succ", True), ("SUCC", False)):
        want = [i for i, n in enumerate(names) if (fragment in n if case_sensitive else fragment.lower() in n.lower())]
        assert filters.FragmentTerm(index, fragment, case_sensitive).sparse().tolist() == want
    assert index.mask_kept(("positions", b"succ", True)) and index.mask_kept(("positions", b"succ", False))

    def refused(*args: object) -> None:
        raise AssertionError("occurrences looked up although the fragment's positions are kept")

    monkeypatch.setattr(index, "occurrences", refused)
    assert filters.FragmentTerm(index, "Succ", False).sparse().tolist() == [i for i, n in enumerate(names) if "succ" in n.lower()]
