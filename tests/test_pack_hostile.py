"""Hostile packs (issue 32): a pack, or a manifest in it, that names paths instead of catalog
files, another profile than the folder it lands in, or a catalog that would not verify once
published is refused before the root changes; a full disk is `storage_full`, not a corrupt
pack; manifest errors name files relative to the root, never the root itself.

Each hostile manifest is resealed (`Manifest.sealed()` recomputes both plain sha256 digests),
as an attacker would: the digests alone cannot tell it from a real one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self

import pytest
from click.testing import CliRunner

from fault_support import fill, small_tmpfs
from leanindex.catalog import pack as pack_module
from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths, catalog_file_problem, catalog_files
from leanindex.catalog.manifest import Manifest, read_manifest
from leanindex.catalog.pack import MANIFEST_MEMBER, pack_catalog, pull_catalog
from leanindex.catalog.stream import iter_lines
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.sample import sample_stream_path
from streamkit import build, declaration, snapshot, stream

Members = list[tuple[tarfile.TarInfo, bytes]]


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A root serving the 76-declaration sample catalog (profile `sample`)."""
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), tmp_path / "origin", "sample")
    return tmp_path / "origin"


@pytest.fixture
def packed(origin: Path, tmp_path: Path) -> Path:
    return pack_catalog(origin, "sample", tmp_path / "sample.leanindex.tar")


@pytest.fixture
def earlier_root(tmp_path: Path) -> Path:
    """A root that already serves another, verified catalog of profile `sample`."""
    root = tmp_path / "root"
    build(root, "sample", stream([declaration(["Earlier", "x"])]))
    return root


def members(pack: Path) -> Members:
    with tarfile.open(pack) as tar:
        return [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]


def write_pack(items: Members, target: Path) -> Path:
    with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in items:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return target


def resealed(manifest: Manifest, catalog: dict[str, Any] | None = None, **fields: Any) -> Manifest:
    """`manifest` with `fields` (and `catalog` fields) changed and both digests recomputed."""
    changed = manifest.model_copy(update=fields)
    if catalog is not None:
        changed = changed.model_copy(update={"catalog": changed.catalog.model_copy(update=catalog)})
    return changed.sealed()


def hostile_pack(
    packed: Path, target: Path, change: Callable[[Manifest], Manifest], extra: Sequence[tuple[tarfile.TarInfo, bytes]] = ()
) -> Path:
    """`packed` with its manifest replaced by `change(manifest)` and `extra` members appended."""
    items = members(packed)
    manifest = Manifest.model_validate_json(items[0][1])
    return write_pack([(items[0][0], change(manifest).to_json().encode()), *items[1:], *extra], target)


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o644
    return info, data


def refused(source: Path | str, root: Path, **options: Any) -> LeanIndexError:
    """Pull `source` expecting a refusal; the root must be exactly as it was."""
    before = snapshot(root)
    with pytest.raises(LeanIndexError) as caught:
        pull_catalog(str(source), root, **options)
    assert snapshot(root) == before
    return caught.value


def no_staging(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the pull stages a build (it must refuse before writing a byte)."""

    def staged(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the pull staged a build for a pack it must refuse first")

    monkeypatch.setattr(pack_module, "staged_build", staged)


# 1. A file key is a name, never a path.

PATH_KEYS = {
    "parent": "../../../escaped",
    "inner parent": "index/../../escaped",
    "dot": "./declarations.parquet",
    "empty component": "index//names.npy",
    "trailing slash": "index/",
    "backslash": "index\\names.npy",
    "nul": "index/names.npy\x00.txt",
    "unknown name": "notes.txt",
    "empty": "",
}


def test_the_known_names_are_plain_relative_names() -> None:
    names = catalog_files()
    assert len(names) == len(set(names)) and {"declarations.parquet", "catalog.duckdb", "index/names.npy"} <= set(names)
    assert all(catalog_file_problem(name) is None for name in names)
    for key in [*PATH_KEYS.values(), "/etc/passwd", "C:\\x", "index/names.npy/"]:
        assert catalog_file_problem(key) is not None, key


@pytest.mark.parametrize("key", [*PATH_KEYS.values(), "ABSOLUTE"], ids=[*PATH_KEYS, "absolute"])
def test_a_file_key_that_is_not_a_catalog_name_is_refused_before_a_byte_is_written(
    packed: Path, earlier_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    outside = tmp_path / "outside" / "evil"
    if key == "ABSOLUTE":
        key = str(outside)
    payload = b"written outside the root"
    digest = hashlib.sha256(payload).hexdigest()
    # The member is named the way the old pull looked it up: `catalog/` + the key.
    extra = [member("catalog/" + key.replace("\x00", ""), payload)]
    pack = hostile_pack(packed, tmp_path / "hostile.tar", lambda m: resealed(m, {"files": {**m.catalog.files, key: digest}}), extra)
    no_staging(monkeypatch)
    error = refused(pack, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH, error.message
    assert "nothing was changed" in error.message
    assert not outside.exists() and not (tmp_path / "escaped").exists() and not (earlier_root.parent / "escaped").exists()
    assert verify_catalog(CatalogPaths.of(earlier_root, "sample")).catalog.declaration_count == 1


def test_an_absolute_key_is_refused_over_the_cli(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    """The campaign's case: exit 0 and a file written outside the root, before the fix."""
    outside = tmp_path / "somewhere" / "evil"
    payload = b"evil"
    extra = [member("catalog/" + str(outside), payload)]
    pack = hostile_pack(
        packed, tmp_path / "abs.tar",
        lambda m: resealed(m, {"files": {**m.catalog.files, str(outside): hashlib.sha256(payload).hexdigest()}}), extra,
    )
    before = snapshot(earlier_root)
    done = CliRunner().invoke(main, ["catalog", "pull", str(pack), "--root", str(earlier_root), "--json"])
    assert done.exit_code == EXIT_STATUS[ErrorCode.DIGEST_MISMATCH], done.output
    assert json.loads(done.stdout)["error"]["code"] == "digest_mismatch"
    assert not outside.exists() and snapshot(earlier_root) == before


@pytest.mark.parametrize("key", ["../../../escaped", "/tmp/leanindex-evil", "notes.txt"])
def test_read_manifest_refuses_a_key_that_is_not_a_catalog_file(origin: Path, key: str) -> None:
    """So `catalog verify` and serving refuse such a manifest too, without opening the path."""
    paths = CatalogPaths.of(origin, "sample")
    manifest = read_manifest(paths.served_manifest)
    hostile = resealed(manifest, {"files": {**manifest.catalog.files, key: "0" * 64}})
    target = paths.served_manifest.resolve()
    target.write_text(hostile.to_json())
    with pytest.raises(LeanIndexError) as caught:
        read_manifest(paths.served_manifest)
    assert caught.value.code == ErrorCode.CATALOG_UNAVAILABLE
    assert caught.value.details["file"] == key
    assert "not a catalog file" in caught.value.message or "path" in caught.value.message
    done = CliRunner().invoke(main, ["catalog", "verify", "--profile", "sample", "--root", str(origin), "--json"])
    assert done.exit_code == EXIT_STATUS[ErrorCode.CATALOG_UNAVAILABLE], done.output
    assert json.loads(done.stdout)["error"]["details"]["file"] == key


KINDS = {
    "symlink": (tarfile.SYMTYPE, "/etc/passwd"),
    "hard link": (tarfile.LNKTYPE, "manifest.json"),
    "directory": (tarfile.DIRTYPE, ""),
    "fifo": (tarfile.FIFOTYPE, ""),
    "character device": (tarfile.CHRTYPE, ""),
    "block device": (tarfile.BLKTYPE, ""),
    "contiguous file": (tarfile.CONTTYPE, ""),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_member_that_is_not_a_regular_file_is_refused(packed: Path, earlier_root: Path, tmp_path: Path, kind: str) -> None:
    items = members(packed)
    index = next(i for i, (info, _) in enumerate(items) if info.name == "catalog/index/names.npy")
    tar_type, link = KINDS[kind]
    info, data = items[index]
    replaced = member(info.name, data if tar_type == tarfile.CONTTYPE else b"", tar_type, link)
    pack = write_pack([*items[:index], replaced, *items[index + 1 :]], tmp_path / "kind.tar")
    error = refused(pack, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH, error.message


def test_a_manifest_member_that_is_a_link_or_too_large_is_refused(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    items = members(packed)
    linked = write_pack([member(MANIFEST_MEMBER, b"", tarfile.SYMTYPE, "/etc/passwd"), *items[1:]], tmp_path / "link.tar")
    assert refused(linked, earlier_root).code == ErrorCode.DIGEST_MISMATCH
    huge = items[0][1] + b" " * pack_module.MANIFEST_MAX_BYTES
    padded = write_pack([(items[0][0], huge), *items[1:]], tmp_path / "huge.tar")
    error = refused(padded, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH and "bytes" in error.message


# 2. A pack installs only a profile whose catalog verifies once published.


def test_a_manifest_naming_the_profile_in_another_case_is_refused(
    packed: Path, earlier_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The campaign's case: `SAMPLE` was installed under catalog/sample, where verification
    compares it with `sample` and refuses it forever; the earlier catalog was deleted."""
    pack = hostile_pack(packed, tmp_path / "upper.tar", lambda m: resealed(m, profile="SAMPLE"))
    no_staging(monkeypatch)
    for options in ({}, {"profile": "sample"}, {"profile": "SAMPLE"}):
        error = refused(pack, earlier_root, **options)
        assert error.code == ErrorCode.DIGEST_MISMATCH, (options, error.message)
        assert "'SAMPLE'" in error.message
    assert verify_catalog(CatalogPaths.of(earlier_root, "sample")).catalog.declaration_count == 1


@pytest.mark.parametrize("profile", ["../evil", "", "a b", "x" * 65])
def test_a_manifest_naming_no_valid_profile_is_refused(
    packed: Path, earlier_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    pack = hostile_pack(packed, tmp_path / "bad-profile.tar", lambda m: resealed(m, profile=profile))
    no_staging(monkeypatch)
    assert refused(pack, earlier_root).code == ErrorCode.DIGEST_MISMATCH


def test_a_catalog_that_would_not_verify_once_published_is_refused(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    """Headline digests that disagree with the file list: every file matches its own digest,
    yet `catalog verify` refuses the result; the pull runs that same check before publishing."""
    pack = hostile_pack(packed, tmp_path / "headline.tar", lambda m: resealed(m, {"declarations_parquet_sha256": "0" * 64}))
    error = refused(pack, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH and "does not verify" in error.message
    assert str(tmp_path) not in error.message.replace(str(pack), "")  # the staged folder is not named by its path
    assert verify_catalog(CatalogPaths.of(earlier_root, "sample")).catalog.declaration_count == 1


def test_resealed_counts_are_refused_before_they_replace_a_catalog(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    """The campaign's `declaration_count: 999999`: `catalog verify` checks counts against the
    files, so the pull, which runs that check on the staged catalog, refuses it up front."""
    pack = hostile_pack(packed, tmp_path / "counts.tar", lambda m: resealed(m, {"declaration_count": 999999}))
    error = refused(pack, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH and error.details.get("field") == "declaration_count", error.message
    assert verify_catalog(CatalogPaths.of(earlier_root, "sample")).catalog.declaration_count == 1


def test_a_verified_pack_replaces_the_profile_and_only_then_the_old_build_goes(
    packed: Path, earlier_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = CatalogPaths.of(earlier_root, "sample")
    old_build = paths.catalog_dir.resolve()
    seen: list[bool] = []
    real_publish = pack_module.publish

    def publish(*args: Any) -> None:
        seen.append(old_build.is_dir())  # still there when the switch starts
        real_publish(*args)

    monkeypatch.setattr(pack_module, "publish", publish)
    result = pull_catalog(str(packed), earlier_root)
    assert seen == [True]
    assert result.manifest == verify_catalog(paths) and result.manifest.catalog.declaration_count == 76
    assert not old_build.exists()
    assert [p.name for p in paths.builds_dir.iterdir()] == [paths.catalog_dir.resolve().name]


# 3. A full disk is storage_full, not a corrupt pack.


def test_a_pull_onto_a_full_disk_is_storage_full(packed: Path, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "root", packed.stat().st_size // 2) as root:
        before = snapshot(root)
        with pytest.raises(LeanIndexError) as caught:
            pull_catalog(str(packed), root)
        assert caught.value.code == ErrorCode.STORAGE_FULL, caught.value.message
        assert caught.value.details["needed_bytes"] > 0
        assert snapshot(root) == before
        done = CliRunner().invoke(main, ["catalog", "pull", str(packed), "--root", str(root), "--json"])
        assert done.exit_code == EXIT_STATUS[ErrorCode.STORAGE_FULL], done.output
        assert json.loads(done.stdout)["error"]["code"] == "storage_full"
        assert snapshot(root) == before


def test_a_download_onto_a_full_disk_is_storage_full(packed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The download itself fills the disk: coded, and its partial file removed."""
    body = packed.read_bytes()

    def fake_stream(self: Any, method: str, url: str, headers: dict[str, str] | None = None) -> Any:
        return _Response(body)

    monkeypatch.setattr(pack_module.httpx.Client, "stream", fake_stream)
    with small_tmpfs(tmp_path / "root", 64 * 1024) as root:
        fill(root)
        before = snapshot(root)
        with pytest.raises(LeanIndexError) as caught:
            pull_catalog("https://example.invalid/sample.leanindex.tar", root)
        assert caught.value.code == ErrorCode.STORAGE_FULL, caught.value.message
        assert snapshot(root) == before


def test_a_pull_onto_a_read_only_disk_is_io_error(packed: Path, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "root", 1 << 20) as root:
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(root)], check=False, capture_output=True, text=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount the tmpfs read-only: {remounted.stderr.strip()}")
        with pytest.raises(LeanIndexError) as caught:
            pull_catalog(str(packed), root)
        assert caught.value.code == ErrorCode.IO_ERROR, caught.value.message
        assert snapshot(root) == {}


class _Response:
    """Enough of an `httpx` streamed response for `_download`."""

    def __init__(self, body: bytes) -> None:
        self.status_code = 200
        self.headers = {"content-length": str(len(body))}
        self._body = body

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None

    def iter_bytes(self) -> Any:
        for start in range(0, len(self._body), 16384):
            yield self._body[start : start + 16384]


# 5. Manifest errors name files relative to the root, never the root.


def test_manifest_errors_name_the_file_relative_to_the_root(origin: Path) -> None:
    paths = CatalogPaths.of(origin, "sample")
    served = paths.served_manifest.resolve()
    text = served.read_text()
    cases: list[tuple[Path, str, str, ErrorCode]] = [
        (paths.served_manifest, "catalog/sample/manifest.json", text.replace('"declaration_count": 76', '"declaration_count": 77'), ErrorCode.DIGEST_MISMATCH),
        (paths.served_manifest, "catalog/sample/manifest.json", "{not json", ErrorCode.CATALOG_UNAVAILABLE),
        (paths.manifest, "manifests/sample.json", "{not json", ErrorCode.CATALOG_UNAVAILABLE),
        (paths.root / "manifests" / "gone.json", "manifests/gone.json", "", ErrorCode.CATALOG_UNAVAILABLE),
    ]
    for where, label, content, code in cases:
        target = where.resolve() if where.exists() else where
        if content:
            target.write_text(content)
        with pytest.raises(LeanIndexError) as caught:
            read_manifest(where)
        error = caught.value
        assert error.code == code, (label, error.message)
        assert label in error.message, error.message
        shown = json.dumps({"message": error.message, "details": error.details})
        assert str(origin) not in shown and str(served.parent) not in shown, shown
        assert not any(isinstance(v, str) and os.path.isabs(v) for v in error.details.values()), error.details
    with pytest.raises(LeanIndexError) as caught:
        read_manifest(paths.root / "manifests" / "gone.json", label="the pinned manifest of 'gone'")
    assert "the pinned manifest of 'gone'" in caught.value.message
