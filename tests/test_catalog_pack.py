"""`catalog pack` / `catalog pull`: round trips through a file and a loopback HTTP server,
resumed downloads, and every corrupted pack refused with the root left exactly as it was."""

from __future__ import annotations

import io
import json
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.catalog.builder import build_catalog
from leanindex.catalog.layout import CatalogPaths
from leanindex.catalog.pack import MANIFEST_MEMBER, pack_catalog, pull_catalog
from leanindex.catalog.stream import iter_lines
from leanindex.catalog.verify import verify_catalog
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, ErrorCode, LeanIndexError
from leanindex.models import SearchRequest
from leanindex.sample import sample_stream_path
from streamkit import build, declaration, snapshot, stream


@dataclass
class Served:
    """What the loopback server serves and what it saw. `drop_after`: on the first request,
    send only this many bytes of the body (announcing the whole length), then close."""

    body: bytes = b""
    drop_after: int | None = None
    ranges: list[str | None] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[tuple[str, Served]]:
    served = Served()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            wanted = self.headers.get("Range")
            served.ranges.append(wanted)
            start = int(wanted.removeprefix("bytes=").rstrip("-")) if wanted else 0
            body = served.body[start:]
            self.send_response(206 if wanted else 200)
            if wanted:
                self.send_header("Content-Range", f"bytes {start}-{len(served.body) - 1}/{len(served.body)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if served.drop_after is not None and len(served.ranges) == 1:
                self.wfile.write(body[: served.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/sample.leanindex.tar", served
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def packed(tmp_path: Path) -> Path:
    """A pack of the 76-declaration sample catalog (profile `sample`)."""
    with open(sample_stream_path(), "rb") as handle:
        build_catalog(iter_lines(handle), tmp_path / "origin", "sample")
    return pack_catalog(tmp_path / "origin", "sample", tmp_path / "sample.leanindex.tar")


def members(pack: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(pack) as tar:
        return [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]


def repack(items: list[tuple[tarfile.TarInfo, bytes]], target: Path) -> Path:
    with tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in items:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return target


def sample_search(root: Path) -> list[str]:
    engine = Engine(root)
    try:
        return [r.name for r in engine.search(SearchRequest(environment="SAMPLE", name_contains="add", result_limit=50)).results]
    finally:
        engine.close()


def test_pack_holds_the_manifest_then_every_listed_file(packed: Path, tmp_path: Path) -> None:
    manifest = verify_catalog(CatalogPaths.of(tmp_path / "origin", "sample"))
    names = [info.name for info, _ in members(packed)]
    assert names == [MANIFEST_MEMBER, *(f"catalog/{f}" for f in sorted(manifest.catalog.files))]
    again = pack_catalog(tmp_path / "origin", "sample", tmp_path / "again.tar")
    assert again.read_bytes() == packed.read_bytes()  # no owner or time inside


def test_round_trip_through_a_file(packed: Path, tmp_path: Path) -> None:
    result = pull_catalog(str(packed), tmp_path / "root")
    assert result.manifest == verify_catalog(CatalogPaths.of(tmp_path / "root", "sample"))
    assert result.manifest == verify_catalog(CatalogPaths.of(tmp_path / "origin", "sample"))
    assert sample_search(tmp_path / "root") == sample_search(tmp_path / "origin") != []
    assert not (tmp_path / "root" / "catalog" / ".downloads").exists()


def test_round_trip_over_http_with_the_cli(packed: Path, tmp_path: Path, server: tuple[str, Served]) -> None:
    url, served = server
    served.body = packed.read_bytes()
    done = CliRunner().invoke(main, ["catalog", "pull", url, "--profile", "SAMPLE", "--root", str(tmp_path / "root"), "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["pack_bytes"] == len(served.body) and answer["manifest"]["profile"] == "sample"
    assert served.ranges == [None]
    assert sample_search(tmp_path / "root") == sample_search(tmp_path / "origin")


def test_a_dropped_connection_is_resumed_with_range(packed: Path, tmp_path: Path, server: tuple[str, Served]) -> None:
    url, served = server
    served.body = packed.read_bytes()
    half = len(served.body) // 2
    served.drop_after = half
    seen: list[tuple[int, int | None]] = []
    result = pull_catalog(url, tmp_path / "root", on_progress=lambda done, total: seen.append((done, total)))
    assert served.ranges == [None, f"bytes={half}-"]
    assert result.pack_bytes == len(served.body)
    assert seen[-1] == (len(served.body), len(served.body))
    verify_catalog(CatalogPaths.of(tmp_path / "root", "sample"))


def refused(source: str, root: Path, **options: object) -> LeanIndexError:
    before = snapshot(root)
    with pytest.raises(LeanIndexError) as caught:
        pull_catalog(source, root, **options)  # type: ignore[arg-type]
    assert snapshot(root) == before  # the root is exactly as it was (no .builds, no .downloads)
    return caught.value


@pytest.fixture
def earlier_root(tmp_path: Path) -> Path:
    """A root that already serves an (other) catalog of profile `sample`."""
    root = tmp_path / "root"
    build(root, "sample", stream([declaration(["Earlier", "x"])]))
    return root


def test_altered_bytes_over_http_are_refused(packed: Path, earlier_root: Path, server: tuple[str, Served]) -> None:
    url, served = server
    body = bytearray(packed.read_bytes())
    middle = len(body) // 2
    body[middle] ^= 0xFF
    served.body = bytes(body)
    error = refused(url, earlier_root)
    assert error.code == ErrorCode.DIGEST_MISMATCH
    assert sample_search(earlier_root) == []  # still the earlier catalog, verified


@pytest.mark.parametrize("cut", [100, 512 + 100, 0.5, 0.9, -1])
def test_truncated_packs_are_refused(packed: Path, earlier_root: Path, tmp_path: Path, cut: float) -> None:
    data = packed.read_bytes()
    with tarfile.open(packed) as tar:
        last = tar.getmembers()[-1]
    # -1: one byte short of the last member's data (what follows it is only end-of-archive padding).
    keep = int(len(data) * cut) if isinstance(cut, float) else (cut if cut > 0 else last.offset_data + last.size - 1)
    truncated = tmp_path / "truncated.tar"
    truncated.write_bytes(data[:keep])
    assert refused(str(truncated), earlier_root).code == ErrorCode.DIGEST_MISMATCH


def test_each_tampered_member_is_refused(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    items = members(packed)
    for index, (info, data) in enumerate(items):
        changed = bytearray(data)
        changed[len(changed) // 2] ^= 0x01
        tampered = repack([*items[:index], (info, bytes(changed)), *items[index + 1 :]], tmp_path / f"tampered-{index}.tar")
        error = refused(str(tampered), earlier_root)
        assert error.code == ErrorCode.DIGEST_MISMATCH, (info.name, error.message)


def test_mismatched_and_malformed_packs_are_refused(packed: Path, earlier_root: Path, tmp_path: Path) -> None:
    items = members(packed)
    # Another build's manifest (valid on its own) over these files.
    build(tmp_path / "other", "sample", stream([declaration(["Other", "y"])]))
    other_manifest = CatalogPaths.of(tmp_path / "other", "sample").manifest.read_bytes()
    swapped = repack([(items[0][0], other_manifest), *items[1:]], tmp_path / "swapped.tar")
    assert refused(str(swapped), earlier_root).code == ErrorCode.DIGEST_MISMATCH
    # A member the manifest does not list, one missing, one twice, one escaping the folder.
    extra = tarfile.TarInfo("catalog/../../evil")
    for name, variant in {
        "extra": [*items, (extra, b"x")],
        "missing": items[:-1],
        "twice": [*items, items[-1]],
        "manifest not first": [*items[1:], items[0]],
    }.items():
        error = refused(str(repack(variant, tmp_path / f"{name.replace(' ', '-')}.tar")), earlier_root)
        assert error.code == ErrorCode.DIGEST_MISMATCH, name
    not_a_pack = tmp_path / "not-a-pack.tar"
    not_a_pack.write_bytes(b"hello" * 1000)
    assert refused(str(not_a_pack), earlier_root).code == ErrorCode.DIGEST_MISMATCH
    assert not (tmp_path / "evil").exists()


def test_size_cap_and_profile_are_enforced(packed: Path, earlier_root: Path, server: tuple[str, Served]) -> None:
    url, served = server
    served.body = packed.read_bytes()
    assert refused(url, earlier_root, max_bytes=len(served.body) - 1).code == ErrorCode.PAYLOAD_TOO_LARGE
    assert refused(str(packed), earlier_root, max_bytes=1000).code == ErrorCode.PAYLOAD_TOO_LARGE
    assert refused(str(packed), earlier_root, profile="core").code == ErrorCode.INVALID_REQUEST


def test_cli_refusal_exit_status(packed: Path, tmp_path: Path) -> None:
    data = bytearray(packed.read_bytes())
    data[len(data) // 3] ^= 0xFF
    bad = tmp_path / "bad.tar"
    bad.write_bytes(bytes(data))
    done = CliRunner().invoke(main, ["catalog", "pull", str(bad), "--root", str(tmp_path / "root"), "--json"])
    assert done.exit_code == EXIT_STATUS[ErrorCode.DIGEST_MISMATCH]
    assert json.loads(done.stdout)["error"]["code"] == "digest_mismatch"
    assert not (tmp_path / "root").exists()
