import Lean
import LeanIndex.Print

/-!
# Declaration flags

Boolean facts about a constant, read from the environment. `isClass`, `isInstanceCore` and
the scoped-instance table read environment-extension state, so the environment must be
imported with `loadExts := true`.
-/

namespace LeanIndex

open Lean

/-- The flags written for each constant. -/
structure Flags where
  /-- The name has the `_private.<module>.0.` prefix. -/
  isPrivate : Bool
  /-- An implementation detail or a generated declaration; see `isInternalDecl`. -/
  isInternal : Bool
  /-- Declared as a type-class instance, globally or `scoped` in a namespace. -/
  isInstance : Bool
  /-- A type class. -/
  isClass : Bool
  /-- A structure (or structure-like class). -/
  isStructure : Bool
  /-- Declared `unsafe`. -/
  isUnsafe : Bool
  /-- Carries the `@[deprecated]` attribute. -/
  isDeprecated : Bool

/-- What is read about a constant in `CoreM`. -/
structure DeclFacts where
  /-- The range of the whole declaration in its source file, if the environment records one.
  `findDeclarationRanges?` gives a kernel recursor, an auxiliary recursor or a `noConfusion`
  the range of its inductive type. -/
  range? : Option DeclarationRange
  /-- Lean's `isAutoDeclOrPrivate_Internal` (`Lean.AutoDecl`) calls the constant generated:
  reserved names (`eq_def`, `eq_1`, ...), a constructor's `injEq`, `inj`, `sizeOf_spec`, an
  inductive's `noConfusionType`, `ctorIdx`, `toCtorIdx`, `brecOn_N`, ... Always `false` for a
  private name; see `declFacts`. -/
  isAutoDecl : Bool

/-- Reads the `DeclFacts` of `n` in a fresh `CoreM`. Errors propagate: a constant whose facts
cannot be read stops the run instead of being written with guessed flags. -/
def declFacts (env : Environment) (n : Name) : IO DeclFacts := do
  let read : CoreM DeclFacts := do
    let ranges? ← findDeclarationRanges? n
    -- The helper is true for every private name (its `_private` component is internal), but
    -- privacy is its own flag; a private generated declaration has no range and is caught by
    -- the range test of `isInternalDecl`.
    let isAutoDecl ←
      if Lean.isPrivateName n then pure false else Lean.isAutoDeclOrPrivate_Internal n
    return { range? := ranges?.map (·.range), isAutoDecl }
  let (facts, _) ← Core.CoreM.toIO read (← coreContext) { env := env }
  return facts

/--
Whether `n` is an implementation detail or a generated declaration, following doc-gen4's
rule (`DocGen4.Process.isBlackListed`): structure projections always stay visible; anything
else is hidden when the environment records no declaration range for it (generated
declarations have none), or when it is an internal name (`Name.isInternalDetail`: `_`-prefixed
or numeric components, `match_N`, `proof_N`, `eq_N`, ...), an auxiliary recursor (`casesOn`,
`recOn`, `brecOn`, `below`), a `noConfusion` or a matcher. On top of that, Lean's own test for
generated declarations (`DeclFacts.isAutoDecl`) hides those that do carry a range.

Two deliberate differences from doc-gen4: kernel recursors (`.rec`) and the kernel's quotient
constants (`Quot`, `Quot.mk`, `Quot.lift`, `Quot.ind`, added by `init_quot` without a source
range) stay visible; and the private prefix is removed before `isInternalDetail`, so a private
declaration is internal only when its user-facing name is (doc-gen4 hides every private name).
-/
def isInternalDecl (env : Environment) (ci : ConstantInfo) (facts : DeclFacts) : Bool :=
  let n := ci.name
  let userName := (Lean.privateToUserName? n).getD n
  let isQuot := match ci with
    | .quotInfo _ => true
    | _ => false
  let hasRange := facts.range?.isSome || isQuot
  !env.isProjectionFn n &&
    (!hasRange || facts.isAutoDecl || userName.isInternalDetail || Lean.isAuxRecursor env n ||
      Lean.isNoConfusion env n || Lean.Meta.isMatcherCore env n)

/-- Names of the instances declared `scoped` in some namespace. `isInstanceCore` reads the
instance table in effect, which holds the global instances and those of opened namespaces
only; an imported environment has no namespace open, so the scoped ones are read from the
extension's per-namespace entries (`ScopedEnvExtension.StateStack.scopedEntries`). -/
def scopedInstanceNames (env : Environment) : NameSet :=
  let stack := Lean.Meta.instanceExtension.ext.getState env
  stack.scopedEntries.map.fold (init := ({} : NameSet)) fun acc _ entries =>
    entries.foldl (init := acc) fun acc entry =>
      match entry.globalName? with
      | some name => acc.insert name
      | none => acc

/-- Computes all flags of `ci`; `scopedInstances` is `scopedInstanceNames env`. -/
def flagsOf (env : Environment) (scopedInstances : NameSet) (ci : ConstantInfo)
    (facts : DeclFacts) : Flags :=
  let n := ci.name
  { isPrivate := Lean.isPrivateName n
    isInternal := isInternalDecl env ci facts
    isInstance := Lean.Meta.isInstanceCore env n || scopedInstances.contains n
    isClass := Lean.isClass env n
    isStructure := Lean.isStructure env n
    isUnsafe := ci.isUnsafe
    isDeprecated := Lean.Linter.isDeprecated env n }

end LeanIndex
