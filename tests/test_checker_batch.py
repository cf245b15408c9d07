"""Batch checking on the local checker: `Checker.check_many`/`check_stream`/`check_batch` (each id
answered once with the verdict a single check gives, input read lazily, bounded in flight),
`lean.check.batch` over HTTP, MCP and `Client`, and `leanindex check-batch` (resume after a
cut-short line, refusals, exit status; a kill halfway is tested with `--ray` in
test_checker_ray.py, the same resume path), on the stand-in REPL (tests/standin/)."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client as McpClient
from pydantic import ValidationError
from service_support import live_server
from test_service_check import build_test_profile, standin_processes

from batch_support import cli_args, local_labels, mixed_items, outcome_label, read_results, write_requests
from checker_support import STANDIN, make_layout, standin_config, transcripts_dir
from leanindex import Client
from leanindex.checker import Checker, CheckerConfig, CheckRequest
from leanindex.checker.models import MAX_BATCH_ITEMS, BatchCheckRequest, BatchCheckResponse, BatchItem
from leanindex.cli import main
from leanindex.engine import Engine
from leanindex.errors import EXIT_STATUS, OUTCOME_EXIT, ErrorCode, LeanIndexError, Outcome
from leanindex.service.config import ServiceConfig
from leanindex.service.http import create_app

TRANSCRIPTS = transcripts_dir()
needs_transcripts = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

#: Recorded answers (see tests/test_checker.py): accepted, incomplete, rejected (kernel error).
RECORDED = {
    "show_p": "theorem show_p (p: Prop) (h : p) : p := by exact h",
    "sorry": "def f : Nat := sorry",
    "kernel": "example : 1 = 0 := by\n  cases 1\n  rfl\n  apply ?succ",
}


def instant(tmp: Path, **settings: object) -> tuple[CheckerConfig, Path]:
    return standin_config(tmp, instant=True, cache_entries=0, network_isolation=False, **settings)


@needs_transcripts
def test_check_many_gives_every_id_once_the_verdict_of_a_single_check(tmp_path: Path) -> None:
    config, _ = standin_config(tmp_path, transcripts=TRANSCRIPTS, workers=2)
    items = [BatchItem(id=f"{name}-{n}", environment="TEST", code=code) for n in range(4) for name, code in RECORDED.items()]
    items.append(BatchItem(id="outside", environment="TEST", code="import Mathlib\n" + RECORDED["show_p"]))
    answered = list(Checker(config).check_many(items))
    assert sorted(i for i, _ in answered) == sorted(item.id for item in items)
    labels = {i: outcome_label(outcome) for i, outcome in answered}
    assert labels == local_labels(config, items)
    assert {labels[f"{name}-0"] for name in RECORDED} == {"accepted", "incomplete", "rejected"}
    assert labels["outside"] == "error:header_mismatch"


def test_the_input_is_read_lazily_with_a_bound_on_checks_in_flight(tmp_path: Path) -> None:
    config, _ = instant(tmp_path, workers=2)
    pulled = 0

    def endless():
        nonlocal pulled
        for n in itertools.count():
            pulled += 1
            yield (f"r{n}", CheckRequest(environment="TEST", code=f"theorem t{n} : True := trivial"))

    answers = Checker(config).check_many(endless(), max_in_flight=3)
    seen = []
    for item_id, outcome in answers:
        seen.append(item_id)
        # The one just answered, and at most 3 others started.
        assert pulled - len(seen) <= 3
        assert outcome_label(outcome) == "accepted"
        if len(seen) == 60:
            break
    answers.close()
    assert len(set(seen)) == 60 and pulled <= 63
    assert [p for p in standin_processes() if str(tmp_path) in " ".join(p.cmdline())] == []


def test_a_failing_input_answers_the_checks_in_flight_then_raises(tmp_path: Path) -> None:
    config, _ = instant(tmp_path, workers=2)

    def broken():
        yield from mixed_items(5)
        raise ValueError("line 6 is unreadable")

    async def run() -> tuple[list[str], BaseException | None]:
        ids, failure = [], None
        async with Checker(config) as checker:
            try:
                async for result in checker.check_stream(broken(), max_in_flight=4):
                    ids.append(result.id)
            except ValueError as error:
                failure = error
        return ids, failure

    ids, failure = asyncio.run(run())
    assert sorted(ids) == [f"r{n}" for n in range(5)] and str(failure) == "line 6 is unreadable"


def test_check_batch_keeps_the_items_order_and_counts(tmp_path: Path) -> None:
    config, _ = instant(tmp_path, workers=2)
    items = mixed_items(15)[::-1]

    async def run() -> BatchCheckResponse:
        async with Checker(config) as checker:
            return await checker.check_batch(BatchCheckRequest(items=items))

    response = asyncio.run(run())
    assert [r.id for r in response.results] == [item.id for item in items]
    labels = [outcome_label(r) for r in response.results]
    assert response.counts == {
        "accepted": labels.count("accepted"), "incomplete": labels.count("incomplete"), "rejected": 0, "error": labels.count("error:header_mismatch"),
    }
    assert response.counts["error"] == 3 and response.counts["incomplete"] == 4
    with pytest.raises(ValidationError, match="repeated: r1"):
        BatchCheckRequest(items=[items[0], items[0].model_copy(update={"id": "r1"}), items[-1].model_copy(update={"id": "r1"})])
    with pytest.raises(ValidationError):
        BatchCheckRequest(items=[item.model_copy(update={"id": str(n)}) for n, item in enumerate([items[0]] * (MAX_BATCH_ITEMS + 1))])


@needs_transcripts
def test_batch_over_http_mcp_and_client(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_test_profile(root)
    project, repl, _control = make_layout(tmp_path, transcripts=TRANSCRIPTS)
    config = CheckerConfig.for_profile(root, "TEST", project_dir=project, repl_dir=repl, lake_path=STANDIN / "lake", workers=2)
    items = [{"id": name, "environment": "TEST", "code": code} for name, code in RECORDED.items()]
    expected = {"show_p": "accepted", "sorry": "incomplete", "kernel": "rejected"}
    engine = Engine(root)
    with live_server(create_app(engine, ServiceConfig(), Checker(config))) as url:
        answer = httpx.post(f"{url}/v1/check/batch", json={"items": items + [{"id": "empty", "environment": "TEST", "code": "x", "timeout_s": 999}]}, timeout=60)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_request"
        answer = httpx.post(f"{url}/v1/check/batch", json={"items": [*items, {"id": "outside", "environment": "TEST", "code": "import Mathlib"}]}, timeout=60)
        assert answer.status_code == 200, answer.text
        body = BatchCheckResponse.model_validate(answer.json())
        assert [r.id for r in body.results] == [*expected, "outside"]
        assert {r.id: outcome_label(r) for r in body.results} == {**expected, "outside": "error:header_mismatch"}
        assert body.counts == {"accepted": 1, "incomplete": 1, "rejected": 1, "error": 1}
        repeated = httpx.post(f"{url}/v1/check/batch", json={"items": items + items[:1]}, timeout=60)
        assert repeated.status_code == 400 and "repeated: show_p" in repeated.json()["error"]["message"]

        async def over_mcp() -> None:
            async with McpClient(f"{url}/mcp", cache=None) as client:
                result = await client.call_tool("lean.check.batch", {"items": items})
                assert not result.is_error, result.content
                assert [r["response"]["verdict"] for r in result.structured_content["results"]] == list(expected.values())
                assert result.content[0].text.splitlines()[:2] == ["1 accepted, 1 incomplete, 1 rejected, 0 error", "show_p: accepted"]

        anyio.run(over_mcp)
        with Client(url) as client:
            batch = client.check_batch([(name, CheckRequest(environment="TEST", code=code)) for name, code in RECORDED.items()])
            assert {r.id: outcome_label(r) for r in batch.results} == expected
            many = list(client.check_many((BatchItem(id=f"{n}", environment="TEST", code=RECORDED["sorry"]) for n in range(5)), batch_size=2))
            assert [i for i, _ in many] == ["0", "1", "2", "3", "4"] and {outcome_label(o) for _, o in many} == {"incomplete"}
            with pytest.raises(LeanIndexError) as empty:
                client.check_batch([])
            assert empty.value.code is ErrorCode.INVALID_REQUEST
    engine.close()


def test_cli_resumes_over_a_cut_short_line_and_repeats_nothing(tmp_path: Path) -> None:
    make_layout(tmp_path, instant=True)
    items = mixed_items(30)
    source = write_requests(tmp_path / "in.jsonl", items)
    out = tmp_path / "out.jsonl"
    first = CliRunner().invoke(main, cli_args(tmp_path, source, out, "--workers", "2", "--json"))
    assert first.exit_code == OUTCOME_EXIT[Outcome.ITEM_ERRORS], first.output  # the Mathlib imports
    report = json.loads(first.stdout)
    assert report["answered"] == 30 and report["skipped"] == 0 and report["counts"]["error"] == 5
    full = {r.id: outcome_label(r) for r in read_results(out)}
    assert len(full) == 30

    # As a kill in the middle of a write leaves it: 10 whole lines, then half of one.
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:10]) + lines[10][: len(lines[10]) // 2])
    again = CliRunner().invoke(main, cli_args(tmp_path, source, out, "--json"))
    report = json.loads(again.stdout)
    assert report["skipped"] == 10 and report["answered"] == 20 and report["repaired_bytes"] == len(lines[10]) // 2
    results = read_results(out)
    assert sorted(r.id for r in results) == sorted(item.id for item in items)
    assert {r.id: outcome_label(r) for r in results} == full

    done = CliRunner().invoke(main, cli_args(tmp_path, source, out, "--json"))
    assert json.loads(done.stdout)["answered"] == 0 and done.exit_code == OUTCOME_EXIT[Outcome.ITEM_ERRORS]
    accepted_only = write_requests(tmp_path / "ok.jsonl", [i for i in items if full[i.id] == "accepted"])
    clean = CliRunner().invoke(main, cli_args(tmp_path, accepted_only, tmp_path / "ok-out.jsonl"))
    assert clean.exit_code == OUTCOME_EXIT[Outcome.OK], clean.output


def test_cli_refuses_bad_lines_and_foreign_output(tmp_path: Path) -> None:
    make_layout(tmp_path, instant=True)
    out = tmp_path / "out.jsonl"
    source = tmp_path / "in.jsonl"
    good = [json.dumps({"id": f"g{n}", "code": f"theorem g{n} : True := trivial"}) for n in range(3)]
    source.write_text("\n".join([*good, json.dumps({"id": "bad", "code": "", "extra": 1}), "\n", '{"code": "no id"}', good[0]]) + "\n")
    stopped = CliRunner().invoke(main, cli_args(tmp_path, source, out))
    assert stopped.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and "line 7 has no string `id`" in stopped.output
    # Everything before the bad line is answered; the invalid request gets its own error line.
    written = {r.id: r for r in read_results(out)}
    assert sorted(written) == ["bad", "g0", "g1", "g2"] and written["bad"].error.code == "invalid_request"

    source.write_text("\n".join([*good, good[1]]) + "\n")
    repeated = CliRunner().invoke(main, cli_args(tmp_path, source, tmp_path / "other.jsonl"))
    assert repeated.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and "repeats the id 'g1'" in repeated.output

    foreign = tmp_path / "notes.jsonl"
    foreign.write_text('{"id": "x", "note": "not a result"}\n')
    refused = CliRunner().invoke(main, cli_args(tmp_path, source, foreign))
    assert refused.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and "line 1 is not a batch result" in refused.output
    assert foreign.read_text() == '{"id": "x", "note": "not a result"}\n'


def test_cli_never_changes_what_is_not_its_results_file(tmp_path: Path) -> None:
    """A one-line file without a newline, the input file itself, a device, `-`, a line that is
    no text, a line nested past the parser: refused, and nothing is written or truncated."""
    make_layout(tmp_path, instant=True)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "code": "theorem a : True := trivial"}))
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, no newline")
    for out, message in [(notes, "line 1 is not a batch result"), (source, "is the input file"), (Path("/dev/null"), "not a regular file"), (Path("-"), "must name a file")]:
        before = out.read_bytes() if out.is_file() else None
        refused = CliRunner().invoke(main, cli_args(tmp_path, source, out))
        assert refused.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and message in refused.output, (out, refused.output)
        assert before is None or out.read_bytes() == before
    assert not Path("-").exists()

    out = tmp_path / "out.jsonl"
    for line, message in [('{"id": "\\ud800", "code": "x"}', "not Unicode text"), ('{"id": "d", "reference": ' + "[" * 100000 + "]" * 100000 + "}", "RecursionError")]:
        source.write_text(line + "\n")
        refused = CliRunner().invoke(main, cli_args(tmp_path, source, out))
        assert refused.exit_code == EXIT_STATUS[ErrorCode.INVALID_REQUEST] and message in refused.output
    assert out.read_bytes() == b""


def test_cli_reads_a_pipe_once_and_refuses_a_second_writer(tmp_path: Path) -> None:
    import fcntl
    import os
    import shlex
    import subprocess
    import sys

    make_layout(tmp_path, instant=True)
    lines = "".join(json.dumps({"id": f"p{n}", "code": f"theorem p{n} : True := trivial"}) + "\n" for n in range(5))
    out = tmp_path / "out.jsonl"
    (tmp_path / "in.jsonl").write_text(lines)
    # A process substitution: a pipe that can be read once, given as a path.
    command = shlex.join([sys.executable, "-m", "leanindex", *cli_args(tmp_path, Path("SOURCE"), out, "--json")])
    script = command.replace(" SOURCE ", ' <(printf %s "$LINES") ')
    piped = subprocess.run(["bash", "-c", script], env={**os.environ, "LINES": lines}, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["answered"] == 5 and sorted(r.id for r in read_results(out)) == [f"p{n}" for n in range(5)]

    with open(out, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = CliRunner().invoke(main, cli_args(tmp_path, tmp_path / "in.jsonl", out))
    assert busy.exit_code == EXIT_STATUS[ErrorCode.BUSY] and "another check-batch run is writing" in busy.output
