"""Catalogs with links the link rule refuses, as a build before that rule wrote them (imported by
`test_links_hostile.py` and `test_search_page.py`; pytest puts `tests/` on `sys.path`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from leanindex.catalog import stream as stream_module
from leanindex.catalog.builder import build_catalog
from streamkit import declaration, stream


def build_without_the_rule(root: Path, profile: str, links: dict[str, tuple[str | None, str | None]]) -> None:
    """Build `profile` under `root` with one theorem per name of `links` (`source_url`,
    `doc_url`), the stream reader's link check switched off: the catalog a build before the
    rule would have written. The rule itself refuses such a stream (a test checks)."""
    records = [declaration([name], source_url=source, doc_url=doc) for name, (source, doc) in links.items()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stream_module, "checked_link", lambda url, what, details: url)
        build_catalog(iter(stream(records)), root, profile)
