import Lean

/-!
# Pretty printing of types

Types are printed by Lean's delaborator (`PrettyPrinter.ppExpr`) in the root namespace with
no open declarations. Every constant the printed type names is written so that it can be
looked up by that text: full names (no export alias or shortened name), private names with
their `_private` prefix, and no field notation (`Nat.succ n`, not `n.succ`). Lean writes
`_root_.` before a full name only when that name alone would resolve elsewhere. Elision (`⋯`)
of proofs, deep terms and long terms is switched off and the result is rendered with a width
no type reaches, then joined onto one line.

Each constant runs in its own `MetaM` with its own heartbeat budget. `PrettyPrinter.ppExpr`
throws on failure (unlike `Meta.ppExpr`, which returns a message instead); a failure falls
back to the kernel's debug printer and is reported as such.
-/

namespace LeanIndex

open Lean

/-- Heartbeat budget for printing one type, in thousands (the unit of the `maxHeartbeats`
option). -/
def typeHeartbeats : Nat := 10000

/-- Rendering width: large enough that no group of a type is broken across lines. -/
def renderWidth : Nat := 1000000

/-- Pretty-printer options. Each is set through its registered `Lean.Option` constant, so a
name that does not exist is a compile error rather than an ignored key.

- names resolvable as printed: `pp.fullNames` (no alias or namespace-relative abbreviation),
  `pp.privateNames` (keep the `_private.<module>.0.` prefix), `pp.fieldNotation` off (this
  also turns off its generalized form, `pp.fieldNotation.generalized`, which applies only when
  `pp.fieldNotation` is on);
- nothing elided: `pp.proofs`, `pp.deepTerms`, and `pp.maxSteps` raised;
- the budget `maxHeartbeats`, in thousands. -/
def printOptions : Options :=
  let opts := Lean.Option.set Options.empty Lean.pp.fullNames true
  let opts := Lean.Option.set opts Lean.pp.privateNames true
  let opts := Lean.Option.set opts Lean.pp.fieldNotation false
  let opts := Lean.Option.set opts Lean.pp.proofs true
  let opts := Lean.Option.set opts Lean.pp.deepTerms true
  let opts := Lean.Option.set opts Lean.pp.maxSteps 1000000000
  Lean.Option.set opts Lean.maxHeartbeats typeHeartbeats

/-- A fresh `Core.Context` for one constant: root namespace, printing options and budget.
Heartbeats are counted per thread from `initHeartbeats`, and a worker thread prints many
constants, so each one starts its budget from the thread's current count. -/
def coreContext : IO Core.Context := do
  return { fileName := "<leanindex-extract>"
           fileMap := default
           options := printOptions
           maxHeartbeats := typeHeartbeats * 1000
           initHeartbeats := ← IO.getNumHeartbeats }

/-- Replaces each line break and the indentation after it by one space. -/
def oneLine (s : String) : String :=
  if s.contains '\n' then (s.foldl step ("", false)).1 else s
where
  /-- The flag is set while skipping the indentation that follows a line break. -/
  step : String × Bool → Char → String × Bool
    | (acc, skipping), c =>
      if c == '\n' then (acc.push ' ', true)
      else if skipping && c == ' ' then (acc, true)
      else (acc.push c, false)

/-- Prints `type` on one line. The flag is `true` when the pretty printer failed (error,
heartbeats, recursion depth) and the debug printer was used instead. -/
def printType (env : Environment) (type : Expr) : IO (String × Bool) := do
  try
    let (fmt, _, _) ← Meta.MetaM.toIO (PrettyPrinter.ppExpr type) (← coreContext) { env := env }
    return (oneLine (fmt.pretty renderWidth), false)
  catch _ =>
    return (oneLine type.dbgToString, true)

end LeanIndex
