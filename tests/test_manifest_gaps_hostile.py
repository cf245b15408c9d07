"""The facts an import records about its source and gaps are read as hostile input: a manifest
(a pulled pack carries one) that names a path as a module, an unknown fact, an impossible
count or a field no record has is refused when it is read, even when its digests are resealed."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.manifest import BlindSpot, CatalogGaps, HostModule, MissingModule, SourceInfo, manifest_digest, read_manifest
from leanindex.catalog.verify import verify_catalog
from leanindex.errors import ErrorCode, LeanIndexError
from streamkit import build, declaration, encode, footer, header

GOOD_GAP: dict[str, Any] = {"module": "A.Gone", "imported_by": ["A.Core"], "linked_names": ["Gone.lemma"], "linking_declarations": 1}


@pytest.mark.parametrize(
    "change",
    [
        {"module": "/srv/secret/data"},
        {"module": "A.0"},
        {"imported_by": ["../etc"]},
        {"linked_names": ["/etc/shadow"]},
        {"linked_names": ["a..b"]},
        {"linking_declarations": -1},
    ],
)
def test_a_missing_module_must_be_named_as_lean_prints_names(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MissingModule(**{**GOOD_GAP, **change})


def test_the_source_facts_are_known_keys_and_record_fields() -> None:
    assert MissingModule(**GOOD_GAP).module == "A.Gone"
    assert MissingModule(**{**GOOD_GAP, "linked_names": ["«/etc/shadow»"]}).linked_names == ["«/etc/shadow»"]  # a name, escaped
    with pytest.raises(ValidationError):
        SourceInfo(kind="doc-gen4", absent_facts=["bogus"])
    with pytest.raises(ValidationError):
        SourceInfo(kind="doc-gen4", approximate_fields=["no_such_field"])
    with pytest.raises(ValidationError):
        BlindSpot(field="type_constants", notation="∑", constant="Finset.sum", signatures=1, linked=5)
    with pytest.raises(ValidationError):
        BlindSpot(field="no_such_field", notation="∑", constant="Finset.sum", signatures=5, linked=1)
    with pytest.raises(ValidationError):
        HostModule(module="C:\\host", declarations=1)


def test_a_resealed_manifest_with_a_path_as_a_module_is_refused_when_read() -> None:
    with tempfile.TemporaryDirectory(prefix="leanindex-gaps-") as folder:
        root = Path(folder)
        build(root, "gappy", [encode(header(["A.Core"])), encode(declaration(["Foo"], module="A.Core")), encode(footer(1))])
        paths = CatalogPaths.of(root, "gappy")
        manifest = verify_catalog(paths)
        sealed = manifest.model_copy(update={"gaps": CatalogGaps(missing_modules=[MissingModule(**GOOD_GAP)])}).sealed()
        data = json.loads(sealed.to_json())
        data["gaps"]["missing_modules"][0]["module"] = "/srv/secret/data"
        # Resealed as an attacker who controls the pack would: the digest matches the bytes.
        data["manifest_digest"] = manifest_digest({key: value for key, value in data.items() if key != "manifest_digest"})
        paths.manifest.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(LeanIndexError) as raised:
            read_manifest(paths.manifest)
        assert raised.value.code is ErrorCode.CATALOG_UNAVAILABLE and "is not a Lean name" in raised.value.message
