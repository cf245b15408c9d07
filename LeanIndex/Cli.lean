import Lean

/-!
# Command-line arguments

`leanindex-extract [--out FILE] [--without-values] [--threads N] MODULE...`
-/

namespace LeanIndex

/-- Settings taken from the command line. -/
structure Config where
  /-- File to write; `none` writes to standard output. -/
  out? : Option System.FilePath := none
  /-- Record the constants used by each value (on unless `--without-values`). -/
  withValues : Bool := true
  /-- Number of pretty-printing workers. -/
  threads : Nat := 4
  /-- Modules to import, in the order given. -/
  modules : Array Lean.Name := #[]

/-- One-line usage, printed after an argument error. -/
def usage : String :=
  "usage: leanindex-extract [--out FILE] [--without-values] [--threads N] MODULE..."

/-- Reads the arguments; an error carries a message for the user. -/
def parseArgs (args : List String) : Except String Config :=
  go args {}
where
  /-- Consumes the arguments left to right. -/
  go : List String → Config → Except String Config
    | [], cfg =>
      if cfg.modules.isEmpty then .error "no module given" else .ok cfg
    | "--out" :: file :: rest, cfg => go rest { cfg with out? := some ⟨file⟩ }
    | "--without-values" :: rest, cfg => go rest { cfg with withValues := false }
    | "--threads" :: n :: rest, cfg =>
      match n.toNat? with
      | some k =>
        if k == 0 then .error "--threads must be at least 1"
        else go rest { cfg with threads := k }
      | none => .error s!"--threads expects a positive integer, got '{n}'"
    | arg :: rest, cfg =>
      if arg.startsWith "-" then .error s!"unknown option or missing value: '{arg}'"
      else go rest { cfg with modules := cfg.modules.push arg.toName }

end LeanIndex
