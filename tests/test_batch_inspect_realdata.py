"""Batch look-ups on the shipped core catalog (the session's `leanindex demo` import of
`docgen-core-v4.33.0.tar.xz`): 100 names in one call, through `Client.local`, answered in order
as the archive says. The oracle reads the archive with plain `tarfile` + `json` + `re` (never
the importer): the declarations each module file lists (name, module, doc-gen4 kind), and the
names the signatures link into the four modules the archive lacks.
"""

from __future__ import annotations

import json
import random
import re
import tarfile
from pathlib import Path

import pytest

from embedded_support import DemoRun
from leanindex.client import Client
from leanindex.embedded import EMBEDDED_PROFILE
from realdata_support import CORE_ARCHIVE, realdata_path

pytestmark = pytest.mark.realdata

CORE = EMBEDDED_PROFILE.upper()
#: The modules the core archive lacks (its README: "Four modules over 4 MiB are missing").
CORE_MISSING = [
    "Std.Data.DTreeMap.Internal.Lemmas",
    "Std.Data.DTreeMap.Lemmas",
    "Std.Data.DTreeMap.Raw.Lemmas",
    "Std.Data.Internal.List.Associative",
]
#: doc-gen4 kinds whose kernel kind is fixed (the others, e.g. `instance`, depend on the header).
KERNEL_KIND = {"theorem": "theorem", "def": "definition", "ctor": "constructor"}
_LINK = re.compile(r'href="\./([A-Za-z/]+)\.html#([A-Za-z0-9_.\']+)"')


@pytest.fixture(scope="module")
def archive() -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """(name -> (module, doc-gen4 kind) of every declaration in the archive, linked name ->
    missing module for the names signatures link into the modules it lacks)."""
    declared: dict[str, tuple[str, str]] = {}
    linked: dict[str, str] = {}
    missing = {module.replace(".", "/"): module for module in CORE_MISSING}
    with tarfile.open(realdata_path(CORE_ARCHIVE), "r:xz") as tar:
        for member in tar:
            if member.isfile() and Path(member.name).name.startswith("declaration-data-") and member.name.endswith(".bmp"):
                handle = tar.extractfile(member)
                assert handle is not None
                data = json.load(handle)
                for entry in data["declarations"]:
                    declared[entry["info"]["name"]] = (data["name"], entry["info"]["kind"])
                    for page, name in _LINK.findall(entry["header"]):
                        if page in missing:
                            linked[name] = missing[page]
    return declared, {name: module for name, module in linked.items() if name not in declared}


def test_one_call_answers_100_core_names_in_order_as_the_archive_says(embedded_demo: DemoRun, archive) -> None:
    realdata_path(CORE_ARCHIVE)
    assert embedded_demo.returncode == 0, embedded_demo.stderr
    declared, linked = archive
    assert linked, "the archive's signatures link names of its missing modules"
    rng = random.Random(30)
    existing = rng.sample(sorted(declared), 60)
    of_missing = rng.sample(sorted(linked), min(20, len(linked)))
    # Typos: the last letter of a real name changed (a name no signature links either).
    typos = {name[:-1] + ("q" if name[-1] != "q" else "z"): name for name in rng.sample(sorted(declared), 30) if len(name.rsplit(".", 1)[-1]) >= 5}
    made_up = [typo for typo in typos if typo not in declared and typo not in linked][: 100 - len(existing) - len(of_missing)]
    assert len(made_up) == 20
    names = existing + of_missing + made_up
    rng.shuffle(names)
    assert len(names) == 100
    with Client.local(embedded_demo.root) as client:
        answer = client.exists(CORE, names)
        many = client.inspect_many(CORE, names)
    assert [r.name for r in answer.results] == names == [r.name for r in many.results]
    for result, full in zip(answer.results, many.results, strict=True):
        if result.name in declared:
            module, kind = declared[result.name]
            assert (result.exists, result.module, result.error_code, result.closest) == (True, module, None, []), result.name
            assert result.kind is not None and result.kind.value == KERNEL_KIND.get(kind, result.kind.value), result.name
            assert full.response is not None and (full.response.name, full.response.module) == (result.name, module)
        elif result.name in linked:
            assert (result.exists, result.module, result.error_code) == (False, linked[result.name], "missing_module"), result.name
            assert full.error is not None and full.error.code == "missing_module"
        else:
            assert (result.exists, result.error_code) == (False, "not_found"), result.name
            # The checker's rule for unknown names: the real name, one edit away, is offered.
            assert typos[result.name] in result.closest and all(name in declared for name in result.closest), result.name
            assert full.error is not None and full.error.code == "not_found" and full.closest == result.closest
    assert answer.counts == {"found": 60, "not_found": len(made_up), "missing_module": len(of_missing), "not_recorded": 0, "invalid_request": 0}
    assert (answer.completeness.value, answer.missing_modules) == ("PARTIAL", CORE_MISSING)
    assert answer.environment == CORE and answer.source == "doc-gen4"
