"""The text index of a catalog: BM25 over each declaration's name, docstring and printed type.

Built at catalog build time into `catalog/<profile>/index/text/` with bm25s (a maintained,
numpy-only BM25 implementation whose index is a sparse matrix saved as `.npy` files: the files
are deterministic for the same records, so they are digested in the manifest and verified like
every catalog file, and they load memory-mapped). Scoring is bm25s's Lucene variant (k1 1.5,
b 0.75).

A declaration's words (`words`): its name components split at `.`, `_` and camelCase
boundaries (each followed by the English words Mathlib's naming convention abbreviates to it:
`comm` also counts as `commutativity`, `+` in a type as `addition`), counted `NAME_WEIGHT` times so that a word of the name outweighs one word of a long
docstring; then the words of its docstring and of its printed type, split the same way. Words
are lower-cased, English stop words dropped (bm25s's list, except the negation words
`NEGATIONS`, which change what a text means: `not injective` is not `injective`) and the rest
stemmed with the Snowball English stemmer (PyStemmer), so `commutativity` and `commutative` are
one word. A query's words go through the same steps, and its symbols of the table count as
their words.

Every index's vocabulary starts with the negation words, whether or not a declaration has
them, so an index built when they were still stop words (without them) is told apart
(`TextIndex.unindexed`) instead of answering a text with `not` as matching nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import bm25s
import numpy as np
import pyarrow.parquet as pq
import Stemmer

from .layout import DECLARATIONS_FILE

TEXT_DIR = "index/text"
#: The files bm25s writes (its default names), relative to the catalog folder.
TEXT_FILES = tuple(
    f"{TEXT_DIR}/{name}"
    for name in ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json", "params.index.json")
)
NAME_WEIGHT = 3
# Runs of capitals not followed by a lower-case letter (`HTTP` in `HTTPServer`), a word with an
# optional leading capital, digits, other letters (`ℕ`, `α`); `_`, `.` and symbols split.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_A-Za-z]+")
#: Words bm25s's English list drops that are kept here: they negate what follows.
NEGATIONS = ("not", "no", "non")
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN) - set(NEGATIONS)
# Names follow Mathlib's naming convention, which abbreviates and names symbols: each name or
# type word (or symbol) here also counts as the English words beside it, so a question in words
# ("commutativity of addition") finds `add_comm`. Docstrings are English already.
_EXPANSIONS = {
    "add": "addition", "mul": "multiplication product", "sub": "subtraction", "div": "division", "neg": "negation",
    "inv": "inverse", "comm": "commutativity", "assoc": "associativity", "distrib": "distributivity",
    "nat": "natural number", "int": "integer", "rat": "rational", "real": "real", "le": "less equal",
    "lt": "less than", "dvd": "divides divisibility", "inj": "injective", "surj": "surjective", "bij": "bijective",
    "pow": "power", "sqrt": "square root", "exp": "exponential", "log": "logarithm", "deriv": "derivative",
    "fderiv": "derivative", "integral": "integration", "cont": "continuous", "mono": "monotone", "antitone": "decreasing",
    "nhds": "neighborhood", "tsum": "sum series", "sup": "supremum", "inf": "infimum", "fin": "finite",
    "card": "cardinality", "prod": "product", "succ": "successor", "pred": "predecessor", "symm": "symmetry",
    "refl": "reflexivity", "trans": "transitivity", "iff": "equivalent", "ne": "unequal", "eq": "equal",
    "mem": "membership", "zpow": "power integer",
    "nsmul": "scalar multiplication", "smul": "scalar multiplication", "abs": "absolute value",
    "+": "addition", "*": "multiplication", "∑": "sum", "∏": "product", "∫": "integral", "≤": "less equal",
    "<": "less than", "∣": "divides", "⁻¹": "inverse", "∘": "composition", "∈": "membership",
    "⊆": "subset", "∪": "union", "∩": "intersection", "√": "square root", "ℕ": "natural number",
    "ℤ": "integer", "ℚ": "rational", "ℝ": "real", "ℂ": "complex",
}
_SYMBOLS = re.compile("|".join(re.escape(k) for k in sorted((k for k in _EXPANSIONS if not k.isalpha()), key=len, reverse=True)))


class Words:
    """Text to index words (see the module docstring), with the words of every raw word cached."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")
        self._plain: dict[str, list[str]] = {}
        self._expanded: dict[str, list[str]] = {}

    def _word(self, raw: str) -> list[str]:
        found = self._plain.get(raw)
        if found is None:
            lower = raw.lower()
            found = self._plain[raw] = [] if lower in _STOPWORDS else [self._stemmer.stemWord(lower)]
        return found

    def __call__(self, text: str) -> list[str]:
        """The index words of `text`, in order, repeats kept."""
        return [stem for raw in _WORD.findall(text) for stem in self._word(raw)]

    def _expand(self, raw: str) -> list[str]:
        found = self._expanded.get(raw)
        if found is None:
            extra = _EXPANSIONS.get(raw.lower())
            found = self._expanded[raw] = self._word(raw) + (self(extra) if extra is not None else [])
        return found

    def expanded(self, text: str) -> list[str]:
        """The words of a name or type, each followed by its naming-convention expansion, then
        the expansions of the symbols in it."""
        return [stem for raw in _WORD.findall(text) for stem in self._expand(raw)] + self._symbol_words(text)

    def _symbol_words(self, text: str) -> list[str]:
        """The words of each symbol of the expansion table in `text`, in order."""
        return [stem for symbol in _SYMBOLS.findall(text) for stem in self(_EXPANSIONS[symbol])]

    def query(self, text: str) -> list[str]:
        """The distinct words of a query: its words as `__call__` reads them, then the words of
        each symbol of the expansion table in it (`+` -> addition, `≤` -> less equal), as a
        type's symbols are indexed (`expanded`); other symbols are not words."""
        return list(dict.fromkeys(self(text) + self._symbol_words(text)))

    def declaration(self, name: str, doc: str | None, type_: str) -> list[str]:
        """The words of one declaration: its name's `NAME_WEIGHT` times, its docstring's, its
        type's (name and type words expanded)."""
        return self.expanded(name) * NAME_WEIGHT + (self(doc) if doc else []) + self.expanded(type_)


def write_text_index(catalog_dir: Path) -> list[str]:
    """Build the BM25 index of `catalog_dir/declarations.parquet` (document i is position i)
    into `catalog_dir/index/text/`; return the files written, relative to `catalog_dir`."""
    words = Words()
    # Word ids: the negation words first (see the module docstring), then the words in the
    # order they first occur in the catalog: given words, bm25s numbers them in the order of a
    # Python set, which changes with the process's hash seed, and so would the files' bytes.
    # Numbering while reading also spares bm25s a pass over every word.
    vocabulary: dict[str, int] = {word: i for i, word in enumerate(words.query(" ".join(NEGATIONS)))}
    number = vocabulary.setdefault
    ids: list[list[int]] = []
    parquet = pq.ParquetFile(catalog_dir / DECLARATIONS_FILE)
    for batch in parquet.iter_batches(columns=["name", "doc", "type"], batch_size=65_536):
        names, docs, types = (batch.column(i).to_pylist() for i in range(3))
        ids.extend([number(word, len(vocabulary)) for word in words.declaration(n, d, t)] for n, d, t in zip(names, docs, types, strict=True))
    if not any(ids):
        # A catalog whose records have no word at all still gets an index (of the empty word).
        empty = number("", len(vocabulary))
        ids = [[empty] for _ in ids] or [[empty]]
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index((ids, vocabulary), show_progress=False)
    retriever.save(catalog_dir / TEXT_DIR, show_progress=False)
    return list(TEXT_FILES)


class TextIndex:
    """A catalog's loaded text index: each word's postings and the BM25 scores (memory-mapped)."""

    def __init__(self, catalog_dir: Path):
        """Load `catalog_dir/index/text/`; raises `OSError`/`ValueError` when a file is missing
        or unreadable."""
        self._bm25 = bm25s.BM25.load(catalog_dir / TEXT_DIR, mmap=True)
        self._words = Words()

    def query_words(self, text: str) -> list[str]:
        """The distinct index words of a query (`Words.query`)."""
        return self._words.query(text)

    def unindexed(self, words: Iterable[str]) -> list[str]:
        """Those of the index words `words` that are negation words this index dropped as stop
        words (it was built before they were kept: its vocabulary lacks them); empty for an
        index built now."""
        negations = set(self._words.query(" ".join(NEGATIONS)))
        return [w for w in words if w in negations and w not in self._bm25.vocab_dict]

    def postings(self, word: str) -> np.ndarray:
        """Sorted positions whose words include `word` (an index word; empty when unknown)."""
        token = self._bm25.vocab_dict.get(word)
        if token is None:
            return np.empty(0, dtype=np.int64)
        scores = self._bm25.scores
        lo, hi = int(scores["indptr"][token]), int(scores["indptr"][token + 1])
        return np.sort(np.asarray(scores["indices"][lo:hi], dtype=np.int64))

    def scores(self, words: Iterable[str], positions: np.ndarray) -> np.ndarray:
        """The BM25 score (float32) of each of `positions` for the query `words` (index words;
        `positions` can only be non-empty when every word is known, as they all match)."""
        if not len(positions):
            return np.empty(0, dtype=np.float32)
        ids = [self._bm25.vocab_dict[w] for w in words]
        return np.asarray(self._bm25.get_scores(ids), dtype=np.float32)[positions]
