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

/-- The range of the whole declaration of `n` in its source file, if the environment records
one (`findDeclarationRanges?`, run in a fresh `CoreM`; it gives a kernel recursor, an auxiliary
recursor or a `noConfusion` the range of its inductive type). Errors propagate: `none` means
"no range", which makes a constant internal, so a failed lookup must not look like one. -/
def declarationRange? (env : Environment) (n : Name) : IO (Option DeclarationRange) := do
  let (ranges?, _) ← Core.CoreM.toIO (findDeclarationRanges? n) (← coreContext) { env := env }
  return ranges?.map (·.range)

/--
Whether `n` is an implementation detail or a generated declaration, by doc-gen4's rule
(`isBlackListed` in `DocGen4/Process/DocInfo.lean`): structure projections always stay
visible; anything else is hidden when the environment records no declaration range for it
(`range?`; generated declarations such as `injEq`, `inj`, `sizeOf_spec`, `noConfusionType`,
`ctorIdx`, `eq_def` have none), or when it is an internal name (`Name.isInternalDetail`:
`_`-prefixed or numeric components, `match_N`, `proof_N`, `eq_N`, ...), an auxiliary recursor
(`casesOn`, `recOn`, `brecOn`, `below`), a `noConfusion` or a matcher.

Lean's `isAutoDeclOrPrivate_Internal` is not used: besides generated names it is true for
every `ofNat` of an inductive type, such as the constructor `Int.ofNat` and the definitions
`Fin.ofNat`, `BitVec.ofNat`, `UInt8.ofNat`, which users search for; doc-gen4 does not use it
either.

Two deliberate differences from doc-gen4: kernel recursors (`.rec`) and the kernel's quotient
constants (`Quot`, `Quot.mk`, `Quot.lift`, `Quot.ind`, added by `init_quot` without a source
range) stay visible; and the private prefix is removed before `isInternalDetail`, so a private
declaration is internal only when its user-facing name is, or when it has no range (doc-gen4
hides every private name).
-/
def isInternalDecl (env : Environment) (ci : ConstantInfo) (range? : Option DeclarationRange) :
    Bool :=
  let n := ci.name
  let userName := (Lean.privateToUserName? n).getD n
  let isQuot := match ci with
    | .quotInfo _ => true
    | _ => false
  let hasRange := range?.isSome || isQuot
  !env.isProjectionFn n &&
    (!hasRange || userName.isInternalDetail || Lean.isAuxRecursor env n ||
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

/-- The `@[deprecated]` attribute's entry of `n`, if it has the attribute: the replacement
(`newName?`) and the `since` text (`since?`) as written in the attribute. Read from
`Lean.Linter.deprecatedAttr`, a `ParametricAttribute DeprecationEntry`, with
`ParametricAttribute.getParam?` (what `Lean.Linter.isDeprecated` and `getDeprecatedNewName`
read), so it is `some` exactly when `isDeprecated` is true. -/
def deprecationEntry? (env : Environment) (n : Name) : Option Lean.Linter.DeprecationEntry :=
  Lean.Linter.deprecatedAttr.getParam? env n

/-- Computes all flags of `ci`; `scopedInstances` is `scopedInstanceNames env`, `range?` is
`declarationRange? env ci.name`. -/
def flagsOf (env : Environment) (scopedInstances : NameSet) (ci : ConstantInfo)
    (range? : Option DeclarationRange) : Flags :=
  let n := ci.name
  { isPrivate := Lean.isPrivateName n
    isInternal := isInternalDecl env ci range?
    isInstance := Lean.Meta.isInstanceCore env n || scopedInstances.contains n
    isClass := Lean.isClass env n
    isStructure := Lean.isStructure env n
    isUnsafe := ci.isUnsafe
    isDeprecated := Lean.Linter.isDeprecated env n }

end LeanIndex
