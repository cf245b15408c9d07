"""Commands that can forge a verdict, found in Lean's own parse of the submission: the syntax
kinds, elaborators and pretty-printed forms of the nodes of the REPL's info trees
(`"infotree": "full"`, REPL/Lean/InfoTree/ToJson.lean), never a regular expression over the
submitted text.

Refused: commands that add syntax, macros, elaborators or notation; commands and terms that run
code at elaboration time (`#eval`, `run_cmd`, `run_tac`, `by_elab`, `initialize`, `#guard`,
simprocs and cbv simprocs, which `simp`/`cbv` then run, and the `unsafe` term, which Lean
compiles into an auxiliary definition with `implemented_by`); `#guard_msgs` (it removes messages
from the log) and `#exit` (it stops elaboration); `set_option debug.*`; and attributes that swap
compiled code for a definition, run code at load time, or register parsers, macros, elaborators,
simprocs or code actions. Code run inside the REPL shares its JSON channel and could forge a
response, so none may run.

Each command is caught three ways, so a change of one spelling between Lean versions does not
let it through: by its leading keyword (after doc comment, attributes and modifiers), by its
syntax kind, and, for macros, by the kinds and attributes of what it expands to (the REPL's info
tree keeps the original command's node and its expansion's nodes). Every kind listed was checked
against the newest stored Lean 4 sources and against the symbols the compiled Lean 4.35.0
library exports (a declaration `A.B` compiles to the symbol `l_A_B`); docs/checker.md has the
table with the source of each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lean_interact.interface import InfoTree

#: Leading keywords (after doc comment, attributes and `local`/`scoped`) of refused commands.
FORBIDDEN_KEYWORDS = frozenset(
    {
        "#eval", "#eval!", "run_cmd", "run_elab", "run_meta", "initialize", "builtin_initialize",
        "syntax", "macro", "macro_rules", "elab", "elab_rules", "notation", "notation3", "infix",
        "infixl", "infixr", "prefix", "postfix", "declare_syntax_cat", "binder_predicate",
        "simproc", "dsimproc", "builtin_simproc", "builtin_dsimproc", "simproc_decl", "dsimproc_decl",
        "builtin_simproc_decl", "builtin_dsimproc_decl", "simproc_pattern%", "builtin_simproc_pattern%",
        "cbv_simproc", "cbv_simproc_decl", "builtin_cbv_simproc", "builtin_cbv_simproc_decl",
        "cbv_simproc_pattern%", "builtin_cbv_simproc_pattern%", "#guard", "#guard_msgs", "#exit",
        "declare_simp_like_tactic", "add_decl_doc", "register_option", "register_builtin_option",
        "register_simp_attr", "register_label_attr",
    }
)

#: Leading keywords of refused terms and tactics (on any info-tree node).
FORBIDDEN_TERM_KEYWORDS = frozenset({"run_tac", "by_elab", "unsafe"})

#: Syntax kinds of refused commands, terms and tactics, and of what refused macros expand to.
FORBIDDEN_KINDS = frozenset(
    {
        "Lean.Parser.Command.eval", "Lean.Parser.Command.evalBang", "Lean.Parser.Command.exit",
        "Lean.runCmd", "Lean.runElab", "Lean.runMeta", "Lean.Parser.Tactic.runTac", "Lean.byElab",
        "Lean.Parser.Term.unsafe", "Lean.Parser.Command.initialize", "Lean.Parser.Command.syntax",
        "Lean.Parser.Command.syntaxAbbrev", "Lean.Parser.Command.syntaxCat", "Lean.Parser.Command.macro",
        "Lean.Parser.Command.macro_rules", "Lean.Parser.Command.elab", "Lean.Parser.Command.elab_rules",
        "Lean.Parser.Command.notation", "Lean.Parser.Command.mixfix", "Lean.Parser.Command.binderPredicate",
        "Lean.guardMsgsCmd", "Lean.Parser.Command.guardCmd", "Lean.Parser.simprocPattern",
        "Lean.Parser.simprocPatternBuiltin", "Lean.Parser.cbvSimprocPattern", "Lean.Parser.cbvSimprocPatternBuiltin",
        "Lean.Parser.Tactic.declareSimpLikeTactic", "Lean.Parser.Command.addDocString", "Lean.Option.registerOption",
        "Lean.Option.registerBuiltinOption", "Lean.Parser.Command.registerSimpAttr", "Lean.Parser.Command.registerLabelAttr",
    }
)

#: Attributes that swap compiled code for a definition, run code at load time, or register
#: syntax, macros, elaborators, delaborators or simprocs.
FORBIDDEN_ATTRIBUTES = frozenset(
    {
        "implemented_by", "extern", "csimp", "init", "builtin_init", "export", "macro", "builtin_macro",
        "tactic", "builtin_tactic", "simproc", "builtin_simproc", "sevalproc", "builtin_sevalproc",
        "cbv_simproc", "builtin_cbv_simproc", "delab", "builtin_delab", "app_unexpander", "incremental",
        "builtin_incremental", "env_linter",
    }
)

#: Attribute name endings of the same families: `<category>_parser` (and `builtin_...`),
#: `command_elab`/`term_elab`/..., `<simp set>_proc` (the simproc attribute of a simp set made by
#: `register_simp_attr`), `hole_code_action`/`command_code_action`/..., and the pretty-printer
#: hooks `formatter`/`parenthesizer` in their `combinator_`/`builtin_` forms.
FORBIDDEN_ATTRIBUTE_SUFFIXES = ("_parser", "_elab", "_proc", "_code_action", "formatter", "parenthesizer")

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


def is_forbidden_attribute(name: str) -> bool:
    """Whether attribute `name` (as `attribute_names` gives it) is refused."""
    return name in FORBIDDEN_ATTRIBUTES or name.endswith(FORBIDDEN_ATTRIBUTE_SUFFIXES)


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
                label = keyword if keyword in FORBIDDEN_KEYWORDS | FORBIDDEN_TERM_KEYWORDS else stx.kind
            elif sub.kind in ("TacticInfo", "TermInfo") and keyword in FORBIDDEN_TERM_KEYWORDS:
                label = keyword
            elif stx.kind.endswith(".set_option") or keyword == "set_option":
                option = _option_name(pp)
                if option is not None and option.startswith(FORBIDDEN_OPTION_PREFIXES):
                    label = f"set_option {option}"
            if label is None and sub.kind == "CommandInfo":
                for attr in attribute_names(pp):
                    if is_forbidden_attribute(attr):
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


def forbidden_words(tactic: str) -> list[str]:
    """The refused keywords and `debug.*` options written in a tactic for an open proof state.

    A tactic step comes back from the REPL without an info tree, so it is read as words: the
    environment it runs in was built from a file that passed `find_forbidden`, so it holds no
    new syntax, macro or notation, and a refused construct can only be written with Lean's own
    keywords (`run_tac`, `by_elab`, `#eval`, `set_option debug.* in`, ...).
    """
    words = re.findall(r"[#\w.!%']+", tactic)
    found = [w for w in words if w in FORBIDDEN_KEYWORDS or w in FORBIDDEN_TERM_KEYWORDS or w.startswith(FORBIDDEN_OPTION_PREFIXES)]
    found.extend(f"@[{a}]" for a in attribute_names(tactic) if is_forbidden_attribute(a))
    return list(dict.fromkeys(found))
