import Lean

/-!
# Pretty printing of types

Types are printed by Lean's delaborator (`PrettyPrinter.ppExpr`) in the root namespace with
no open declarations, so names print in full as Lean shows them there. Elision (`⋯`) of
proofs, deep terms and long terms is switched off and the result is rendered with a width
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

/-- Pretty-printer options: nothing is elided. -/
def printOptions : Options :=
  Options.empty
    |>.setBool `pp.proofs true
    |>.setBool `pp.deepTerms true
    |>.setNat `pp.maxSteps 1000000000
    |>.setNat `maxHeartbeats typeHeartbeats

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

/-- The declaration range of `n` in its source file, if the environment records one. -/
def declarationRange? (env : Environment) (n : Name) : IO (Option DeclarationRange) := do
  try
    let (ranges?, _) ← Core.CoreM.toIO (findDeclarationRanges? n) (← coreContext) { env := env }
    return ranges?.map (·.range)
  catch _ =>
    return none

end LeanIndex
