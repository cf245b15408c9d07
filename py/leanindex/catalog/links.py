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

What a link may be at all is one rule, `link_problem` (an `http`/`https` URL with a host, no
user name, no control, format or whitespace character, at most `MAX_LINK_CHARS` characters): the
stream reader refuses a record whose `source_url` or `doc_url` breaks it, the doc-gen4 front end
refuses such a declaration and a doc base, and the search page links nothing else.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

from ..errors import ErrorCode, LeanIndexError
from ..names import NameSyntaxError, parse_name
from ..records import DeclarationRecord, HeaderRecord, SourceRange

LEAN4_REPOSITORY = "https://github.com/leanprover/lean4"
CORE_ROOTS = frozenset({"Init", "Std", "Lean", "Lake"})
"""Root components of the modules that come with the toolchain (lean4 `src/`)."""

MAX_LINK_CHARS = 2048
"""The longest link kept (characters). Real links are far shorter: at most 192 (`sourceLink`)
and 266 (`docLink` on the default base) in the Lean core and Mathlib doc-gen4 data."""
LINK_SCHEMES = ("http", "https")


def link_problem(url: str) -> str | None:
    """Why `url` is not a link leanindex stores or renders, or None when it is one: at most
    `MAX_LINK_CHARS` characters, none of them a control, format or separator character (no
    whitespace at all, so nothing a browser would strip or skip: `str.isprintable` and no space),
    the scheme `http` or `https` (in any case, as browsers read it: what comes before the first
    `:`), a host, no user name or password, a valid port. Anything else (`javascript:`,
    `data:`, `vbscript:`, a relative or schemeless reference, a leading space or control
    character) gets a short reason in English. Never raises."""
    if not isinstance(url, str):
        return "not a string"
    if len(url) > MAX_LINK_CHARS:
        return f"longer than {MAX_LINK_CHARS} characters"
    if not url.isprintable() or " " in url:
        return "holds a control, format or whitespace character"
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        return "not a well-formed URL"
    if parts.scheme not in LINK_SCHEMES:
        return f"its scheme is {parts.scheme!r}, not http or https" if parts.scheme else "not an absolute http(s) URL"
    if not parts.hostname:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "names a user"
    if not port_ok:
        return "has an invalid port"
    return None


def checked_link(url: str | None, what: str, details: dict[str, object]) -> str | None:
    """`url` when it is None or a link (`link_problem`); otherwise raises
    `LeanIndexError(invalid_stream)` with the message `{what} is not an http(s) link (reason):
    'value'` (the value cut to 100 characters) and `details`."""
    if url is None:
        return None
    problem = link_problem(url)
    if problem is None:
        return url
    shown = url[:100] + ("…" if len(url) > 100 else "")
    raise LeanIndexError(ErrorCode.INVALID_STREAM, f"{what} is not an http(s) link ({problem}): {shown!r}", details)


_GITHUB = re.compile(r"^https://github\.com/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def github_blob_base(url: str | None, rev: str | None) -> str | None:
    """`https://github.com/OWNER/REPO/blob/REV/` for a GitHub repository URL (`.git` and a
    trailing `/` dropped) and a revision (URL-encoded: Lake's resolved revision is a commit
    hash, which encoding leaves as it is); None for any other URL or a missing revision."""
    match = _GITHUB.match(url or "")
    if match is None or not rev:
        return None
    return f"https://github.com/{match.group('owner')}/{match.group('repo')}/blob/{quote(rev, safe='')}/"


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
            # `os.path.isfile`, not `Path.is_file`: a name too long for the file system
            # (ENAMETOOLONG, from a hostile stream's module) is no file there, not an error.
            if os.path.isfile(package.directory / relative):
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
    before the first record). Raises `LeanIndexError(invalid_stream)` naming the declaration
    when the URL built is no link by `link_problem` (only a module name too long for one: every
    part is URL-encoded)."""
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
        checked_link(url, f"the source link built for {record.name!r}", {"declaration": record.name, "field": "source_url"})
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
