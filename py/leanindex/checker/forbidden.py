"""Commands that can forge a verdict, found in Lean's own parse of the submission: the syntax
kinds, elaborators and pretty-printed forms of the nodes of the REPL's info trees
(`"infotree": "full"`, REPL/Lean/InfoTree/ToJson.lean), never a regular expression over the
submitted text.

Refused: commands that add syntax, macros, elaborators or notation; commands that run code at
elaboration time (`#eval`, `run_cmd`, `run_tac`, `initialize`, simprocs...); `#guard_msgs` (it
removes messages from the log) and `#exit` (it stops elaboration); `set_option debug.*`; and
the attributes `implemented_by`, `extern`, `csimp`, `init` and those that register parsers,
macros or elaborators. Kind names are those of Lean's parsers (`Lean.Parser.Command.*`,
`Lean.Parser.Tactic.*`); the pretty-printed leading keyword is checked as well, so a command
whose kind name differs between Lean versions is still caught.
"""

from __future__ import annotations

from dataclasses import dataclass

from lean_interact.interface import InfoTree

#: Leading keywords (after doc comment, attributes and `local`/`scoped`) of refused commands.
FORBIDDEN_KEYWORDS = frozenset(
    {
        "#eval", "#eval!", "#exec", "run_cmd", "run_elab", "run_meta", "run_tac", "by_elab",
        "initialize", "builtin_initialize", "syntax", "macro", "macro_rules", "elab", "elab_rules",
        "notation", "notation3", "infix", "infixl", "infixr", "prefix", "postfix",
        "declare_syntax_cat", "syntax_cat", "binder_predicate", "simproc", "dsimproc",
        "builtin_simproc", "builtin_dsimproc", "#guard_msgs", "#exit", "declare_simp_like_tactic",
        "add_decl_doc", "register_option", "register_simp_attr", "register_label_attr",
    }
)

#: Parser kinds of the same commands, tactics and terms (Lean's `Lean.Parser.*` names).
FORBIDDEN_KINDS = frozenset(
    {
        "Lean.Parser.Command.eval", "Lean.Parser.Command.evalBang", "Lean.Parser.Command.exit",
        "Lean.runCmd", "Lean.runElab", "Lean.runMeta", "Lean.Parser.Tactic.runTac", "Lean.Parser.Term.byElab",
        "Lean.Parser.Command.initialize", "Lean.Parser.Command.syntax", "Lean.Parser.Command.syntaxAbbrev",
        "Lean.Parser.Command.syntaxCat", "Lean.Parser.Command.macro", "Lean.Parser.Command.macro_rules",
        "Lean.Parser.Command.elab", "Lean.Parser.Command.elab_rules", "Lean.Parser.Command.notation",
        "Lean.Parser.Command.mixfix", "Lean.Parser.Command.binderPredicate", "Lean.guardMsgsCmd",
        "Lean.Parser.simproc", "Lean.Parser.dsimproc",
    }
)

#: Attributes that swap compiled code for a definition, run code at load time, or register
#: syntax, macros or elaborators.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "implemented_by", "extern", "csimp", "init", "builtin_init", "export",
        "macro", "builtin_macro", "command_elab", "builtin_command_elab", "term_elab",
        "builtin_term_elab", "tactic", "builtin_tactic", "command_parser", "builtin_command_parser",
        "term_parser", "builtin_term_parser", "tactic_parser", "builtin_tactic_parser",
        "simproc", "dsimproc", "builtin_simproc", "delab", "builtin_delab", "app_unexpander",
        "incremental", "builtin_incremental", "env_linter", "code_action", "hole_code_action",
    }
)

#: Option prefixes a submission may not set (kernel checking and other debug switches).
FORBIDDEN_OPTION_PREFIXES = ("debug.",)


@dataclass(frozen=True)
class ForbiddenUse:
    """A refused construct: `command` names it (`#eval`, `set_option debug.skipKernelTC`,
    `@[implemented_by]`), `line`/`column` give its start (1-based line, 0-based column)."""

    command: str
    line: int
    column: int


def _strip_modifiers(pp: str) -> str:
    """Lean's pretty-printed command without a leading doc comment, attribute list and
    `local`/`scoped`/`private`/`protected` modifiers."""
    text = pp.lstrip()
    if text.startswith("/--"):
        close = text.find("-/")
        text = text[close + 2 :].lstrip() if close >= 0 else ""
    if text.startswith("@["):
        close = _matching_bracket(text, 1)
        text = text[close + 1 :].lstrip() if close >= 0 else ""
    words = text.split(None, 1)
    while words and words[0] in ("local", "scoped", "private", "protected", "public", "meta", "noncomputable"):
        text = words[1] if len(words) > 1 else ""
        words = text.split(None, 1)
    return text


def _matching_bracket(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    return -1


def attribute_names(pp: str) -> list[str]:
    """The attribute names of a declaration's `@[...]` list or an `attribute [...]` command, as
    Lean pretty-printed them (`@[simp, implemented_by f]` gives `["simp", "implemented_by"]`)."""
    text = pp.lstrip()
    if text.startswith("/--"):
        close = text.find("-/")
        text = text[close + 2 :].lstrip() if close >= 0 else ""
    if text.startswith("@["):
        start = 1
    elif text.startswith("attribute"):
        start = text.find("[")
        if start < 0:
            return []
    else:
        return []
    close = _matching_bracket(text, start)
    if close < 0:
        return []
    names, depth, current = [], 0, ""
    for ch in text[start + 1 : close]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += ch
    names.append(current)
    result = []
    for entry in names:
        words = [w for w in entry.split() if w not in ("local", "scoped", "-")]
        if words:
            result.append(words[0].lstrip("-"))
    return result


def find_forbidden(trees: list[InfoTree]) -> list[ForbiddenUse]:
    """Every refused construct in the info trees, in document order, without duplicates."""
    found: dict[tuple[str, int, int], ForbiddenUse] = {}
    for tree in trees:
        for sub in tree.dfs_walk():
            node = sub.node
            if node is None:
                continue
            stx = node.stx
            line, column = stx.range.start.line, stx.range.start.column
            pp = stx.pp or ""
            keyword = _strip_modifiers(pp).split(None, 1)[0] if _strip_modifiers(pp).split() else ""
            label: str | None = None
            if stx.kind in FORBIDDEN_KINDS or (sub.kind == "CommandInfo" and keyword in FORBIDDEN_KEYWORDS):
                label = keyword if keyword in FORBIDDEN_KEYWORDS else stx.kind
            elif sub.kind in ("TacticInfo", "TermInfo") and keyword in ("run_tac", "by_elab"):
                label = keyword
            elif stx.kind.endswith(".set_option") or keyword == "set_option":
                option = _option_name(pp)
                if option is not None and option.startswith(FORBIDDEN_OPTION_PREFIXES):
                    label = f"set_option {option}"
            if label is None and sub.kind == "CommandInfo":
                for attr in attribute_names(pp):
                    if attr in FORBIDDEN_ATTRIBUTES:
                        label = f"@[{attr}]"
                        break
            if label is not None:
                found.setdefault((label, line, column), ForbiddenUse(label, line, column))
    return sorted(found.values(), key=lambda f: (f.line, f.column, f.command))


def _option_name(pp: str) -> str | None:
    words = pp.split()
    for i, word in enumerate(words[:-1]):
        if word == "set_option":
            return words[i + 1]
    return None
