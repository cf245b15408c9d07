"""The `modules_digest` of a manifest: which `.olean` files the environment was loaded from.

A module `A.B.C` is stored as `A/B/C.olean` under one entry of Lean's search path; as Lean's
`findOLean` does, the first entry that has the file wins. For files with a `module` header
Lean 4.35 splits the data in parts written beside it: `A/B/C.olean` (the exported data),
`A/B/C.olean.server` (docstrings, declaration ranges) and `A/B/C.olean.private` (proofs and
private declarations); a change of a docstring or of a proof touches only one of them. So every
part that exists is hashed. The digest is the sha256 of the text made of one line per module,
sorted by module name (code point order):
`<module> <sha256 of .olean>[ olean.server <sha256>][ olean.private <sha256>]\n`; a module
without the extra parts keeps the line `<module> <sha256 of .olean>\n`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ..catalog.manifest import file_sha256
from ..errors import ErrorCode, LeanIndexError
from ..names import NameSyntaxError, parse_name


def olean_relative_path(module: str) -> Path:
    """`Init.Data.Nat` → `Init/Data/Nat.olean` (components unescaped: `«a-b».C` → `a-b/C.olean`).

    Raises `LeanIndexError(invalid_stream)` for a module name that is not a Lean name.
    """
    try:
        components = [str(part) for part in parse_name(module)]
    except NameSyntaxError as error:
        raise LeanIndexError(
            ErrorCode.INVALID_STREAM, f"module {module!r} is not a Lean name: {error}", {"module": module}
        ) from None
    return Path(*components[:-1], components[-1] + ".olean")


def resolve_olean(module: str, search_path: Iterable[Path]) -> Path | None:
    """The `.olean` of `module` in the first search-path entry that has it, or None."""
    relative = olean_relative_path(module)
    for entry in search_path:
        candidate = entry / relative
        if candidate.is_file():
            return candidate
    return None


#: The parts Lean writes beside `X.olean`, in the order they are hashed.
OLEAN_PARTS = ("olean.server", "olean.private")


def _module_line(module: str, olean: Path) -> str:
    """The digest line of one module whose `.olean` is `olean`: its sha256, then the name and
    sha256 of each part of `OLEAN_PARTS` that exists beside it."""
    parts = "".join(
        f" {part} {file_sha256(sibling)}"
        for part in OLEAN_PARTS
        if (sibling := olean.with_name(f"{olean.stem}.{part}")).is_file()
    )
    return f"{module} {file_sha256(olean)}{parts}\n"


def modules_digest(modules: Iterable[str], search_path: list[Path]) -> str:
    """sha256 (hex) over the sorted module lines, as the module docstring says.

    Raises `LeanIndexError(backend_error)` naming the first module (and the count) whose
    `.olean` is on none of the `search_path` entries.
    """
    pairs = []
    missing = []
    for module in sorted(set(modules)):
        path = resolve_olean(module, search_path)
        if path is None:
            missing.append(module)
            continue
        pairs.append(_module_line(module, path))
    if missing:
        raise LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"{len(missing)} loaded module(s) have no .olean on the search path, first {missing[0]!r}; "
            f"searched: {', '.join(str(p) for p in search_path) or '(nothing)'}",
            {"missing": missing[:20], "search_path": [str(p) for p in search_path]},
        )
    return hashlib.sha256("".join(pairs).encode()).hexdigest()
