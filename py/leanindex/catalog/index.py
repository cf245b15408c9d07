"""The search index of a catalog: flat arrays under `catalog/<profile>/index/`, memory-mapped.

Built from the serving database once, at catalog build time; loaded by the engine without
copying (numpy memory maps), so a cold start does not depend on the catalog's size. Serving
opens no database: every answer comes from these files.

- `names.npy` (uint8): every printed name in `pos` order, each preceded by a NUL byte, with a
  final NUL; `name_starts.npy` (int64, n+1) the offset of each name's first byte.
- `name_sa.npy` (int32/int64): the suffix array of `names.npy` (libdivsufsort), so every
  occurrence of a substring is one binary search away. Substrings are matched on UTF-8 bytes,
  which for a pattern without NUL is the same as matching code points.
- `name_owner.npy` (int32): for each byte of `names.npy`, the position of the name it belongs
  to, so occurrences map to declarations with one gather instead of a binary search each.
- `name_sa_before.npy` (uint8): for each place of the suffix array, the byte before its suffix
  (the Burrows-Wheeler transform of `names.npy`), so whether an occurrence starts the name, a
  component or a `_`-word is read from one contiguous slice instead of a byte scattered over
  the names (relevance order, `engine.relevance`).
- `names_folded.npy` (uint8), `name_sa_folded.npy` and `name_sa_folded_before.npy`: the same
  names with ASCII letters in lower case (same byte offsets, so `name_starts` and `name_owner`
  serve both), their suffix array and the byte before each suffix, for case-insensitive
  substrings.
- `kind.npy` (uint8, index into `records.KIND_ORDER`), `hidden.npy` (bool: private or
  internal), `module_id.npy` (int32 into the module names, -1 for none), `flags.npy`
  (uint16: bit i set when the record's `records.FLAG_FIELDS[i]` is true).
- `module_names.npy` (uint8) and `module_name_starts.npy` (int64, modules+1): the module names
  by module id (the `modules` table), laid out as `names`/`name_starts`; `constant_names.npy`
  and `constant_name_starts.npy` the same for the constant names by constant id (the
  `constants` table, sorted by name); read whole at load (`joined_strings`).
- `postings_offsets.npy` (int64, m+1) and `postings.npy` (int32): for constant id `c` (the
  `constants` table: every constant of a type or a value), the sorted positions whose type
  mentions it; `conclusion_postings*` the same for the conclusion's constants and
  `value_postings*` for the value's constants.
- `head.npy` (int32): the constant id of each declaration's conclusion head, -1 for none, -2
  when the record has no conclusion recorded; `has_values.npy` (bool): `value_constants`
  recorded.
- `ns_keys.npy` (uint8), `ns_key_starts.npy` (int64, n+1), `ns_pos.npy` (int32): every
  declaration's `names.namespace_key` in sorted byte order with its position, so the
  declarations strictly inside a namespace are one contiguous range.
- `binders.npy`, `uses.npy`, `static_rank.npy`: the static part of relevance order
  (`catalog.ranking`).
- `result_blocks.npy`, `result_block_starts.npy`, `result_row_offsets.npy`: the result fields
  of every record in compressed blocks (`catalog.rows`), so a page of scattered results is read
  without the database.
- `record_blocks.npy`, `record_block_starts.npy`, `record_row_offsets.npy`, `name_hashes.npy`,
  `name_hash_positions.npy`, `class_positions.npy`, `class_instance_counts.npy`: the rest of
  every record, a name's position by hash and each class's instance count (`catalog.records`),
  so inspect reads no database.
- `instance_classes.npy`, `instance_class_starts.npy`, `instance_offsets.npy`,
  `instance_positions.npy`, `instance_unrecorded.npy`: the instance table, each class's
  instances as a sorted list (`catalog.instances`), so an `instances_of` search reads no
  database.
- `text/`: the BM25 index over names, docstrings and types (`catalog.text`).

Search also keeps a few arrays derived from these on first use (`SearchIndex._derived`): which
positions are visible, have each kind, each flag (one byte per declaration each); and, within
`KEPT_MASK_BYTES`, the masks of the posting lists and name fragments last used
(`SearchIndex._kept_mask`), so filters that admit most of the catalog are intersected as masks
without reading rows (`engine.search`).
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .instances import INSTANCE_ARRAYS, write_instances
from .memory import release_freed_memory
from .ranking import write_ranking
from .records import RECORD_ARRAYS, write_records
from .rows import RESULT_ARRAYS, read_result_rows, write_result_rows
from .text import TEXT_FILES

if TYPE_CHECKING:
    import duckdb

INDEX_DIR = "index"
#: How many bytes of masks over the catalog (one byte per declaration each) a catalog keeps for
#: the posting lists and one-byte name fragments last used (`SearchIndex.posting_mask`,
#: `byte_mask`): 40 masks at 800,000 declarations, 109 at Mathlib's 307,000. The masks of
#: visibility, kinds and flags (a few, `SearchIndex._derived`) are kept besides.
KEPT_MASK_BYTES = 32 * 2**20
_KEPT_LOCK = threading.Lock()
_ARRAYS = (
    "names",
    "name_starts",
    "name_sa",
    "name_sa_before",
    "name_owner",
    "names_folded",
    "name_sa_folded",
    "name_sa_folded_before",
    "kind",
    "hidden",
    "module_id",
    "module_names",
    "module_name_starts",
    "flags",
    "constant_names",
    "constant_name_starts",
    "postings_offsets",
    "postings",
    "conclusion_postings_offsets",
    "conclusion_postings",
    "value_postings_offsets",
    "value_postings",
    "head",
    "has_values",
    "ns_keys",
    "ns_key_starts",
    "ns_pos",
    "binders",
    "uses",
    "static_rank",
    *RESULT_ARRAYS,
    *RECORD_ARRAYS,
    *INSTANCE_ARRAYS,
)


def index_files() -> list[str]:
    """The index files a catalog has, relative to its folder (the text index's included)."""
    return [*(f"{INDEX_DIR}/{name}.npy" for name in _ARRAYS), *TEXT_FILES]


def _joined(values: list[bytes], lead: bool) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate byte strings; return the bytes and the start offset of each (n+1 entries)."""
    lengths = np.fromiter((len(v) + (1 if lead else 0) for v in values), dtype=np.int64, count=len(values))
    starts = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    text = (b"\x00" + b"\x00".join(values) + b"\x00") if lead else b"".join(values)
    if lead:
        starts += 1  # skip each name's leading NUL
        starts[-1] = len(text)
    return np.frombuffer(text, dtype=np.uint8).copy(), starts


def joined_strings(text: np.ndarray, starts: np.ndarray) -> list[str]:
    """The strings of a `names`/`name_starts` layout (`text` uint8: each string after a NUL, a
    final NUL; `starts` int64, n+1), in order; exact for strings holding a NUL too. Raises
    `ValueError` (`pyarrow.ArrowInvalid`) when a string is not UTF-8."""
    import pyarrow as pa
    import pyarrow.compute as pc

    count = len(starts) - 1
    if count <= 0:
        return []
    # String i and the NUL after it are bytes starts[i]..starts[i + 1]: one binary array over
    # the map (no copy), the NUL sliced off in bulk.
    with_nul = pa.Array.from_buffers(pa.large_binary(), count, [None, pa.py_buffer(np.ascontiguousarray(starts)), pa.py_buffer(np.ascontiguousarray(text))])
    return pc.binary_slice(with_nul, 0, -1).cast(pa.large_string()).to_pylist()


def write_index(con: duckdb.DuckDBPyConnection, catalog_dir: Path) -> list[str]:
    """Write the index arrays from the serving tables of `con`; return the file names written
    (relative to `catalog_dir`). Memory: about 6 bytes per byte of printed names, plus the
    posting arrays."""
    import pydivsufsort  # the build's alone: serving never sorts suffixes

    out = catalog_dir / INDEX_DIR
    out.mkdir()
    names = [n.encode() for (n,) in con.execute("SELECT name FROM declarations ORDER BY pos").fetchall()]
    text, starts = _joined(names, lead=True)
    del names
    arrays = _SavedArrays(out, {"names": text, "name_starts": starts})
    arrays["name_sa"] = pydivsufsort.divsufsort(text)
    # Byte i belongs to the last name starting at or before it (a NUL to the name before it).
    owner = np.zeros(len(text), dtype=np.int32)
    if len(starts) > 1:
        owner[int(starts[0]) :] = np.repeat(np.arange(len(starts) - 1, dtype=np.int32), np.diff(starts))
    arrays["name_owner"] = owner
    arrays["names_folded"] = np.frombuffer(text.tobytes().lower(), dtype=np.uint8).copy()  # bytes.lower: ASCII only
    arrays["name_sa_folded"] = pydivsufsort.divsufsort(arrays["names_folded"])
    # The suffix at offset 0 (the first name's leading NUL) wraps to the final NUL: a NUL either way.
    arrays["name_sa_before"] = text[arrays["name_sa"] - 1]
    arrays["name_sa_folded_before"] = arrays["names_folded"][arrays["name_sa_folded"] - 1]
    cols = con.execute("SELECT kind_code, hidden, module_id, flag_bits FROM search_columns ORDER BY pos").fetchnumpy()
    arrays["kind"] = np.asarray(cols["kind_code"], dtype=np.uint8)
    arrays["hidden"] = np.asarray(cols["hidden"], dtype=np.bool_)
    arrays["module_id"] = np.asarray(cols["module_id"], dtype=np.int32)
    arrays["flags"] = np.asarray(cols["flag_bits"], dtype=np.uint16)
    modules = [n.encode() for (n,) in con.execute("SELECT name FROM modules ORDER BY id").fetchall()]
    arrays["module_names"], arrays["module_name_starts"] = _joined(modules, lead=True)
    constants = [n.encode() for (n,) in con.execute("SELECT name FROM constants ORDER BY id").fetchall()]
    arrays["constant_names"], arrays["constant_name_starts"] = _joined(constants, lead=True)
    constant_count = len(constants)
    del constants
    for prefix, table in (("", "type_postings"), ("conclusion_", "conclusion_postings"), ("value_", "value_postings")):
        postings = con.execute(f"SELECT constant_id, pos FROM {table} ORDER BY constant_id, pos").fetchnumpy()
        ids = np.asarray(postings["constant_id"], dtype=np.int64)
        arrays[f"{prefix}postings"] = np.asarray(postings["pos"], dtype=np.int32)
        arrays[f"{prefix}postings_offsets"] = np.searchsorted(ids, np.arange(constant_count + 1), side="left").astype(np.int64)
    recorded = con.execute("SELECT head_id, has_values FROM recorded ORDER BY pos").fetchnumpy()
    arrays["head"] = np.asarray(recorded["head_id"], dtype=np.int32)
    arrays["has_values"] = np.asarray(recorded["has_values"], dtype=np.bool_)
    keyed = con.execute("SELECT ns_key, pos FROM search_columns ORDER BY ns_key, pos").fetchall()
    keys, key_starts = _joined([k.encode() for k, _ in keyed], lead=False)
    arrays["ns_keys"], arrays["ns_key_starts"] = keys, key_starts
    arrays["ns_pos"] = np.fromiter((p for _, p in keyed), dtype=np.int32, count=len(keyed))
    arrays.update(write_ranking(con, catalog_dir, np.diff(starts) - 1))
    arrays.update(write_result_rows(con))
    arrays.update(write_records(con, text, starts))
    arrays.update(write_instances(con))
    release_freed_memory()  # before the text index's worker processes start (`builder.write_index_from`)
    return [f"{INDEX_DIR}/{arrays.path(name).name}" for name in _ARRAYS]


class _SavedArrays:
    """`write_index`'s arrays, each saved to `folder` as `<name>.npy` as soon as it is set, so
    the build holds none it has finished (about 230 MB on Mathlib); reading one back maps its
    file (copy-on-write: `pydivsufsort` takes writable arrays only)."""

    def __init__(self, folder: Path, arrays: dict[str, np.ndarray]) -> None:
        self.folder = folder
        self.saved: set[str] = set()
        self.update(arrays)

    def __setitem__(self, name: str, array: np.ndarray) -> None:
        np.save(self.folder / f"{name}.npy", array, allow_pickle=False)
        self.saved.add(name)

    def __getitem__(self, name: str) -> np.ndarray:
        return np.load(self.path(name), mmap_mode="c", allow_pickle=False)

    def update(self, arrays: dict[str, np.ndarray]) -> None:
        for name, array in arrays.items():
            self[name] = array

    def path(self, name: str) -> Path:
        """The file of array `name`; raises `KeyError` for one not saved."""
        if name not in self.saved:
            raise KeyError(name)
        return self.folder / f"{name}.npy"


def unique_positions(positions: np.ndarray, size: int) -> np.ndarray:
    """Sorted unique int64 positions; through a boolean mask when that beats sorting."""
    if len(positions) * 64 < size:
        ordered = np.sort(np.asarray(positions, dtype=np.int64))
        if len(ordered) < 2:
            return ordered
        keep = np.empty(len(ordered), dtype=bool)
        keep[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
        return ordered[keep]
    mask = np.zeros(size, dtype=bool)
    mask[positions] = True
    return np.flatnonzero(mask)


def _bytes_at(text: np.ndarray, start: int, length: int) -> bytes:
    return text[start : start + length].tobytes()


def _suffix_range(sa: np.ndarray, text: np.ndarray, needle: bytes, lo: int, hi: int) -> tuple[int, int]:
    """The places `lo <= i < hi` of suffix array `sa` whose suffix of `text` starts with `needle`."""
    k = len(needle)
    probe = range(len(sa))
    start = bisect.bisect_left(probe, needle, lo=lo, hi=hi, key=lambda i: _bytes_at(text, int(sa[i]), k))
    stop = bisect.bisect_right(probe, needle, lo=start, hi=hi, key=lambda i: _bytes_at(text, int(sa[i]), k))
    return start, stop


@dataclass(frozen=True)
class Occurrences:
    """The occurrences of one pattern in the printed names, one per place of a suffix-array
    range (`SearchIndex.occurrences`), in suffix-array order: `owners` (int32) the position
    owning each, `before` (uint8) the byte before each (NUL at the start of a name). A NUL
    sorts before every other byte, so the occurrences that end their name (the pattern is
    followed by the NUL before the next name) come first: the first `ending` of them."""

    ending: int
    owners: np.ndarray
    before: np.ndarray


@dataclass
class SearchIndex:
    """The memory-mapped index arrays of one catalog (see the module docstring)."""

    names: np.ndarray
    name_starts: np.ndarray
    name_sa: np.ndarray
    name_sa_before: np.ndarray
    name_owner: np.ndarray
    names_folded: np.ndarray
    name_sa_folded: np.ndarray
    name_sa_folded_before: np.ndarray
    kind: np.ndarray
    hidden: np.ndarray
    module_id: np.ndarray
    module_names: np.ndarray
    module_name_starts: np.ndarray
    flags: np.ndarray
    constant_names: np.ndarray
    constant_name_starts: np.ndarray
    postings_offsets: np.ndarray
    postings: np.ndarray
    conclusion_postings_offsets: np.ndarray
    conclusion_postings: np.ndarray
    value_postings_offsets: np.ndarray
    value_postings: np.ndarray
    head: np.ndarray
    has_values: np.ndarray
    ns_keys: np.ndarray
    ns_key_starts: np.ndarray
    ns_pos: np.ndarray
    binders: np.ndarray
    uses: np.ndarray
    static_rank: np.ndarray
    result_blocks: np.ndarray
    result_block_starts: np.ndarray
    result_row_offsets: np.ndarray
    record_blocks: np.ndarray
    record_block_starts: np.ndarray
    record_row_offsets: np.ndarray
    name_hashes: np.ndarray
    name_hash_positions: np.ndarray
    class_positions: np.ndarray
    class_instance_counts: np.ndarray
    instance_classes: np.ndarray
    instance_class_starts: np.ndarray
    instance_offsets: np.ndarray
    instance_positions: np.ndarray
    instance_unrecorded: np.ndarray

    @classmethod
    def load(cls, catalog_dir: Path) -> SearchIndex:
        """Memory-map every array of `catalog_dir/index/`; raises `OSError`/`ValueError` when a
        file is missing or not a numpy array."""
        folder = catalog_dir / INDEX_DIR
        # Plain ndarray views of the maps: np.memmap's per-item bookkeeping is what the binary
        # searches would otherwise spend their time in.
        return cls(**{name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray) for name in _ARRAYS})

    def static_order(self) -> np.ndarray:
        """The positions in static rank order (the inverse of `static_rank`), built on first use."""
        order = self.__dict__.get("_static_order")
        if order is None:
            order = np.empty(self.size, dtype=np.int64)
            order[np.asarray(self.static_rank)] = np.arange(self.size, dtype=np.int64)
            self.__dict__["_static_order"] = order
        return order

    @property
    def size(self) -> int:
        """Number of declarations."""
        return len(self.kind)

    def result_rows(self, positions: np.ndarray) -> dict[int, dict[str, Any]]:
        """The result fields (`rows.RESULT_FIELDS`) of each of `positions` (valid positions),
        keyed by position (`catalog.rows`)."""
        return read_result_rows(self.result_blocks, self.result_block_starts, self.result_row_offsets, positions)

    def positions_containing(self, pattern: str, case_sensitive: bool = True) -> np.ndarray:
        """Sorted unique positions whose printed name contains `pattern` (`pattern` non-empty
        and without NUL); with `case_sensitive=False`, ASCII letters match in either case."""
        found = self.occurrences(pattern, case_sensitive)
        return unique_positions(found.owners, self.size) if len(found.owners) else np.empty(0, dtype=np.int64)

    def occurrences(self, pattern: str, case_sensitive: bool = True, places: tuple[int, int] | None = None) -> Occurrences:
        """Every occurrence of `pattern` (non-empty, without NUL) in the printed names, as one
        range of the suffix array (`name_sa`, or `name_sa_folded` with `case_sensitive=False`):
        two binary searches (none when `places` gives the range, as `suffix_range` returned
        it), then one within it for the occurrences that end their name (see `Occurrences`)."""
        needle = pattern.encode() if case_sensitive else pattern.encode().lower()
        sa, text = (self.name_sa, self.names) if case_sensitive else (self.name_sa_folded, self.names_folded)
        before = self.name_sa_before if case_sensitive else self.name_sa_folded_before
        start, stop = places if places is not None else _suffix_range(sa, text, needle, 0, len(sa))
        ending = _suffix_range(sa, text, needle + b"\x00", start, stop)[1]
        return Occurrences(ending - start, self.name_owner[sa[start:stop]], before[start:stop])

    def position_of(self, name: str) -> int | None:
        """The position of the declaration printed exactly `name`, or None: the suffix-array
        range of the name between its two NULs (two binary searches, no record read). A name
        with a NUL (which could span two names) or no UTF-8 form is no stored name."""
        if not name or "\x00" in name:
            return None
        try:
            needle = b"\x00" + name.encode() + b"\x00"
        except UnicodeEncodeError:
            return None
        start, stop = _suffix_range(self.name_sa, self.names, needle, 0, len(self.name_sa))
        # The suffix starts at the NUL before the name; the byte after it is the name's first.
        return int(self.name_owner[int(self.name_sa[start]) + 1]) if stop > start else None

    def positions_with_constant(self, constant_id: int, where: str = "type") -> np.ndarray:
        """Sorted positions whose type (`where="type"`), conclusion (`"conclusion"`) or value
        (`"value"`) mentions constant `constant_id`."""
        return np.asarray(self.posting_list(constant_id, where), dtype=np.int64)

    def posting_list(self, constant_id: int, where: str = "type") -> np.ndarray:
        """`positions_with_constant` as stored (int32, a view of the memory map: no copy)."""
        prefix = "" if where == "type" else f"{where}_"
        offsets, postings = getattr(self, f"{prefix}postings_offsets"), getattr(self, f"{prefix}postings")
        return postings[int(offsets[constant_id]) : int(offsets[constant_id + 1])]

    def positions_in_namespace(self, key: str) -> np.ndarray:
        """Sorted positions strictly inside the namespace whose `namespace_key` is `key`."""
        lo, hi = self.namespace_range(key)
        return unique_positions(np.asarray(self.ns_pos[lo:hi]), self.size)

    def namespace_range(self, key: str) -> tuple[int, int]:
        """The places `lo <= i < hi` of `ns_pos` (unsorted positions) strictly inside the
        namespace whose `namespace_key` is `key`: two binary searches, nothing read but keys."""
        starts, text = self.ns_key_starts, self.ns_keys
        probe = range(len(starts) - 1)

        def key_at(i: int) -> bytes:
            return text[int(starts[i]) : int(starts[i + 1])].tobytes()

        lo = bisect.bisect_left(probe, (key + "n").encode(), key=key_at)
        hi = bisect.bisect_left(probe, (key + "t").encode(), lo=lo, key=key_at)
        return lo, hi

    def suffix_range(self, pattern: str, case_sensitive: bool = True) -> tuple[int, int]:
        """The suffix-array places `start <= i < stop` of the occurrences of `pattern` (non-empty,
        without NUL) in the names (folded names with `case_sensitive=False`): `stop - start` is
        how many occurrences there are, an upper bound on the names containing it."""
        needle = pattern.encode() if case_sensitive else pattern.encode().lower()
        sa, text = (self.name_sa, self.names) if case_sensitive else (self.name_sa_folded, self.names_folded)
        return _suffix_range(sa, text, needle, 0, len(sa))

    def _derived(self, key: object, build: Callable[[], np.ndarray]) -> np.ndarray:
        """An array derived from the verified ones, built on first use and kept (in the
        instance, as `static_order`): two threads may both build it, to the same value."""
        cache = self.__dict__.setdefault("_derived_cache", {})
        found = cache.get(key)
        if found is None:
            found = build()
            found.flags.writeable = False
            cache[key] = found
        return found

    def kept_array(self, key: object, build: Callable[[], np.ndarray]) -> np.ndarray:
        """The array `build()` makes for `key` (read-only), kept among the masks last used
        (`KEPT_MASK_BYTES` counts its bytes with theirs): a name fragment's mask or sorted
        positions, keyed by `engine.filters.FragmentTerm` (a fragment in a large share of the
        names costs a gather of every occurrence's owner and a scatter or sort each time)."""
        return self._kept_mask(key, build)

    def _kept_mask(self, key: object, build: Callable[[], np.ndarray]) -> np.ndarray:
        """A bool mask over the catalog (or another array) built by `build`, kept while the most
        recently used such arrays fit in `KEPT_MASK_BYTES` (least recently used dropped first)."""
        with _KEPT_LOCK:
            kept = self.__dict__.setdefault("_kept_masks", OrderedDict())
            found = kept.get(key)
            if found is not None:
                kept.move_to_end(key)
                return found
        mask = build()
        mask.flags.writeable = False
        with _KEPT_LOCK:
            kept[key] = mask
            while kept and sum(m.nbytes for m in kept.values()) > KEPT_MASK_BYTES:
                kept.popitem(last=False)
        return mask

    def mask_kept(self, key: object) -> bool:
        """True when the mask of `key` (`("posting", constant_id, where)`, `("byte", byte,
        case_sensitive)` or `("fragment", UTF-8 bytes, folded without case, case_sensitive)`) is
        kept: reading it costs a gather, not a build."""
        return key in self.__dict__.get("_kept_masks", {})

    def kept_mask_bytes(self) -> int:
        """Bytes held by every mask this index keeps (`_kept_mask` and `_derived` alike)."""
        kept = list(self.__dict__.get("_kept_masks", {}).values()) + list(self.__dict__.get("_derived_cache", {}).values())
        return int(sum(m.nbytes for m in kept))

    def posting_mask(self, constant_id: int, where: str = "type") -> np.ndarray:
        """Which positions `posting_list(constant_id, where)` holds (bool), kept among the masks
        last used (`KEPT_MASK_BYTES`): for the most common constants, scattering the list costs
        a hundred times more than the AND of two masks."""

        def build() -> np.ndarray:
            mask = np.zeros(self.size, dtype=bool)
            mask[self.posting_list(constant_id, where)] = True
            return mask

        return self._kept_mask(("posting", constant_id, where), build)

    def visible_mask(self) -> np.ndarray:
        """Which positions are visible (bool, one per declaration: not `hidden`), kept."""
        return self._derived("visible", lambda: ~np.asarray(self.hidden, dtype=bool))

    def kind_counts(self) -> np.ndarray:
        """How many declarations have each kind code (int64, one per `records.KIND_ORDER`
        entry that occurs, at least up to the largest code present), kept."""
        return self._derived("kind_counts", lambda: np.bincount(np.asarray(self.kind)))

    def kind_mask(self, code: int) -> np.ndarray:
        """Which positions have kind code `code` (bool), kept."""
        return self._derived(("kind", code), lambda: np.asarray(self.kind) == code)

    def flag_mask(self, bit: int) -> np.ndarray:
        """Which positions have flag bit `bit` set (bool), kept."""
        return self._derived(("flag", bit), lambda: (np.asarray(self.flags) & (1 << bit)) != 0)

    def flag_count(self, bit: int) -> int:
        """How many declarations have flag bit `bit` set."""
        return int(self._derived(("flag_count", bit), lambda: np.array(np.count_nonzero(self.flag_mask(bit))))[()])

    def byte_mask(self, byte: int, case_sensitive: bool = True) -> np.ndarray:
        """Which positions' printed names contain byte `byte` (1-255; bool; with
        `case_sensitive=False` in the folded names, `byte` being lower case), kept among the
        masks last used (`KEPT_MASK_BYTES`): a one-byte fragment occurs in most names, where
        finding the owner of every occurrence (random reads into `name_owner`) costs more than
        one sequential pass over the names, which this is: each name's bytes with the NUL that
        ends it, OR-reduced."""

        def build() -> np.ndarray:
            if not self.size:
                return np.zeros(0, dtype=bool)
            text = self.names if case_sensitive else self.names_folded
            return np.logical_or.reduceat(np.asarray(text) == byte, np.asarray(self.name_starts[:-1]))

        return self._kept_mask(("byte", byte, case_sensitive), build)

    def names_contain(self, positions: np.ndarray, pattern: str, case_sensitive: bool = True) -> np.ndarray:
        """For each of `positions`, whether its printed name contains `pattern` (bool; with
        `case_sensitive=False` ASCII letters match in either case): the names of those
        positions alone are searched (pyarrow over the names array, no copy of the names), so
        the cost follows `len(positions)`, not how often `pattern` occurs in the catalog."""
        import pyarrow as pa  # here: a search that reads no candidates' names loads no pyarrow
        import pyarrow.compute as pc

        if not len(positions):
            return np.zeros(0, dtype=bool)
        key = "names_arrow" if case_sensitive else "names_folded_arrow"
        table = self.__dict__.get(key)
        if table is None:
            text = self.names if case_sensitive else self.names_folded
            # Name i is bytes name_starts[i]..name_starts[i+1]: itself and the NUL after it.
            table = pa.Array.from_buffers(pa.large_binary(), self.size, [None, pa.py_buffer(np.ascontiguousarray(self.name_starts)), pa.py_buffer(np.ascontiguousarray(text))])
            self.__dict__[key] = table
        needle = pattern if case_sensitive else pattern.encode().lower().decode()
        found = pc.match_substring(table.take(pa.array(np.asarray(positions, dtype=np.int64))), needle)
        return found.to_numpy(zero_copy_only=False)
