import Lean
import LeanIndex.Cli
import LeanIndex.Flags
import LeanIndex.Print
import LeanIndex.Record

/-!
# Extraction

Imports the requested modules, sorts every constant by `Name.lt` and writes one NDJSON
record per constant between a header and a footer.

Records are built in chunks on a bounded number of tasks; chunks are written strictly in
order, so the output is in `Name.lt` order and at most `threads` chunks are held in memory.
-/

namespace LeanIndex

open Lean

/-- Constants per task. -/
def chunkSize : Nat := 256

/-- Imports `modules` from the search path (`LEAN_PATH`, then the toolchain's library),
with environment extensions loaded so that classes, instances, docstrings and notation are
available. -/
def loadEnvironment (modules : Array Name) : IO Environment := do
  initSearchPath (← findSysroot)
  -- Extensions and syntax registered by `initialize` in imported modules run in the
  -- interpreter; this must happen on one thread, before any task starts.
  unsafe enableInitializersExecution
  importModules (modules.map fun m => ({ module := m } : Import)) Options.empty
    (leakEnv := true) (loadExts := true)

/-- Every constant of `env`, sorted by `Name.lt` (Lean's `Name.cmp`, not string order). -/
def sortedConstants (env : Environment) : Array ConstantInfo := Id.run do
  let mut consts : Array ConstantInfo := #[]
  for (_, ci) in env.constants do
    consts := consts.push ci
  return consts.qsort fun a b => Name.lt a.name b.name

/-- What every worker needs; shared read-only between tasks. -/
structure Extraction where
  /-- The imported environment. -/
  env : Environment
  /-- `env.header.moduleNames`, bound once: it is indexed by `ModuleIdx`. -/
  moduleNames : Array Name
  /-- Whether to record the constants used by values. -/
  withValues : Bool
  /-- `scopedInstanceNames env`, computed once before the workers start. -/
  scopedInstances : NameSet

/-- The record of one constant. A failed docstring lookup leaves it `null`; a failed type
print falls back to the debug printer; a failed range lookup fails the run (no range makes a
constant internal). -/
def declRecord (x : Extraction) (ci : ConstantInfo) : IO DeclRecord := do
  let n := ci.name
  let (type, typeFallback) ← printType x.env ci.type
  let doc? ← tryCatch (findDocString? x.env n) fun _ => pure none
  let range? ← declarationRange? x.env n
  let module? := (x.env.getModuleIdxFor? n).bind fun idx => x.moduleNames[idx.toNat]?
  let valueConstants? :=
    if x.withValues then
      some <| sortedNameStrings <|
        ((ci.value? (allowOpaque := true)).map (·.getUsedConstants)).getD #[]
    else
      none
  return { info := ci, module?, type, typeFallback, doc?, range?,
           flags := flagsOf x.env x.scopedInstances ci range?, valueConstants?,
           deprecation? := deprecationEntry? x.env ci.name }

/-- Renders the records of `chunk` as NDJSON lines. -/
def renderChunk (x : Extraction) (chunk : Array ConstantInfo) : IO (Array String) :=
  chunk.mapM fun ci => return (← declRecord x ci).render.compress

/-- Splits `as` into consecutive pieces of at most `size` elements (`size > 0`). -/
def splitChunks {α : Type} (as : Array α) (size : Nat) : Array (Array α) :=
  let count := (as.size + size - 1) / size
  (List.range count).toArray.map fun i => as.extract (i * size) ((i + 1) * size)

/-- Waits for a chunk and writes its lines; returns how many. -/
def writeChunk (out : IO.FS.Stream) (t : Task (Except IO.Error (Array String))) : IO Nat := do
  let lines ← match ← IO.wait t with
    | .ok lines => pure lines
    | .error e => throw e
  for line in lines do
    out.putStrLn line
  return lines.size

/-- Writes the declaration records of `consts` in order, rendering at most `threads` chunks
at a time; returns the number of records. -/
def writeDeclarations (x : Extraction) (consts : Array ConstantInfo) (threads : Nat)
    (out : IO.FS.Stream) : IO Nat := do
  let mut queue : List (Task (Except IO.Error (Array String))) := []
  let mut count := 0
  for chunk in splitChunks consts chunkSize do
    if queue.length ≥ threads then
      if let t :: rest := queue then
        count := count + (← writeChunk out t)
        queue := rest
    -- A dedicated thread per chunk keeps exactly `threads` workers busy, whatever the size
    -- of Lean's shared task pool.
    let task ← IO.asTask (renderChunk x chunk) Task.Priority.dedicated
    queue := queue ++ [task]
  for t in queue do
    count := count + (← writeChunk out t)
  return count

/-- Writes the whole stream for an imported environment. -/
def writeStream (cfg : Config) (env : Environment) (out : IO.FS.Stream) : IO Unit := do
  let moduleNames := env.header.moduleNames
  out.putStrLn (headerRecord cfg.modules moduleNames).compress
  let x : Extraction :=
    { env, moduleNames, withValues := cfg.withValues, scopedInstances := scopedInstanceNames env }
  let count ← writeDeclarations x (sortedConstants env) cfg.threads out
  out.putStrLn (footerRecord count).compress
  out.flush

/-- Runs the extractor: import, then write to `--out` or standard output. -/
def run (cfg : Config) : IO Unit := do
  let env ← tryCatch (loadEnvironment cfg.modules) fun e =>
    throw <| IO.userError s!"cannot import {cfg.modules.toList}: {e}"
  match cfg.out? with
  | some path =>
    let handle ← IO.FS.Handle.mk path .write
    writeStream cfg env (IO.FS.Stream.ofHandle handle)
  | none =>
    writeStream cfg env (← IO.getStdout)

end LeanIndex
