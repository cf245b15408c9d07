"""Goals as the REPL prints them, split into case, hypotheses and target.

The REPL prints a goal with Lean's `Meta.ppGoal`: an optional `case <tag>` line, then one line per
hypothesis group (`a b : Nat`, continuation lines indented), then `⊢ <target>` (the target may
span several lines). A goal string is read back into those parts; the text is kept whole too.
"""

from __future__ import annotations

from pydantic import Field

from ..base import Frozen

_TURNSTILE = "⊢ "


class Goal(Frozen):
    """One goal: `case` tag (None when untagged), `hypotheses` (`"name : type"` strings, a
    group of names sharing a type kept as Lean prints it), `target`, and `text` as Lean
    printed it."""

    case: str | None = Field(description="The goal's `case` tag; null when untagged.")
    hypotheses: list[str] = Field(description="Hypotheses as `name : type` lines, as Lean groups them.")
    target: str = Field(description="The type to prove (after `⊢`).")
    text: str = Field(description="The goal exactly as Lean printed it (Meta.ppGoal).")


def parse_goal(text: str) -> Goal:
    """The parts of one goal string (see the module docstring). A string without `⊢ ` (not a
    goal Lean printed) keeps everything in `target`."""
    lines = text.split("\n")
    case = None
    if lines and lines[0].startswith("case "):
        case, lines = lines[0][len("case ") :], lines[1:]
    at = next((i for i, line in enumerate(lines) if line.startswith(_TURNSTILE)), None)
    if at is None:
        return Goal(case=case, hypotheses=[], target="\n".join(lines), text=text)
    hypotheses: list[str] = []
    for line in lines[:at]:
        if line[:1].isspace() and hypotheses:
            hypotheses[-1] += "\n" + line
        else:
            hypotheses.append(line)
    target = "\n".join(lines[at:])[len(_TURNSTILE) :]
    return Goal(case=case, hypotheses=hypotheses, target=target, text=text)
