"""The doc-gen4 front end: import doc-gen4's per-module declaration data as a catalog.

For projects whose API documentation is already built, doc-gen4's `doc-data/` folder (or a
`.tar.xz` of it) holds one `declaration-data-<Module>.bmp` JSON file per module. `files` reads
them, `header` reads the HTML signatures, `convert` turns each declaration into a
`leanindex.records.DeclarationRecord`, and `importer` sorts, streams and builds them through
`catalog.builder.build_catalog`, with a manifest saying the source is doc-gen4 and which fields
are approximate there.
"""

from .importer import (
    APPROXIMATE_FIELDS,
    DocgenCollection,
    DocgenImport,
    MergedDuplicate,
    collect_docgen,
    docgen_stream,
    import_docgen,
)

__all__ = [
    "APPROXIMATE_FIELDS",
    "DocgenCollection",
    "DocgenImport",
    "MergedDuplicate",
    "collect_docgen",
    "docgen_stream",
    "import_docgen",
]
