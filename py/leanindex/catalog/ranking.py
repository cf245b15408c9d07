"""The static part of relevance order, computed once at catalog build time.

Relevance order (`engine.relevance`) ranks matches by how the name matched, then by this static
rank: shorter printed names first (UTF-8 bytes), then fewer binders (`binder_count`), then more
uses by other declarations (how many declarations' value constants mention the declaration when
the catalog records value constants for every record, how many declarations' type constants do
otherwise), then `Name.lt` (the position). Three arrays join the index (`catalog.index`):
`binders.npy` (uint16), `uses.npy` (int32) and `static_rank.npy` (int32: each position's place
in that order, 0 first).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .layout import DECLARATIONS_FILE

if TYPE_CHECKING:
    import duckdb

# What the binder scan reads: brackets, arrows, `∀`/`Π`, commas, colons and the words between.
_BINDER_TOKENS = re.compile(r"[({\[⦃⟨]|[)}\]⦄⟩]|→|∀|Π|,|:(?!=)|[^\s(){}\[\]⦃⦄⟨⟩,:→∀Π]+")
_OPENERS = "({[⦃⟨"
_CLOSERS = ")}]⦄⟩"
# Brackets that bind without a colon: `{α}`, `[Group G]`, `⦃x⦄` (a `(…)` without one is a term).
_BIND_WITHOUT_COLON = "{[⦃"
# Binders whose body runs to the end of the text: nothing after them is a binder of the type.
_BODY_TO_THE_END = frozenset({"fun", "λ", "∃", "∃!"})


def binder_count(signature: str) -> int:
    """How many binders a printed type or doc-gen4 signature has at its top level: each name of
    a bracket group of a signature's binder part (before its top-level `:`: `(a b : α)` counts
    2, `{α}` 1, an instance `[Group G]` 1); each name a `∀`/`Π` binds, in brackets or not; each
    `→` outside brackets, a dependent or instance arrow (`(h : p) →`, `[Group G] →`) counting
    the names of its group instead. Other bracket groups are terms (`a + (b + c)`, `⟨x, y⟩`, a
    `(…)` without a colon), and nothing after `fun`, `λ` or `∃` counts (their body runs to the
    end). A heuristic on the printed text (Lean's `forallTelescope` is not available to
    Python), the same for every declaration, so it orders them alike."""
    count = depth = 0
    opener, words, colon = "", 0, False  # the top-level bracket group being read
    in_forall = forall_colon = False
    # The names of the groups just closed: binders if a `→` or the signature's `:` follows.
    pending = 0
    for token in _BINDER_TOKENS.findall(signature):  # no group: the whole tokens, without a match object each
        if token in _OPENERS:
            if depth == 0:
                opener, words, colon = token, 0, False
            depth += 1
        elif token in _CLOSERS:
            depth = max(depth - 1, 0)
            if depth == 0:
                names = (words or 1) if colon else 1 if opener in _BIND_WITHOUT_COLON else 0
                if in_forall:
                    count += names
                else:
                    pending += names
        elif depth > 0:
            if depth == 1 and not colon:
                if token == ":":
                    colon = True
                elif token not in ",→∀Π":
                    words += 1
        elif token in _BODY_TO_THE_END:
            break
        elif token in ("∀", "Π"):
            in_forall, forall_colon, pending = True, False, 0
        elif in_forall:
            if token == ",":
                in_forall = False
            elif token == ":":
                forall_colon = True
            elif not forall_colon and token != "→":
                count += 1
        elif token == "→":
            count, pending = count + (pending or 1), 0
        elif token == ":":
            count, pending = count + pending, 0
        else:
            pending = 0
    return count


def write_ranking(con: duckdb.DuckDBPyConnection, catalog_dir: Path, name_lengths: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays `binders`, `uses` and `static_rank` of the catalog in `catalog_dir` (its
    `declarations.parquet` and the serving tables of `con`), `name_lengths` being each
    position's printed name length in UTF-8 bytes. Reads the types one row group at a time."""
    import pyarrow.parquet as pq  # the build's: serving loads no pyarrow

    size = len(name_lengths)
    binders = np.zeros(size, dtype=np.uint16)
    parquet = pq.ParquetFile(catalog_dir / DECLARATIONS_FILE)
    at = 0
    for batch in parquet.iter_batches(columns=["type"], batch_size=65_536):
        counts = [binder_count(t) for t in batch.column(0).to_pylist()]
        binders[at : at + len(counts)] = np.minimum(counts, np.iinfo(np.uint16).max)
        at += len(counts)
    [(values_recorded,)] = con.execute("SELECT coalesce(bool_and(has_values), false) FROM recorded").fetchall()
    table = "value_postings" if values_recorded else "type_postings"
    # Each declaration that is also a constant of some type or value, with the number of
    # declarations whose value (or type) mentions it.
    used = con.execute(
        f"""SELECT d.pos, count(p.pos) AS uses FROM declarations d JOIN constants c ON c.name = d.name
            LEFT JOIN {table} p ON p.constant_id = c.id GROUP BY d.pos"""
    ).fetchnumpy()
    uses = np.zeros(size, dtype=np.int32)
    uses[np.asarray(used["pos"], dtype=np.int64)] = np.asarray(used["uses"], dtype=np.int32)
    # lexsort: the last key is the primary one.
    order = np.lexsort((np.arange(size), -uses.astype(np.int64), binders, name_lengths))
    static_rank = np.empty(size, dtype=np.int32)
    static_rank[order] = np.arange(size, dtype=np.int32)
    return {"binders": binders, "uses": uses, "static_rank": static_rank}
