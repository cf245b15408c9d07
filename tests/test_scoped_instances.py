"""Why `is_instance` reads the instance extension's scoped entries, observed in the real Lean 4.35.0.

A `prelude` module declares a class, a global instance and a `scoped instance` in namespace
`Foo`; it is compiled with the real front end and imported the way the extractor imports
(`Lean.importModules … (leakEnv := true) (loadExts := true)`, after
`enableInitializersExecution`). In the imported environment no namespace is open, so
`Lean.Meta.isInstanceCore` (what the extractor called alone before) misses the scoped instance;
activating the namespace (`ScopedEnvExtension.activateScoped`, which reads
`StateStack.scopedEntries.map` at that namespace) brings it in. The extractor's
`scopedInstanceNames` (`LeanIndex/Flags.lean`) folds over that same map for every namespace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from leanlib import build_olean, run_reader

SOURCE = """prelude
universe u
unsafe axiom lcErased : Type
unsafe axiom lcAny : Type
unsafe axiom lcProof {α : Prop} : α
unsafe axiom lcUnreachable {α : Sort u} : α
class C (α : Type) where
  x : α
inductive N where
  | zero : N
instance globalInst : C N := ⟨N.zero⟩
namespace Foo
scoped instance scopedInst : C N := ⟨N.zero⟩
end Foo
"""

# Imports module `Inst` from the folder in argv[2] and asks `isInstanceCore` before and after
# activating namespace `Foo`. C signatures: `initSearchPath (sysroot) (sp)`,
# `importModules (imports) (opts) (trustLevel : UInt32) (plugins) (leakEnv loadExts : Bool)
# (level : OLeanLevel) (arts : NameMap _)`, an empty `NameMap` being the tree leaf `box(1)`;
# `OLeanLevel.private` is 2.
READER = r"""
os.environ["LEAN_PATH"] = sys.argv[2]
io(fn("l_Lean_initSearchPath", [P, P])(fn("lean_mk_string", [ctypes.c_char_p])(b"/nonexistent"), 1), "initSearchPath")
fn("lean_enable_initializer_execution", [])()
imports = fn("l_Array_mkArray1___redArg", [P])(fn("l_Lean_instCoeNameImport___lam__0", [P])(mk_name("Inst")))
u8 = ctypes.c_uint8
import_modules = fn("l_Lean_importModules", [P, P, ctypes.c_uint32, P, u8, u8, u8, P])
options = P.in_dll(lib, "l_Lean_Options_empty").value
env = io(import_modules(imports, options, 0, fn("l_Array_mkArray0___redArg", [])(), 1, 1, 2, 3), "importModules")
is_instance = fn("l_Lean_Meta_isInstanceCore", [P, P], ctypes.c_uint8)
extension = P.in_dll(lib, "l_Lean_Meta_instanceExtension").value
activated = fn("l_Lean_ScopedEnvExtension_activateScoped___redArg", [P, P, P])(extension, keep(env), mk_name("Foo"))
print(json.dumps({
    "global": is_instance(keep(env), mk_name("globalInst")),
    "scoped": is_instance(keep(env), mk_name("Foo.scopedInst")),
    "scoped_after_activation": is_instance(keep(activated), mk_name("Foo.scopedInst")),
}))
"""


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    folder: Path = tmp_path_factory.mktemp("scoped")
    build_olean(folder, "Inst", SOURCE)
    return run_reader(READER, str(folder))


def test_is_instance_core_misses_a_scoped_instance(answers: dict[str, int]) -> None:
    assert answers["global"] == 1
    assert answers["scoped"] == 0


def test_scoped_instance_is_in_the_scoped_entries_of_its_namespace(answers: dict[str, int]) -> None:
    assert answers["scoped_after_activation"] == 1
