"""A record field has all of its parts: the extractor writes it, the doc-gen4 import gives it a
value (or says the source lacks it), and inspect and search answers carry it. A field added to
`records.DeclarationRecord` that misses one fails here, named (not silently downstream)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from leanindex.models import INSPECT_RECORD_FIELDS, DeclarationFlags, InspectResponse, SearchResult
from leanindex.records import FLAG_FIELDS, SEARCH_RESULT_FIELDS, DeclarationRecord

REPO = Path(__file__).resolve().parents[1]

#: Fields the extractor never writes: the catalog build fills `source_url`
#: (`catalog/links.py`), `doc_url` comes from doc-gen4 only (records' module docstring), and
#: `instance_class` is doc-gen4's instance table (null from the extractor: not recorded, so
#: `instances_of` reads the exact conclusion head there).
NOT_FROM_THE_EXTRACTOR = {"source_url", "doc_url", "instance_class"}


def _extractor_keys() -> set[str]:
    """The keys `LeanIndex/Record.lean` writes in a declaration object."""
    text = (REPO / "LeanIndex" / "Record.lean").read_text(encoding="utf-8")
    start = text.index('("record", Json.str "declaration")')
    return set(re.findall(r'\("([a-z_]+)",', text[start:]))


def test_every_record_field_is_written_by_the_extractor() -> None:
    fields = set(DeclarationRecord.model_fields)
    written = _extractor_keys()
    assert fields - written - NOT_FROM_THE_EXTRACTOR == set(), "record fields the extractor does not write"
    assert written - fields == set(), "keys the extractor writes that the record model does not read"


def test_every_record_field_is_given_by_the_doc_gen4_conversion() -> None:
    """`docgen/convert.py` builds each record with every field named (a field left to its
    default would be a silent guess) or, for what doc-gen4 lacks, with its default stated in the
    import's approximate fields."""
    from leanindex.docgen.importer import APPROXIMATE_FIELDS

    tree = ast.parse((REPO / "py" / "leanindex" / "docgen" / "convert.py").read_text(encoding="utf-8"))
    calls = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "DeclarationRecord"
    ]
    assert len(calls) == 1
    given = {keyword.arg for keyword in calls[0].keywords}
    missing = set(DeclarationRecord.model_fields) - given
    unexplained = missing - set(APPROXIMATE_FIELDS) - _DOCGEN_LEAVES_OUT
    assert unexplained == set(), "record fields the doc-gen4 import neither gives nor lists as approximate"


#: Fields the doc-gen4 import leaves at their default because the data has nothing for them and
#: the default says so (`type_fallback` false: doc-gen4 always prints a type; `value_constants`
#: null: "not recorded", which the filters reading it refuse with `not_recorded`).
_DOCGEN_LEAVES_OUT = {"type_fallback", "value_constants"}


def test_every_record_field_reaches_inspect() -> None:
    fields = set(DeclarationRecord.model_fields) - {"record"}
    assert set(INSPECT_RECORD_FIELDS) == fields - set(FLAG_FIELDS)
    assert set(InspectResponse.model_fields) >= set(INSPECT_RECORD_FIELDS)
    assert set(DeclarationFlags.model_fields) == set(FLAG_FIELDS)


def test_every_search_result_field_is_a_record_field() -> None:
    assert set(SEARCH_RESULT_FIELDS) <= set(DeclarationRecord.model_fields)
    assert set(SearchResult.model_fields) >= set(SEARCH_RESULT_FIELDS)


def test_the_type_checkers_view_of_the_derived_models_names_their_fields() -> None:
    """`models.py` declares, for the type checker only, the models it makes from the record at
    run time (`SearchResult`, `InspectResponse`, `DeclarationFlags`); a record field reaching
    them must be declared there too, or mypy would not see it (and this test fails)."""
    import leanindex.models as models

    tree = ast.parse((REPO / "py" / "leanindex" / "models.py").read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    declared = {
        node.name: [item.target.id for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]
        for node in block.body
        if isinstance(node, ast.ClassDef)
    }
    for name in ("SearchResult", "InspectResponse", "DeclarationFlags"):
        runtime = getattr(models, name)
        base = set(runtime.__mro__[1].model_fields) if name == "InspectResponse" else set()
        assert declared[name] == [field for field in runtime.model_fields if field not in base], name
