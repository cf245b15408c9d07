"""Source links of a Lean extractor catalog: the one rule that fills a record's `source_url`.

The extractor knows modules and declaration ranges but no URLs. The build knows the Lake
project: its packages (`lake-manifest.json`: repository `url`, resolved `rev`, and where each
package's source tree is, see `lake.project.package_trees`). A module's source file is the
`.lean` file its name denotes (`A.B.C` -> `A/B/C.lean`, components unescaped); the package
whose tree holds that file is the module's package, and the URL is

    https://github.com/OWNER/REPO/blob/REV/[SUBDIR/]A/B/C.lean#L<start>-L<end>

(the range's lines; no anchor when the record has no range). Modules of Lean core (`Init`,
`Std`, `Lean`, `Lake`) that no package holds link into `https://github.com/leanprover/lean4`
at the stream header's `lean.githash`, under `src/`. Only repositories on GitHub given as
`https://github.com/OWNER/REPO` (a trailing `.git` or `/` is dropped) get links: `/blob/REV/`
is GitHub's form. A module in a path package, in a package hosted elsewhere, in the project's
own package (the manifest does not name its repository) or in no known tree, and core modules
when the header has no githash, get null.

The builder applies the rule while it writes the catalog (`with_source_urls`), so the stored
record line, the Parquet columns and the digests all carry the URL; a `source_url` the stream
itself gives is kept as given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..names import NameSyntaxError, parse_name
from ..records import DeclarationRecord, HeaderRecord, SourceRange

LEAN4_REPOSITORY = "https://github.com/leanprover/lean4"
CORE_ROOTS = frozenset({"Init", "Std", "Lean", "Lake"})
"""Root components of the modules that come with the toolchain (lean4 `src/`)."""

_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def github_blob_base(url: str | None, rev: str | None) -> str | None:
    """`https://github.com/OWNER/REPO/blob/REV/` for a GitHub repository URL (`.git` and a
    trailing `/` dropped) and a revision; None for any other URL or a missing revision."""
    match = _GITHUB.match(url or "")
    if match is None or not rev:
        return None
    return f"https://github.com/{match.group('owner')}/{match.group('repo')}/blob/{rev}/"


def line_anchor(range_: SourceRange | None) -> str:
    """`#L<start>-L<end>` (GitHub's line-range anchor) of a range; "" without one."""
    return f"#L{range_.start.line}-L{range_.end.line}" if range_ is not None else ""


def module_source_path(module: str) -> str | None:
    """`A/B/C.lean` for module `A.B.C` (components unescaped: `«a-b».C` -> `a-b/C.lean`); None
    for a module name that is not a Lean name."""
    try:
        components = [str(part) for part in parse_name(module)]
    except NameSyntaxError:
        return None
    return "/".join(components) + ".lean"


@dataclass(frozen=True)
class PackageTree:
    """One package of the Lake project: `directory` (its source tree on this machine) and
    `blob_base` (the URL prefix of that tree in its repository at the resolved revision,
    including a subdirectory; None when the package has no GitHub link)."""

    name: str
    directory: Path
    blob_base: str | None


@dataclass
class ModuleFiles:
    """Where each module's `.lean` file is linked (see the module docstring). `packages` are
    searched in order; the answer per module is computed once."""

    packages: list[PackageTree]
    _cache: dict[tuple[str, str | None], str | None] = field(default_factory=dict)

    def file_url(self, module: str, lean_githash: str | None) -> str | None:
        """The URL of `module`'s source file (without a line anchor), or None (see the module
        docstring for when)."""
        key = (module, lean_githash)
        if key not in self._cache:
            self._cache[key] = self._find(module, lean_githash)
        return self._cache[key]

    def _find(self, module: str, lean_githash: str | None) -> str | None:
        relative = module_source_path(module)
        if relative is None:
            return None
        for package in self.packages:
            if (package.directory / relative).is_file():
                return package.blob_base + quote(relative) if package.blob_base else None
        if relative.split("/", 1)[0] in CORE_ROOTS and lean_githash:
            return f"{LEAN4_REPOSITORY}/blob/{lean_githash}/src/{quote(relative)}"
        return None


def with_source_urls(
    records: Iterable[tuple[DeclarationRecord, bytes]], files: ModuleFiles, header: Callable[[], HeaderRecord | None]
) -> Iterator[tuple[DeclarationRecord, bytes]]:
    """`records` (validated records with their stream lines) with `source_url` filled by the
    rule of the module docstring where the record has none; the line is changed to match (the
    builder stores lines as they are). `header()` gives the stream header once read (it is,
    before the first record)."""
    for record, raw in records:
        if record.source_url is not None or record.module is None:
            yield record, raw
            continue
        current = header()
        base = files.file_url(record.module, current.lean.githash if current else None)
        if base is None:
            yield record, raw
            continue
        url = base + line_anchor(record.range)
        yield record.model_copy(update={"source_url": url}), _with_key(raw, "source_url", url)


def _with_key(raw: bytes, key: str, value: str) -> bytes:
    """The JSON object line `raw` with `key` set to `value`. A line without the key (the usual
    case: streams from the extractor) gets it appended before the closing brace, without
    parsing the line again; a line that names it (as null) is rewritten."""
    line = raw.rstrip()
    if f'"{key}"'.encode() in line:
        data = json.loads(line)
        data[key] = value
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    return line[:-1] + b"," + json.dumps(key).encode() + b":" + json.dumps(value, ensure_ascii=False).encode() + b"}"
