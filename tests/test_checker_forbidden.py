"""Refusing commands that run code during elaboration, on info trees in the REPL's shape (built
with tests/standin/scripted.py: a macro command keeps its own node, then its expansion's nodes),
and the refused kind names checked against the real compiled Lean 4.35.0 library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "standin"))

import scripted  # noqa: E402
from leanindex.checker.forbidden import FORBIDDEN_KINDS, find_forbidden  # noqa: E402
from leanindex.checker.replies import parse_command_response  # noqa: E402
from leanlib import library_path_or_skip  # noqa: E402

SIMPROC_KIND = "Lean.Parser.«command_Simproc_decl_(_):=_»"  # unnamed `syntax` in Init/Simproc.lean


def expansion(*commands: dict) -> dict:
    return scripted.other_info("MacroExpansionInfo", list(commands))


def macro_command(pp: str, kind: str, *expanded: dict) -> dict:
    """A macro command's node (elaborator: the `macro_rules` declaration) over its expansion."""
    return scripted.command(pp, kind, "Lean.Parser._aux_macroRules_1", (1, 0), (1, len(pp)), children=[expansion(*expanded)])


def synthetic(pp: str, kind: str, elaborator: str | None = None, arg_kinds=()) -> dict:
    return scripted.command(pp, kind, elaborator, (1, 0), (1, 0), arg_kinds)


def term(pp: str, kind: str) -> dict:
    node = scripted.declaration("def f : Nat := 0", "definition", "f", (1, 0), (1, 16))
    node["children"].append(
        {"kind": "TermInfo", "node": {**scripted.command(pp, kind, None, (1, 15), (1, 15 + len(pp)))["node"],
                                      "isBinder": False, "expr": "0"}, "children": []}
    )
    return node


PATTERN = synthetic("simproc_pattern% Nat.succ _ => foo", "Lean.Parser.simprocPattern", "Lean.Elab.Command.elabSimprocPattern")
CBV_PATTERN = synthetic("cbv_simproc_pattern% Nat.succ _ => foo", "Lean.Parser.cbvSimprocPattern")
SIMPROC_DEF = synthetic("def foo : Lean.Meta.Simp.Simproc := fun _ => pure .continue", "Lean.Parser.Command.declaration")

REFUSED = {
    "simproc_decl": (
        macro_command("simproc_decl foo (Nat.succ _) := fun _ => pure .continue", SIMPROC_KIND, SIMPROC_DEF, PATTERN),
        "simproc_decl",
    ),
    "dsimproc_decl": (
        macro_command("dsimproc_decl foo (Nat.succ _) := fun _ => pure .continue", "Lean.Parser.«command_Dsimproc_decl_(_):=_»", SIMPROC_DEF, PATTERN),
        "dsimproc_decl",
    ),
    "simproc expansion alone": (expansion(SIMPROC_DEF, PATTERN), "simproc_pattern%"),
    "local simproc": (
        macro_command("local simproc foo (Nat.succ _) := fun _ => pure .continue", "Lean.Parser.«command__Simproc__[_]_(_):=_»"),
        "simproc",
    ),
    "cbv_simproc": (
        macro_command(
            "cbv_simproc foo (Nat.succ _) := fun _ => pure .continue",
            "Lean.Parser.«command__Cbv_simproc____(_):=_»",
            synthetic("cbv_simproc_decl foo (Nat.succ _) := fun _ => pure .continue", "Lean.Parser.«command_Cbv_simproc_decl_(_):=_»"),
            synthetic("attribute [cbv_simproc] foo", "Lean.Parser.Command.attribute"),
        ),
        "cbv_simproc",
    ),
    "cbv_simproc_decl expansion alone": (expansion(SIMPROC_DEF, CBV_PATTERN), "cbv_simproc_pattern%"),
    "cbv_simproc attribute": (synthetic("attribute [cbv_simproc ↓] foo", "Lean.Parser.Command.attribute"), "@[cbv_simproc]"),
    "sevalproc attribute": (synthetic("@[sevalproc] def foo := 0", "Lean.Parser.Command.declaration"), "@[sevalproc]"),
    "simp set simproc attribute": (synthetic("attribute [local my_simps_proc] foo", "Lean.Parser.Command.attribute"), "@[my_simps_proc]"),
    "parser attribute": (synthetic("@[doElem_parser] def p := 0", "Lean.Parser.Command.declaration"), "@[doElem_parser]"),
    "#guard": (synthetic("#guard 1 + 1 == 2", "Lean.Parser.Command.guardCmd", "Lean.Elab.Command.elabGuardCmd"), "#guard"),
    "#guard by kind": (synthetic("", "Lean.Parser.Command.guardCmd"), "Lean.Parser.Command.guardCmd"),
    "unsafe term": (term("unsafe unsafeCast 0", "Lean.Parser.Term.unsafe"), "unsafe"),
    "by_elab term": (term("by_elab pure (Lean.mkNatLit 0)", "Lean.byElab"), "by_elab"),
}

ALLOWED = {
    "#guard_expr": synthetic("#guard_expr 1 + 1 =~ 2", "Lean.Parser.Command.guardExprCmd"),
    "simp attribute": synthetic("@[simp] theorem t : True := trivial", "Lean.Parser.Command.declaration"),
    "identifier starting with unsafe": term("unsafeCast 0", "Lean.Parser.Term.app"),
    "unsafe definition without implemented_by": synthetic("unsafe def g : Nat := 0", "Lean.Parser.Command.declaration"),
}


def trees_of(tree: dict):
    return parse_command_response({"env": 1, "infotree": [tree]}).infotree


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused(case):
    tree, label = REFUSED[case]
    assert label in [f.command for f in find_forbidden(trees_of(tree))]


@pytest.mark.parametrize("case", list(ALLOWED))
def test_allowed(case):
    assert find_forbidden(trees_of(ALLOWED[case])) == []


def _mangle(name: str) -> str:
    """The C symbol of Lean declaration `name` (Lean's `Name.mangle` with prefix `l_`): ASCII
    letters and digits kept, `_` doubled, other characters `_xHH`/`_uHHHH`/`_UHHHHHHHH`."""
    parts, current, escaped = [], "", False
    for ch in name:
        if escaped:
            escaped = ch != "»"
            current += ch if escaped else ""
        elif ch == "«":
            escaped = True
        elif ch == ".":
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)

    def one(c: str) -> str:
        if c.isascii() and c.isalnum():
            return c
        if c == "_":
            return "__"
        code = ord(c)
        return f"_x{code:02x}" if code < 0x100 else f"_u{code:04x}" if code < 0x10000 else f"_U{code:08x}"

    return "l_" + "_".join("".join(one(c) for c in part) for part in parts)


def test_mangling_matches_known_symbols():
    assert _mangle("Lean.Parser.Command.macro_rules") == "l_Lean_Parser_Command_macro__rules"
    assert _mangle(SIMPROC_KIND) == "l_Lean_Parser_command__Simproc__decl___x28___x29_x3a_x3d__"


def test_every_refused_kind_is_a_declaration_of_lean_4_35():
    library = library_path_or_skip()
    kinds = sorted(FORBIDDEN_KINDS) + [SIMPROC_KIND]
    # Looked up with dlsym in a child process: loading the library is all it takes.
    script = (
        "import ctypes, sys\n"
        "lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)\n"
        "print('\\n'.join(s for s in sys.argv[2:] if not hasattr(lib, s)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(library), *map(_mangle, kinds)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    missing = [k for k in kinds if _mangle(k) in done.stdout.split()]
    assert missing == []
