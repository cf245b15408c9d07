import Lean

/-!
# Declaration flags

Boolean facts about a constant, read from the environment. `isClass` and `isInstanceCore`
read environment-extension state, so the environment must be imported with
`loadExts := true`.
-/

namespace LeanIndex

open Lean

/-- The flags written for each constant. -/
structure Flags where
  /-- The name has the `_private.<module>.0.` prefix. -/
  isPrivate : Bool
  /-- An implementation detail; see `isInternalDecl`. -/
  isInternal : Bool
  /-- Declared as a type-class instance. -/
  isInstance : Bool
  /-- A type class. -/
  isClass : Bool
  /-- A structure (or structure-like class). -/
  isStructure : Bool
  /-- Declared `unsafe`. -/
  isUnsafe : Bool
  /-- Carries the `@[deprecated]` attribute. -/
  isDeprecated : Bool

/--
Whether `n` is an implementation detail, following doc-gen4's and Loogle's convention:
internal name parts (`_`-prefixed, numeric, `match_N`, `proof_N`, `eq_N`, ...), auxiliary
recursors (`casesOn`, `recOn`, `brecOn`, `below`), `noConfusion` and matchers. Kernel
recursors (`.rec`) and structure projections stay visible.

The private prefix is removed first, so privacy (its own flag) does not make every private
declaration internal.
-/
def isInternalDecl (env : Environment) (n : Name) : Bool :=
  let userName := (Lean.privateToUserName? n).getD n
  !env.isProjectionFn n &&
    (userName.isInternalDetail || Lean.isAuxRecursor env n || Lean.isNoConfusion env n ||
      Lean.Meta.isMatcherCore env n)

/-- Computes all flags of `ci`. -/
def flagsOf (env : Environment) (ci : ConstantInfo) : Flags :=
  let n := ci.name
  { isPrivate := Lean.isPrivateName n
    isInternal := isInternalDecl env n
    isInstance := Lean.Meta.isInstanceCore env n
    isClass := Lean.isClass env n
    isStructure := Lean.isStructure env n
    isUnsafe := ci.isUnsafe
    isDeprecated := Lean.Linter.isDeprecated env n }

end LeanIndex
