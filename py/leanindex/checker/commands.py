"""A Lean file's body cut into its top-level commands, and the name each declaration declares,
for target checks (`lean.check.target`): the environment before a target is everything before
its command, and a candidate replaces exactly that command.

The cut follows the layout Lean's own sources and Mathlib keep (and that the REPL's answers
assume): a top-level command starts on a line whose first character is not whitespace; lines
that start with whitespace continue the command above. A doc comment (`/--`), an attribute list
on its own line (`@[...]`) or a line comment (`--`) at column 0 does not start a command of its
own: the doc comment and attributes belong to the declaration that follows them, the comment to
the command above. A block comment (`/- ... -/`, nested) at column 0 is skipped whole. A
declaration's name is its `declId` (Lean's `Lean.Parser.Command.declId`) after the doc comment,
attributes and modifiers (`Lean.Parser.Command.declModifiers`), inside the namespaces opened by
`namespace` and closed by `end` before it.

This is a cut of text, not Lean's parse: a command whose continuation lines start at column 0
is cut in two, and Lean's answer (an error) says so; nothing is hidden, because every piece is
sent to Lean.
"""

from __future__ import annotations

from dataclasses import dataclass

from .header import _read_ident, _skip_trivia

#: Keywords of `Lean.Parser.Command.declaration` kinds that declare a name after them.
DECLARATION_KEYWORDS = frozenset(
    {"theorem", "lemma", "def", "abbrev", "instance", "structure", "class", "inductive", "opaque", "axiom", "example"}
)
#: `Lean.Parser.Command.declModifiers` keywords (and `public`/`meta` of the module system).
MODIFIERS = frozenset({"private", "protected", "public", "noncomputable", "partial", "unsafe", "nonrec", "meta"})


@dataclass(frozen=True)
class LeanCommand:
    """One top-level command: its text (trailing blank lines removed), the 1-based line it starts
    on in the file, the keyword that makes it (`theorem`, `namespace`, ...; "" when it starts
    with something else), the name it declares as written (`None` when it declares none), and
    that name inside the namespaces open at it (`full_name`)."""

    text: str
    line: int
    keyword: str
    name: str | None
    full_name: str | None


def _skip_block_comment(lines: list[str], index: int) -> int:
    """Index of the first line after the block comment starting at `lines[index]` (nested
    `/- -/`, as Lean's `Lean.Parser.finishCommentBlock` reads them)."""
    depth = 0
    while index < len(lines):
        line, i = lines[index], 0
        while i < len(line):
            if line.startswith("/-", i):
                depth, i = depth + 1, i + 2
            elif line.startswith("-/", i):
                depth, i = depth - 1, i + 2
                if depth == 0:
                    return index + 1
            else:
                i += 1
        index += 1
    return index


def _starts_command(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith("--") and not line.startswith("-/")


def _leading(text: str) -> tuple[str, str | None]:
    """The command keyword of `text` and the name it declares (after doc comment, attributes
    and modifiers)."""
    i = _skip_trivia(text, 0)
    while True:
        if text.startswith("/--", i):
            end = text.find("-/", i + 3)
            i = len(text) if end < 0 else _skip_trivia(text, end + 2)
        elif text.startswith("@[", i):
            depth, i = 1, i + 2
            while i < len(text) and depth:
                depth += {"[": 1, "]": -1}.get(text[i], 0)
                i += 1
            i = _skip_trivia(text, i)
        else:
            word, after = _read_word(text, i)
            if word in MODIFIERS:
                i = _skip_trivia(text, after)
                continue
            if word not in DECLARATION_KEYWORDS or word == "example":
                return word, None
            j = _skip_trivia(text, after)
            if word == "instance" and text.startswith("(", j):
                # `instance (priority := n) name : ...`
                close = text.find(")", j)
                j = _skip_trivia(text, close + 1) if close >= 0 else len(text)
            name, _ = _read_ident(text, j)
            return word, name or None


def _read_word(text: str, i: int) -> tuple[str, int]:
    start = i
    while i < len(text) and not text[i].isspace() and text[i] not in "([{:":
        i += 1
    return text[start:i], i


def split_commands(body: str) -> list[LeanCommand]:
    """The top-level commands of `body` (a file whose header is blanked, see
    `header.parse_header`), in file order (see the module docstring)."""
    lines = body.split("\n")
    starts: list[int] = []
    index, pending = 0, None
    while index < len(lines):
        line = lines[index]
        if line.startswith("/-") and not line.startswith("/--") and not line.startswith("/-!"):
            index = _skip_block_comment(lines, index)
            continue
        if _starts_command(line):
            if pending is None:
                pending = index
            # A doc comment or an attribute list alone waits for the declaration it belongs to.
            stripped = line.rstrip()
            if line.startswith("/--") and "-/" not in line[3:]:
                index = _skip_block_comment(lines, index)
                continue
            if not (line.startswith("/--") or (stripped.startswith("@[") and stripped.endswith("]"))):
                starts.append(pending)
                pending = None
        index += 1
    if pending is not None:
        starts.append(pending)
    commands: list[LeanCommand] = []
    namespaces: list[list[str]] = []
    for position, start in enumerate(starts):
        stop = starts[position + 1] if position + 1 < len(starts) else len(lines)
        text = "\n".join(lines[start:stop]).rstrip()
        keyword, name = _leading(text)
        opened = [part for group in namespaces for part in group]
        full = ".".join([*opened, name]) if name and not name.startswith("_root_.") else name
        if name and name.startswith("_root_."):
            full = name[len("_root_.") :]
        commands.append(LeanCommand(text=text, line=start + 1, keyword=keyword, name=name, full_name=full))
        if keyword == "namespace":
            namespaces.append(_read_ident(text, _skip_trivia(text, len("namespace")))[0].split("."))
        elif keyword == "section":
            namespaces.append([])
        elif keyword == "end" and namespaces:
            namespaces.pop()
    return commands


def find_target(commands: list[LeanCommand], target: str) -> int:
    """Index of the command declaring `target` (as written, or with its namespaces); -1 when
    none does."""
    for index, command in enumerate(commands):
        if command.name is not None and target in (command.name, command.full_name):
            return index
    return -1
