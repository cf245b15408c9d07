"""Header parsing and import coverage, against an oracle that builds the file from its parts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from leanindex.checker.header import parse_header, uncovered_imports

component = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,6}", fullmatch=True)
module = st.lists(component, min_size=1, max_size=4).map(".".join)
trivia = st.sampled_from([" ", "\n", "\n\n", " -- a comment\n", "/- block /- nested -/ -/ ", "\t"])
modifier = st.sampled_from(["", "public ", "meta ", "public meta "])
body = st.sampled_from(
    ["theorem t : True := trivial", "private def f := 1", "/-- doc -/ def g := 2", "#check Nat", "public section", ""]
)


@given(st.lists(st.tuples(trivia, modifier, module), max_size=5), trivia, body, st.booleans())
def test_imports_and_positions(parts, gap, tail, module_kw):
    head = "module\n" if module_kw else ""
    header = head + "".join(f"{t}{m}import {name}\n" for t, m, name in parts)
    code = header + gap + tail
    parsed = parse_header(code)
    assert parsed.imports == [name for _, _, name in parts]
    # Same length and the same line breaks: every position in the body is unchanged.
    assert len(parsed.body) == len(code)
    assert [i for i, c in enumerate(parsed.body) if c == "\n"] == [i for i, c in enumerate(code) if c == "\n"]
    assert parsed.body.endswith(tail)
    assert parsed.body[: len(header)].strip() == ""


def test_escaped_names_and_prelude():
    parsed = parse_header("prelude\nimport «My Lib».Basic\ntheorem t : True := trivial")
    assert parsed.prelude and parsed.imports == ["My Lib.Basic"]


@given(st.lists(module, max_size=6), st.lists(module, min_size=1, max_size=3))
def test_coverage_by_name(imports, roots):
    def covered(m: str) -> bool:
        parts = m.split(".")
        return any(parts[: len(r.split("."))] == r.split(".") for r in roots + ["Init"])

    assert uncovered_imports(imports, roots) == [m for m in imports if not covered(m)]
