"""Statements as formulas: a key per declaration that a Lean-syntax or LaTeX query can equal,
whatever its variables are called.

`keys(text)` reads a printed type (doc-gen4's signature, `(a b : G) : a + b = b + a`) or a
query (`∀ n m : ℕ, n + m = m + n`, `$|a + b| \\le |a| + |b|$`, `theorem foo (x : α) : …`) into
its hypotheses and its conclusion, and keys two texts: the conclusion alone, and the whole
statement (hypotheses, then the conclusion, joined by `→`). Each is the formula's tokens with
every variable renamed by order of first occurrence (`a + b = b + a` and `n + m = m + n` are both
`?0 + ?1 = ?1 + ?0`): a variable is a name a binder binds, or a one-letter name (`x`, `x₁`,
`a'`); a name with dots keeps its last component (`Nat.Prime p` and `Prime p` are one formula),
and one whose first component is a variable keeps the variable (`l.length`). Coercion arrows
(`↑`) and ASCII spellings (`<=`, `->`, `!=`) are read as Lean prints them. A hypothesis is a
binder named `h…` (Mathlib's convention) or a premise before a top-level `→`.

A key is the first 8 bytes of the BLAKE2b digest of that text, so keys are the same on every
machine. The index stores, sorted by key, `index/text/formula_keys.npy` (uint64) and
`index/text/formula_positions.npy` (int32).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager

from .lexicon import ENTRIES, LATEX_LAYOUT, LATEX_NAMES

#: Which key a key is: the conclusion alone, or the whole statement.
CONCLUSION, STATEMENT = "conclusion", "statement"
_IDENT = r"[^\W\d][\w'?₀-₉]*(?:\.[^\W\d][\w'?₀-₉]*)*"
# One alternative per kind: an identifier, a number, a symbol (one character); a token's first
# character says which (`is_ident`, `is_number`).
_TOKEN = re.compile(rf"{_IDENT}|[0-9]+(?:\.[0-9]+)?|[^\s\w]")
#: A variable name as people write one: one letter, then digits, subscripts or primes; a
#: universe (`u_1`).
VARIABLE = re.compile(r"[^\W\d_][0-9₀-₉']*|u_[0-9]+")
#: A Lean identifier as printed: letters, digits, `_`, `'`, `?` and subscripts, components
#: joined by `.` (`Nat.succ_le`, `x₁`, `h'`).
IDENT = _IDENT
# The names a binder group or a binding symbol binds: `(a b : G)`, `{p : ℕ}`, `∀ n m,`,
# `fun x =>`, `∃ x ∈ s,`, `∑ i ∈ range n,`.
# Possessive repeats (`*+`): no terminator can follow a part of an identifier or of the list, so
# giving characters back never finds a match, and not trying halves the time of a catalog's scan.
_IDENT_POSSESSIVE = _IDENT.replace("*", "*+")
_BINDERS = re.compile(r"(?:[({⦃\[]|∀|∃!?|fun|λ|∑|∏|⋃|⋂|⨆|⨅)\s*(" + _IDENT_POSSESSIVE + r"(?:\s+" + _IDENT_POSSESSIVE + r")*+)\s*(?::|,|=>|↦|∈)")


def binder_names(signature: str) -> set[str]:
    """The names the binders of a printed type or query bind (`(a b : G)`, `∀ n,`, `fun x =>`,
    `∑ i ∈ s,`): variables, not words of the statement."""
    return {name for group in _BINDERS.findall(signature) for name in group.split()}
_ASCII = (("<->", "↔"), ("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("->", "→"), ("/\\", "∧"), ("\\/", "∨"))
_OPEN, _CLOSE = frozenset("([{⦃⟨"), frozenset(")]}⦄⟩")
_MARKS = _OPEN | _CLOSE | {":", "→", ","}
_LEAD = re.compile(r"^\s*(?:theorem|lemma|example|def)\b\s*(?:[^\s(\[{:⦃]+)?", re.UNICODE)
_MATH = re.compile(r"\$([^$]*)\$")
# A run of 2-3 letters not after a backslash or a letter and not before a letter or `(`… is
# read by `_product`.
_PRODUCT = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,3}(?![A-Za-z{])")
#: Letter runs inside `$…$` that are words, not products.
_MATH_WORDS = frozenset({"gcd", "lcm", "mod", "max", "min", "sup", "inf", "deg", "det", "ker", "im", "id", "exp", "log", "sin", "cos", "tan", "lim", "dim", "tr", "rk", "card", "in", "if", "and", "or", "for", "all", "not"})
_LATEX_INVERSE = re.compile(r"\^\s*\{\s*-\s*1\s*\}|\^\s*-1(?![0-9])")
_LATEX_TRANSPOSE = re.compile(r"\^\s*\{\s*(?:T|\\top|\\intercal)\s*\}|\^\s*(?:T|\\top|\\intercal)(?![A-Za-z])")
_LATEX_INDEX = re.compile(r"_\s*(?:[A-Za-z0-9]|\\[A-Za-z]+)")
_LATEX_LAYOUT = re.compile("|".join(re.escape(c) + (r"(?![A-Za-z])" if c[-1].isalpha() else "") for c in LATEX_LAYOUT))
_LATEX_FRAC = re.compile(r"\\d?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_GROUP = re.compile(r"([\^_])\s*\{([^{}]*)\}")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_LATEX_NAMES = re.compile("|".join(re.escape(n) + (r"(?![A-Za-z])" if n[-1].isalpha() else "") for n in sorted(LATEX_NAMES, key=len, reverse=True)))


def plain_latex(text: str) -> str:
    """LaTeX read as Lean shows it: `\\frac{a}{b}` as `(a) / (b)`, `^{-1}` as `⁻¹`, `^{T}` as
    `ᵀ`, other superscripts as `^ (…)`, subscripts (`_{k=0}`, `_i`: bounds and indices)
    dropped, object names as their symbols (`lexicon.LATEX_NAMES`), layout commands
    (`lexicon.LATEX_LAYOUT`) and `$` dropped; inside `$…$`, a run of two or three letters that is
    not a word of the table is an implicit product (`ab` -> `a * b`)."""
    text = _MATH.sub(lambda m: _PRODUCT.sub(_product, m.group(1)), text)
    text = _LATEX_FRAC.sub(r"(\1) / (\2)", text)
    text = _LATEX_INVERSE.sub("⁻¹", text)
    text = _LATEX_TRANSPOSE.sub("ᵀ", text)
    text = _LATEX_GROUP.sub(lambda m: f"^ ({m.group(2)})" if m.group(1) == "^" else " ", text)
    text = _LATEX_INDEX.sub(" ", text)
    text = _LATEX_LAYOUT.sub(" ", text)
    text = _LATEX_NAMES.sub(lambda m: f" {LATEX_NAMES[m.group()]} ", text)
    return text.replace(r"\{", "{").replace(r"\}", "}").replace("$", " ")


def _product(match: re.Match[str]) -> str:
    """An implicit product's letters joined by `*`, or the run as it is when it is a word."""
    run = match.group()
    return run if run.lower() in _MATH_WORDS else " * ".join(run)


def _plain(text: str) -> str:
    """LaTeX and ASCII spellings read as Lean prints them."""
    if "\\" in text or "$" in text:
        text = _LATEX_COMMAND.sub(" ", plain_latex(text))
    for ascii_, symbol in _ASCII:
        text = text.replace(ascii_, symbol)
    return text.replace("↑", " ").replace("⇑", " ")


#: Symbols of more than one character, and those that are letters to a regular expression
#: (`ℕ`, `π`, `²`: never a variable's name), each read as one character of Unicode's private use
#: area so that a scan yields it as one symbol (`scan`).
MULTI_SYMBOLS: dict[str, str] = {
    symbol: chr(0xE000 + i) for i, symbol in enumerate(sorted({s for e in ENTRIES for s in e.symbols if len(s) > 1 or re.match(r"\w", s) and not s.isascii()}))
}
# Longest first, so `⁻¹'` is read before `⁻¹`: one pass over a text finds every one.
_MULTI_PATTERN = re.compile("|".join(re.escape(s) for s in sorted(MULTI_SYMBOLS, key=len, reverse=True)))


def _placeholder(match: re.Match[str]) -> str:
    return MULTI_SYMBOLS[match.group()]


Scanned = list[str]
"""A text's tokens in order: identifiers, numbers and one-character symbols (plain strings:
a type has dozens, and a catalog millions of types)."""


def is_number(token: str) -> bool:
    """Whether a scanned token is a number (it starts with an ASCII digit)."""
    return token[0] in "0123456789"


def is_ident(token: str) -> bool:
    """Whether a scanned token is an identifier: it starts with a word character (`\\w`:
    alphanumeric or `_`) that is not an ASCII digit (a symbol token is never one)."""
    first = token[0]
    return (first.isalnum() or first == "_") and first not in "0123456789"


def scan(text: str) -> Scanned:
    """The tokens of a printed type or a plain formula (`_plain` first for a query), each symbol
    of `MULTI_SYMBOLS` read as its placeholder: left to right, the longest one starting at each
    position (`∃!=` is `∃!` then `=`)."""
    return _TOKEN.findall(_MULTI_PATTERN.sub(_placeholder, text))


def _parts(tokens: Scanned) -> tuple[list[Scanned], Scanned]:
    """(hypotheses, conclusion) of a scanned signature, `∀` statement or formula: the binder
    groups named `h…` before a signature's top-level `:`, then the premises before each
    top-level `→` after any leading `∀ …,`."""
    # Only brackets and separators decide the parts: walk those (a type is mostly identifiers).
    marks = [(i, t) for i, t in enumerate(tokens) if t in _MARKS]
    hypotheses: list[Scanned] = []
    start = 0
    if tokens and (tokens[0] in _OPEN or tokens[0] == ":"):
        depth, group_start = 0, -1
        for i, symbol in marks:
            if symbol in _OPEN:
                depth += 1
                if depth == 1:
                    group_start = i
            elif symbol in _CLOSE:
                depth -= 1
                if depth == 0 and group_start >= 0:
                    hypotheses.extend(_hypotheses(tokens[group_start + 1 : i]))
            elif depth == 0 and symbol == ":" and not (i + 1 < len(tokens) and tokens[i + 1] == "="):
                start = i + 1
                break
        else:
            start, hypotheses = 0, []
    first = bisect.bisect_left(marks, (start, ""))
    while start < len(tokens) and tokens[start] == "∀":
        comma = _first_top_level(marks, first, ",")
        if comma < 0:
            break
        start = marks[comma][0] + 1
        first = comma + 1
    depth, piece = 0, start
    for i, symbol in marks[first:]:
        if symbol in _OPEN:
            depth += 1
        elif symbol in _CLOSE:
            depth -= 1
        elif depth == 0 and symbol == "→":
            hypotheses.append(tokens[piece:i])
            piece = i + 1
    return hypotheses, tokens[piece:]


def _hypotheses(group: Scanned) -> list[Scanned]:
    """The hypothesis a binder group states, once per name, when its names start with `h`."""
    if not group or not group[0].startswith("h"):
        return []
    colon = next((i for i, t in enumerate(group) if t == ":"), -1)
    if colon <= 0 or not all(is_ident(t) for t in group[:colon]):
        return []
    return [group[colon + 1 :]] * colon


def _first_top_level(marks: list[tuple[int, str]], first: int, separator: str) -> int:
    """The index into `marks` of the first `separator` at bracket depth 0, counting from
    `marks[first]`; -1 when there is none."""
    depth = 0
    for k in range(first, len(marks)):
        symbol = marks[k][1]
        if symbol in _OPEN:
            depth += 1
        elif symbol in _CLOSE:
            depth -= 1
        elif depth == 0 and symbol == separator:
            return k
    return -1


#: Identifier -> (its head before the first dot, the rest with its dot or "", whether the head
#: is a variable by its spelling (`VARIABLE`), its last component): a catalog's types repeat
#: their identifiers, and reading one costs more than looking it up. Cleared when it grows past
#: `ident_cache_limit` entries, so its memory stays bounded.
IDENTS: dict[str, tuple[str, str, bool, str]] = {}
#: Entries a cache of identifiers (`IDENTS`, `text.Words`' caches) holds at most in a serving
#: process, where queries fill it: a few MB each.
IDENT_CACHE_LIMIT = 32_768
#: The same while a build reads a catalog's types (`build_caches`): the constants its types
#: mention are Zipf-distributed over far more than `IDENT_CACHE_LIMIT` identifiers (60,000 in
#: the synthetic benchmark's catalog, more in Mathlib's), and a cache cleared whenever it is
#: full reads most of them again (a sixth of the text index's CPU time at 200,000 declarations
#: on an idle machine, a quarter on a loaded one). Each worker's caches then hold about 50 MB more.
BUILD_IDENT_CACHE_LIMIT = 262_144
#: The limit in force: `IDENT_CACHE_LIMIT`, or `BUILD_IDENT_CACHE_LIMIT` inside `build_caches`.
ident_cache_limit = IDENT_CACHE_LIMIT


@contextmanager
def build_caches() -> Iterator[None]:
    """Inside: the caches of identifiers hold up to `BUILD_IDENT_CACHE_LIMIT` entries (a build
    reading a catalog's types). On leaving, `IDENTS` is emptied if it grew past
    `IDENT_CACHE_LIMIT` and the limit is back to it, so a process that builds and then serves
    holds no more than before; a `text.Words` made inside keeps its own caches."""
    global ident_cache_limit
    ident_cache_limit = BUILD_IDENT_CACHE_LIMIT
    try:
        yield
    finally:
        ident_cache_limit = IDENT_CACHE_LIMIT
        if len(IDENTS) > IDENT_CACHE_LIMIT:
            IDENTS.clear()


def ident_parts(ident: str) -> tuple[str, str, bool, str]:
    """(head, "." + rest or "", head spelled as a variable, last component) of an identifier
    (`l.length` -> `l`, `.length`, True, `length`), cached in `IDENTS` (cleared once it holds
    `ident_cache_limit` entries)."""
    found = IDENTS.get(ident)
    if found is None:
        if len(IDENTS) >= ident_cache_limit:
            IDENTS.clear()
        head, dot, rest = ident.partition(".")
        found = IDENTS[ident] = (head, dot + rest, VARIABLE.fullmatch(head) is not None, ident.rpartition(".")[2])
    return found


def _numbered(tokens: Scanned, bound: set[str], names: dict[str, str]) -> str:
    """The tokens as text: a variable (bound, or a one-letter name) renamed by order of first
    occurrence in `names`, keeping what follows its dot (`l.length`); a constant's last
    component."""
    out: list[str] = []
    append = out.append
    known = IDENTS
    for token in tokens:
        parts = known.get(token)
        if parts is None:
            first = token[0]
            if not (first.isalnum() or first == "_") or first in "0123456789":  # not `is_ident`: a call per token costs
                append(token)
                continue
            parts = ident_parts(token)
        head, rest, variable, last = parts
        if variable or head in bound:
            renamed = names.get(head)
            if renamed is None:
                renamed = names[head] = f"?{len(names)}"
            append(renamed + rest)
        else:
            append(last)
    return " ".join(out)


def _key(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def query_keys(text: str) -> dict[str, int]:
    """The formula keys of a query (LaTeX and ASCII spellings read as Lean prints them, a
    leading `theorem name` dropped)."""
    plain = _LEAD.sub("", _plain(text))
    return keys(scan(plain), binder_names(plain))


def keys(tokens: Scanned, bound: set[str]) -> dict[str, int]:
    """The formula keys of a scanned printed type or query (module docstring): `conclusion`
    and `statement`; empty when the conclusion has no symbol. `bound`: the names its binders
    bind (`binder_names`)."""
    hypotheses, conclusion = _parts(tokens)
    if not any(t not in _OPEN and t not in _CLOSE and not is_ident(t) and not is_number(t) for t in conclusion):
        return {}
    alone = _numbered(conclusion, bound, {})
    statement = alone  # without hypotheses the statement numbers its variables as the conclusion does
    if hypotheses:
        whole: dict[str, str] = {}
        statement = " ".join([*(_numbered(h, bound, whole) + " →" for h in hypotheses), _numbered(conclusion, bound, whole)])
    return {CONCLUSION: _key("C " + alone), STATEMENT: _key("S " + statement)}
