import Lake
open Lake DSL

package LeanIndex

@[default_target]
lean_lib LeanIndex

/-- The extractor loads other projects' `.olean` files at run time; their `initialize`
declarations run in the interpreter, which needs the executable's symbols exported. -/
@[default_target]
lean_exe «leanindex-extract» {
  root := `Main
  supportInterpreter := true
}
