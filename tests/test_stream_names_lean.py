"""Stream validation and namespaces on names printed by the real `Name.toString` (Lean 4.35.0,
`leanlib`), including the real names whose printing cannot be read back: a component holding
`»` (never escaped), and names printed with escaping off (macro scopes, inaccessible `✝`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leanlib
from leanindex.catalog.stream import StreamSummary, read_stream
from leanindex.engine import Engine
from leanindex.errors import LeanIndexError
from leanindex.models import InspectRequest, SearchRequest
from leanindex.names import NameSyntaxError, name_sort_key, parse_name, printed_namespace
from streamkit import build, declaration, stream

REASON = leanlib.unavailable_reason()
pytestmark = [pytest.mark.leanlib, pytest.mark.skipif(REASON is not None, reason=REASON or "")]

# Real shapes: a hygienic name (`_hyg` macro scope), an inaccessible hypothesis-like name, a
# component with `»` and one with a dot, both printed unescaped because escaping is off or
# impossible.
UNREADABLE = [
    ("Foo", "x»y"),
    ("Foo", "a»", "b"),
    ("Lean", "Elab", "a.b", "_@", "Lean", "Elab", "_hyg", 42),
    ("f", "x.y✝"),
    ("«weird", "a b", "y✝", 3),
    ("_private", "Mod", 0, "Foo", "x.y", "_hyg", 7),
]


def _unreadable(components: tuple[str | int, ...]) -> bool:
    printed = leanlib.name_to_string(components)
    try:
        return parse_name(printed) != components
    except NameSyntaxError:
        return True


def _records(names: list[tuple[str | int, ...]]) -> list[dict]:
    ordered = sorted(set(names), key=name_sort_key)
    return [
        declaration(list(c), name=leanlib.name_to_string(c)) for c in ordered
    ]


def test_the_examples_really_do_not_read_back() -> None:
    assert all(_unreadable(c) for c in UNREADABLE)


def test_stream_accepts_lean_printing_that_does_not_read_back(tmp_path: Path) -> None:
    """A build of real-shaped names whose Lean printing cannot be read back succeeds, keeping
    Lean's printing as the name and the components as the identity."""
    records = _records(UNREADABLE + [("Nat", "add_comm")])
    manifest = build(tmp_path, "T", stream(records))
    assert manifest.catalog.declaration_count == len(records)
    engine = Engine(tmp_path)
    try:
        found = engine.search(SearchRequest(environment="T", name_contains="x»y"))
        assert [(r.name, r.namespace) for r in found.results] == [("Foo.x»y", "Foo")]
        hygienic = engine.search(SearchRequest(environment="T", name_contains="_hyg", namespace_prefixes=["Lean.Elab"]))
        assert [r.name for r in hygienic.results] == ["Lean.Elab.a.b._@.Lean.Elab._hyg.42"]
        inspected = engine.inspect(InspectRequest(environment="T", declaration_name="Foo.a».b"))
        assert (inspected.components, inspected.namespace) == (["Foo", "a»", "b"], "Foo.a»")
    finally:
        engine.close()


def test_stream_still_refuses_a_name_that_is_not_the_printing_of_its_components() -> None:
    record = declaration(["Foo", "x»y"], name="Foo.x»z")
    with pytest.raises(LeanIndexError, match="'Foo.x»z' is not a Lean name .* nor the printing of its components"):
        list(read_stream(stream([record]), StreamSummary()))


def test_stream_refuses_a_name_holding_a_nul_character() -> None:
    """A NUL inside a component would read as the end of the name in the search index (relevance
    order took `b»` in `Foo.«a<NUL>b»` for the whole name), so the stream is refused, naming the line."""
    record = declaration(["Foo", "a\x00b"], name="Foo.«a\x00b»")
    with pytest.raises(LeanIndexError) as refused:
        list(read_stream(stream([record]), StreamSummary()))
    assert refused.value.message.startswith("line 2: name 'Foo.«a\\x00b»' holds a NUL character")
    assert refused.value.code.value == "invalid_stream" and refused.value.details == {"line": 2}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["x»y", "»", "a.b", "x✝", "_hyg", "_@", "a b", "", "Nat", "foo", "«z"]),
            st.integers(0, 5),
        ),
        min_size=2,
        max_size=5,
    ).map(tuple)
)
def test_printed_namespace_is_the_printing_before_the_last_component(components: tuple[str | int, ...]) -> None:
    """The namespace of a name is the text of Lean's printing before its last component, which
    is printed as it is or escaped (`«»`), whatever the rest of the printing looks like."""
    printed = leanlib.name_to_string(components)
    namespace = printed_namespace(printed, components)
    assert namespace is not None and printed.startswith(namespace + ".")
    last = components[-1]
    assert printed[len(namespace) + 1 :] in ({str(last)} if isinstance(last, int) else {last, f"«{last}»"})
