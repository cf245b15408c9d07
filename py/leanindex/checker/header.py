"""The header of a submitted Lean file: which modules it imports, and the body without them.

A Lean file starts with an optional `module` keyword, an optional `prelude`, then `import`
commands (`import A`, `public import A`, `meta import A`, `import all A`), with comments and
whitespace anywhere (Lean's `Lean.Parser.Module.header`). The checker runs the body against the
profile's warm environment, so the header is blanked out character by character (newlines kept)
and every diagnostic keeps the line and column it has in the submitted file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ErrorCode, LeanIndexError
from ..lake.oleans import resolve_olean

_IMPORT_MODIFIERS = {"public", "meta"}


@dataclass(frozen=True)
class Header:
    """`imports`: module names in file order; `body`: the file with the header blanked
    (same length in code points, same line breaks); `prelude`: whether `prelude` was given."""

    imports: list[str]
    body: str
    prelude: bool


def _skip_trivia(text: str, i: int) -> int:
    """Index of the first character at or after `i` that is not whitespace or a comment."""
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/-", i) and not text.startswith("/--", i) and not text.startswith("/-!", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/-", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("-/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            if depth:
                return n
        else:
            return i
    return i


def _read_ident(text: str, i: int) -> tuple[str, int]:
    """A dotted identifier starting at `i` (components may use `«»` escapes); '' if none."""
    n, start = len(text), i
    while i < n:
        if text[i] == "«":
            close = text.find("»", i + 1)
            if close < 0:
                return "", start
            i = close + 1
        elif text[i].isalnum() or text[i] in "_'!?" or ord(text[i]) > 127 and text[i] not in "«»":
            i += 1
        else:
            break
        if i < n and text[i] == "." and i + 1 < n and (text[i + 1].isalpha() or text[i + 1] in "_«"):
            i += 1
    return text[start:i], i


def parse_header(code: str) -> Header:
    """Split `code` into its imports and its body (header blanked, positions preserved).

    Raises `LeanIndexError(invalid_request)` for an `import` without a module name.
    """
    imports: list[str] = []
    prelude = False
    end = 0

    def token(at: int) -> tuple[str, int]:
        return _read_ident(code, _skip_trivia(code, at))

    word, after = token(0)
    if word == "module":
        end = after
        word, after = token(after)
    if word == "prelude":
        prelude, end = True, after
        word, after = token(after)
    while word:
        # `public`/`meta` only belong to the header when an `import` follows them.
        cursor, modifiers = after, 0
        while word in _IMPORT_MODIFIERS and modifiers < 2:
            word, cursor = token(cursor)
            modifiers += 1
        if word != "import":
            break
        name, after = token(cursor)
        if name == "all":
            name, after = token(after)
        if not name:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "an `import` without a module name", {"offset": cursor})
        imports.append(name.replace("«", "").replace("»", ""))
        end = after
        word, after = token(after)
    body = "".join(c if c == "\n" else " " for c in code[:end]) + code[end:]
    return Header(imports=imports, body=body, prelude=prelude)


def uncovered_imports(imports: list[str], profile_imports: list[str]) -> list[str]:
    """The submitted imports the profile's environment does not cover.

    A module is covered when it equals a profile import or lies under one by name
    (`Mathlib.Tactic` under `Mathlib`), or lies under `Init`, which every environment without
    `prelude` imports. This is a rule on names: it assumes a root module imports its children,
    as Mathlib's, Lean's and Init's root modules do.
    """
    roots = set(profile_imports) | {"Init"}
    return [m for m in imports if not any(m == r or m.startswith(r + ".") for r in roots)]


def unknown_modules(imports: list[str], search_path: list[Path]) -> list[str]:
    """The submitted imports that are no module at all: no `.olean` on `search_path` (the REPL's,
    see `worker.repl_search_path`). Lean refuses such an import (`findOLean`, lean4
    `src/Lean/Util/Path.lean` at 0514f7ca; symbol `l_Lean_findOLean` in 4.35.0), so a submission
    carrying one must not be checked as if it had compiled. A name that is not a Lean name is
    unknown too. The `.olean` is looked for in every entry (`lake.oleans.resolve_olean`); Lean
    looks only in the first entry holding the module's root directory, which differs only when
    two entries share a root.

    The catalog cannot answer this: its `modules` table lists only modules that declare
    something (import-only modules such as `Lean.Elab` are missing) and the manifest keeps only a
    digest and a count of the full list.
    """
    unknown = []
    for module in imports:
        try:
            found = resolve_olean(module, search_path)
        except LeanIndexError:
            found = None
        if found is None:
            unknown.append(module)
    return unknown
