"""The axiom probe: after the submission runs, a second REPL command in the resulting
environment prints the axioms of each named declaration the submission added.

Declarations and the namespaces they live in come from the submission's info trees
(`Lean.Parser.Command.declaration` command nodes, their `Lean.Parser.Command.declId` binder, and
the `namespace`/`section`/`end` commands). The probe first closes the scopes the submission left
open, then prints `#print axioms <name>` inside the declaration's namespace, one per line, so
each answer is matched to its declaration by line. Lean answers each with an information message
(Lean's `#print axioms` handler in `Lean.Elab.Print`): `'N' depends on axioms: [a, b]` or
`'N' does not depend on any axioms`. The probe's first line is `#check (<nonce> : Nat)`, whose
echo proves the answer belongs to this probe and not to something the submission printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lean_interact.interface import CommandNode, CommandResponse, InfoTree, TermNode

from .models import ALLOWED_AXIOMS, TheoremAxioms

#: Declaration kinds (last argument kind of `Lean.Parser.Command.declaration`) whose axioms are
#: printed; inductive types and structures add no axioms of their own.
PROBED_KINDS = {
    "Lean.Parser.Command.theorem": "theorem",
    "Lean.Parser.Command.definition": "def",
    "Lean.Parser.Command.abbrev": "abbrev",
    "Lean.Parser.Command.opaque": "opaque",
    "Lean.Parser.Command.instance": "instance",
    "Lean.Parser.Command.axiom": "axiom",
}
EXAMPLE_KIND = "Lean.Parser.Command.example"

_DEPENDS = re.compile(r"^'(?P<name>.+)' depends on axioms: \[(?P<axioms>.*)\]\s*$", re.S)
_NO_AXIOMS = re.compile(r"^'(?P<name>.+)' does not depend on any axioms\s*$", re.S)


@dataclass(frozen=True)
class Declaration:
    """A named declaration of the submission: its name as Lean printed it at the declaration
    site (relative to `namespace`), the namespace components open there, and where it starts."""

    name: str
    namespace: tuple[str, ...]
    kind: str
    line: int
    column: int


@dataclass
class Scopes:
    """The scopes open after the submission: `(kind, name)` with kind `namespace` or `section`."""

    stack: list[tuple[str, str]] = field(default_factory=list)

    def namespace(self) -> tuple[str, ...]:
        """The open namespaces, outermost first (sections left out)."""
        return tuple(name for kind, name in self.stack if kind == "namespace")


@dataclass(frozen=True)
class Survey:
    """What the info trees say the submission declares: named declarations, `example`s
    (positions; their axioms cannot be printed), declarations of a probed kind whose name the
    info trees do not give (`unnamed`, name ""; an anonymous `instance`, whose name Lean
    generates, `mkInstanceName`), and the scopes left open at the end."""

    declarations: list[Declaration]
    examples: list[tuple[int, int]]
    open_scopes: list[tuple[str, str]]
    unnamed: list[Declaration] = field(default_factory=list)


def survey(trees: list[InfoTree]) -> Survey:
    """Walk the top-level command nodes of the submission in order."""
    scopes = Scopes()
    declarations: list[Declaration] = []
    unnamed: list[Declaration] = []
    examples: list[tuple[int, int]] = []
    for tree in trees:
        for command in top_commands(tree):
            node = command.node
            assert isinstance(node, CommandNode)
            kind, words = node.stx.kind, (node.stx.pp or "").split()
            if kind == "Lean.Parser.Command.namespace" and len(words) >= 2:
                # `namespace A.B` opens one scope per component, as Lean's `elabNamespace` does.
                scopes.stack.extend(("namespace", part) for part in words[1].split("."))
            elif kind in ("Lean.Parser.Command.section", "Lean.Parser.Command.noncomputableSection"):
                label = words[-1] if words and words[-1] != "section" else ""
                scopes.stack.append(("section", label))
            elif kind == "Lean.Parser.Command.end":
                count = len(words[1].split(".")) if len(words) >= 2 else 1
                del scopes.stack[max(0, len(scopes.stack) - count) :]
            elif kind == "Lean.Parser.Command.declaration" and node.stx.arg_kinds:
                decl_kind = node.stx.arg_kinds[-1]
                start = node.stx.range.start
                if decl_kind == EXAMPLE_KIND:
                    examples.append((start.line, start.column))
                elif decl_kind in PROBED_KINDS:
                    name = declared_name(command)
                    found = Declaration(name or "", scopes.namespace(), PROBED_KINDS[decl_kind], start.line, start.column)
                    # Without a name the probe cannot print its axioms: it is reported, never skipped.
                    (declarations if name is not None else unnamed).append(found)
    return Survey(declarations, examples, list(scopes.stack), unnamed)


def top_commands(tree: InfoTree) -> list[InfoTree]:
    """Command nodes in document order, without descending into declarations (a wrapping
    command such as `set_option ... in` is listed, then the commands it expands to)."""
    found: list[InfoTree] = []
    if tree.kind == "CommandInfo":
        found.append(tree)
        if isinstance(tree.node, CommandNode) and tree.node.stx.kind == "Lean.Parser.Command.declaration":
            return found
    for child in tree.children:
        found.extend(top_commands(child))
    return found


def declared_name(command: InfoTree) -> str | None:
    for sub in command.dfs_walk():
        node = sub.node
        if isinstance(node, TermNode) and node.is_binder and node.stx.kind == "Lean.Parser.Command.declId":
            return node.expr
    return None


def probe_command(found: Survey, nonce: int) -> tuple[str, dict[int, Declaration]]:
    """The probe's Lean text and, for each `#print axioms` line (1-based), its declaration."""
    lines = [f"#check ({nonce} : Nat)"]
    for _kind, name in reversed(found.open_scopes):
        lines.append(f"end {name}" if name else "end")
    by_line: dict[int, Declaration] = {}
    for decl in found.declarations:
        namespace = ".".join(decl.namespace)
        if namespace:
            lines.append(f"namespace {namespace}")
        lines.append(f"#print axioms {decl.name}")
        by_line[len(lines)] = decl
        if namespace:
            lines.append(f"end {namespace}")
    return "\n".join(lines), by_line


@dataclass(frozen=True)
class ProbeResult:
    """`synced`: the nonce echo was found; `axioms`: per declaration answered; `unanswered`:
    declarations whose line got no axiom answer (an error, e.g. a name that did not resolve);
    `answered`: each answered declaration with its answer, in file order."""

    synced: bool
    axioms: list[TheoremAxioms]
    unanswered: list[Declaration]
    answered: list[tuple[Declaration, TheoremAxioms]] = field(default_factory=list)


def read_probe(response: CommandResponse, nonce: int, by_line: dict[int, Declaration]) -> ProbeResult:
    """Match the probe's messages to its lines."""
    synced = any(
        m.severity == "info" and m.start_pos.line == 1 and m.data.strip() == f"{nonce} : Nat" for m in response.messages
    )
    answered: dict[int, TheoremAxioms] = {}
    for message in response.messages:
        line = message.start_pos.line
        if message.severity != "info" or line not in by_line or line in answered:
            continue
        text = message.data.strip()
        if match := _DEPENDS.match(text):
            names = [a.strip() for a in match["axioms"].split(",") if a.strip()]
        elif match := _NO_AXIOMS.match(text):
            names = []
        else:
            continue
        answered[line] = TheoremAxioms(
            name=match["name"], axioms=names, flagged=[a for a in names if a not in ALLOWED_AXIOMS]
        )
    axioms = [answered[line] for line in sorted(answered)]
    unanswered = [decl for line, decl in sorted(by_line.items()) if line not in answered]
    pairs = [(by_line[line], answered[line]) for line in sorted(answered)]
    return ProbeResult(synced, axioms, unanswered, pairs)
