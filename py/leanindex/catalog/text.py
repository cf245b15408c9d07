"""The text index of a catalog: BM25 per field over each declaration's name, namespace,
docstring and printed type, read through one table of mathematical words.

A declaration has four fields (`FIELDS`): `name`, the words of its last name component
(`Nat.Prime.two_le` -> `two`, `le`); `namespace`, the words of the components before
it (`nat`, `prime`); `doc`, its docstring's words; `type`, its printed type's words and symbols
without the names its binders bind (`(a b : G) : a + b = b + a` -> `add`, `eq`; variable
names are not words of a statement). Names split at `.`, `_` and camelCase boundaries.

Every text (names, docstrings, types and queries alike) is read by `Words`: LaTeX is turned
into the symbols Lean shows (`lexicon.LATEX_NAMES`), symbols, LaTeX commands and English
phrases of the table `catalog.lexicon` become their canonical word (`≤`, `\\le`, "at most" and
the name word `le` are all `le`), the remaining words are lower-cased, English stop words
dropped (bm25s's list, except the negation words `NEGATIONS`: `not injective` is not
`injective`) and stemmed with the Snowball English stemmer (PyStemmer), so `commutative` and
`commutativity` are one word. An ASCII operator between two letters is not a symbol
(`Cauchy-Schwarz`, `one-to-one`).

Each field is scored by BM25 with its own length normalisation (`FIELD_PARAMS`; Lucene's
formula, bm25s's `lucene` variant, computed with numpy by `_field_scores`), and stored as a sparse
matrix in plain `.npy` files (deterministic for the same records, so digested in the manifest
and verified like every catalog file; loaded memory-mapped): for field `f`,
`index/text/<f>.data.npy` (float32 scores), `<f>.indices.npy` (int32 positions, sorted per
word) and `<f>.indptr.npy` (int64, one more than the vocabulary), over one vocabulary,
`index/text/vocabulary.json` (a JSON list: word id -> word, numbered in first-read order).
`index/text/name_words.npy` and `namespace_words.npy` (uint8) count the distinct words of each
declaration's name and namespace, so whether a query spells a name is one comparison
(`engine.textrank`); `secondary.npy` marks projections, `formula_keys.npy` and
`formula_positions.npy` hold the formula keys (`catalog.formula`).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import unicodedata
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, cast

import numpy as np
import Stemmer

from . import formula
from .formula import IDENT as _IDENT
from .formula import VARIABLE as _VARIABLE
from .formula import binder_names
from .layout import DECLARATIONS_FILE
from .lexicon import ENTRIES, LATEX_LAYOUT, LATEX_NAMES
from .memory import release_freed_memory

TEXT_DIR = "index/text"
#: The fields of a declaration, in the order their scores are summed.
FIELDS: tuple[str, ...] = ("name", "namespace", "doc", "type")
#: BM25 parameters (k1, b) per field: names are short and their length says little (low b);
#: docstrings and types vary in length a lot (Lucene's default b).
FIELD_PARAMS: dict[str, tuple[float, float]] = {"name": (1.2, 0.3), "namespace": (1.2, 0.3), "doc": (1.2, 0.75), "type": (1.2, 0.75)}
VOCABULARY_FILE = f"{TEXT_DIR}/vocabulary.json"
#: The per-declaration word counts of the name and the namespace.
COUNT_FILES = {"name": f"{TEXT_DIR}/name_words.npy", "namespace": f"{TEXT_DIR}/namespace_words.npy"}
#: Whether each declaration is a projection of a structure (a binder named `self`, or a parent
#: projection `toX`): what a concept query ranks after the concept itself (bool).
SECONDARY_FILE = f"{TEXT_DIR}/secondary.npy"
_SECONDARY = re.compile(r"[(\[{]self :|^to[A-Z]")
#: Words of a name dropped as stop words: the rest (`to`, `on`, `iff`) say what a name is.
_NAME_STOPWORDS = frozenset({"is", "of", "the", "a", "an", "are", "be"})
#: The formula keys (`catalog.formula`), sorted, and the position of each.
FORMULA_FILES = (f"{TEXT_DIR}/formula_keys.npy", f"{TEXT_DIR}/formula_positions.npy")
#: Every file of the text index, relative to the catalog folder.
TEXT_FILES: tuple[str, ...] = (
    *(f"{TEXT_DIR}/{field}.{part}.npy" for field in FIELDS for part in ("data", "indices", "indptr")),
    VOCABULARY_FILE,
    *COUNT_FILES.values(),
    *FORMULA_FILES,
    SECONDARY_FILE,
)
#: Words bm25s's English list drops that are kept here: they negate what follows.
NEGATIONS = ("not", "no", "non")
#: Words a question wraps a statement in, which say nothing about the declaration.
QUESTION_WORDS = (
    "theorem", "lemma", "proof", "prove", "proves", "show", "shows", "statement", "result", "fact", "holds", "hold", "let", "suppose",
    "then", "every", "any", "has", "have", "does", "do", "give", "gives", "how", "many", "when", "whenever", "it", "its", "can", "only",
    "make", "makes", "exactly", "always", "some", "whose", "which", "what", "besides", "over", "get", "gets", "two",
)


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """The words prose drops: bm25s's English list and `QUESTION_WORDS`, without `NEGATIONS`
    (bm25s is imported here, when text is first read: a search without words never loads it)."""
    import bm25s

    return (frozenset(bm25s.stopwords.STOPWORDS_EN) | set(QUESTION_WORDS)) - set(NEGATIONS)
# Runs of capitals not followed by a lower-case letter (`HTTP` in `HTTPServer`), a word with an
# optional leading capital, digits, other letters (`α`); `_`, `.` and symbols split.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_A-Za-z]+")
# A possessive (`Fermat's`): the name is the word.
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
# An identifier written as code (`l.sum`, `add_comm`, `ZMod`): its words mean what they mean
# in names, not in prose.
_CODE = re.compile(r"[._]|[a-z][A-Z]|^[A-Z]{2}")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+|\\[|{}]")


#: A word read: (index word, the text it was read from, whether from a symbol).
_Read = tuple[str, str, bool]


class Token(NamedTuple):
    """One index word of a text and the text it was read from (`surface`: the user's word,
    symbol or phrase, for explanations); `symbol` when read from a symbol or LaTeX command."""

    word: str
    surface: str
    symbol: bool = False


def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


class Lexicon:
    """The table `catalog.lexicon` compiled for reading: symbols (longest first), LaTeX
    commands, and phrases keyed by their words' stems."""

    def __init__(self) -> None:
        stem = _stemmer().stemWord
        self.symbols: dict[str, tuple[str, ...]] = {}
        self.latex: dict[str, tuple[str, ...]] = {}
        self.phrases: dict[tuple[str, ...], tuple[str, ...]] = {}
        #: The phrases that hold in names and types' identifiers (`lexicon.Entry.names`).
        self.name_phrases: dict[tuple[str, ...], tuple[str, ...]] = {}
        for entry in ENTRIES:
            # Stemmed as any other word, so a canonical word a name also spells is one word.
            canonical = tuple(stem(w) for w in entry.canonical.split())
            for symbol in entry.symbols:
                self.symbols[symbol] = canonical
            for command in entry.latex:
                self.latex[command] = canonical
            for phrase in entry.words:
                key = tuple(stem(w.lower()) for w in _WORD.findall(phrase))
                if entry.names:
                    self.name_phrases[key] = canonical
                self.phrases[key] = canonical
                # Prose never reads one-letter words (`a`, the `p` of `p-adic`: `Words.tokens`),
                # so a phrase of several words is also known without them.
                short = tuple(stem(w.lower()) for w in _WORD.findall(phrase) if len(w) > 1 or w.isdigit())
                if len(short) > 1 and short != key:
                    self.phrases.setdefault(short, canonical)
        #: The longest phrase starting with each stem.
        self.phrase_length: dict[str, int] = {}
        for stems in self.phrases:
            self.phrase_length[stems[0]] = max(self.phrase_length.get(stems[0], 0), len(stems))
        ascii_symbols = sorted((s for s in self.symbols if s.isascii()), key=len, reverse=True)
        other_symbols = sorted((s for s in self.symbols if not s.isascii()), key=len, reverse=True)
        # An ASCII operator counts unless it stands between two letters (`Cauchy-Schwarz`).
        ascii_pattern = "|".join(rf"(?<![A-Za-z]){re.escape(s)}|{re.escape(s)}(?![A-Za-z])" for s in ascii_symbols)
        other_pattern = "|".join(re.escape(s) for s in other_symbols)
        #: Symbols first, then identifiers, then any other character (skipped).
        self.scanner = re.compile(rf"(?P<symbol>{other_pattern}|{ascii_pattern})|(?P<ident>{_IDENT})|(?P<number>[0-9]+)")
        self.doc_scanner = re.compile(rf"(?P<symbol>{other_pattern})|(?P<ident>{_IDENT})|(?P<number>[0-9]+)")
        letters = sorted((s for s in self.symbols if any(c.isalnum() for c in s) and not s.isascii()), key=len, reverse=True)
        self.letter_symbols = re.compile("|".join(re.escape(s) for s in letters))
        latex_names = sorted(LATEX_NAMES, key=len, reverse=True)
        self.latex_names = re.compile("|".join(re.escape(n) + (r"(?![A-Za-z])" if n[-1].isalpha() else "") for n in latex_names))
        self.latex_layout = re.compile("|".join(re.escape(c) + (r"(?![A-Za-z])" if c[-1].isalpha() else "") for c in LATEX_LAYOUT))


@functools.lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The compiled table (one per process)."""
    return Lexicon()


def fold_accents(text: str) -> str:
    """`text` with accented Latin letters as their base letter (`Bézout` -> `Bezout`): a
    letter whose canonical decomposition (NFD) starts with an ASCII letter; symbols (`≠` is `=`
    with a stroke) and compatibility characters (`ℕ`, `²`) stay as they are."""
    if text.isascii():
        return text
    return text.translate(_FOLDED)


class _FoldTable(dict[int, str]):
    """`str.translate`'s table for `fold_accents`, filled as characters are first met (a
    translation reads the table in C, a character's decomposition is computed once)."""

    def __missing__(self, code: int) -> str:
        c = chr(code)
        folded = c
        if not c.isascii() and unicodedata.category(c).startswith("L"):
            base = unicodedata.normalize("NFD", c)[0]
            if base.isascii() and base.isalpha():
                folded = base
        self[code] = folded
        return folded


_FOLDED = _FoldTable()


class Words:
    """Texts to index words (see the module docstring), with each identifier's words cached."""

    def __init__(self) -> None:
        self._lexicon = lexicon()
        self._stopwords = stopwords()
        self._stem = _stemmer().stemWord
        self._stems: dict[str, str] = {}
        #: An identifier's words, read as a name's (`True`) or as a type's (`False`).
        self._identifiers: dict[bool, dict[str, tuple[str, ...]]] = {True: {}, False: {}}
        self._namespaces: dict[str, tuple[str, ...]] = {}
        #: Whether an identifier is written as code by itself (`_CODE`).
        self._coded: dict[str, bool] = {}
        #: Symbols as `formula.scan` yields them (one character each) -> canonical words.
        self._symbols = {formula.MULTI_SYMBOLS.get(k, k): v for k, v in self._lexicon.symbols.items()}

    def _stem_of(self, lower: str) -> str:
        found = self._stems.get(lower)
        if found is None:
            found = self._stems[lower] = self._stem(lower)
        return found

    def _latex(self, text: str) -> str:
        """LaTeX read as Lean shows it (`formula.plain_latex`: object names to symbols, layout
        and subscripts dropped, implicit products spelled out in `$…$`)."""
        if "\\" not in text and "$" not in text:
            return text
        return formula.plain_latex(text)

    def _pieces(self, text: str, scanner: re.Pattern[str], variables: set[str] | None) -> Iterator[tuple[str, str]]:
        """(kind, text) pieces of `text` in order: `symbol`, `latex`, `code` (an identifier
        written as code, read as a name is), `word`; other identifiers split into their words;
        with `variables` given, a variable (one of them, or a one-letter name) is skipped and
        so is the variable before a dot (`l.length` is `length`)."""
        latex = self._lexicon.latex
        if "\\" in text:
            for command in _LATEX_COMMAND.finditer(text):
                name = command.group()
                if name in latex:
                    yield "latex", name
            text = _LATEX_COMMAND.sub(lambda m: " " if m.group() in latex else " " + m.group()[1:] + " ", text)
        coded = self._coded
        for match in scanner.finditer(text):
            kind = match.lastgroup
            piece = match.group()
            if kind == "ident":
                code = coded.get(piece)
                if code is None:
                    if len(coded) >= formula.ident_cache_limit:
                        coded.clear()
                    code = coded[piece] = _CODE.search(piece) is not None
                code = code or text[match.start() - 1 : match.start()] == "."
                if variables is not None:
                    head, _, rest = piece.partition(".")
                    if head in variables or _VARIABLE.fullmatch(head):
                        piece = rest  # a variable's field (`l.length`) is a word; the variable is not
                if code:
                    yield "code", piece
                    continue
                for word in _WORD.findall(piece):
                    yield "word", word
            elif kind == "number":
                yield ("symbol", piece) if piece in self._lexicon.symbols else ("word", piece)
            else:
                yield "symbol", piece

    def tokens(self, text: str, *, statement: bool = False, doc: bool = False, name: bool = False) -> list[Token]:
        """The index words of `text` in order, repeats kept, each with the text it was read
        from. `statement`: a printed type or a formula (binder names and one-letter names are
        variables, not words); `doc`: a docstring (ASCII operators are punctuation there);
        `name`: a name (only `_NAME_STOPWORDS` are stop words there)."""
        return [Token(*read) for read in self._read(text, statement, doc, name)]

    def _read(self, text: str, statement: bool, doc: bool, name: bool) -> list[_Read]:
        """What `tokens` returns, as plain (word, surface, symbol) tuples (cheaper to make: a
        docstring's words are read by the million when a catalog is built)."""
        lex = self._lexicon
        text = _POSSESSIVE.sub("", self._latex(fold_accents(text)))
        # A letter-like symbol (`ℕ`, `ᵀ`) stands apart from the identifier it is written against.
        text = lex.letter_symbols.sub(lambda m: f" {m.group()} ", text)
        variables = binder_names(text) if statement else None
        scanner = lex.doc_scanner if doc else lex.scanner
        stopwords = _NAME_STOPWORDS if name else self._stopwords
        out: list[_Read] = []
        run: list[tuple[str, str]] = []  # consecutive words: (lower-case word, stem)
        for kind, piece in self._pieces(text, scanner, variables):
            if kind == "word":
                # A one-letter word is an article or a variable (`a`, `x`), never a word to match.
                if len(piece) > 1 or piece.isdigit():
                    lower = piece.lower()
                    run.append((lower, self._stem_of(lower)))
                continue
            out.extend(self._phrases(run, stopwords))
            run.clear()
            if kind == "code":
                out.extend((w, piece, False) for w in self._identifier(piece, name))
                continue
            table = lex.symbols if kind == "symbol" else lex.latex
            out.extend((w, piece, True) for w in table[piece])
        out.extend(self._phrases(run, stopwords))
        return out

    def _phrases(self, run: list[tuple[str, str]], stopwords: frozenset[str], identifier: bool = False) -> list[_Read]:
        """The tokens of a run of consecutive (word, stem) pairs: the table's phrases longest
        first (those that hold in names, for an `identifier`), then each remaining word's stem
        (stop words dropped)."""
        lex = self._lexicon
        phrases = lex.name_phrases if identifier else lex.phrases
        out: list[_Read] = []
        i = 0
        while i < len(run):
            stem = run[i][1]
            longest = min(lex.phrase_length.get(stem, 0), len(run) - i)
            for length in range(longest, 0, -1):
                canonical = phrases.get(tuple(s for _, s in run[i : i + length]))
                if canonical is not None:
                    surface = " ".join(word for word, _ in run[i : i + length])
                    out.extend((w, surface, False) for w in canonical)
                    i += length
                    break
            else:
                word = run[i][0]
                symbol = lex.symbols.get(word)
                if symbol is not None:  # a letter-like symbol inside a name (`Aᵀ`)
                    out.extend((w, word, True) for w in symbol)
                elif word not in stopwords:
                    out.append((stem, word, False))
                i += 1
        return out

    def _identifier(self, identifier: str, name: bool) -> tuple[str, ...]:
        """The index words of one identifier of a name or type (cached: identifiers recur)."""
        cache = self._identifiers[name]
        found = cache.get(identifier)
        if found is None:
            if len(cache) >= formula.ident_cache_limit:
                cache.clear()  # most last components of names are met once: keep memory bounded
            run = [(w.lower(), self._stem_of(w.lower())) for w in _WORD.findall(identifier)]
            found = cache[identifier] = tuple(t[0] for t in self._phrases(run, _NAME_STOPWORDS if name else self._stopwords, identifier=True))
        return found

    def _namespace(self, namespace: str) -> tuple[str, ...]:
        """The index words of a namespace (cached: most declarations share theirs)."""
        found = self._namespaces.get(namespace)
        if found is None:
            found = self._namespaces[namespace] = tuple(w for component in namespace.split(".") for w in self._identifier(component, True))
        return found

    def statement_words(self, tokens: formula.Scanned, variables: set[str]) -> list[str]:
        """The index words of a scanned printed type (`formula.scan`; `variables`: the names
        its binders bind): each identifier's words (cached: identifiers recur) without its
        variables, and each symbol's canonical words. Types have no LaTeX nor English phrases
        across identifiers, so this reads what `tokens(text, statement=True)` reads, faster."""
        symbols = self._symbols
        known = self._identifiers[False]
        parts = formula.IDENTS
        out: list[str] = []
        extend = out.extend
        for token in tokens:
            found = parts.get(token)
            if found is None:
                # No symbol of the table is spelt as an identifier: a token with words is one.
                words = symbols.get(token)
                if words is not None:
                    extend(words)
                    continue
                if not formula.is_ident(token):
                    if formula.is_number(token):
                        extend(self._identifier(token, False))
                    continue
                found = formula.ident_parts(token)
            head, rest, variable, _ = found
            if variable or head in variables:
                if rest:
                    extend(known.get(rest[1:]) or self._identifier(rest[1:], False))
            else:
                extend(known.get(token) or self._identifier(token, False))
        return out

    def words(self, text: str, *, statement: bool = False, doc: bool = False, name: bool = False) -> list[str]:
        """The index words of `text` (`tokens`' words)."""
        return [read[0] for read in self._read(text, statement, doc, name)]

    def declaration(self, name: str, doc: str | None, type_: str, scanned: formula.Scanned | None = None, variables: set[str] | None = None) -> dict[str, list[str]]:
        """The words of each field (`FIELDS`) of one declaration (`scanned` and `variables`:
        its type's tokens and bound names, when the caller has them)."""
        if scanned is None or variables is None:
            scanned, variables = formula.scan(type_), binder_names(type_)
        namespace, _, last = name.rpartition(".")
        return {
            "name": list(self._identifier(last, True)),
            "namespace": list(self._namespace(namespace)) if namespace else [],
            "doc": self.words(doc, doc=True) if doc else [],
            "type": self.statement_words(scanned, variables),
        }


#: Catalogs of at least this many declarations build their text index in `TEXT_WORKERS`
#: worker processes, each reading a run of the Parquet file's row groups (smaller ones in this
#: process: a worker costs more to start than it saves there).
PARALLEL_FROM = 100_000
TEXT_WORKERS = 2


@dataclass
class _Part:
    """What reading a run of declarations gives: its own vocabulary (words in first-read order),
    per field every declaration's word ids (into that vocabulary) and word counts, the name and
    namespace word counts, the formula keys with their (catalog) positions, the projection marks."""

    vocabulary: list[str]
    ids: dict[str, array[int]]
    lengths: dict[str, array[int]]
    counts: dict[str, array[int]]
    formula_keys: array[int]
    formula_positions: array[int]
    secondary: array[int]


def _read_part(parquet_path: Path, row_groups: list[int], first: int) -> _Part:
    """Read row groups `row_groups` (consecutive) of the declarations file, whose first row is
    catalog position `first`, with the build's larger caches of identifiers
    (`formula.build_caches`)."""
    with formula.build_caches():
        return _read_groups(parquet_path, row_groups, first)


def _read_groups(parquet_path: Path, row_groups: list[int], first: int) -> _Part:
    """`_read_part`'s reading."""
    import pyarrow.parquet as pq  # the build's: serving loads no pyarrow

    words = Words()
    # The negation words first, so every vocabulary has them.
    vocabulary: dict[str, int] = {word: i for i, word in enumerate(NEGATIONS)}
    number = vocabulary.setdefault
    part = _Part([], {f: array("i") for f in FIELDS}, {f: array("i") for f in FIELDS}, {f: array("B") for f in COUNT_FILES}, array("Q"), array("i"), array("B"))
    position = first
    known_id = vocabulary.get
    # The part's arrays as locals: this loop runs once per declaration.
    outputs = [(field, part.ids[field], part.lengths[field]) for field in FIELDS]
    count_outputs = [(field, part.counts[field]) for field in COUNT_FILES]
    keys_out, key_positions, secondary = part.formula_keys, part.formula_positions, part.secondary
    parquet = pq.ParquetFile(parquet_path)
    # Small batches: a batch's texts are Python strings while it is read.
    for batch in parquet.iter_batches(columns=["name", "doc", "type"], row_groups=row_groups, batch_size=8_192):
        names, docs, types = (batch.column(i).to_pylist() for i in range(3))
        for n, d, t in zip(names, docs, types, strict=True):
            bound = binder_names(t)
            scanned = formula.scan(t)
            for key in formula.keys(scanned, bound).values():
                keys_out.append(key)
                key_positions.append(position)
            # `_SECONDARY` needs `self :` or a leading `to`: two cheap tests spare most types a regex scan.
            secondary.append(bool((("self :" in t or t.startswith("to")) and _SECONDARY.search(t)) or _SECONDARY.search(n.rpartition(".")[2])))
            fields = words.declaration(n, d, t, scanned, bound)
            for field, ids, lengths in outputs:
                read = fields[field]
                found = list(map(known_id, read))
                known = [number(word, len(vocabulary)) for word in read] if None in found else cast("list[int]", found)
                ids.extend(known)
                lengths.append(len(known))
            for field, counts in count_outputs:
                counts.append(min(len(set(fields[field])), 255))
            position += 1
    part.vocabulary = list(vocabulary)
    return part


def _read_parts(parquet_path: Path) -> list[_Part]:
    """The declarations file read in parts, in order: one, or for a large catalog one per
    worker (`PARALLEL_FROM`), each a run of consecutive row groups."""
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(parquet_path).metadata
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    if sum(sizes) < PARALLEL_FROM or len(sizes) < 2:
        return [_read_part(parquet_path, list(range(len(sizes))), 0)]
    # Consecutive row groups, about the same number of rows per worker.
    runs: list[list[int]] = [[] for _ in range(min(TEXT_WORKERS, len(sizes)))]
    total, done = sum(sizes), 0
    for group, rows in enumerate(sizes):
        runs[min(done * len(runs) // total, len(runs) - 1)].append(group)
        done += rows
    firsts = [sum(sizes[: run[0]]) for run in runs if run]
    from ..workers import worker_pool  # multiprocessing: for building only

    with worker_pool(len(runs)) as pool:
        futures = [pool.submit(_read_part, parquet_path, run, first) for run, first in zip([r for r in runs if r], firsts, strict=True)]
        return [future.result() for future in futures]


def write_text_index(catalog_dir: Path) -> list[str]:
    """Build the text index of `catalog_dir/declarations.parquet` (document i is position i)
    into `catalog_dir/index/text/`; return the files written, relative to `catalog_dir`. The
    files are the same whether the records were read in one part or several (`_read_parts`):
    words are numbered in the order they are first read over the whole catalog (a Python set's
    order would change with the process's hash seed, and so would the files' bytes). Memory: 4
    bytes per word of every field, plus the vocabulary, plus, one field at a time, 8 bytes per
    word of the field and its scoring (`_scores`)."""
    parts = _read_parts(catalog_dir / DECLARATIONS_FILE)
    release_freed_memory()  # the workers' pickled answers, read and dropped
    vocabulary: dict[str, int] = {}
    remaps: list[np.ndarray] = []
    for part in parts:
        remaps.append(np.fromiter((vocabulary.setdefault(w, len(vocabulary)) for w in part.vocabulary), dtype=np.int32, count=len(part.vocabulary)))
    out = catalog_dir / TEXT_DIR
    out.mkdir(parents=True, exist_ok=True)
    for field in FIELDS:
        lengths = np.concatenate([np.frombuffer(p.lengths[field], dtype=np.int32) for p in parts])
        # The occurrence keys are the only copy of the field's words once made: each part's ids
        # are freed as they are copied in.
        occurrences = np.empty(int(lengths.sum(dtype=np.int64)), dtype=np.uint64)
        at = 0
        for p, remap in zip(parts, remaps, strict=True):
            ids = remap[np.frombuffer(p.ids[field], dtype=np.int32)]
            occurrences[at : at + len(ids)] = ids
            at += len(ids)
            p.ids[field] = p.lengths[field] = array("i")
            del ids
        data, indices, indptr = _scores(_with_documents(occurrences, lengths), lengths, len(vocabulary), *FIELD_PARAMS[field])
        del occurrences
        release_freed_memory()
        np.save(out / f"{field}.data.npy", data, allow_pickle=False)
        np.save(out / f"{field}.indices.npy", indices, allow_pickle=False)
        np.save(out / f"{field}.indptr.npy", indptr, allow_pickle=False)
    for field, file in COUNT_FILES.items():
        np.save(catalog_dir / file, np.concatenate([np.frombuffer(p.counts[field], dtype=np.uint8) for p in parts]), allow_pickle=False)
    np.save(catalog_dir / SECONDARY_FILE, np.concatenate([np.frombuffer(p.secondary, dtype=np.uint8) for p in parts]).astype(np.bool_), allow_pickle=False)
    keys = np.concatenate([np.frombuffer(p.formula_keys, dtype=np.uint64) for p in parts])
    positions = np.concatenate([np.frombuffer(p.formula_positions, dtype=np.int32) for p in parts])
    order = np.argsort(keys, kind="stable")
    np.save(catalog_dir / FORMULA_FILES[0], keys[order], allow_pickle=False)
    np.save(catalog_dir / FORMULA_FILES[1], positions[order], allow_pickle=False)
    (catalog_dir / VOCABULARY_FILE).write_text(json.dumps(list(vocabulary), ensure_ascii=False), encoding="utf-8")
    return list(TEXT_FILES)


def _field_scores(word_ids: np.ndarray, lengths: np.ndarray, vocabulary_size: int, k1: float, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lucene's BM25 score of every word in every document of one field (the variant bm25s
    calls `lucene`: idf = ln(1 + (n - df + 0.5) / (df + 0.5)), tf / (tf + k1 (1 - b + b dl /
    avgdl)), avgdl over every document), as a sparse matrix by word: (scores float32,
    positions int32 sorted per word, word offsets int64 with `vocabulary_size + 1` entries).
    `word_ids` holds every document's word ids in document order, `lengths` each document's
    count of them (int32 both)."""
    return _scores(_with_documents(word_ids.astype(np.uint64), lengths), lengths, vocabulary_size, k1, b)


def _with_documents(keys: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """`keys` (uint64, every occurrence's word id, in document order; `lengths`: each
    document's count of them) made, in place, one key per occurrence: word in the high half,
    document in the low half. Sorted, the (word, document) pairs come out in order and repeats
    of a pair (the term frequency) adjoin."""
    keys <<= np.uint64(32)
    keys |= np.repeat(np.arange(len(lengths), dtype=np.uint32), lengths)  # 4 bytes an occurrence, not 8
    return keys


#: Word occurrences scored at a time by `_scores`: its temporary arrays (about 60 bytes per
#: occurrence) stay near 120 MB whatever the catalog's size.
SCORE_SLICE = 1 << 21


def _scores(keys: np.ndarray, lengths: np.ndarray, vocabulary_size: int, k1: float, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_field_scores` of the occurrence keys `_with_documents` made (sorted here, in place).
    Sorted, the keys are scored in slices of about `SCORE_SLICE` occurrences, each cut at the
    start of a (word, document) pair, in two passes (each word's document count, then the
    scores): memory beyond the keys is one byte per occurrence, the answer's 8 bytes per pair
    and one slice's arrays. Each score is the formula's float64 arithmetic on its own pair, so
    slicing changes no bit of it."""
    documents = len(lengths)
    keys.sort()
    total = len(keys)
    change = np.empty(total, dtype=np.bool_)  # where a (word, document) pair starts
    if total:
        change[0] = True
        np.not_equal(keys[1:], keys[:-1], out=change[1:])
    bounds = [0]
    while bounds[-1] < total:
        cut = min(bounds[-1] + SCORE_SLICE, total)
        if cut < total and not change[cut]:
            ahead = int(np.argmax(change[cut:]))  # the next pair's start, if any
            cut = cut + ahead if change[cut + ahead] else total
        bounds.append(cut)
    slices = list(itertools.pairwise(bounds))
    df = np.zeros(vocabulary_size, dtype=np.int64)
    pair_count = 0
    for lo, hi in slices:
        words = (keys[lo:hi][change[lo:hi]] >> np.uint64(32)).astype(np.int64)
        df += np.bincount(words, minlength=vocabulary_size)
        pair_count += len(words)
    idf = np.log1p((documents - df + 0.5) / (df + 0.5))
    average = float(lengths.mean()) if documents else 0.0
    scores = np.empty(pair_count, dtype=np.float32)
    positions = np.empty(pair_count, dtype=np.int32)
    done = 0
    for lo, hi in slices:
        starts = np.flatnonzero(change[lo:hi])
        tf = np.diff(np.append(starts, hi - lo))
        pairs = keys[lo:hi][starts]
        words = (pairs >> np.uint64(32)).astype(np.int64)
        docs = (pairs & np.uint64(0xFFFFFFFF)).astype(np.int32)
        norm = k1 * (1 - b + b * lengths[docs] / average) if average else np.full(len(docs), k1)
        scores[done : done + len(docs)] = (idf[words] * tf / (tf + norm)).astype(np.float32)
        positions[done : done + len(docs)] = docs
        done += len(docs)
    indptr = np.zeros(vocabulary_size + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return scores, positions, indptr


@dataclass(frozen=True)
class FieldMatrix:
    """One field's scores by word (see the module docstring), memory-mapped."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray

    def postings(self, word_id: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of the declarations whose field has word `word_id`."""
        lo, hi = int(self.indptr[word_id]), int(self.indptr[word_id + 1])
        return self.indices[lo:hi], self.data[lo:hi]


class TextIndex:
    """A catalog's loaded text index: per field, each word's postings and BM25 scores."""

    def __init__(self, catalog_dir: Path):
        """Load `catalog_dir/index/text/`; raises `OSError`/`ValueError` when a file is missing
        or unreadable."""
        folder = catalog_dir / TEXT_DIR

        def load(name: str) -> np.ndarray:
            return np.load(folder / name, mmap_mode="r", allow_pickle=False).view(np.ndarray)

        self.fields = {f: FieldMatrix(load(f"{f}.data.npy"), load(f"{f}.indices.npy"), load(f"{f}.indptr.npy")) for f in FIELDS}
        vocabulary = json.loads((catalog_dir / VOCABULARY_FILE).read_text(encoding="utf-8"))
        if not isinstance(vocabulary, list) or not all(isinstance(w, str) for w in vocabulary):
            raise ValueError("the text index's vocabulary is not a list of words")
        self.vocabulary: dict[str, int] = {word: i for i, word in enumerate(vocabulary)}
        self.counts = {field: np.load(catalog_dir / file, mmap_mode="r", allow_pickle=False).view(np.ndarray) for field, file in COUNT_FILES.items()}
        self.formula_keys, self.formula_positions = (np.load(catalog_dir / f, mmap_mode="r", allow_pickle=False).view(np.ndarray) for f in FORMULA_FILES)
        self.secondary = np.load(catalog_dir / SECONDARY_FILE, mmap_mode="r", allow_pickle=False).view(np.ndarray)

    @functools.cached_property
    def words(self) -> Words:
        """The reading of query texts (`Words`), built when text is first searched: its lexicon
        and bm25s's stop words are no cost of a search without words."""
        return Words()

    def with_formula(self, key: int) -> np.ndarray:
        """Sorted positions (int64) whose type has formula key `key` (`catalog.formula`)."""
        k = np.uint64(key)
        lo, hi = np.searchsorted(self.formula_keys, k, side="left"), np.searchsorted(self.formula_keys, k, side="right")
        return np.unique(np.asarray(self.formula_positions[int(lo) : int(hi)], dtype=np.int64))

    def word_id(self, word: str) -> int | None:
        """The id of index word `word`, None when no declaration has it."""
        return self.vocabulary.get(word)

    def has(self, field: str, word_id: int, positions: np.ndarray) -> np.ndarray:
        """Whether each of `positions` (int64) has word `word_id` in `field` (bool array)."""
        found, _ = self.fields[field].postings(word_id)
        if not len(found) or not len(positions):
            return np.zeros(len(positions), dtype=bool)
        at = np.searchsorted(found, positions)
        at[at == len(found)] = 0
        return np.asarray(found[at] == positions)


def query_tokens(words: Words, text: str) -> list[Token]:
    """The distinct tokens of a query, first reading kept (a query is read as a statement:
    one-letter names and the names its binders bind are variables)."""
    seen: dict[str, Token] = {}
    for token in words.tokens(text, statement=True):
        seen.setdefault(token.word, token)
    return list(seen.values())
