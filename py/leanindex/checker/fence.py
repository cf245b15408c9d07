"""The statement fence: a submission keeps the statements of the theorems a reference names.

Two trusted REPL commands, both written here and sent by the worker (never by the submission):

1. Before the submission, in the profile's header environment, the reference is elaborated
   under fresh names, inside one `section` so that none of its scope commands reaches the
   submission (`plan`): each named theorem as `theorem <namespace>.<fresh> <statement> :=
   sorry`, a reference file command by command with each `theorem`/`lemma` renamed the same way.
   Only the last name component changes, so the statement is read with the same namespaces
   open as the submission's `theorem <name>`; the fresh component holds a random nonce, so the
   submission cannot name it (a proof that finds it by search depends on `sorryAx` and is never
   `accepted`). The submission then runs in this environment, so nothing it declares (an
   instance, a shadowing definition) can change how the reference was read.
2. After the submission, in its environment (`probe_command`): for each theorem, `#check` of
   the submission's constant and of the reference's (their signatures, as Lean prints them),
   and then, for j = 0..`MAX_UNIVERSES`, the line

       #check (by guard_expr (type_of% @S.{u1..uj}) =ₛ (type_of% @R.{u1..uj}); exact <n> : Nat)

   Lean's `guard_expr ... =ₛ ...` (Lean.Elab.Tactic.GuardExpr, `MatchKind.isEq .syntactic`)
   compares the two elaborated types with `Expr.consumeMData` and `==`, which is `Expr.eqv`:
   the same expression up to bound-variable names, binder annotations ignored. Both constants
   are instantiated with the same universe parameters `u1..uj` in order, so the comparison is
   up to universe parameter names, and a more general universe (`Sort u` for `Type u`) differs.
   The echo `<n> : Nat` comes only when the guard passed, so a fence holds on Lean's positive
   answer, never on silence. A definitional-equality check is never used.

Whether the submission declares the name, and as which kind, comes from its info trees (the
`probe.survey`). The first differing subterm is computed from Lean's two printed signatures, as
a reading aid; the status is Lean's comparison alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lean_interact.interface import CommandResponse

from ..errors import ErrorCode, LeanIndexError
from .commands import split_commands
from .header import parse_header, uncovered_imports
from .models import FenceStatus, Reference, StatementFence
from .probe import Survey

#: Universe parameters a fenced theorem may have (the probe tries each count up to this).
MAX_UNIVERSES = 8
#: Commands a reference file may hold besides `theorem`/`lemma`.
SCOPE_KEYWORDS = frozenset({"namespace", "section", "end", "open", "universe", "variable", "set_option"})
_UNIVERSE = "leanindex_fence_u"


@dataclass(frozen=True)
class FencedTheorem:
    """A theorem under the fence: its full name in the submission and the full name of its
    reference copy."""

    name: str
    fresh: str


@dataclass(frozen=True)
class FencePlan:
    """The reference command (Lean text run in the header environment) and its theorems."""

    text: str
    theorems: tuple[FencedTheorem, ...]


def name_parts(name: str) -> list[str]:
    """The components of a Lean name as written (`A.«b.c».d` gives `A`, `«b.c»`, `d`)."""
    parts, current, quoted = [], "", False
    for ch in name:
        if ch == "«":
            quoted = True
        elif ch == "»":
            quoted = False
        if ch == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def _renamed(name: str, fresh: str) -> str:
    return ".".join([*name_parts(name)[:-1], fresh])


def _root(name: str) -> str:
    return name[len("_root_.") :] if name.startswith("_root_.") else name


def plan(reference: Reference, profile_imports: list[str], nonce: int) -> FencePlan:
    """The reference command for `reference` with fresh names made from `nonce`.

    Raises `LeanIndexError(invalid_request)`: a reference file with a command other than
    `theorem`/`lemma` and scope commands (`SCOPE_KEYWORDS`; `open ... in` included, since what
    follows `in` would keep its own name), or a theorem named twice. Raises
    `header_mismatch` for a reference file importing what the profile does not cover.
    """
    lines: list[str] = []
    theorems: list[FencedTheorem] = []
    for index, entry in enumerate(reference.theorems):
        fresh = f"leanindex_fence_{nonce}_{index}"
        lines.append(f"theorem {_renamed(entry.name, fresh)} {entry.statement} := sorry")
        theorems.append(FencedTheorem(_root(entry.name), _root(_renamed(entry.name, fresh))))
    if reference.file is not None:
        header = parse_header(reference.file)
        outside = uncovered_imports(header.imports, profile_imports)
        if header.prelude or outside:
            raise LeanIndexError(
                ErrorCode.HEADER_MISMATCH,
                f"the reference file imports what the profile does not cover: {', '.join(outside) or 'prelude'}",
                {"uncovered": outside, "profile_imports": profile_imports},
            )
        for number, command in enumerate(split_commands(header.body)):
            if command.keyword in ("theorem", "lemma") and command.name and command.full_name:
                fresh = f"leanindex_fence_{nonce}_f{number}"
                lines.append(_rename_declaration(command.text, command.keyword, command.name, _renamed(command.name, fresh)))
                theorems.append(FencedTheorem(_root(command.full_name), _root(_renamed(command.full_name, fresh))))
            elif command.keyword in SCOPE_KEYWORDS and not (command.keyword in ("open", "set_option") and " in" in f" {command.text} "):
                lines.append(command.text)
            else:
                raise LeanIndexError(
                    ErrorCode.INVALID_REQUEST,
                    f"a reference file holds only theorems and scope commands; line {command.line} starts "
                    f"{command.keyword or command.text.split(None, 1)[0]!r}",
                    {"line": command.line},
                )
    names = [t.name for t in theorems]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"the reference names {', '.join(repeated)} more than once", {"repeated": repeated})
    # The REPL keeps a command's scopes (open namespaces, options, variables, universes) in the
    # environment it returns: one section around the reference keeps them from the submission.
    return FencePlan("\n".join(["section", *lines, "end"]), tuple(theorems))


def _rename_declaration(text: str, keyword: str, name: str, new: str) -> str:
    """`text` with the declared name after `keyword` (past a leading doc comment) replaced."""
    start = 0
    if text.startswith("/--"):
        close = text.find("-/")
        start = close + 2 if close >= 0 else 0
    match = re.compile(rf"\b{keyword}\s+{re.escape(name)}(?![\w.'!?])").search(text, start)
    if match is None:
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"cannot find the name of {keyword} {name} in the reference file", {})
    return text[: match.start()] + match.group(0)[: -len(name)] + new + text[match.end() :]


@dataclass(frozen=True)
class FenceLines:
    """What each line of the fence probe asks: `signature` lines by (theorem index, side), and
    guard lines by line number with the echo value each prints when the guard passed."""

    signatures: dict[int, tuple[int, str]]
    guards: dict[int, tuple[int, int]]


def probe_command(theorems: tuple[FencedTheorem, ...], found: Survey, nonce: int) -> tuple[str, FenceLines]:
    """The fence probe's Lean text (first line `#check (<nonce> : Nat)`, then the scopes the
    submission left open closed, then the module docstring's lines per theorem)."""
    lines = [f"#check ({nonce} : Nat)"]
    lines.extend(f"end {name}" if name else "end" for _kind, name in reversed(found.open_scopes))
    lines.append("universe " + " ".join(f"{_UNIVERSE}{k}" for k in range(1, MAX_UNIVERSES + 1)))
    signatures: dict[int, tuple[int, str]] = {}
    guards: dict[int, tuple[int, int]] = {}
    for index, theorem in enumerate(theorems):
        for side, name in (("submitted", theorem.name), ("reference", theorem.fresh)):
            lines.append(f"#check _root_.{name}")
            signatures[len(lines)] = (index, side)
        for count in range(MAX_UNIVERSES + 1):
            levels = ".{" + ", ".join(f"{_UNIVERSE}{k}" for k in range(1, count + 1)) + "}" if count else ""
            echo = nonce + len(lines) + 1
            lines.append(
                f"#check (by guard_expr (type_of% @_root_.{theorem.name}{levels}) =ₛ "
                f"(type_of% @_root_.{theorem.fresh}{levels}); exact {echo} : Nat)"
            )
            guards[len(lines)] = (index, echo)
    return "\n".join(lines), FenceLines(signatures, guards)


def synced(response: CommandResponse, nonce: int) -> bool:
    """Whether the answer carries the probe's first-line echo."""
    return any(m.severity == "info" and m.start_pos.line == 1 and m.data.strip() == f"{nonce} : Nat" for m in response.messages)


def _full_names(found: Survey, prefix: tuple[str, ...]) -> dict[str, str]:
    """Full name -> kind of every named declaration of the survey, inside `prefix` (the
    namespaces open where the submission runs)."""
    kinds: dict[str, str] = {}
    for decl in found.declarations:
        name, namespace = decl.name, ".".join([*prefix, *decl.namespace])
        if name.startswith("_root_.") or not namespace or name.startswith(namespace + "."):
            full = _root(name)
        else:
            full = f"{namespace}.{name}"
        kinds.setdefault(full, decl.kind)
    return kinds


def read_fence(
    response: CommandResponse, lines: FenceLines, theorems: tuple[FencedTheorem, ...], found: Survey, prefix: tuple[str, ...] = ()
) -> list[StatementFence]:
    """Each theorem's fence from the probe's answer (see the module docstring)."""
    printed: dict[tuple[int, str], str] = {}
    passed: set[int] = set()
    for message in response.messages:
        line = message.start_pos.line
        if message.severity != "info":
            continue
        if line in lines.signatures and lines.signatures[line] not in printed:
            printed[lines.signatures[line]] = message.data.strip()
        elif line in lines.guards and message.data.strip() == f"{lines.guards[line][1]} : Nat":
            passed.add(lines.guards[line][0])
    kinds = _full_names(found, prefix)
    results = []
    for index, theorem in enumerate(theorems):
        submitted = printed.get((index, "submitted"))
        reference = printed.get((index, "reference"))
        if reference is not None:
            reference = reference.replace(theorem.fresh, theorem.name).replace(name_parts(theorem.fresh)[-1], name_parts(theorem.name)[-1])
        kind = kinds.get(theorem.name)
        if kind is None or submitted is None:
            status = FenceStatus.MISSING
        elif kind != "theorem":
            status = FenceStatus.NOT_THEOREM
        elif index in passed:
            status = FenceStatus.SAME
        else:
            status = FenceStatus.CHANGED
        difference = None
        if status is FenceStatus.CHANGED and submitted is not None and reference is not None:
            difference = first_difference(submitted, reference)
        results.append(
            StatementFence(
                name=theorem.name, status=status, kind=kind, submitted=submitted, reference=reference, first_difference=difference
            )
        )
    return results


_TOKEN = re.compile(r"\s+|[()\[\]{}⦃⦄⟨⟩]|[^\s()\[\]{}⦃⦄⟨⟩]+")
_OPEN = {"(": ")", "[": "]", "{": "}", "⦃": "⦄", "⟨": "⟩"}


def _tokens(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in _TOKEN.finditer(text) if not m.group().isspace()]


def _group(text: str, tokens: list[tuple[int, str]], index: int) -> str:
    """The innermost bracketed group of `text` holding token `index` (the rest of the text from
    that token when no bracket holds it)."""
    stack: list[int] = []
    for position, (_start, token) in enumerate(tokens[: index + 1]):
        if token in _OPEN:
            stack.append(position)
        elif token in _OPEN.values() and stack:
            stack.pop()
    if tokens[index][1] in _OPEN:
        stack.append(index)
    if not stack:
        return text[tokens[index][0] :].strip()
    opened = stack[-1]
    depth = 0
    for start, token in tokens[opened:]:
        if token in _OPEN:
            depth += 1
        elif token in _OPEN.values():
            depth -= 1
            if depth == 0:
                return text[tokens[opened][0] : start + len(token)]
    return text[tokens[opened][0] :]


def first_difference(submitted: str, reference: str, limit: int = 240) -> list[str] | None:
    """The first differing subterm of two printed signatures, `[submitted's, reference's]`: the
    innermost bracketed group around the first token that differs (tokens: brackets and runs of
    other non-space characters), each cut to `limit` characters; None when the prints agree."""
    a, b = _tokens(submitted), _tokens(reference)
    for index in range(max(len(a), len(b))):
        if index >= len(a) or index >= len(b) or a[index][1] != b[index][1]:
            left = _group(submitted, a, index) if index < len(a) else ""
            right = _group(reference, b, index) if index < len(b) else ""
            return [left[:limit], right[:limit]]
    return None
