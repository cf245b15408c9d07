"""A running `leanindex serve` answers the CLI queries on its root (issue 31, item 4).

The server announces itself in `ROOT/serving/<pid>.json` once bound and withdraws it when it
stops; `leanindex search` on that root then asks it (seen in the server's access log) and, without
a live announced server, opens the catalogs itself. Announcements are hostile input.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanindex.cli import main
from leanindex.service import announce
from leanindex.service.announce import SERVING_FOLDER, announced_server
from service_support import build_sample, free_port, wait_until_serving

SEARCH = ["search", "-e", "SAMPLE", "--name-contains", "add_comm", "--json"]


@pytest.fixture
def sample_root(tmp_path: Path) -> Path:
    """A root of its own holding the sample catalog: its servers announce themselves in it."""
    return build_sample(tmp_path / "root")


def announcements(root: Path) -> list[Path]:
    return sorted((root / SERVING_FOLDER).glob("*.json"))


def run_search(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LEANINDEX_URL", "LEANINDEX_TOKEN")}
    result = CliRunner().invoke(main, [*SEARCH, "--root", str(root)], env={**env, "LEANINDEX_URL": ""})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_served_root_answers_the_cli_and_withdraws_at_exit(sample_root: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "LEANINDEX_TOKEN"}
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(sample_root), "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(process, f"http://127.0.0.1:{port}")
        [path] = announcements(sample_root)
        assert json.loads(path.read_text()) == {"url": f"http://127.0.0.1:{port}", "pid": process.pid, "token_required": False}
        assert path.stat().st_mode & 0o077 == 0
        local = run_search(sample_root)
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert announcements(sample_root) == []
    searches = [json.loads(line) for line in stderr.decode().splitlines() if '"/v1/declarations/search"' in line]
    assert [a["status"] for a in searches] == [200]
    # Without the server, the catalogs under the root give the same answer.
    assert run_search(sample_root) == local


def test_a_server_that_needs_a_token_is_skipped_without_one(sample_root: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "leanindex", "serve", "--root", str(sample_root), "--port", str(port)],
        env={**os.environ, "LEANINDEX_TOKEN": "secret"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        wait_until_serving(process, f"http://127.0.0.1:{port}")
        assert announced_server(sample_root.resolve(), token_available=False) is None
        assert announced_server(sample_root.resolve(), token_available=True) == (f"http://127.0.0.1:{port}", True, f"{process.pid}.json")
        run_search(sample_root)
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    assert '"/v1/declarations/search"' not in stderr.decode()


def test_an_announcement_of_a_process_that_is_gone_is_removed(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    path = tmp_path / SERVING_FOLDER / f"{gone.pid}.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"url": f"http://127.0.0.1:{free_port()}", "pid": gone.pid, "token_required": False}))
    assert announced_server(tmp_path, token_available=False) is None
    assert not path.exists()


def test_a_live_process_that_accepts_no_connection_is_skipped(tmp_path: Path) -> None:
    (tmp_path / SERVING_FOLDER).mkdir()
    (tmp_path / SERVING_FOLDER / "1.json").write_text(json.dumps({"url": f"http://127.0.0.1:{free_port()}", "pid": os.getpid(), "token_required": False}))
    assert announced_server(tmp_path, token_available=False) is None


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[]",
        json.dumps({"url": "http://10.0.0.1:8000", "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "https://127.0.0.1:8000", "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1:8000/elsewhere", "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "http://user@127.0.0.1:8000", "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1", "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1:8000", "pid": "1", "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1:8000", "pid": 1, "token_required": "no"}).encode(),
        b" " * (announce.MAX_ANNOUNCEMENT_BYTES + 1),
        json.dumps({"url": 5, "pid": 1, "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1:8000", "pid": 2**31, "token_required": False}).encode(),
        json.dumps({"url": "http://127.0.0.1:8000", "pid": 2**70, "token_required": False}).encode(),
        b"[" * 2040 + b"]" * 2040,
    ],
    ids=["junk", "list", "remote-host", "https", "path", "user", "no-port", "pid-text", "token-text", "too-large", "url-number", "pid-2-31", "pid-huge", "nested"],
)
def test_a_file_that_is_not_an_announcement_is_skipped(tmp_path: Path, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(announce, "_accepts", lambda url: True)
    (tmp_path / SERVING_FOLDER).mkdir()
    (tmp_path / SERVING_FOLDER / "1.json").write_bytes(content)
    assert announced_server(tmp_path, token_available=True) is None


def test_a_fifo_or_a_link_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(announce, "_accepts", lambda url: True)
    folder = tmp_path / SERVING_FOLDER
    folder.mkdir()
    os.mkfifo(folder / "1.json")
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"url": "http://127.0.0.1:8000", "pid": os.getpid(), "token_required": False}))
    (folder / "2.json").symlink_to(target)
    started = time.monotonic()
    assert announced_server(tmp_path, token_available=True) is None
    assert time.monotonic() - started < 5  # not blocked on the FIFO


def test_only_a_loopback_server_is_announced(tmp_path: Path) -> None:
    assert announce.announce(tmp_path, "0.0.0.0", 8000, token_required=False) is None
    assert announcements(tmp_path) == []
    path = announce.announce(tmp_path, "::1", 8000, token_required=True)
    assert path is not None and json.loads(path.read_text())["url"] == "http://[::1]:8000"
    announce.withdraw(path)
    assert announcements(tmp_path) == []


def _listener() -> tuple[subprocess.Popen, int]:
    """A process on a free loopback port that answers every request with a bare HTTP 501 and
    prints each request's head (not a leanindex server)."""
    port = free_port()
    code = (
        "import socket, sys\n"
        f"s = socket.create_server(('127.0.0.1', {port}))\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    c, _ = s.accept()\n"
        "    head = c.recv(65536).decode('latin-1')\n"
        "    print(repr(head), flush=True)\n"
        "    c.sendall(b'HTTP/1.1 501 Not Implemented\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n')\n"
        "    c.close()\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process, port


def test_a_port_taken_by_another_program_is_left_for_the_catalogs_and_gets_no_token(sample_root: Path) -> None:
    """An announcement naming a live process whose port answers without leanindex's error object:
    the command answers from the catalogs, and the token goes only where a token was announced."""
    listener, port = _listener()
    try:
        folder = sample_root / SERVING_FOLDER
        folder.mkdir()
        (folder / f"{listener.pid}.json").write_text(json.dumps({"url": f"http://127.0.0.1:{port}", "pid": listener.pid, "token_required": False}))
        env = {k: v for k, v in os.environ.items() if k != "LEANINDEX_URL"}
        result = CliRunner().invoke(main, [*SEARCH, "--root", str(sample_root)], env={**env, "LEANINDEX_URL": "", "LEANINDEX_TOKEN": "s3cret"})
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["total_matches"] > 0
    finally:
        listener.kill()
        heads, _ = listener.communicate(timeout=10)
    assert "POST /v1/declarations/search" in heads
    assert "s3cret" not in heads


def test_only_the_newest_announcements_are_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []
    monkeypatch.setattr(announce, "_accepts", lambda url: tried.append(url) or False)
    folder = tmp_path / SERVING_FOLDER
    folder.mkdir()
    for n in range(10):
        (folder / f"{n}.json").write_text(json.dumps({"url": f"http://127.0.0.1:{9000 + n}", "pid": os.getpid(), "token_required": False}))
    assert announced_server(tmp_path, token_available=False) is None
    assert len(tried) == announce.MAX_TRIED
