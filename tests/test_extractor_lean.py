"""End-to-end tests of the Lean extractor (`leanindex-extract`) on Lean core's `Init`.

They need a Lean toolchain: `lake` on PATH (CI installs it with elan). Without it every test
is skipped with the reason. The extractor is built and run once per session; the tests then
read its NDJSON stream.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.lean

REPO_ROOT = Path(__file__).resolve().parents[1]
EXTRACTOR = REPO_ROOT / ".lake" / "build" / "bin" / "leanindex-extract"
FORMAT_ID = "leanindex.declarations/v1"
KINDS = {"axiom", "definition", "theorem", "opaque", "quotient", "inductive", "constructor", "recursor"}

# Building the extractor compiles it against the whole `Lean` package; extracting `Init`
# pretty-prints ~65k types. Both are bounded so a hung toolchain fails instead of blocking CI.
BUILD_TIMEOUT_S = 3600
EXTRACT_TIMEOUT_S = 3600


def _require_lake() -> str:
    lake = shutil.which("lake")
    if lake is None:
        reason = "Lean toolchain not installed: `lake` is not on PATH (install elan to run the lean tests)"
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    return lake


@pytest.fixture(scope="session")
def init_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the extractor and run it on `Init`; return the NDJSON file."""
    lake = _require_lake()
    subprocess.run([lake, "build", "leanindex-extract"], cwd=REPO_ROOT, check=True, timeout=BUILD_TIMEOUT_S)
    out = tmp_path_factory.mktemp("extract") / "init.ndjson"
    subprocess.run(
        [lake, "env", str(EXTRACTOR), "--out", str(out), "Init"],
        cwd=REPO_ROOT,
        check=True,
        timeout=EXTRACT_TIMEOUT_S,
    )
    return out


@pytest.fixture(scope="session")
def records(init_stream: Path) -> list[dict[str, Any]]:
    with init_stream.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="session")
def declarations(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r.get("record") == "declaration"]


@pytest.fixture(scope="session")
def by_name(declarations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in declarations}


def test_header_and_footer(records: list[dict[str, Any]], declarations: list[dict[str, Any]]) -> None:
    header, footer = records[0], records[-1]
    assert header["record"] == "header"
    assert header["format"] == FORMAT_ID
    assert header["extractor"] == {"name": "leanindex-extract", "version": "0.1.0"}
    assert isinstance(header["lean"]["version"], str) and header["lean"]["version"]
    assert isinstance(header["lean"]["githash"], str)
    assert header["imports"] == ["Init"]
    assert "Init" in header["modules"] and "Init.Prelude" in header["modules"]
    assert len(header["modules"]) == len(set(header["modules"]))

    assert footer == {"record": "footer", "count": len(declarations)}
    assert len(declarations) == len(records) - 2, "only the first and last lines are not declarations"
    assert 40_000 <= len(declarations) <= 120_000


def test_declaration_shape(declarations: list[dict[str, Any]], records: list[dict[str, Any]]) -> None:
    modules = set(records[0]["modules"])
    for d in declarations:
        assert d["kind"] in KINDS, d["name"]
        assert isinstance(d["type"], str) and "\n" not in d["type"], d["name"]
        assert d["type_constants"] == sorted(set(d["type_constants"])), d["name"]
        assert d["module"] is None or d["module"] in modules, d["name"]
        assert d["value_constants"] == sorted(set(d["value_constants"])), "value_constants are written by default"
        assert set(d["conclusion_constants"]) <= set(d["type_constants"]), d["name"]
        assert d["conclusion_head"] is None or d["conclusion_head"] in d["conclusion_constants"], d["name"]
        assert all(isinstance(c, (str, int)) and not isinstance(c, bool) for c in d["components"])
        rng = d["range"]
        if rng is not None:
            assert rng["start"]["line"] >= 1 and rng["start"]["column"] >= 0, d["name"]


def test_nat_add_comm(by_name: dict[str, dict[str, Any]]) -> None:
    d = by_name["Nat.add_comm"]
    assert d["kind"] == "theorem"
    assert d["module"].startswith("Init.")
    assert {"Eq", "HAdd.hAdd", "Nat"} <= set(d["type_constants"])
    # `∀ (n m : Nat), n + m = m + n`: the conclusion is the equation, headed by Eq
    assert (d["conclusion_head"], set(d["conclusion_constants"])) == ("Eq", {"Eq", "HAdd.hAdd", "Nat"})
    assert d["components"] == ["Nat", "add_comm"]
    assert not d["is_internal"] and not d["is_private"]


def test_recursors(by_name: dict[str, dict[str, Any]]) -> None:
    rec = by_name["Nat.rec"]
    assert rec["kind"] == "recursor"
    assert rec["is_internal"] is False
    assert by_name["Nat.casesOn"]["is_internal"] is True


def test_class_structure_instance(by_name: dict[str, dict[str, Any]]) -> None:
    inhabited = by_name["Inhabited"]
    assert inhabited["kind"] == "inductive"
    assert inhabited["is_class"] is True
    assert inhabited["is_structure"] is True
    assert by_name["instAddNat"]["is_instance"] is True


def test_private_names(declarations: list[dict[str, Any]]) -> None:
    private = [d for d in declarations if d["name"].startswith("_private.")]
    assert private, "Init declares private constants"
    assert all(d["is_private"] for d in private)


def test_name_lt_order(declarations: list[dict[str, Any]]) -> None:
    from leanindex.names import name_cmp

    for prev, cur in zip(declarations, declarations[1:]):
        assert name_cmp(prev["components"], cur["components"]) == -1, (prev["name"], cur["name"])


def test_catalog_builder_accepts_stream(init_stream: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "leanindex",
            "catalog",
            "build",
            "--input",
            str(init_stream),
            "--profile",
            "core-lean-test",
            "--root",
            str(tmp_path),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


# A Lean identifier in a printed type: dotted components, each `«…»`-escaped or a word that
# does not start with a digit (numeric components such as the `0` of private names follow a dot).
_COMPONENT = r"(?:«[^»]*»|[^\W\d][\w'!?]*)"
_DOTTED_IDENT = re.compile(rf"(?<![\w'!?.»]){_COMPONENT}(?:\.(?:{_COMPONENT}|\d+))+")
# String and name literals are not references to constants.
_LITERALS = re.compile(r'"(?:[^"\\]|\\.)*"|`+' + _COMPONENT + r"(?:\.(?:" + _COMPONENT + r"|\d+))*")


def _dotted_names(type_text: str) -> set[str]:
    """Dotted identifiers of a printed type, without a leading `_root_.` (which Lean writes only
    to disambiguate a full name)."""
    text = _LITERALS.sub(" ", type_text)
    return {m.group(0).removeprefix("_root_.") for m in _DOTTED_IDENT.finditer(text)}


def test_dotted_names_tokenizer() -> None:
    text = '∀ {n : Nat}, Nat.succ n ≠ 0 → _root_.Foo.bar «a.b».c _private.M.0.x "s.t" `Lean.Name 2.5 n.succ'
    found = _dotted_names(text)
    assert found == {"Nat.succ", "Foo.bar", "«a.b».c", "_private.M.0.x", "n.succ"}


def test_printed_names_resolve(declarations: list[dict[str, Any]], by_name: dict[str, dict[str, Any]]) -> None:
    """Every dotted name in a visible declaration's type is a constant of the catalog: full names
    (no export alias, no namespace-relative abbreviation), private names with their prefix, and
    no field notation (`n.succ` would name the binder `n`, not a constant)."""
    visible = [d for d in declarations if not d["is_internal"]]
    unresolved = [(d["name"], t) for d in visible for t in sorted(_dotted_names(d["type"])) if t not in by_name]
    assert unresolved[:20] == []
    assert sum(1 for d in visible if _dotted_names(d["type"])) > 1000, "the check must see many dotted names"


GENERATED_FOR_CONSTRUCTOR = {"injEq", "inj", "sizeOf_spec"}
GENERATED_FOR_INDUCTIVE = {"noConfusionType", "ctorIdx", "toCtorIdx"}


def test_generated_declarations_are_internal(
    declarations: list[dict[str, Any]], by_name: dict[str, dict[str, Any]]
) -> None:
    """Declarations Lean generates for constructors and inductive types (the cases of
    `Lean.isAutoDeclOrPrivate_Internal` in `Lean/AutoDecl.lean`) have no declaration range and
    are internal, as doc-gen4 hides them; user-facing `ofNat`s, which that helper would also
    flag, stay visible."""
    generated = []
    for d in declarations:
        *prefix, last = d["components"]
        parent = by_name.get(".".join(str(c) for c in prefix)) if prefix else None
        if parent is None:
            continue
        if (last in GENERATED_FOR_CONSTRUCTOR and parent["kind"] == "constructor") or (
            last in GENERATED_FOR_INDUCTIVE and parent["kind"] == "inductive"
        ):
            generated.append(d)
    assert len(generated) >= 20
    assert [d["name"] for d in generated if not d["is_internal"]] == []
    assert [d["name"] for d in declarations if d["components"][-1] == "eq_def" and not d["is_internal"]] == []
    assert {"injEq", "noConfusionType"} <= {d["components"][-1] for d in generated}
    for name in ("Int.ofNat", "Fin.ofNat", "BitVec.ofNat"):
        assert by_name[name]["is_internal"] is False, name


def test_ranged_visible_declarations(by_name: dict[str, dict[str, Any]]) -> None:
    """Declarations users search for keep a range and stay visible; the kernel's quotient
    constants stay visible although `init_quot` records no range for them."""
    for name in ("Nat.add_comm", "Nat", "Nat.succ", "List.map", "Nat.rec"):
        assert by_name[name]["is_internal"] is False, name
        assert by_name[name]["range"] is not None, name
    assert by_name["Quot.mk"]["kind"] == "quotient" and by_name["Quot.mk"]["is_internal"] is False


def test_scoped_instance_is_an_instance(by_name: dict[str, dict[str, Any]]) -> None:
    """`Classical.propDecidable` is a `scoped instance` (Init/Classical.lean): no namespace is open
    after import, so only the extension's scoped entries record it."""
    assert by_name["Classical.propDecidable"]["is_instance"] is True
    assert by_name["instAddNat"]["is_instance"] is True
    assert by_name["Nat.add_comm"]["is_instance"] is False


def test_deprecation_entries(by_name: dict[str, dict[str, Any]]) -> None:
    # `deprecated_to`/`deprecated_since` come from the `@[deprecated]` entry, so only deprecated
    # constants carry them; the attribute resolves its replacement to a constant of the
    # environment (`realizeGlobalConstNoOverloadWithInfo`), so every replacement is a record.
    deprecated = [d for d in by_name.values() if d["is_deprecated"]]
    assert deprecated
    for d in by_name.values():
        if not d["is_deprecated"]:
            assert d["deprecated_to"] is None and d["deprecated_since"] is None, d["name"]
        elif d["deprecated_to"] is not None:
            assert d["deprecated_to"] in by_name and d["deprecated_to"] != d["name"], d["name"]
    assert any(d["deprecated_to"] is not None for d in deprecated)
    assert any(d["deprecated_since"] is not None for d in deprecated)
