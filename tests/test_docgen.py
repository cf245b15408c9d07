"""Tests of the doc-gen4 front end: header reading, kind mapping, validation, duplicates,
archives, the stream header, and the `catalog import-docgen` command.

Headers from the real sample folders (`../shared/realdata/*-sample`, marked `realdata`) are
checked against strings read off the files by hand, and every sample header against an
independent reader built on `html.parser`. The rest uses small doc-gen4 files written here, in
doc-gen4's layout (`docInfoHeader` in `DocGen4/Output/Module.lean`).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import read_manifest
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.docgen import collect_docgen, docgen_stream, import_docgen
from leanindex.docgen.convert import convert_module
from leanindex.docgen.files import DocgenFile
from leanindex.docgen.header import HeaderSyntaxError, parse_header
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.records import DeclarationRecord, HeaderRecord

from realdata_support import CORE_SAMPLE, MATHLIB_SAMPLE, realdata_path, sample_declarations

LEAN_COMMIT = "d8b18978322de05a8f3dba51ef03cf5461676c17"
MATHLIB_COMMIT = "0cc1f970691e01afdf9d8bb9f8307cd7b6aca12a"
PROP = '<a href="./foundational_types.html">Prop</a>'


# --- writing small doc-gen4 files ---------------------------------------------------------


def link(name: str, text: str | None = None, page: str = "./Init/Prelude.html") -> str:
    return f'<a href="{page}#{name}">{text or name}</a>'


def header(kind_text: str, name: str, binders: list[str] = (), type_html: str = PROP, extends: str | None = None) -> str:
    """A header in doc-gen4's layout: kind, name link, binder spans, optional extends, ` :`, type."""
    parts = "".join(f'<span class="name">{part}</span>' for part in name.split("."))
    html = f'<div class="decl_header"><span class="decl_kind">{kind_text}</span>\n'
    html += f'<span class="decl_name"><a class="break_within" href="./M.html#{name}">{parts}</a></span>'
    for binder in binders:
        html += f'<span class="decl_args">\n<span class="fn">{binder}</span></span>\n'
    if extends:
        html += f'<span class="decl_extends">extends</span> <span class="fn">{extends}</span>'
    html += f'<span class="decl_args"> :</span><div class="decl_type">{type_html}</div></div>'
    return html


def declaration(
    name: str,
    kind: str = "theorem",
    kind_text: str | None = None,
    doc: str = "",
    lines: tuple[int, int] = (10, 12),
    source: str = f"https://github.com/leanprover/lean4/blob/{LEAN_COMMIT}/src/Init/M.lean",
    head: str | None = None,
) -> dict:
    return {
        "info": {
            "name": name,
            "kind": kind,
            "doc": doc,
            "docLink": f"./M.html#{name}",
            "line": lines[0],
            "sourceLink": f"{source}#L{lines[0]}-L{lines[1]}",
        },
        "header": head if head is not None else header(kind_text or kind, name),
    }


def module_json(module: str, declarations: list[dict], imports: list[str] = ()) -> bytes:
    return json.dumps({"name": module, "imports": list(imports), "instances": [], "declarations": declarations}).encode()


def write_module(folder: Path, module: str, declarations: list[dict], imports: list[str] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"declaration-data-{module}.bmp"
    path.write_bytes(module_json(module, declarations, imports))
    return path


def convert_one(module: str, declarations: list[dict]) -> list[DeclarationRecord]:
    return convert_module(DocgenFile(f"declaration-data-{module}.bmp", module_json(module, declarations))).records


# --- an independent header reader (html.parser, a tree of the direct children) -----------


class _Tree(HTMLParser):
    """Collects, per direct child of the root div: its classes, its text and its links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.children: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if self.depth == 1:
            self.children.append({"classes": (attributes.get("class") or "").split(), "text": "", "links": []})
        if tag == "a" and self.depth >= 1:
            self.children[-1]["links"].append(attributes.get("href") or "")
        self.depth += 1

    def handle_endtag(self, tag):
        self.depth -= 1

    def handle_data(self, data):
        if self.depth >= 2:
            self.children[-1]["text"] += data


def oracle(html: str) -> tuple[str, str, tuple[str, ...]]:
    """(kind text, signature, constants) the way a reader of the rendered page sees them:
    the text of the binder and type boxes (not the name, not the parents after `extends`)
    with a space between boxes, and the declaration links in them."""
    tree = _Tree()
    tree.feed(html)
    kind = next(c["text"] for c in tree.children if "decl_kind" in c["classes"])
    # An `extends` clause is not part of the signature: only argument and type boxes are.
    signature_boxes = [c for c in tree.children if {"decl_args", "impl_arg", "decl_type"} & set(c["classes"])]
    text = " ".join(" ".join(box["text"].split()) for box in signature_boxes)
    constants = {
        unquote(href.split("#", 1)[1])
        for box in signature_boxes
        for href in box["links"]
        if href.startswith("./") and ".html#" in href
    }
    return kind.strip(), " ".join(text.split()), tuple(sorted(constants))


# --- headers from the real sample folders -------------------------------------------------

REAL_HEADERS = [
    # (sample, name, decl_kind text, signature, linked constants), read off the files by hand
    (CORE_SAMPLE, "Nat.add_comm", "theorem", "(n m : Nat) : n + m = m + n", ("Eq", "HAdd.hAdd", "Nat")),
    (CORE_SAMPLE, "Nat.not_gt_eq", "theorem", "(a b : Nat) : (¬a > b) = (a ≤ b)", ("Eq", "GT.gt", "LE.le", "Nat", "Not")),
    (CORE_SAMPLE, "Nat.repeat_eq_repeatTR", "theorem", ": @«repeat» = @repeatTR", ("Eq", "Nat.repeat", "Nat.repeatTR")),
    (
        CORE_SAMPLE,
        "String.isSome_utf8DecodeChar?_zero",
        "theorem",
        '{b : String} (hb : b ≠ "") : (b.toByteArray.utf8DecodeChar? 0).isSome = true',
        ("Bool.true", "ByteArray.utf8DecodeChar?", "Eq", "Ne", "Option.isSome", "String", "String.toByteArray"),
    ),
    (CORE_SAMPLE, "instAddNat", "instance", ": Add Nat", ("Add", "Nat")),
    (CORE_SAMPLE, "Alternative", "class", "(f : Type u → Type v) : Type (max (u + 1) v)", ()),
    (CORE_SAMPLE, "Decidable", "class inductive", "(p : Prop) : Type", ()),
    (
        CORE_SAMPLE,
        "Lean.Syntax.getTailPos?",
        "partial def",
        "(stx : Syntax) (canonicalOnly : Bool := false) : Option String.Pos.Raw",
        ("Bool", "Bool.false", "Lean.Syntax", "Option", "String.Pos.Raw"),
    ),
    (
        CORE_SAMPLE,
        "Array.ugetBorrowed",
        "unsafe opaque",
        "{α : Type u} (xs : Array α) (i : USize) (h : i.toNat < xs.size) : α",
        ("Array", "Array.size", "LT.lt", "USize", "USize.toNat"),
    ),
    (CORE_SAMPLE, "«term_<&&>_»", "def", ": Lean.TrailingParserDescr", ("Lean.TrailingParserDescr",)),
    (MATHLIB_SAMPLE, "Sylow", "structure", "(p : ℕ) (G : Type u_1) [Group G] : Type u_1", ("Group", "Nat")),
    (MATHLIB_SAMPLE, "Preorder", "class", "(α : Type u_2) : Type u_2", ()),
    (
        MATHLIB_SAMPLE,
        "IsGalois.normalAutEquivQuotient",
        "noncomputable def",
        "{K : Type u_3} {L : Type u_4} [Field K] [Field L] [Algebra K L] [FiniteDimensional K L] [IsGalois K L]"
        " (H : Subgroup (L ≃ₐ[K] L)) [H.Normal] : (L ≃ₐ[K] L) ⧸ H ≃* ↥(IntermediateField.fixedField H)"
        " ≃ₐ[K] ↥(IntermediateField.fixedField H)",
        (
            "AlgEquiv",
            "Algebra",
            "Field",
            "FiniteDimensional",
            "HasQuotient.Quotient",
            "IntermediateField.fixedField",
            "IsGalois",
            "MulEquiv",
            "Subgroup",
            "Subgroup.Normal",
        ),
    ),
    (
        MATHLIB_SAMPLE,
        "IsGalois.mk",
        "constructor",
        "{F : Type u_1} [Field F] {E : Type u_2} [Field E] [Algebra F E] [to_isSeparable : Algebra.IsSeparable F E]"
        " [to_normal : Normal F E] : IsGalois F E",
        ("Algebra", "Algebra.IsSeparable", "Field", "IsGalois", "Normal"),
    ),
]


@pytest.mark.realdata
@pytest.mark.parametrize(("sample", "name", "kind_text", "signature", "constants"), REAL_HEADERS, ids=[r[1] for r in REAL_HEADERS])
def test_real_header_text_and_links(sample: str, name: str, kind_text: str, signature: str, constants: tuple[str, ...]) -> None:
    found = sample_declarations(realdata_path(sample))[name]
    rendered = parse_header(found["header"])
    assert (rendered.kind_text, rendered.signature, rendered.constants) == (kind_text, signature, constants)


@pytest.mark.realdata
@pytest.mark.parametrize("sample", [CORE_SAMPLE, MATHLIB_SAMPLE])
def test_every_sample_header_matches_an_html_parser_reading(sample: str) -> None:
    declarations = sample_declarations(realdata_path(sample))
    assert len(declarations) > 5000
    for name, found in declarations.items():
        rendered = parse_header(found["header"])
        assert (rendered.kind_text, rendered.signature, rendered.constants) == oracle(found["header"]), name


# --- header reading on written headers ----------------------------------------------------


def test_links_are_decoded_and_only_signature_declaration_links_count() -> None:
    html = header(
        "theorem",
        "Foo.bar",
        binders=[f"(x : {link('%C2%ABterm_%E2%89%A0_%C2%BB', '≠')})", f"(y : {link('A&amp;B', 'A&amp;B')})"],
        type_html=f'{link("Eq", "=")} <a href="https://example.org/x.html#Ext">ext</a> {PROP}',
        extends=link("Parent"),
    )
    rendered = parse_header(html)
    assert rendered.constants == ("A&B", "Eq", "«term_≠_»")
    assert rendered.signature == "(x : ≠) (y : A&B) : = ext Prop"


@pytest.mark.parametrize(
    "html",
    [
        "",
        '<div class="decl_header"><span class="decl_kind">def</span></div>',
        header("def", "f").replace("</span><span", "<span", 1),
        header("def", "f").replace('<div class="decl_type">', '<div class="other">'),
        header("def", "f").replace("<span class=\"decl_args\"> :</span>", ""),
        header("def", "f") + "<p>",
    ],
    ids=["empty", "no-name-no-type", "unbalanced", "no-type", "no-colon", "trailing-tag"],
)
def test_malformed_headers_are_rejected(html: str) -> None:
    with pytest.raises(HeaderSyntaxError):
        parse_header(html)


# --- kind mapping and record fields -------------------------------------------------------

KIND_CASES = [
    # (doc-gen4 kind, decl_kind text, name, kernel kind, flags that are true)
    ("theorem", "theorem", "T.thm", "theorem", set()),
    ("def", "def", "T.d", "definition", set()),
    ("def", "noncomputable abbrev", "T.ab", "definition", set()),
    ("def", "unsafe def", "T.ud", "definition", {"is_unsafe"}),
    ("instance", "instance", "T.inst", "definition", {"is_instance"}),
    ("instance", "unsafe noncomputable instance", "T.uinst", "definition", {"is_instance", "is_unsafe"}),
    ("structure", "structure", "T.S", "inductive", {"is_structure"}),
    ("class", "class", "T.C", "inductive", {"is_class", "is_structure"}),
    ("class", "class inductive", "T.CI", "inductive", {"is_class"}),
    ("inductive", "inductive", "T.I", "inductive", set()),
    ("inductive", "unsafe inductive", "T.U", "inductive", {"is_unsafe"}),
    ("ctor", "constructor", "T.I.mk", "constructor", set()),
    ("ctor", "constructor", "T.U.mk", "constructor", {"is_unsafe"}),
    ("opaque", "opaque", "T.op", "opaque", set()),
    ("opaque", "partial def", "T.pd", "opaque", set()),
    ("opaque", "unsafe opaque", "T.uop", "opaque", {"is_unsafe"}),
    ("opaque", "opaque", "Quot.lift", "quotient", set()),
    ("axiom", "axiom", "T.ax", "axiom", set()),
    ("axiom", "unsafe axiom", "T.uax", "axiom", {"is_unsafe"}),
]
FLAGS = ("is_private", "is_internal", "is_instance", "is_class", "is_structure", "is_unsafe", "is_deprecated")


def test_kind_mapping_and_flags() -> None:
    records = convert_one("T", [declaration(name, kind, kind_text) for kind, kind_text, name, _, _ in KIND_CASES])
    by_name = {r.name: r for r in records}
    for _, _, name, kernel_kind, flags in KIND_CASES:
        record = by_name[name]
        assert record.kind.value == kernel_kind, name
        assert {flag for flag in FLAGS if getattr(record, flag)} == flags, name


def test_record_fields() -> None:
    binders = [f"(n : {link('Nat')})"]
    type_html = f'<span class="fn">n</span> {link("Eq", "=")} <span class="fn">n</span>'
    records = convert_one(
        "Init.M",
        [
            declaration("Nat.«term_≠_».x", doc="Docs.\n", lines=(3, 7), head=header("theorem", "Nat.x", binders, type_html)),
            declaration("Nat.y", doc=""),
        ],
    )
    first, second = records
    assert first.components == ["Nat", "term_≠_", "x"]
    assert first.type == "(n : Nat) : n = n"
    assert first.type_constants == ["Eq", "Nat"]
    assert first.doc == "Docs.\n"
    assert first.module == "Init.M"
    assert first.range is not None
    assert (first.range.start.line, first.range.end.line, first.range.start.column, first.range.end.column) == (3, 7, None, None)
    assert first.level_params == []
    assert second.doc is None
    # Links: the source link as given; the doc link resolved against the default doc site.
    assert first.source_url == f"https://github.com/leanprover/lean4/blob/{LEAN_COMMIT}/src/Init/M.lean#L3-L7"
    assert first.doc_url == "https://leanprover-community.github.io/mathlib4_docs/M.html#Nat.«term_≠_».x"
    assert second.doc_url == "https://leanprover-community.github.io/mathlib4_docs/M.html#Nat.y"


@pytest.mark.realdata
def test_real_declarations_keep_their_source_link_and_resolve_their_doc_link() -> None:
    folder = realdata_path(CORE_SAMPLE)
    raw = sample_declarations(folder)
    # A base without its trailing slash: the slash is added, so pages resolve below it.
    collection = collect_docgen(folder, doc_base="https://docs.example.org/site")
    try:
        records = [json.loads(line) for line in collection.lines]
    finally:
        collection.lines.close()
    assert len(records) == len(raw)
    for record in records:
        info = raw[record["name"]]["info"]
        assert record["source_url"] == info["sourceLink"], record["name"]
        assert info["docLink"].startswith("./")
        assert record["doc_url"] == "https://docs.example.org/site/" + info["docLink"][2:], record["name"]


@pytest.mark.parametrize(
    "base",
    ["ftp://docs.example.org/", "docs.example.org/site/", "https://", "https://docs.example.org/?page=1", "/local/docs/",
     "https://x.org:99999/docs/", "https://x.org/do cs/", "https://x.org/docs/<script>/", 'https://x.org/a"b/',
     "https://user:pw@x.org/docs/", " https://x.org/docs/ ", "https://x.org/d\u00e9/"],
)
def test_a_bad_doc_base_is_refused_before_anything_is_read(tmp_path: Path, base: str) -> None:
    write_module(tmp_path / "in", "A", [declaration("A.x")])
    with pytest.raises(LeanIndexError) as raised:
        import_docgen(tmp_path / "in", tmp_path / "root", "t", doc_base=base)
    assert raised.value.code is ErrorCode.INVALID_REQUEST and raised.value.details["field"] == "doc_base"
    assert not (tmp_path / "root").exists()


# --- malformed files: one fault each ------------------------------------------------------


def _without_source_link() -> bytes:
    data = json.loads(module_json("T", [declaration("T.a")]))
    del data["declarations"][0]["info"]["sourceLink"]
    return json.dumps(data).encode()


def _without_doc_link() -> bytes:
    data = json.loads(module_json("T", [declaration("T.a")]))
    del data["declarations"][0]["info"]["docLink"]
    return json.dumps(data).encode()


MALFORMED = [
    ("bad-json", b'{"name": "T", "imports": [], "declarations": [', "not a doc-gen4 declaration file"),
    ("unknown-kind", module_json("T", [declaration("T.a", kind="macro")]), "unknown kind 'macro'"),
    ("missing-field", _without_source_link(), "declarations[0].info.sourceLink: Field required"),
    ("missing-doc-link", _without_doc_link(), "declarations[0].info.docLink: Field required"),
    ("wrong-type", module_json("T", [{**declaration("T.a"), "header": 3}]), "declarations[0].header"),
    ("module-mismatch", module_json("Other", [declaration("T.a")]), "describes module 'Other'"),
    ("kind-text-mismatch", module_json("T", [declaration("T.a", "theorem", "def")]), "does not fit kind 'theorem'"),
    ("bad-name", module_json("T", [declaration("T.«a", head=header("theorem", "T.a"))]), "not a Lean name"),
    ("bad-header", module_json("T", [declaration("T.a", head="<div>")]), "unreadable header"),
    ("no-line-range", module_json("T", [{**declaration("T.a"), "info": {**declaration("T.a")["info"], "sourceLink": "x.lean"}}]), "no #L<start>-L<end>"),
    ("line-disagrees", module_json("T", [{**declaration("T.a"), "info": {**declaration("T.a")["info"], "line": 99}}]), "disagree with line 99"),
]


@pytest.mark.parametrize(("data", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_file_is_an_error_naming_the_file(tmp_path: Path, data: bytes, message: str) -> None:
    write_module(tmp_path / "in", "Good", [declaration("Good.a")])
    (tmp_path / "in" / "declaration-data-T.bmp").write_bytes(data)
    with pytest.raises(LeanIndexError) as caught:
        collect_docgen(tmp_path / "in")
    assert caught.value.code == ErrorCode.INVALID_STREAM
    assert caught.value.message.startswith("declaration-data-T.bmp: ")
    assert message in caught.value.message
    assert caught.value.details["file"] == "declaration-data-T.bmp"


def test_failed_import_leaves_the_earlier_catalog_as_it_was(tmp_path: Path) -> None:
    good = tmp_path / "good"
    write_module(good, "A", [declaration("A.x")])
    import_docgen(good, tmp_path / "root", "t")
    paths = CatalogPaths.of(tmp_path / "root", "t")
    manifest_before = paths.manifest.read_bytes()
    target_before = paths.catalog_dir.resolve()
    bad = tmp_path / "bad"
    write_module(bad, "A", [declaration("A.x"), declaration("A.y", kind="macro")])
    with pytest.raises(LeanIndexError):
        import_docgen(bad, tmp_path / "root", "t")
    assert paths.manifest.read_bytes() == manifest_before
    assert paths.catalog_dir.resolve() == target_before
    assert verify_catalog(paths).catalog.declaration_count == 1


# --- duplicates, commits, imports ---------------------------------------------------------


def test_same_theorem_in_two_modules_is_merged_keeping_the_first_module(tmp_path: Path) -> None:
    write_module(tmp_path, "B", [declaration("Dup.thm", lines=(5, 6)), declaration("B.other")])
    write_module(tmp_path, "A", [declaration("Dup.thm", lines=(30, 31))])
    collection = collect_docgen(tmp_path)
    assert collection.declarations_read == 3
    assert len(collection.lines) == 2
    assert [(m.name, m.kept_module, m.dropped_module) for m in collection.merged] == [("Dup.thm", "A", "B")]
    kept = json.loads(next(line for line in collection.lines if b'"Dup.thm"' in line))
    assert (kept["module"], kept["range"]["start"]["line"]) == ("A", 30)
    header_record = HeaderRecord.model_validate_json(next(docgen_stream(collection)))
    assert "module" in header_record.approximate_fields


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (declaration("Dup.d", "def"), declaration("Dup.d", "def")),
        (declaration("Dup.t"), declaration("Dup.t", head=header("theorem", "Dup.t", type_html=link("True")))),
    ],
    ids=["definition-twice", "theorem-with-another-type"],
)
def test_other_duplicates_are_errors_naming_both_files(tmp_path: Path, first: dict, second: dict) -> None:
    write_module(tmp_path, "A", [first])
    write_module(tmp_path, "B", [second])
    with pytest.raises(LeanIndexError) as caught:
        collect_docgen(tmp_path)
    assert caught.value.code == ErrorCode.INVALID_STREAM
    assert "declaration-data-A.bmp" in caught.value.message and "declaration-data-B.bmp" in caught.value.message


def test_one_repository_at_two_commits_is_an_error(tmp_path: Path) -> None:
    write_module(tmp_path, "A", [declaration("A.x")])
    write_module(tmp_path, "B", [declaration("B.x", source="https://github.com/leanprover/lean4/blob/0123456789abcdef/src/B.lean")])
    with pytest.raises(LeanIndexError, match="2 commits of leanprover/lean4"):
        collect_docgen(tmp_path)


def test_stream_header_names_the_source_commits_roots_and_approximations(tmp_path: Path) -> None:
    mathlib = f"https://github.com/leanprover-community/mathlib4/blob/{MATHLIB_COMMIT}/Mathlib/X.lean"
    write_module(tmp_path, "Mathlib.X", [declaration("X.thm", source=mathlib)], imports=["Init.Core"])
    write_module(tmp_path, "Init.Core", [declaration("Init.thm")])
    write_module(tmp_path, "Extra", [declaration("Extra.thm")])
    collection = collect_docgen(tmp_path)
    lines = list(docgen_stream(collection))
    head = HeaderRecord.model_validate_json(lines[0])
    assert head.extractor.name == "leanindex-docgen-import"
    assert (head.lean.version, head.lean.githash) == ("unknown", LEAN_COMMIT)
    assert head.imports == ["Extra", "Mathlib.X"]
    assert head.modules == ["Extra", "Init.Core", "Mathlib.X"]
    assert head.source_commits == {"leanprover-community/mathlib4": MATHLIB_COMMIT, "leanprover/lean4": LEAN_COMMIT}
    assert {"type", "type_constants", "range", "is_private", "is_internal", "level_params"} <= set(head.approximate_fields)
    assert "module" not in head.approximate_fields
    assert json.loads(lines[-1]) == {"record": "footer", "count": 3}
    assert HeaderRecord.model_validate_json(next(docgen_stream(collection, "v4.19.0"))).lean.version == "v4.19.0"

    result = import_docgen(tmp_path, tmp_path / "root", "m")
    manifest = read_manifest(CatalogPaths.of(tmp_path / "root", "m").manifest)
    assert manifest == result.manifest
    assert manifest.source.kind == "doc-gen4"
    assert manifest.mathlib_commit == MATHLIB_COMMIT
    assert manifest.source.commits == head.source_commits
    assert manifest.source.approximate_fields == head.approximate_fields


def test_records_are_built_in_name_lt_order(tmp_path: Path) -> None:
    # Name.lt compares from the last component: a numeric one sorts before a string one, then
    # the name whose components run out first (`zz` before `a.b`), then components root first.
    write_module(tmp_path, "A", [declaration(n) for n in ("a.b", "zz", "a.x", "a.1")])
    result = import_docgen(tmp_path, tmp_path / "root", "o")
    table = pq.read_table(CatalogPaths.of(tmp_path / "root", "o").catalog_dir / "declarations.parquet", columns=["pos", "name"])
    assert table.column("pos").to_pylist() == [0, 1, 2, 3]
    assert table.column("name").to_pylist() == ["a.1", "zz", "a.b", "a.x"]
    assert result.manifest.catalog.declaration_count == 4


# --- inputs: folders and archives ---------------------------------------------------------


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def test_archive_is_read_like_the_folder_ignoring_bookkeeping(tmp_path: Path) -> None:
    folder = tmp_path / "doc-data"
    write_module(folder, "A", [declaration("A.x")], imports=["B"])
    write_module(folder, "B", [declaration("B.x"), declaration("B.y", "def")])
    (folder / "declaration-data-A.bmp.hash").write_text("123")
    (folder / "declaration-data-A.bmp.trace").write_text("{}")
    (folder / "README.md").write_text("notes")
    archive = tmp_path / "doc-data.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        _add(tar, "./declaration-data-A.bmp", (folder / "declaration-data-A.bmp").read_bytes())
        _add(tar, "./declaration-data-A.bmp.hash", b"123")
        _add(tar, "./declaration-data-A.bmp.trace", b"not json")
        _add(tar, "sub/declaration-data-B.bmp", (folder / "declaration-data-B.bmp").read_bytes())
    from_folder, from_archive = collect_docgen(folder), collect_docgen(archive)
    assert list(from_archive.lines) == list(from_folder.lines)
    assert (from_archive.modules, from_archive.imports, from_archive.files) == (["A", "B"], ["A"], 2)


def test_two_files_for_one_module_are_an_error(tmp_path: Path) -> None:
    data = module_json("A", [declaration("A.x")])
    archive = tmp_path / "twice.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        _add(tar, "one/declaration-data-A.bmp", data)
        _add(tar, "two/declaration-data-A.bmp", data)
    with pytest.raises(LeanIndexError, match="already read"):
        collect_docgen(archive)


def _missing(folder: Path) -> Path:
    return folder / "missing"


def _plain_file(folder: Path) -> Path:
    (folder / "file.json").write_text("{}")
    return folder / "file.json"


def _empty_folder(folder: Path) -> Path:
    (folder / "empty").mkdir()
    (folder / "empty" / "declaration-data-A.bmp.hash").write_text("1")
    return folder / "empty"


def _corrupt_archive(folder: Path) -> Path:
    (folder / "junk.tar.xz").write_bytes(b"\xfd7zXZ\x00 not really xz")
    return folder / "junk.tar.xz"


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (_missing, ErrorCode.INVALID_REQUEST),
        (_plain_file, ErrorCode.INVALID_REQUEST),
        (_empty_folder, ErrorCode.INVALID_STREAM),
        (_corrupt_archive, ErrorCode.INVALID_STREAM),
    ],
    ids=["missing", "not-folder-or-archive", "no-declaration-files", "corrupt-archive"],
)
def test_unusable_inputs(tmp_path: Path, make, code: ErrorCode) -> None:
    with pytest.raises(LeanIndexError) as caught:
        collect_docgen(make(tmp_path))
    assert caught.value.code == code


# --- the command line ---------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "leanindex", *args], capture_output=True, text=True, timeout=120)


def test_cli_import_docgen_json_and_errors(tmp_path: Path) -> None:
    write_module(tmp_path / "in", "A", [declaration("A.x"), declaration("A.y", "instance")])
    done = _cli("catalog", "import-docgen", str(tmp_path / "in"), "--profile", "Docs", "--root", str(tmp_path / "root"), "--lean-version", "v4.33.0", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["files"] == 1 and result["declarations_read"] == 2 and result["merged"] == []
    assert result["manifest"]["profile"] == "docs"
    assert result["manifest"]["source"]["kind"] == "doc-gen4"
    assert result["manifest"]["lean"] == {"version": "4.33.0", "githash": LEAN_COMMIT}  # one stored form
    assert done.stderr == ""  # not a terminal: no progress bar
    plain = _cli("catalog", "import-docgen", str(tmp_path / "in"), "--profile", "docs2", "--root", str(tmp_path / "root"), "--lean-version", "4.33.0", "--json")
    assert json.loads(plain.stdout)["manifest"]["lean"] == result["manifest"]["lean"]
    for bad in ("4.33", "version 4", "v4.33.0 rc"):
        refused = _cli("catalog", "import-docgen", str(tmp_path / "in"), "--profile", "docs3", "--root", str(tmp_path / "root"), "--lean-version", bad, "--json")
        assert refused.returncode == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
        assert json.loads(refused.stdout)["error"]["code"] == "invalid_request"
    assert not CatalogPaths.of(tmp_path / "root", "docs3").manifest.exists()
    # In process (a process start costs seconds): the option reaches the check.
    badly_linked = CliRunner().invoke(main, ["catalog", "import-docgen", str(tmp_path / "in"), "--profile", "docs3", "--root", str(tmp_path / "root"), "--doc-base", "docs.example.org", "--json"])
    assert badly_linked.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST]
    assert json.loads(badly_linked.stdout)["error"]["details"]["field"] == "doc_base"
    assert not CatalogPaths.of(tmp_path / "root", "docs3").manifest.exists()

    write_module(tmp_path / "bad", "A", [declaration("A.x", kind="macro")])
    failed = _cli("catalog", "import-docgen", str(tmp_path / "bad"), "--profile", "docs", "--root", str(tmp_path / "root"), "--json")
    assert failed.returncode == EXIT_STATUS[ErrorCode.INVALID_STREAM]
    assert json.loads(failed.stdout)["error"]["code"] == "invalid_stream"
    readable = _cli("catalog", "import-docgen", str(tmp_path / "bad"), "--profile", "docs", "--root", str(tmp_path / "root"))
    assert readable.returncode == EXIT_STATUS[ErrorCode.INVALID_STREAM]
    assert "declaration-data-A.bmp" in readable.stderr and "unknown kind 'macro'" in readable.stderr
    assert verify_catalog(CatalogPaths.of(tmp_path / "root", "docs")).catalog.declaration_count == 2


@pytest.mark.parametrize(
    "link",
    ["./Init/Core.html#Nat.add_comm", "./M.html#Nat.«term_≠_».x", "./A/./B.html#x", "./A/../B.html#x", "../up.html",
     "./A//B.html", "https://elsewhere.example/x.html", "./Mathlib/Order/Basic.html#a/.b", "#only-anchor"],
)
def test_doc_links_resolve_as_rfc_3986_does(link: str) -> None:
    from urllib.parse import urljoin

    from leanindex.docgen.links import doc_url

    base = "https://docs.example.org/site/"
    assert doc_url(link, base) == urljoin(base, link)


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_worker_processes_convert_exactly_as_this_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: str) -> None:
    """Past `SERIAL_FILES` files, worker processes convert: same lines, counts, modules, commits
    and merges as converting every file here, and a bad file's error is the same error."""
    import threading

    from leanindex.docgen import importer

    monkeypatch.setattr(importer, "SERIAL_FILES", 3)
    folder = tmp_path / "in"
    for i in range(12):
        write_module(folder, f"M{i:02}", [declaration(f"M{i:02}.x{j}", doc=f"doc {j}") for j in range(5)] + [declaration("Shared.same")])
    if start == "spawn":  # as with another live thread: the importer spawns instead of forking
        monkeypatch.setattr(threading, "active_count", lambda: 2)

    def collected(workers: int) -> tuple:
        collection = collect_docgen(folder, workers=workers)
        try:
            return (list(collection.lines), collection.modules, collection.imports, collection.commits,
                    collection.files, collection.declarations_read, collection.merged)
        finally:
            collection.lines.close()

    here, workers = collected(0), collected(2)
    assert workers == here
    assert here[4] == 12 and here[5] == 72 and len(here[6]) == 11  # `Shared.same` merged 11 times

    write_module(folder, "M10", [declaration("M10.x", kind="macro")])
    errors = []
    for count in (0, 2):
        with pytest.raises(LeanIndexError) as refused:
            collect_docgen(folder, workers=count)
        errors.append((refused.value.code, refused.value.message, refused.value.details))
    assert errors[0] == errors[1] and errors[0][0] == ErrorCode.INVALID_STREAM and "declaration-data-M10.bmp" in errors[0][1]


def _children(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is `pid` (read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")
def test_workers_end_when_their_import_is_killed() -> None:
    """An import killed with SIGKILL (no clean-up runs) leaves no conversion worker behind:
    each ends within seconds of its parent (before, they waited on their task queue forever)."""
    import os
    import signal
    import time

    from leanindex.embedded import embedded_archive

    script = "import sys\nfrom leanindex.docgen import collect_docgen\ncollect_docgen(sys.argv[1], workers=2)\n"
    process = subprocess.Popen([sys.executable, "-c", script, str(embedded_archive())])
    try:
        deadline = time.monotonic() + 60
        while len(workers := _children(process.pid)) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert len(workers) == 2, "the import never started its two workers"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
        for w in left:
            os.kill(w, signal.SIGKILL)
        assert not left, f"workers {left} outlived their import"
    finally:
        if process.poll() is None:
            process.kill()
