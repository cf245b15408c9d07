"""The CLI's answers read as text at 80 columns (issue 30, item 7, terminal part): no module name,
declaration name or word of a type is broken mid-word (the results table when every name fits
beside a wide enough type column, else each type on its own lines), prose is wrapped at spaces,
and a caveat is shown once per command run. Checked on real Lean core answers: the embedded
catalog `leanindex demo` imports (the doc-gen4 output of Lean core v4.33.0)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import click
import pytest
from rich.console import Console

from embedded_support import DemoRun
from leanindex.cli import main
from leanindex.cli.query import render_inspect, render_search
from leanindex.embedded import EMBEDDED_PROFILE
from leanindex.engine import Engine
from leanindex.models import InspectRequest, SearchRequest, SearchResponse

ENVIRONMENT = EMBEDDED_PROFILE.upper()

#: Real searches whose answers the issue saw broken at 80 columns, and others of every shape:
#: long types, long module names, many results, a name longer than the screen.
SEARCHES: dict[str, dict[str, Any]] = {
    "demo: type mentions List.length and HAppend.hAppend": {
        "type_pattern": {"constants": ["List.length", "HAppend.hAppend"]}, "kinds": ["theorem"], "result_limit": 5,
    },
    "demo: add_comm in Nat": {"name_contains": "add_comm", "namespace_prefixes": ["Nat"]},
    "module Init.Data.Array.TakeDrop": {"module_prefixes": ["Init.Data.Array.TakeDrop"], "result_limit": 50},
    "words: length append": {"text": "length append", "result_limit": 20},
    "BitVec lemmas": {"name_contains": "toNat_", "namespace_prefixes": ["BitVec"], "result_limit": 30},
    "names longer than the screen": {"name_contains": "instForIn'InferInstanceMembershipOfLawfulUpwardEnumerable", "result_limit": 10},
}

#: Lines that are one whole token on purpose (a URL or a cursor must copy back whole).
WHOLE_LINES = ("source ", "docs ", "next page: ")


@pytest.fixture(scope="module")
def engine(embedded_demo: DemoRun) -> Iterator[Engine]:
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    engine = Engine(embedded_demo.root)
    yield engine
    engine.close()


def terminal(width: int, out: io.StringIO) -> Console:
    """A console that is a terminal `width` columns wide (without colours: plain text)."""
    return Console(width=width, file=out, force_terminal=True, color_system=None, highlight=False, soft_wrap=True)


def rendered(render: Callable[..., None], answer: Any, width: int) -> str:
    out = io.StringIO()
    render(answer, terminal(width, out))
    return out.getvalue()


def assert_reads_whole(render: Callable[..., None], answer: Any, names: list[str]) -> str:
    """Render `answer` at 80 columns and check it breaks nothing: every word it prints is a word
    of the same answer rendered without a width limit (a word broken in two would print two
    words that are not), each of `names` stands whole on a line, and only the link and cursor
    lines (one token each, on purpose) or a line of one word longer than the screen pass 80
    columns. Returns the 80-column text."""
    narrow = rendered(render, answer, 80)
    wide = rendered(render, answer, 100_000)
    extra = Counter(narrow.split()) - Counter(wide.split())
    assert not extra, f"words not in the unwrapped answer (broken mid-word): {sorted(extra)[:10]}\n{narrow}"
    for name in names:
        assert any(name in (word.strip(",;:") for word in line.split()) for line in narrow.splitlines()), f"{name} is not whole on one line:\n{narrow}"
    for line in narrow.splitlines():
        line = line.rstrip()
        if len(line) > 80:
            assert line.startswith(WHOLE_LINES) or len(line.split()) == 1 or any(len(word) > 76 for word in line.split()), line
    return narrow


@pytest.mark.parametrize("title", list(SEARCHES))
def test_search_answers_break_no_name_at_80_columns(engine: Engine, title: str) -> None:
    answer = engine.search(SearchRequest(environment=ENVIRONMENT, **SEARCHES[title]))
    assert answer.results, title
    names = [r.name for r in answer.results] + [r.module for r in answer.results if r.module] + answer.missing_modules
    text = assert_reads_whole(render_search, answer, names)
    if title.startswith("demo: type"):
        # The example: `Init.Data.Arr|ay.TakeDrop`, broken in the type-crushed table.
        assert any("Init.Data.Array.TakeDrop" in line.split() for line in text.splitlines())


def test_both_layouts_are_used_at_80_columns(engine: Engine) -> None:
    """The table where the type column can be wide enough; each type on its own lines where it
    cannot (long names and modules leave too little room)."""
    tabled = rendered(render_search, engine.search(SearchRequest(environment=ENVIRONMENT, **SEARCHES["demo: add_comm in Nat"])), 80)
    assert [line.split() for line in tabled.splitlines() if line.startswith("name")] == [["name", "kind", "type", "module"]]
    listed = rendered(render_search, engine.search(SearchRequest(environment=ENVIRONMENT, **SEARCHES["demo: type mentions List.length and HAppend.hAppend"])), 80)
    assert not any(line.startswith("name ") for line in listed.splitlines())
    assert "Array.exists_of_uset  theorem  Init.Data.Array.TakeDrop\n    {α : Type u_1} {xs : Array α}" in listed


def test_into_a_pipe_each_line_stays_whole(engine: Engine) -> None:
    """Not on a terminal (a pipe, a file), prose is not wrapped: a note is one line, for grep."""
    answer = missing_modules_answer(engine)
    out = io.StringIO()
    render_search(answer, Console(width=80, file=out))
    [note] = [line for line in out.getvalue().splitlines() if line.startswith("note: not complete:")]
    assert note.endswith(", ".join(answer.missing_modules))


def test_an_inspect_card_breaks_no_name_at_80_columns(engine: Engine) -> None:
    card = engine.inspect(InspectRequest(environment=ENVIRONMENT, declaration_name="Array.exists_of_uset"))
    text = assert_reads_whole(render_inspect, card, [card.name, card.module or "", *card.type_constants])
    assert text.splitlines()[1].startswith("  {α : Type u_1}")


def missing_modules_answer(engine: Engine) -> SearchResponse:
    answer = engine.search(SearchRequest(environment=ENVIRONMENT, **SEARCHES["demo: add_comm in Nat"]))
    assert answer.missing_modules  # the 4 Std modules the shipped data lacks are in scope
    return answer


def test_a_caveat_is_shown_once_per_command_run(engine: Engine) -> None:
    answer = missing_modules_answer(engine)
    out = io.StringIO()
    console = terminal(80, out)
    with click.Context(main):
        render_search(answer, console)
        render_search(answer, console)
    assert out.getvalue().count("note: not complete:") == 1
    assert out.getvalue().count("PARTIAL") == 2  # each answer still says it
    # Outside a command (a caller of render_search), every answer carries its caveat.
    again = io.StringIO()
    render_search(answer, terminal(80, again))
    render_search(answer, terminal(80, again))
    assert again.getvalue().count("note: not complete:") == 2


def test_the_demo_shows_the_missing_modules_note_once(embedded_demo: DemoRun) -> None:
    """The first `leanindex demo` (a real process) prints several answers in the missing
    modules' scope; the ~230-character note comes once."""
    assert embedded_demo.stdout.count("not complete: 4 module(s) in scope are missing") == 1, embedded_demo.stdout
