import Lean
import LeanIndex.Flags

/-!
# NDJSON records

Builds the `header`, `declaration` and `footer` records of the stream format
`leanindex.declarations/v2`. Each record is rendered with `Json.compress`, which escapes
strings as JSON requires and never breaks a line.
-/

namespace LeanIndex

open Lean

/-- Identifier of the stream format. -/
def formatId : String := "leanindex.declarations/v2"

/-- Name of this extractor, written in the header. -/
def extractorName : String := "leanindex-extract"

/-- Version of this extractor, written in the header. -/
def extractorVersion : String := "0.1.0"

/-- A JSON array of strings. -/
def strArray (xs : Array String) : Json :=
  Json.arr (xs.map Json.str)

/-- `f a` for `some a`, and JSON `null` for `none`. -/
def orNull {α : Type} (f : α → Json) : Option α → Json
  | some a => f a
  | none => Json.null

/-- A JSON array of printed names. -/
def nameArray (ns : Array Name) : Json :=
  strArray (ns.map toString)

/-- The components of `n` from the root: strings, and integers for numeric components. -/
def nameComponents : Name → Array Json
  | .anonymous => #[]
  | .str p s => (nameComponents p).push (Json.str s)
  | .num p k => (nameComponents p).push (toJson k)

/-- Printed names of `ns`, sorted by `String` order (code points), without duplicates. -/
def sortedNameStrings (ns : Array Name) : Array String := Id.run do
  let sorted := (ns.map toString).qsort (fun a b => a < b)
  let mut out : Array String := #[]
  for s in sorted do
    if out.back? != some s then
      out := out.push s
  return out

/-- The kernel kind of a constant, as written in the `kind` field. -/
def kindString : ConstantInfo → String
  | .axiomInfo _ => "axiom"
  | .defnInfo _ => "definition"
  | .thmInfo _ => "theorem"
  | .opaqueInfo _ => "opaque"
  | .quotInfo _ => "quotient"
  | .inductInfo _ => "inductive"
  | .ctorInfo _ => "constructor"
  | .recInfo _ => "recursor"

/-- A source position: 1-based line, 0-based column in code points. -/
def positionJson (p : Position) : Json :=
  Json.mkObj [("line", toJson p.line), ("column", toJson p.column)]

/-- A declaration range as `{"start": ..., "end": ...}`. -/
def rangeJson (r : DeclarationRange) : Json :=
  Json.mkObj [("start", positionJson r.pos), ("end", positionJson r.endPos)]

/-- The first line of the stream. -/
def headerRecord (imports modules : Array Name) : Json :=
  Json.mkObj [
    ("record", Json.str "header"),
    ("format", Json.str formatId),
    ("extractor", Json.mkObj [
      ("name", Json.str extractorName),
      ("version", Json.str extractorVersion)]),
    ("lean", Json.mkObj [
      ("version", Json.str Lean.versionString),
      ("githash", Json.str Lean.githash)]),
    ("imports", nameArray imports),
    ("modules", nameArray modules)]

/-- The last line of the stream. -/
def footerRecord (count : Nat) : Json :=
  Json.mkObj [("record", Json.str "footer"), ("count", toJson count)]

/-- Everything written for one constant. -/
structure DeclRecord where
  /-- The constant. -/
  info : ConstantInfo
  /-- The module that declares it, if known. -/
  module? : Option Name
  /-- The pretty-printed type, on one line. -/
  type : String
  /-- Whether `type` came from the fallback printer. -/
  typeFallback : Bool
  /-- Docstring. -/
  doc? : Option String
  /-- Range of the whole declaration in its source file. -/
  range? : Option DeclarationRange
  /-- Flags. -/
  flags : Flags
  /-- Constants used by the value; left out with `--without-values`. -/
  valueConstants? : Option (Array String)
  /-- The `@[deprecated]` entry (`deprecationEntry?`), if the constant has one. -/
  deprecation? : Option Lean.Linter.DeprecationEntry

/-- The conclusion of a type: what is left after its leading `∀` and `→` binders (metadata
around a binder skipped). Bound variables stay loose; only its constants and head are used. -/
partial def conclusionOf (e : Expr) : Expr :=
  match e.consumeMData with
  | .forallE _ _ body _ => conclusionOf body
  | e' => e'

/-- The `declaration` record of `d`. -/
def DeclRecord.render (d : DeclRecord) : Json :=
  let n := d.info.name
  let conclusion := conclusionOf d.info.type
  let fields : List (String × Json) := [
    ("record", Json.str "declaration"),
    ("name", Json.str n.toString),
    ("components", Json.arr (nameComponents n)),
    ("kind", Json.str (kindString d.info)),
    ("module", orNull (fun m => Json.str m.toString) d.module?),
    ("type", Json.str d.type),
    ("type_constants", strArray (sortedNameStrings d.info.type.getUsedConstants)),
    ("conclusion_constants", strArray (sortedNameStrings conclusion.getUsedConstants)),
    ("conclusion_head", orNull (fun c => Json.str c.toString) conclusion.getAppFn.consumeMData.constName?),
    ("level_params", nameArray d.info.levelParams.toArray),
    ("doc", orNull Json.str d.doc?),
    ("range", orNull rangeJson d.range?),
    ("is_private", Json.bool d.flags.isPrivate),
    ("is_internal", Json.bool d.flags.isInternal),
    ("is_instance", Json.bool d.flags.isInstance),
    ("is_class", Json.bool d.flags.isClass),
    ("is_structure", Json.bool d.flags.isStructure),
    ("is_unsafe", Json.bool d.flags.isUnsafe),
    ("is_deprecated", Json.bool d.flags.isDeprecated),
    ("type_fallback", Json.bool d.typeFallback),
    ("deprecated_to", orNull (fun c => Json.str c.toString) (d.deprecation?.bind (·.newName?))),
    ("deprecated_since", orNull Json.str (d.deprecation?.bind (·.since?)))]
  match d.valueConstants? with
  | some cs => Json.mkObj (fields ++ [("value_constants", strArray cs)])
  | none => Json.mkObj fields

end LeanIndex
