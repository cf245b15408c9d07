"""The doc-gen4 front end's approximation of conclusions from the signature (issue 11, item 3):
the part of the type after its last top-level `→` or `∀ …,`, its linked constants and head."""

from __future__ import annotations

import pytest

from leanindex.docgen.header import parse_header
from test_docgen import header, link


@pytest.mark.parametrize(
    ("type_html", "constants", "head"),
    [
        # an instance: the conclusion is the whole type, headed by the class
        (f"{link('Group')} ({link('Equiv.Perm')} α)", ("Equiv.Perm", "Group"), "Group"),
        # arrows: only what follows the last top-level one counts
        (f"{link('Nat.Prime')} p → {link('Nat.Prime')} q → p {link('Eq', '=')} q", ("Eq",), "Eq"),
        # ∀ binders end at their comma; an arrow inside brackets is not top-level
        (f"∀ (f : {link('Nat')} → {link('Nat')}), {link('Continuous')} f", ("Continuous",), "Continuous"),
        # infix with linked operands on both sides: no single head can be read off
        (f"a {link('HAdd.hAdd', '+')} b {link('Eq', '=')} b {link('HAdd.hAdd', '+')} a", ("Eq", "HAdd.hAdd"), None),
        # a bare variable: no constant, no head
        ("p", (), None),
    ],
)
def test_conclusion_is_read_after_the_last_binder(type_html: str, constants: tuple[str, ...], head: str | None) -> None:
    parsed = parse_header(header("theorem", "Foo.bar", ["(p q : Nat)"], type_html))
    assert parsed.conclusion_constants == constants
    assert parsed.conclusion_head == head
    assert set(parsed.conclusion_constants) <= set(parsed.constants)
