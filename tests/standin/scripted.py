"""Scripted answers of the stand-in REPL: NOT recorded Lean output.

They fill what the real recordings in ../shared/fixtures/repl-transcripts/ lack, in the REPL's
real JSON shapes (REPL/JSON.lean and REPL/Lean/InfoTree/ToJson.lean of
leanprover-community/repl; the node shapes copy the recorded `infotree_theorem` transcript):
info trees for a few commands, forbidden commands, and `#print axioms` answers in the wording of
Lean's `#print axioms` ("'N' depends on axioms: [...]" / "'N' does not depend on any axioms").
The axioms listed for each scripted theorem are what Lean reports for such a proof: a `native_decide`
proof on Lean >= 4.29 gets its own `<thm>._native.native_decide.ax_1_1` auxiliary axiom, a
proof by a declared axiom depends on that axiom.
"""

from __future__ import annotations

import re

_PROBE = re.compile(r"^#check \((\d+) : Nat\)$")
_FAULT = re.compile(r"^-- standin: (sleep|exit-mid-response|garbage|grow|kill-host)\s*(\S*)\s*$", re.M)


def _pos(line: int, column: int) -> dict:
    return {"line": line, "column": column}


def _stx(pp: str, kind: str, arg_kinds: list[str], start: tuple[int, int], finish: tuple[int, int]) -> dict:
    return {
        "pp": pp,
        "range": {"synthetic": False, "start": _pos(*start), "finish": _pos(*finish)},
        "kind": kind,
        "argKinds": arg_kinds,
    }


def command(pp, kind, elaborator, start, finish, arg_kinds=(), children=()) -> dict:
    return {
        "kind": "CommandInfo",
        "node": {"stx": _stx(pp, kind, list(arg_kinds), start, finish), "elaborator": elaborator},
        "children": list(children),
    }


def declaration(pp: str, decl_kind: str, name: str | None, start, finish) -> dict:
    children = []
    if name is not None:
        line, column = start
        name_start = (line, column + pp.index(name))
        name_end = (line, name_start[1] + len(name))
        children.append(
            {
                "kind": "TermInfo",
                "node": {
                    "stx": _stx(name, "Lean.Parser.Command.declId", ["ident", "null"], name_start, name_end),
                    "isBinder": True,
                    "expr": name,
                    "elaborator": None,
                },
                "children": [],
            }
        )
    return command(
        pp,
        "Lean.Parser.Command.declaration",
        "Lean.Elab.Command.elabDeclaration",
        start,
        finish,
        ["Lean.Parser.Command.declModifiers", f"Lean.Parser.Command.{decl_kind}"],
        children,
    )


def eoi(cmd: str) -> dict:
    lines = cmd.split("\n")
    end = (len(lines), len(lines[-1]))
    return command("", "Lean.Parser.Command.eoi", "Lean.Elab.Command.elabEoi", end, end, ["«»"])


def _info(line: int, column: int, end_column: int, data: str, severity: str = "info") -> dict:
    return {"severity": severity, "pos": _pos(line, column), "endPos": _pos(line, end_column), "data": data}


def _with_eoi(cmd: str, trees: list[dict], messages: list[dict] | None = None) -> dict:
    answer: dict = {"infotree": trees + [eoi(cmd)]}
    if messages:
        answer["messages"] = messages
    return answer


#: Scripted commands: code -> REPL answer without `env` (the stand-in adds it).
COMMANDS: dict[str, dict] = {}


def _script(cmd: str, trees: list[dict], messages: list[dict] | None = None) -> None:
    COMMANDS[cmd] = _with_eoi(cmd, trees, messages)


_script(
    "#print List.cons",
    [command("#print List.cons", "Lean.Parser.Command.print", "Lean.Elab.Command.elabPrint", (1, 0), (1, 16), ["#print", "ident"])],
    # The message is the recorded one of the `options` transcript.
    [_info(1, 0, 6, "constructor List.cons.{u} : {α : Type u} → α → List α → List α")],
)
_script(
    "#eval 1 + 1",
    [command("#eval 1 + 1", "Lean.Parser.Command.eval", "Lean.Elab.Command.elabEval", (1, 0), (1, 11), ["#eval", "«term_+_»"])],
    [_info(1, 0, 5, "2")],
)
_script(
    'theorem ok : True := trivial\nmacro "tt" : term => `(True.intro)',
    [
        declaration("theorem ok : True := trivial", "theorem", "ok", (1, 0), (1, 28)),
        command('macro "tt" : term => `(True.intro)', "Lean.Parser.Command.macro", "Lean.Elab.Command.elabMacro", (2, 0), (2, 34)),
    ],
)
_script(
    "set_option debug.skipKernelTC true in\ntheorem t2 : 1 = 1 := rfl",
    [
        command(
            "set_option debug.skipKernelTC true in\ntheorem t2 : 1 = 1 := rfl",
            "Lean.Parser.Command.in",
            None,
            (1, 0),
            (2, 25),
            ["Lean.Parser.Command.set_option", "in", "Lean.Parser.Command.declaration"],
            [
                command(
                    "set_option debug.skipKernelTC true",
                    "Lean.Parser.Command.set_option",
                    "Lean.Elab.Command.elabSetOption",
                    (1, 0),
                    (1, 34),
                ),
                declaration("theorem t2 : 1 = 1 := rfl", "theorem", "t2", (2, 0), (2, 25)),
            ],
        )
    ],
)
_script(
    "@[implemented_by id] def h : Nat := 0",
    [declaration("@[implemented_by id] def h : Nat := 0", "definition", "h", (1, 0), (1, 37))],
)
_script(
    "axiom cheat : False\ntheorem uses_cheat : 1 = 2 := cheat.elim",
    [
        declaration("axiom cheat : False", "axiom", "cheat", (1, 0), (1, 19)),
        declaration("theorem uses_cheat : 1 = 2 := cheat.elim", "theorem", "uses_cheat", (2, 0), (2, 41)),
    ],
)
_script(
    "theorem big : 2 ^ 10 = 1024 := by native_decide",
    [declaration("theorem big : 2 ^ 10 = 1024 := by native_decide", "theorem", "big", (1, 0), (1, 47))],
)
_script(
    "theorem em' (p : Prop) : p ∨ ¬p := Classical.em p",
    [declaration("theorem em' (p : Prop) : p ∨ ¬p := Classical.em p", "theorem", "em'", (1, 0), (1, 49))],
)
_script(
    "namespace Foo\ntheorem bar : True := trivial\nend Foo",
    [
        command("namespace Foo", "Lean.Parser.Command.namespace", "Lean.Elab.Command.elabNamespace", (1, 0), (1, 13)),
        declaration("theorem bar : True := trivial", "theorem", "bar", (2, 0), (2, 29)),
        command("end Foo", "Lean.Parser.Command.end", "Lean.Elab.Command.elabEnd", (3, 0), (3, 7)),
    ],
)
_script(
    "example : 2 + 2 = 4 := rfl",
    [declaration("example : 2 + 2 = 4 := rfl", "example", None, (1, 0), (1, 26))],
)


def other_info(kind: str, children: list[dict] | None = None) -> dict:
    """A node of a kind the REPL writes without a `node` (REPL `InfoTree.toJson` fills `node`
    only for term, command and tactic infos), e.g. Lean 4.35's `DocInfo`."""
    return {"kind": kind, "node": None, "children": children or []}


_DOCUMENTED = "/-- A documented theorem. -/\ntheorem documented : True := trivial"
_documented = declaration(_DOCUMENTED, "theorem", "documented", (1, 0), (2, 36))
_documented["children"] += [other_info("DocElabInfo"), other_info("DocInfo", [other_info("ErrorNameInfo")])]
_script(_DOCUMENTED, [_documented])

# An anonymous instance: Lean generates its name (`mkInstanceName`); no `declId` binder names it.
_ANONYMOUS = "instance : Decidable (2 ^ 10 = 1024) := isTrue (by native_decide)"
_script(_ANONYMOUS, [declaration(_ANONYMOUS, "instance", None, (1, 0), (1, len(_ANONYMOUS)))])
_NAMED = "instance instBig : Decidable (2 ^ 10 = 1024) := isTrue (by native_decide)"
_script(_NAMED, [declaration(_NAMED, "instance", "instBig", (1, 0), (1, len(_NAMED)))])

# `import Lean.Elab` then the recorded `show_p` theorem, as the checker sends it: header blanked.
_SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"
_script(" " * len("import Lean.Elab") + "\n" + _SHOW_P, [declaration(_SHOW_P, "theorem", "show_p", (2, 0), (2, len(_SHOW_P)))])

# Target checks (tests/test_checker_target.py): the commands before a target and candidate
# replacements of the recorded `show_p` theorem. Scripted, not recorded: the info trees follow the
# recorded `infotree_theorem` shapes; the error text follows Lean's "type mismatch" message.
_script("def f : Nat := 1", [declaration("def f : Nat := 1", "definition", "f", (1, 0), (1, 16))])
_SHOW_P_SORRY = "theorem show_p (p: Prop) (h : p) : p := sorry"
COMMANDS[_SHOW_P_SORRY] = {
    **_with_eoi(_SHOW_P_SORRY, [declaration(_SHOW_P_SORRY, "theorem", "show_p", (1, 0), (1, 45))]),
    "messages": [_info(1, 8, 14, "declaration uses `sorry`", "warning")],
    "sorries": [{"pos": _pos(1, 40), "endPos": _pos(1, 45), "goal": "p : Prop\nh : p\n⊢ p", "proofState": 0}],
}
_SHOW_P_WRONG = "theorem show_p (p: Prop) (h : p) : p := by exact p"
_script(
    _SHOW_P_WRONG,
    [declaration(_SHOW_P_WRONG, "theorem", "show_p", (1, 0), (1, 50))],
    [_info(1, 49, 50, "type mismatch\n  p\nhas type\n  Prop : Type\nbut is expected to have type\n  p : Prop", "error")],
)

# An audit (tests/test_checker_audit.py): three theorems, one proved by `sorry`, one by
# `native_decide`. Scripted, not recorded: the info tree follows `infotree_theorem`, the warning
# and the axioms are what Lean reports for such proofs.
AUDIT_FILE = "theorem a1 : True := trivial\ntheorem a2 : 1 = 1 := sorry\ntheorem a3 : 2 ^ 10 = 1024 := by native_decide"
_audit_lines = AUDIT_FILE.split("\n")
_script(
    AUDIT_FILE,
    [declaration(text, "theorem", f"a{n}", (n, 0), (n, len(text))) for n, text in enumerate(_audit_lines, start=1)],
    [_info(2, 8, 10, "declaration uses `sorry`", "warning")],
)

#: Info trees added to recorded answers that have none (the recordings ran without the `infotree`
#: option): command -> trees. Scripted, not recorded; the shapes follow `infotree_theorem`.
INFOTREES: dict[str, list[dict]] = {}
for _text, _kind, _name in [
    ("def f : Nat := by sorry", "definition", "f"),  # recorded: proof_step, tactic_mode_sorry, ...
    ("theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by sorry", "theorem", "complex_and"),
    ("theorem my_theorem (x : Nat) : x = x := by sorry", "theorem", "my_theorem"),  # recorded: invalid_tactic
]:
    INFOTREES[_text] = [declaration(_text, _kind, _name, (1, 0), (1, len(_text))), eoi(_text)]

def tactic(pp: str, kind: str, start, finish, before: list[str], after: list[str], children=()) -> dict:
    """A `TacticInfo` node as the REPL writes it (REPL/Lean/InfoTree/ToJson.lean; shape of the
    recorded `infotree` transcript)."""
    return {
        "kind": "TacticInfo",
        "node": {"stx": _stx(pp, kind, [], start, finish), "name": kind, "goalsBefore": before, "goalsAfter": after},
        "children": list(children),
    }


#: `allTactics` answers added when a request asks for them: command -> the REPL's `tactics`.
ALL_TACTICS: dict[str, list[dict]] = {}

# A complete proof of the recorded `proof_branching` theorem. The goal texts are the recorded
# ones of that transcript; the info tree around them and the used constants are scripted.
_H = "p q r : Prop\nh1 : p ∧ q\nh2 : q → r\n"
_G0, _GL, _GR, _GRQ = _H + "⊢ p ∧ r", "case left\n" + _H + "⊢ p", "case right\n" + _H + "⊢ r", "case right\n" + _H + "⊢ q"
BRANCHING_PROOF = (
    "theorem complex_and (p q r : Prop) (h1 : p ∧ q) (h2 : q → r) : p ∧ r := by\n"
    "  apply And.intro\n  · exact h1.left\n  · apply h2\n    exact h1.right"
)
_branching_tactics = tactic(
    "by ...", "Lean.Parser.Term.byTactic", (1, 75), (5, 18), [_G0], [],
    [tactic("...", "Lean.Parser.Tactic.tacticSeq", (2, 2), (5, 18), [_G0], [], [
        tactic("apply And.intro", "Lean.Parser.Tactic.apply", (2, 2), (2, 17), [_G0], [_GL, _GR]),
        tactic("· exact h1.left", "Lean.cdot", (3, 2), (3, 17), [_GL, _GR], [_GR],
               [tactic("exact h1.left", "Lean.Parser.Tactic.exact", (3, 4), (3, 17), [_GL], [])]),
        tactic("· apply h2\n  exact h1.right", "Lean.cdot", (4, 2), (5, 18), [_GR], [], [
            tactic("apply h2", "Lean.Parser.Tactic.apply", (4, 4), (4, 12), [_GR], [_GRQ]),
            tactic("exact h1.right", "Lean.Parser.Tactic.exact", (5, 4), (5, 18), [_GRQ], []),
        ]),
    ])],
)
_branching = declaration(BRANCHING_PROOF, "theorem", "complex_and", (1, 0), (5, 18))
_branching["children"].append(_branching_tactics)
_script(BRANCHING_PROOF, [_branching])
ALL_TACTICS[BRANCHING_PROOF] = [
    {"tactic": "apply And.intro", "proofState": 0, "pos": _pos(2, 2), "endPos": _pos(2, 17), "goals": _G0, "usedConstants": ["And.intro"]},
    {"tactic": "exact h1.left", "proofState": 1, "pos": _pos(3, 4), "endPos": _pos(3, 17), "goals": _GL, "usedConstants": ["And.left"]},
    {"tactic": "apply h2", "proofState": 2, "pos": _pos(4, 4), "endPos": _pos(4, 12), "goals": _GR, "usedConstants": []},
    {"tactic": "exact h1.right", "proofState": 3, "pos": _pos(5, 4), "endPos": _pos(5, 18), "goals": _GRQ, "usedConstants": ["And.right"]},
]

# A `have` sub-proof. Scripted throughout (goals written as Lean's `ppGoal` prints them).
_HH = "p q : Prop\nhp : p\nhq : q\n"
HAVE_PROOF = "theorem use_have (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  have h : p := by exact hp\n  exact ⟨h, hq⟩"
_have = declaration(HAVE_PROOF, "theorem", "use_have", (1, 0), (3, 15))
_have["children"].append(
    tactic("by ...", "Lean.Parser.Term.byTactic", (1, 58), (3, 15), [_HH + "⊢ p ∧ q"], [], [
        tactic("have h : p := by exact hp", "Lean.Parser.Tactic.tacticHave_", (2, 2), (2, 27), [_HH + "⊢ p ∧ q"], [_HH + "h : p\n⊢ p ∧ q"], [
            tactic("exact hp", "Lean.Parser.Tactic.exact", (2, 19), (2, 27), [_HH + "⊢ p"], []),
        ]),
        tactic("exact ⟨h, hq⟩", "Lean.Parser.Tactic.exact", (3, 2), (3, 15), [_HH + "h : p\n⊢ p ∧ q"], []),
    ])
)
_script(HAVE_PROOF, [_have])

#: `#print axioms` answers: name at the declaration site -> (full name, axioms).
AXIOMS: dict[str, tuple[str, list[str]]] = {
    "show_p": ("show_p", []),
    "f": ("f", []),
    "complex_and": ("complex_and", []),
    "use_have": ("use_have", []),
    "ok": ("ok", []),
    "t2": ("t2", []),
    "h": ("h", []),
    "cheat": ("cheat", ["cheat"]),
    "uses_cheat": ("uses_cheat", ["cheat"]),
    "big": ("big", ["big._native.native_decide.ax_1_1"]),
    "em'": ("em'", ["propext", "Classical.choice", "Quot.sound"]),
    "bar": ("Foo.bar", []),
    "documented": ("documented", []),
    "instBig": ("instBig", ["instBig._native.native_decide.ax_1_1"]),
    "a1": ("a1", []),
    "a2": ("a2", ["sorryAx"]),
    "a3": ("a3", ["a3._native.native_decide.ax_1_1"]),
}


def nonce_echo(cmd: str) -> list[dict]:
    """The answer to the probe's first line `#check (N : Nat)`, as Lean prints it."""
    first = cmd.split("\n", 1)[0]
    match = _PROBE.match(first)
    return [_info(1, 0, 6, f"{match.group(1)} : Nat")] if match else []


def probe(cmd: str) -> dict | None:
    """Answer the checker's axiom probe line by line; None when `cmd` is not a probe."""
    if not _PROBE.match(cmd.split("\n", 1)[0]):
        return None
    messages = nonce_echo(cmd)
    for number, line in enumerate(cmd.split("\n"), start=1):
        fenced = _fence_line(number, line)
        if fenced is not None:
            messages.append(fenced)
            continue
        if not line.startswith("#print axioms "):
            continue
        name = line[len("#print axioms ") :].strip()
        if name not in AXIOMS:
            messages.append(_info(number, 14, 14 + len(name), f"Unknown constant `{name}`", "error"))
            continue
        full, axioms = AXIOMS[name]
        text = f"'{full}' depends on axioms: [{', '.join(axioms)}]" if axioms else f"'{full}' does not depend on any axioms"
        messages.append(_info(number, 0, 13, text))
    return {"messages": messages}


# Statement fence (tests/test_checker_fence.py). Scripted, not recorded: the reference command
# (`theorem <ns>.leanindex_fence_<n>_<i> <statement> := sorry`) gets the warning Lean gives a
# `sorry` proof; the fence probe's `#check _root_.X` lines get a signature in `#check`'s form and
# its guard lines get the echo `E : Nat` exactly when the two statements are the same (compared
# here as written, whitespace normalised: the stand-in's stand-in for Lean's `Expr` comparison);
# a failing guard gets the error wording of Lean's `guard_expr`.
_REFERENCE = re.compile(r"^theorem (\S*leanindex_fence_\d+_\w+) (.*) := sorry$")
_SIGNATURE = re.compile(r"^#check _root_\.(\S+)$")
_GUARD = re.compile(r"^#check \(by guard_expr \(type_of% @_root_\.(\S+?)(\.\{[^}]*\})?\) =ₛ \(type_of% @_root_\.(\S+?)(\.\{[^}]*\})?\); exact (\d+) : Nat\)$")
#: Statements of the references elaborated so far (fresh name -> statement as written).
REFERENCES: dict[str, str] = {}
#: Statements of scripted submissions' theorems, as written (full name -> statement).
STATEMENTS: dict[str, str] = {"show_p": "(p: Prop) (h : p) : p", "f": ": Nat", "a1": ": True"}


def _statement(name: str) -> str | None:
    return REFERENCES.get(name, STATEMENTS.get(name))


def reference(cmd: str) -> dict | None:
    """Answer a reference command of the statement fence; None when `cmd` is not one."""
    if not cmd.startswith("section\n") or not cmd.endswith("\nend"):
        return None
    messages, trees = [], []
    for number, line in enumerate(cmd.split("\n")[1:-1], start=2):
        match = _REFERENCE.match(line)
        if match is None:
            return None
        REFERENCES[match.group(1)] = " ".join(match.group(2).split())
        messages.append(_info(number, 8, 8 + len(match.group(1)), "declaration uses `sorry`", "warning"))
        trees.append(declaration(line, "theorem", match.group(1), (number, 0), (number, len(line))))
    return _with_eoi(cmd, trees, messages)


def _fence_line(number: int, line: str) -> dict | None:
    if match := _SIGNATURE.match(line):
        statement = _statement(match.group(1))
        if statement is None:
            return _info(number, 7, len(line), f"unknown identifier '{match.group(1)}'", "error")
        return _info(number, 0, 6, f"{match.group(1)} {statement}".replace(" :", " :", 1))
    if match := _GUARD.match(line):
        submitted, reference_name, echo = match.group(1), match.group(3), match.group(5)
        if match.group(2) or match.group(4):
            return _info(number, 38, 40, "too many explicit universe levels for 'x'", "error")
        left, right = _statement(submitted), _statement(reference_name)
        if left is None or right is None:
            return _info(number, 38, 40, f"unknown identifier '{submitted if left is None else reference_name}'", "error")
        if " ".join(left.split()) == right:
            return _info(number, 0, 6, f"{echo} : Nat")
        return _info(number, 10, 20, f"Failed: `type_of% @_root_.{submitted}` is not syntactically equal to `type_of% @_root_.{reference_name}`", "error")
    return None


def respond(cmd: str) -> dict | None:
    """A scripted answer (without `env`), or None."""
    return probe(cmd) or reference(cmd) or COMMANDS.get(cmd)


def fault_of(cmd: str) -> tuple[str, str] | None:
    match = _FAULT.search(cmd)
    return (match.group(1), match.group(2)) if match else None


def failed_import(cmd: str) -> dict:
    module = cmd.split("\n", 1)[0].split()[1]
    return {
        "messages": [
            _info(1, 0, len(cmd.split("\n", 1)[0]), f"unknown module prefix '{module}'\n\nNo directory '{module}' or file '{module}.olean' in the search path entries:", "error")
        ]
    }
