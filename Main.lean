import LeanIndex

/-!
# `leanindex-extract`

Writes every constant of the given modules as NDJSON (`leanindex.declarations/v1`).
Run it through `lake env` so that `LEAN_PATH` resolves the modules.

Exit codes: 0 on success, 1 when importing or writing fails, 2 on bad arguments.
-/

/-- Entry point. -/
def main (args : List String) : IO UInt32 := do
  match LeanIndex.parseArgs args with
  | .error msg =>
    IO.eprintln s!"leanindex-extract: {msg}"
    IO.eprintln LeanIndex.usage
    return 2
  | .ok cfg =>
    try
      LeanIndex.run cfg
      return 0
    catch e =>
      IO.eprintln s!"leanindex-extract: {e}"
      return 1
