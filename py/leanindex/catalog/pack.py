"""Published catalogs: one archive (a "pack") holding a catalog and its manifest.

A pack is an uncompressed tar (the catalog files are compressed already) with exactly these
members, in this order: `manifest.json` (the profile's manifest, byte for byte), then
`catalog/<file>` for every file the manifest lists. `pack_catalog` writes one from a catalog
that verifies. `pull_catalog` takes a pack from a URL (downloaded with a size cap, resumed with
HTTP `Range` after a dropped connection) or a file, unpacks it into a staged build folder,
checks the manifest's own digest and every file's sha256 against it, verifies the staged
catalog exactly as `catalog verify` will once it is published, and only then publishes it
through the same path as a build (`builder.staged_build` + `builder.publish`): until then
nothing under the root changes, and a refused pack leaves the root as it was.

A pack is hostile until checked. Its manifest is read like any other (`manifest.parse_manifest`:
its file keys are catalog file names, never paths) and must name a profile id in canonical
form before a byte is written; every other member must be a regular file named
`catalog/<a file the manifest lists>`, written only inside the staged build folder.

Packs are published as release assets of the repository by the manifest workflow, at
`RELEASE_URL` (`release_url`).
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx

from ..base import Frozen
from ..errors import ErrorCode, LeanIndexError
from ..identity import normalize_profile
from ..storage import storage_failure
from .builder import publish, staged_build
from .layout import MANIFEST_FILE, CatalogPaths, catalog_files
from .manifest import Manifest, parse_manifest, write_atomically
from .verify import verify_catalog

MANIFEST_MEMBER = "manifest.json"
CATALOG_PREFIX = "catalog/"
PACK_SUFFIX = ".leanindex.tar"
RELEASE_URL = "https://github.com/{repository}/releases/download/catalog-{profile}/{profile}" + PACK_SUFFIX
"""Where the manifest workflow publishes a profile's pack: a release tagged `catalog-<profile>`
of the repository (`owner/name`), asset `<profile>.leanindex.tar`."""
DEFAULT_MAX_BYTES = 8 << 30
"""Largest pack `pull_catalog` accepts by default (8 GiB; Mathlib's catalog is about 1 GB)."""
RESUME_ATTEMPTS = 5
"""Times a dropped download is resumed (HTTP Range) before the pull fails."""
MANIFEST_MAX_BYTES = 4 << 20
"""Largest `manifest.json` member a pull reads (4 MiB; a Mathlib manifest is a few KiB): it is
read into memory, so a hostile size is refused before it is read."""
_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE)
_CHUNK_BYTES = 1 << 20

ProgressCallback = Callable[[int, int | None], None]
"""`on_progress(done_bytes, total_bytes or None)` while a pack is downloaded or read."""


def release_url(repository: str, profile: str) -> str:
    """The URL of `profile`'s pack published by the manifest workflow of `repository`."""
    return RELEASE_URL.format(repository=repository, profile=profile)


class PullResult(Frozen):
    """A published pull: the new manifest, the pack's size (bytes) and where it came from."""

    manifest: Manifest
    pack_bytes: int
    source: str


def pack_catalog(root: str | Path, profile: str, output: str | Path) -> Path:
    """Write `profile`'s catalog under `root` and its manifest as one pack at `output` (a file;
    written through a temporary file and renamed, so it appears whole). The catalog is verified
    first. Returns the path written. Raises `verify_catalog`'s errors (`catalog_unavailable`,
    `digest_mismatch`) and `invalid_request` for a bad profile id."""
    paths = CatalogPaths.of(root, profile)
    manifest = verify_catalog(paths)
    target = Path(output)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            tar.add(paths.served_manifest, arcname=MANIFEST_MEMBER, filter=_plain)
            for relative in sorted(manifest.catalog.files):
                tar.add(paths.catalog_dir / relative, arcname=CATALOG_PREFIX + relative, filter=_plain)
        os.replace(scratch, target)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    return target


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """No owner, group or time in the pack: the same catalog packs to the same bytes."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    info.mode = 0o644
    return info


def pull_catalog(
    source: str,
    root: str | Path,
    profile: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    on_progress: ProgressCallback | None = None,
    timeout_s: float = 60.0,
) -> PullResult:
    """Install the pack at `source` (an `http(s)://` URL or a file path) under `root`.

    The pack installs the profile its manifest names (in canonical, lower-case form);
    `profile`, when given, must be that profile. It replaces a catalog of that profile only
    once the staged catalog verifies; the replaced build is removed after the switch. A
    download goes to `ROOT/catalog/.downloads/` and is resumed with `Range` up to
    `RESUME_ATTEMPTS` times when the connection drops; when they are used up, the partial file
    stays there and the next pull of the same URL resumes from it. A download is refused once it
    exceeds `max_bytes`. Whatever the outcome, the partial file is removed once the whole pack
    was read, or when it cannot be written. Raises `LeanIndexError`, with the root unchanged in every case:
    `digest_mismatch` for a pack that is truncated, not a pack, has a member it should not (a
    link, a device, a folder, a name its manifest does not list), a manifest that is invalid
    (its digests, a file key that is not a catalog file name, a profile that is not a canonical
    profile id) or a staged catalog that does not verify (a file whose sha256 differs from the
    manifest's included); `payload_too_large` over `max_bytes`; `invalid_request` for a missing
    file, a bad URL, a failed download or another profile than `profile`; `storage_full` /
    `io_error` when the pack cannot be written under the root (a full disk, a read-only one).
    """
    if source.startswith(("http://", "https://")):
        downloads = Path(root) / "catalog" / ".downloads"
        made = _missing_folders(downloads)
        part = downloads / (hashlib.sha256(source.encode()).hexdigest()[:16] + ".part")
        try:
            _download(source, part, max_bytes, on_progress, timeout_s)
        except LeanIndexError as error:
            if error.code != ErrorCode.INVALID_REQUEST or not part.exists():
                _remove_empty(made)
            raise
        try:
            return _install(part, source, root, profile)
        finally:
            part.unlink(missing_ok=True)
            _remove_empty(made)
    path = Path(source)
    if not path.is_file():
        raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"{source} is neither an http(s) URL nor a file", {"source": source})
    size = path.stat().st_size
    if size > max_bytes:
        raise _too_large(source, size, max_bytes)
    if on_progress is not None:
        on_progress(size, size)
    return _install(path, source, root, profile)


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and those of its parents that do not exist yet, deepest first: what a download
    creates and, when it leaves nothing there, removes again."""
    missing = [folder]  # `.downloads` itself goes once empty, even when an earlier pull left it
    missing += [parent for parent in folder.parents if not parent.exists()]
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (another pull's partial download, a published catalog) or already gone


def _too_large(source: str, size: int, max_bytes: int) -> LeanIndexError:
    return LeanIndexError(
        ErrorCode.PAYLOAD_TOO_LARGE,
        f"{source} is larger than the {max_bytes:,}-byte cap ({size:,} bytes or more); raise it with --max-bytes",
        {"source": source, "bytes": size, "max_bytes": max_bytes},
    )


def _download(url: str, part: Path, max_bytes: int, on_progress: ProgressCallback | None, timeout_s: float) -> None:
    """Fetch `url` into `part`, resuming from `part`'s size (a `Range` request) after each
    dropped connection; a server that ignores `Range` (answers 200) restarts the file. A write
    that fails removes `part` (on a full disk it holds the space wanted back) and raises
    `storage_full` or `io_error`."""
    failures: list[str] = []
    total: int | None = None
    try:
        part.parent.mkdir(parents=True, exist_ok=True)
        with httpx.Client(follow_redirects=True, timeout=timeout_s) as client:
            for _attempt in range(RESUME_ATTEMPTS + 1):
                have = part.stat().st_size if part.exists() else 0
                headers = {"Range": f"bytes={have}-"} if have else {}
                try:
                    with client.stream("GET", url, headers=headers) as response:
                        if response.status_code == 416 and have:
                            return  # the part file already holds every byte
                        if response.status_code not in (200, 206):
                            raise LeanIndexError(
                                ErrorCode.INVALID_REQUEST,
                                f"{url} answered HTTP {response.status_code}",
                                {"source": url, "status": response.status_code},
                            )
                        resumed = response.status_code == 206
                        start = have if resumed else 0
                        length = response.headers.get("content-length")
                        total = start + int(length) if length is not None and length.isdigit() else None
                        if total is not None and total > max_bytes:
                            raise _too_large(url, total, max_bytes)
                        with open(part, "ab" if resumed else "wb") as out:
                            done = start
                            for chunk in response.iter_bytes():  # as received: a dropped connection loses nothing written
                                done += len(chunk)
                                if done > max_bytes:
                                    raise _too_large(url, done, max_bytes)
                                out.write(chunk)
                                if on_progress is not None:
                                    on_progress(done, total)
                        if total is None or done >= total:
                            return
                        failures.append(f"connection closed after {done:,} of {total:,} bytes")
                except LeanIndexError:
                    part.unlink(missing_ok=True)
                    raise
                except httpx.HTTPError as error:
                    failures.append(f"{type(error).__name__}: {error}")
    except OSError as error:
        part.unlink(missing_ok=True)
        raise _storage_error(error, path=part, needed_bytes=total) from None
    got = part.stat().st_size if part.exists() else 0
    # "Resumed" only when some bytes came: a host that never answers is not a dropped download.
    how = f"{got:,} bytes kept in the part file for the next pull to resume" if got else "nothing was received"
    raise LeanIndexError(
        ErrorCode.INVALID_REQUEST,
        f"download of {url} failed {len(failures)} times ({how}): {failures[-1]}",
        {"source": url, "failures": failures, "received_bytes": got},
    )


def _storage_error(
    error: OSError, *, path: Path | None = None, fallback: Path | None = None, needed_bytes: int | None = None
) -> LeanIndexError:
    """`storage_full` or `io_error` (`storage.storage_failure`, same arguments) for a read or
    write that failed: never a corrupt pack, since the pack may be fine where the disk is not."""
    coded = storage_failure(error, path=path, fallback=fallback, needed_bytes=needed_bytes)
    assert coded is not None  # every OSError is coded
    return coded


def _refused(source: str, why: str, **details: object) -> LeanIndexError:
    return LeanIndexError(ErrorCode.DIGEST_MISMATCH, f"pack {source} refused: {why}; nothing was changed", {"source": source, **details})


def _install(pack: Path, source: str, root: str | Path, profile: str | None) -> PullResult:
    """Check the manifest, then unpack, verify and publish (see `pull_catalog`)."""
    try:
        with open(pack, "rb") as raw:
            try:
                tar = tarfile.open(fileobj=raw, mode="r:")
                first = tar.next()
            except (tarfile.TarError, EOFError) as error:
                raise _refused(source, f"not a readable pack ({error})") from None
            if first is None or first.name != MANIFEST_MEMBER or first.type not in _REGULAR:
                raise _refused(source, f"its first member is not a regular file {MANIFEST_MEMBER}")
            manifest = _pack_manifest(_member_bytes(tar, first, source), source)
            _check_profile(manifest, root, profile, source)
            # Every check the manifest alone allows is done: only now is anything written.
            with staged_build(root, manifest.profile) as (paths, build_dir):
                _unpack_files(tar, manifest, build_dir, source)
                _verify_staged(paths, build_dir, manifest, source)
                publish(paths, build_dir, manifest)
    except OSError as error:
        # Writes inside the staged build are coded by `staged_build`; this is the rest (the
        # pack unreadable, the builds folder not creatable).
        raise _storage_error(error, fallback=pack) from None
    return PullResult(manifest=manifest, pack_bytes=pack.stat().st_size, source=source)


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, source: str) -> bytes:
    if member.size > MANIFEST_MAX_BYTES:
        raise _refused(source, f"{member.name} is {member.size:,} bytes, over the {MANIFEST_MAX_BYTES:,}-byte cap", member=member.name)
    try:
        handle = tar.extractfile(member)
        assert handle is not None  # a regular file member
        data = handle.read()
    except (tarfile.TarError, EOFError) as error:
        raise _refused(source, f"{member.name} is truncated ({error})") from None
    if len(data) != member.size:
        raise _refused(source, f"{member.name} is truncated ({len(data):,} of {member.size:,} bytes)")
    return data


def _pack_manifest(data: bytes, source: str) -> Manifest:
    """The pack's manifest, validated like any manifest file: its digests, and its file keys
    (catalog file names, never paths); it must list every file of a catalog."""
    try:
        manifest = parse_manifest(data.decode("utf-8"), MANIFEST_MEMBER)
    except UnicodeDecodeError as error:
        raise _refused(source, f"its manifest is not UTF-8 text ({error.reason})") from None
    except LeanIndexError as error:
        raise _refused(source, f"its manifest is invalid ({error.message})", **error.details) from None
    unlisted = sorted(set(catalog_files()) - set(manifest.catalog.files))
    if unlisted:
        raise _refused(source, f"its manifest does not list every catalog file ({', '.join(unlisted)})", unlisted=unlisted)
    return manifest


def _check_profile(manifest: Manifest, root: str | Path, profile: str | None, source: str) -> None:
    """The manifest's profile is the folder it is installed in: a canonical (lower-case) profile
    id, since `catalog verify` compares the two and would refuse the published catalog forever;
    and it is `profile` when the caller named one (`invalid_request` otherwise)."""
    try:
        canonical = normalize_profile(manifest.profile)
    except LeanIndexError:
        raise _refused(source, f"its manifest names no valid profile id ({manifest.profile!r})", profile=manifest.profile) from None
    if canonical != manifest.profile:
        raise _refused(
            source,
            f"its manifest names profile {manifest.profile!r}, not in canonical form ({canonical!r}): "
            "the catalog it would install under that folder could never verify",
            profile=manifest.profile,
        )
    if profile is not None and CatalogPaths.of(root, profile).profile != manifest.profile:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST,
            f"pack {source} holds profile {manifest.profile!r}, not {profile.lower()!r}",
            {"source": source, "profile": manifest.profile},
        )


def _unpack_files(tar: tarfile.TarFile, manifest: Manifest, build_dir: Path, source: str) -> None:
    """Write every `catalog/<file>` member into `build_dir`, hashing as it goes; refuse a
    member that is not a regular file (a link, a device, a folder, a FIFO), one the manifest
    does not list (or lists twice), a missing one, or a digest that differs. A failed write is
    left to `staged_build`, which codes it (`storage_full`, `io_error`)."""
    expected = manifest.catalog.files
    inside = build_dir.resolve()
    seen: set[str] = set()
    try:
        for index, member in enumerate(tar):
            if index == 0:
                continue  # the manifest, read already (iterating a TarFile starts from its first member)
            relative = member.name.removeprefix(CATALOG_PREFIX)
            if not member.name.startswith(CATALOG_PREFIX) or relative not in expected or relative in seen or member.type not in _REGULAR:
                raise _refused(source, f"member {member.name!r} is not a regular file its manifest lists", member=member.name)
            seen.add(relative)
            target = build_dir / relative
            # The keys are catalog file names (checked with the manifest); this keeps the rule
            # that nothing is written outside the staged folder local to the writing.
            if not target.resolve().is_relative_to(inside):
                raise _refused(source, f"member {member.name!r} would be written outside the catalog folder", member=member.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            handle = tar.extractfile(member)
            assert handle is not None
            digest = hashlib.sha256()
            written = 0
            with open(target, "xb") as out:  # a fresh folder: an existing name (a link) is never followed
                while chunk := handle.read(_CHUNK_BYTES):
                    digest.update(chunk)
                    out.write(chunk)
                    written += len(chunk)
            if written != member.size:
                raise _refused(source, f"{member.name} is truncated ({written:,} of {member.size:,} bytes)", member=member.name)
            if digest.hexdigest() != expected[relative]:
                raise _refused(
                    source, f"{member.name} does not match its manifest", member=member.name,
                    recorded=expected[relative], computed=digest.hexdigest(),
                )
    except (tarfile.TarError, EOFError) as error:
        raise _refused(source, f"the pack is truncated or corrupt ({error})") from None
    missing = sorted(set(expected) - seen)
    if missing:
        raise _refused(source, f"files its manifest lists are missing: {', '.join(missing)}", missing=missing)


def _verify_staged(paths: CatalogPaths, build_dir: Path, manifest: Manifest, source: str) -> None:
    """Verify the staged catalog with its manifest beside it, exactly as `catalog verify` and
    serving will once it is published, so a pack that would be refused there (headline digests
    that disagree with the file list, say) never replaces a working catalog."""
    write_atomically(build_dir / MANIFEST_FILE, manifest.to_json())
    try:
        verify_catalog(paths.staged_at(build_dir))
    except LeanIndexError as error:
        # Name the staged folder as the catalog it would become, not by its server path.
        why = error.message.replace(str(build_dir), f"catalog/{paths.profile}")
        raise _refused(source, f"its catalog does not verify ({why})", **error.details) from None
