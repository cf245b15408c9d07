prelude
-- What `import Init` would give, cut down to what this file needs: no .olean exists where these
-- outputs are made, so nothing can be imported. `genCtorIdx false` and the two compiler markers
-- let the inductive types below compile without the rest of `Init.Prelude`. `Nat` and `OfNat`
-- let the probe's `#check (<nonce> : Nat)` run. The `sorry` term elaborates (`elabSorry`,
-- `mkLabeledSorry` in Lean.Meta.Sorry) to `sorryAx (Lean.Name → T) false <tag>`, the tag a
-- `Lean.Name` value made of `Lean.Name.str`/`num`/`anonymous`, `String` literals and `OfNat.ofNat`
-- numerals, so all of these and `Bool` must exist, and `sorryAx` as `Init.Prelude` declares it;
-- a `sorry` put in by error recovery is labelled through `Function.const Unit Lean.Name Unit.unit`.
universe u v
set_option genCtorIdx false
unsafe axiom lcErased : Type
unsafe axiom lcAny : Type
inductive Nat : Type where
  | zero : Nat
  | succ (n : Nat) : Nat
class OfNat (α : Type u) (_ : Nat) where
  ofNat : α
instance instOfNatNat (n : Nat) : OfNat Nat n := ⟨n⟩
inductive True : Prop where
  | intro : True
inductive False : Prop
inductive Bool : Type where
  | false : Bool
  | true : Bool
inductive String : Type where
  | mk : String
inductive Lean.Name : Type where
  | anonymous : Lean.Name
  | str (pre : Lean.Name) (s : String) : Lean.Name
  | num (pre : Lean.Name) (i : Nat) : Lean.Name
inductive Unit : Type where
  | unit : Unit
def Function.const {α : Sort u} (β : Sort v) (a : α) : β → α := fun _ => a
axiom sorryAx (α : Sort u) (synthetic : Bool) : α
-- The submission.
axiom h : False
theorem mismatched : True := h
-- probe
#check (1000000004242 : Nat)
#print axioms mismatched
