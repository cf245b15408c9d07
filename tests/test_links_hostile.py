"""Hostile links: a `source_url` or `doc_url` is an http(s) link or nothing, everywhere.

One rule (`catalog.links.link_problem`) decides; the stream reader (`catalog build --input`),
the doc-gen4 front end (source links, doc links, `--doc-base`) and the link builder refuse what
breaks it with a coded error naming the line, file or declaration, and nothing is written; the
search page links nothing else, even from a catalog built before the rule
(`service.web.external_link`). The browser side is in `test_search_page.py`.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from leanindex.catalog.builder import EnvironmentFacts, build_catalog
from leanindex.catalog.links import (
    MAX_LINK_CHARS,
    ModuleFiles,
    PackageTree,
    github_blob_base,
    link_problem,
)
from leanindex.cli import main
from leanindex.docgen.convert import convert_module
from leanindex.docgen.files import DocgenFile
from leanindex.docgen.links import doc_base
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.service.http import create_app
from leanindex.service.web import external_link
from links_support import build_without_the_rule
from streamkit import as_file, declaration, encode, footer, header, snapshot, stream

LEAN_COMMIT = "d8b18978322de05a8f3dba51ef03cf5461676c17"
GOOD_SOURCE = f"https://github.com/leanprover/lean4/blob/{LEAN_COMMIT}/src/Init/Core.lean#L1-L2"

HOSTILE = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "JAVASCRIPT:alert(document.cookie)",
    " javascript:alert(1)",
    "\tjavascript:alert(1)",
    "\x01javascript:alert(1)",
    "\x00javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "javascript\r:alert(1)",
    "\u00a0javascript:alert(1)",
    "\u200bjavascript:alert(1)",
    "\ufeffjavascript:alert(1)",
    "javascript&#58;alert(1)",
    "&#106;avascript:alert(1)",
    "javascript&colon;alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "VBScript:msgbox(1)",
    "file:///etc/passwd",
    "ftp://example.org/x",
    "//evil.example/x",
    "/relative/path",
    "./Init/Core.html#Nat",
    "https:alert(1)",
    "https:/evil.example",
    "https://",
    "https:///x",
    "http://user@example.org/",
    "http://user:pass@example.org/",
    "https://example.org:0/",
    "https://example.org:99999/",
    "https://example.org:port/",
    "https://[::1/",
    "https://exa mple.org/",
    "https://example.org/a b",
    "https://example.org/\u2028",
    "https://example.org/\u202e",
    "https://example.org/" + "a" * MAX_LINK_CHARS,
    "",
]


def _short(url: object) -> str:
    return repr(url)[:40]


@pytest.mark.parametrize("url", HOSTILE, ids=_short)
def test_the_rule_refuses_every_non_http_link(url: str) -> None:
    assert link_problem(url) is not None


@pytest.mark.parametrize(
    "url",
    [
        GOOD_SOURCE,
        "https://leanprover-community.github.io/mathlib4_docs/Init/Core.html#Nat.«term_∣_»",
        "https://leanprover-community.github.io/mathlib4_docs/Mathlib/Order/Basic.html#le_of_eq'",
        "http://localhost:8000/docs/A.html#x",
        "HTTPS://Example.org/",  # browsers read the scheme in any case: still https
        "https://example.org/" + "a" * (MAX_LINK_CHARS - len("https://example.org/")),
    ],
    ids=_short,
)
def test_the_rule_keeps_real_links(url: str) -> None:
    assert link_problem(url) is None


def test_a_non_string_is_no_link() -> None:
    assert link_problem(42) is not None  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.builds(lambda scheme, rest: scheme + rest,
                                      st.sampled_from(["https://", "http://", "HtTp://", "javascript:", "data:", " https://"]), st.text())))
def test_what_the_rule_keeps_a_browser_reads_as_http(url: str) -> None:
    # Never raises; what it keeps starts, as a browser parses it, with an http(s) scheme and a host.
    if link_problem(url) is None:
        scheme, colon, rest = url.partition(":")
        assert colon and scheme.lower() in ("http", "https") and rest.startswith("//") and rest[2:3] not in ("", "/")
        assert 'href="' in str(external_link(url, "source", "source-link"))


# --- streams: `catalog build --input` ----------------------------------------------------


@pytest.mark.parametrize("field", ["source_url", "doc_url"])
@pytest.mark.parametrize("url", ["javascript:alert(1)", " JaVaScRiPt:alert(1)", "data:text/html,<script>x</script>", "vbscript:x"])
def test_a_stream_with_a_script_link_is_refused_naming_its_line(tmp_path: Path, field: str, url: str) -> None:
    lines = stream([declaration(["A"], source_url=GOOD_SOURCE), declaration(["B"], **{field: url})])
    root = tmp_path / "root"
    before = snapshot(root)
    with pytest.raises(LeanIndexError) as raised:
        build_catalog(iter(lines), root, "t")
    error = raised.value
    assert error.code is ErrorCode.INVALID_STREAM
    assert error.details == {"line": 3, "field": field}
    assert error.message.startswith(f"line 3: {field} of 'B' is not an http(s) link")
    assert snapshot(root) == before  # nothing written


def test_the_cli_refuses_such_a_stream_with_invalid_streams_exit(tmp_path: Path) -> None:
    path = tmp_path / "s.ndjson"
    path.write_bytes(as_file(stream([declaration(["A"], doc_url="javascript:alert(1)")])))
    result = CliRunner().invoke(main, ["catalog", "build", "--profile", "t", "--input", str(path), "--root", str(tmp_path / "root")])
    assert result.exit_code == EXIT_STATUS[ErrorCode.INVALID_STREAM]
    assert "invalid_stream" in result.output and "line 2: doc_url of 'A' is not an http(s) link" in result.output
    assert not (tmp_path / "root" / "catalogs").exists() or not any((tmp_path / "root" / "catalogs").iterdir())


def test_a_source_link_built_too_long_is_refused(tmp_path: Path) -> None:
    # A core module no package holds links into lean4 at the header's githash; a module name
    # long enough makes that link longer than any link kept.
    module = "Init." + "x" * MAX_LINK_CHARS
    lines = [encode(header(modules=[module])), encode(declaration(["A"], module=module)), encode(footer(1))]
    with pytest.raises(LeanIndexError) as raised:
        build_catalog(iter(lines), tmp_path / "root", "t", EnvironmentFacts(module_files=ModuleFiles([])))
    assert raised.value.code is ErrorCode.INVALID_STREAM
    assert raised.value.details == {"declaration": "A", "field": "source_url"}


def test_a_module_name_too_long_for_the_file_system_links_nowhere(tmp_path: Path) -> None:
    (tmp_path / "Pkg").mkdir()  # so the lookup reaches the long component
    files = ModuleFiles([PackageTree(name="p", directory=tmp_path, blob_base="https://github.com/o/r/blob/c/")])
    assert files.file_url("Pkg." + "x" * 300, None) is None  # ENAMETOOLONG is no file


def test_a_revision_is_url_encoded_into_the_blob_base() -> None:
    assert github_blob_base("https://github.com/o/r", '"><script>x</script> v1') == (
        "https://github.com/o/r/blob/%22%3E%3Cscript%3Ex%3C%2Fscript%3E%20v1/"
    )
    assert github_blob_base("https://github.com/o/r", LEAN_COMMIT) == f"https://github.com/o/r/blob/{LEAN_COMMIT}/"


# --- doc-gen4 -----------------------------------------------------------------------------


def _docgen_file(source: str, doc_link: str = "./Init/M.html#A") -> DocgenFile:
    info = {"name": "A", "kind": "theorem", "doc": "", "docLink": doc_link, "line": 10, "sourceLink": source}
    head = ('<div class="decl_header"><span class="decl_kind">theorem</span>\n<span class="decl_name">'
            '<a class="break_within" href="./M.html#A"><span class="name">A</span></a></span>'
            '<span class="decl_args"> :</span><div class="decl_type"><a href="./foundational_types.html">Prop</a></div></div>')
    data = {"name": "Init.M", "imports": [], "instances": [], "declarations": [{"info": info, "header": head}]}
    return DocgenFile("declaration-data-Init.M.bmp", json.dumps(data).encode())


def test_a_valid_doc_gen4_file_keeps_its_links() -> None:
    record = convert_module(_docgen_file(GOOD_SOURCE.replace("#L1-L2", "#L10-L12"))).records[0]
    assert record.source_url == GOOD_SOURCE.replace("#L1-L2", "#L10-L12")
    assert record.doc_url == "https://leanprover-community.github.io/mathlib4_docs/Init/M.html#A"


@pytest.mark.parametrize(
    ("source", "doc_link", "field"),
    [
        ("javascript:alert(1)//#L10-L12", "./Init/M.html#A", "source_url"),
        (" javascript:alert(1)//#L10-L12", "./Init/M.html#A", "source_url"),
        ("data:text/html,<script>alert(1)</script>#L10-L12", "./Init/M.html#A", "source_url"),
        (f"{GOOD_SOURCE[:-6]}#L10-L12", "javascript:alert(1)", "doc_url"),
        (f"{GOOD_SOURCE[:-6]}#L10-L12", "VBScript:msgbox(1)", "doc_url"),
        (f"{GOOD_SOURCE[:-6]}#L10-L12", "data:text/html,x", "doc_url"),
        (f"{GOOD_SOURCE[:-6]}#L10-L12", "./Init/M.html#A\n", "doc_url"),
    ],
)
def test_a_doc_gen4_script_link_refuses_the_import_naming_file_and_declaration(source: str, doc_link: str, field: str) -> None:
    with pytest.raises(LeanIndexError) as raised:
        convert_module(_docgen_file(source, doc_link))
    error = raised.value
    assert error.code is ErrorCode.INVALID_STREAM
    assert error.details == {"file": "declaration-data-Init.M.bmp", "declaration": "A", "field": field}
    assert error.message.startswith("declaration-data-Init.M.bmp: declaration 'A': ") and "is not an http(s) link" in error.message


@pytest.mark.parametrize(
    "base",
    ["javascript:alert(1)//", "https://example.org/" + "a" * MAX_LINK_CHARS, "data:text/html,x", " https://example.org/"],
    ids=_short,
)
def test_a_doc_base_must_be_a_link_by_the_same_rule(base: str) -> None:
    with pytest.raises(LeanIndexError) as raised:
        doc_base(base)
    assert raised.value.code is ErrorCode.INVALID_REQUEST and raised.value.details["field"] == "doc_base"


# --- the page: one helper renders every outside link --------------------------------------


@pytest.mark.parametrize("url", [u for u in HOSTILE if u], ids=_short)
def test_the_page_helper_renders_no_href_for_a_non_http_link(url: str) -> None:
    rendered = str(external_link(url, "source", "source-link"))
    assert "href" not in rendered and "<a" not in rendered
    assert rendered.startswith('<span class="source-link refused"') and "not linked" in rendered


def test_the_page_helper_escapes_what_it_links() -> None:
    url = 'https://example.org/a"onmouseover="alert(1)&x=<b>'
    rendered = str(external_link(url, "source <1>", "doc-link"))
    assert rendered == ('<a class="doc-link" href="https://example.org/a&#34;onmouseover=&#34;alert(1)&amp;x=&lt;b&gt;">'
                        "source &lt;1&gt;</a>")
    assert str(external_link(None, "source", "source-link")) == ""


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.refused: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "href" in found:
            self.hrefs.append(found["href"] or "")
        if "refused" in (found.get("class") or ""):
            self.refused.append(tag)


OLD_LINKS = {
    "A": ("javascript:alert(document.domain)", "data:text/html,<script>alert(1)</script>"),
    "B": (" vbscript:msgbox(1)", "JaVaScRiPt:alert(1)"),
    "C": (GOOD_SOURCE, "https://example.org/docs/C.html#C"),
}


def test_a_catalog_built_before_the_rule_shows_no_script_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_without_the_rule(root, "OLD", OLD_LINKS)
    engine = Engine(root)
    try:
        client = TestClient(create_app(engine), base_url="http://127.0.0.1")
        pages = {
            "search A, B, C": (client.get("/", params={"env": "OLD", "kind": "theorem"}), 4),
            "search A": (client.get("/", params={"env": "OLD", "q": "A"}), 2),
            **{f"page {name}": (client.get(f"/d/{name}", params={"env": "OLD"}), 0 if name == "C" else 2) for name in OLD_LINKS},
        }
        for what, (page, refused) in pages.items():
            assert page.status_code == 200, (what, page.text)
            anchors = _Anchors()
            anchors.feed(page.text)
            for href in anchors.hrefs:
                assert (href.startswith("/") and not href.startswith("//")) or link_problem(href) is None, (what, href)
            assert len(anchors.refused) == refused, what  # each bad link shown as text, not linked
        good = client.get("/d/C", params={"env": "OLD"}).text
        assert f'href="{GOOD_SOURCE}"' in good and 'href="https://example.org/docs/C.html#C"' in good
    finally:
        engine.close()
