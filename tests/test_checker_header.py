"""Header parsing and import coverage, against an oracle that builds the file from its parts;
which imports are modules, from the `.olean` files on the REPL's search path."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leanindex.checker.header import parse_header, uncovered_imports, unknown_modules
from leanindex.checker.worker import repl_search_path
from leanindex.errors import ErrorCode, LeanIndexError

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


def test_unknown_modules_are_those_without_an_olean(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for base, module in ((first, "Lean/Elab"), (second, "Mathlib/Tactic")):
        (base / module).parent.mkdir(parents=True, exist_ok=True)
        (base / f"{module}.olean").write_bytes(b"")
    (first / "Lean" / "Nope").mkdir()  # a folder is not a module
    imports = ["Lean.Elab", "Mathlib.Tactic", "Lean.Nope", "Lean", "not a name!"]
    assert unknown_modules(imports, [first, second]) == ["Lean.Nope", "Lean", "not a name!"]
    assert unknown_modules(imports, []) == imports


def test_repl_search_path_is_read_from_the_process_lake_started(tmp_path):
    env = {"PATH": os.environ["PATH"], "LEAN_PATH": os.pathsep.join(["rel", "/abs/pkg"]), "LEAN_SYSROOT": "/toolchain"}
    # A parent without Lake's variables, as `unshare` and `lake` are, over the process that has them.
    parent = subprocess.Popen(["sh", "-c", "env LEAN_PATH=\"$P\" LEAN_SYSROOT=\"$S\" sleep 30 & wait"],
                              env={"PATH": env["PATH"], "P": env["LEAN_PATH"], "S": env["LEAN_SYSROOT"]}, cwd=tmp_path)
    try:
        for _ in range(100):
            try:
                found = repl_search_path(parent.pid)
                break
            except LeanIndexError:
                time.sleep(0.05)
        assert found == [tmp_path / "rel", Path("/abs/pkg"), Path("/toolchain/lib/lean")]
    finally:
        parent.kill()
        parent.wait()
    with pytest.raises(LeanIndexError) as caught:
        repl_search_path(parent.pid)
    assert caught.value.code is ErrorCode.BACKEND_ERROR
