"""`Checker.check_target` (`lean.check.target`) end to end on the stand-in REPL: the environment
before the target is prepared once per worker and reused, every candidate gets its verdict from
the verdict table, sequential mode extends the environment only past accepted commands, and
refusals are coded errors. The prefix `def f : Nat := 1` and the `sorry`/wrong candidates are
scripted answers (tests/standin/scripted.py, labelled there); the accepted candidate is the
recorded `infotree_theorem` transcript."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from checker_support import standin_config, transcripts_dir
from leanindex.checker import Checker
from leanindex.checker.commands import find_target, split_commands
from leanindex.checker.models import TargetCheckRequest
from leanindex.checker.worker import Worker
from leanindex.errors import ErrorCode, LeanIndexError

TRANSCRIPTS = transcripts_dir()
pytestmark = pytest.mark.skipif(TRANSCRIPTS is None, reason="../shared/fixtures/repl-transcripts is absent")

SHOW_P = "theorem show_p (p: Prop) (h : p) : p := by exact h"  # recorded: infotree_theorem
SORRY = "theorem show_p (p: Prop) (h : p) : p := sorry"  # scripted
WRONG = "theorem show_p (p: Prop) (h : p) : p := by exact p"  # scripted
FILE = f"import Lean\n\ndef f : Nat := 1\n\n{SHOW_P}\n"


def run(tmp: Path, scenario, **settings):
    """Run `scenario(checker, sent)` on a started checker; `sent` collects every command the
    workers send to the REPL, in order."""
    config, _control = standin_config(tmp, transcripts=TRANSCRIPTS, **settings)
    sent: list[tuple[str, int | None]] = []
    original = Worker._run

    def counting(self, command, deadline, budget):
        sent.append((command.cmd, command.env))
        return original(self, command, deadline, budget)

    async def go():
        checker = Checker(config)
        try:
            await checker.start()
            return await scenario(checker, sent)
        finally:
            await checker.close()

    Worker._run = counting
    try:
        return asyncio.run(go())
    finally:
        Worker._run = original


def target(**fields) -> TargetCheckRequest:
    return TargetCheckRequest(environment="TEST", **{"code": FILE, "target": "show_p", "candidates": [SHOW_P], **fields})


def test_candidates_get_their_own_verdicts_against_one_prepared_prefix(tmp_path):
    async def scenario(checker, sent):
        first = await checker.check_target(target(candidates=[SHOW_P, SORRY, WRONG]))
        commands_first = list(sent)
        second = await checker.check_target(target(candidates=[SHOW_P]))
        return first, commands_first, second, sent[len(commands_first) :]

    first, commands_first, second, commands_second = run(tmp_path, scenario)
    assert [r.verdict.value for r in first.results] == ["accepted", "incomplete", "rejected"]
    assert [r.candidate for r in first.results] == [0, 1, 2]
    assert not first.reused and second.reused and second.prefix_sha256 == first.prefix_sha256
    # One prefix command, then each candidate and its axiom probe, all in the prefix's environment.
    assert commands_first[0][0] == "def f : Nat := 1"
    assert [cmd for cmd, _ in commands_first[1::2]] == [SHOW_P, SORRY, WRONG]
    prefix_env = {env for cmd, env in commands_first[1::2]}
    assert len(prefix_env) == 1 and None not in prefix_env
    assert [cmd for cmd, _ in commands_second] != [] and commands_second[0] == (SHOW_P, prefix_env.pop())
    assert len(commands_first) == 1 + 2 * 3 and len(commands_second) == 2
    # Positions are the file's: the target starts on line 5, the wrong candidate's error there too.
    wrong = first.results[2]
    assert wrong.start.line == 5 and wrong.diagnostics[0].start.line == 5 and wrong.reasons[0].code.value == "error"
    assert first.results[1].sorries[0].start.line == 5 and first.results[1].reasons[0].code.value == "sorry"
    assert [(a.name, a.flagged) for a in first.results[0].axioms] == [("show_p", [])]
    assert first.prefix_diagnostics == [] and first.protected and first.environment == "TEST"


def test_a_prepared_environment_is_dropped_beyond_the_bound(tmp_path):
    other = FILE.replace("def f : Nat := 1\n", "")

    async def scenario(checker, sent):
        await checker.check_target(target())
        await checker.check_target(target(code=other))  # target first: the header environment
        again = await checker.check_target(target())
        return again, sent

    again, sent = run(tmp_path, scenario, prepared_entries=1)
    assert not again.reused
    assert [cmd for cmd, _ in sent].count("def f : Nat := 1") == 2


def test_sequential_extends_only_past_accepted_commands(tmp_path):
    code = f"import Lean\n\ndef f : Nat := 1\n{WRONG}\n{SHOW_P}\n"

    async def scenario(checker, sent):
        return await checker.check_target(TargetCheckRequest(environment="TEST", code=code, mode="sequential")), sent

    response, sent = run(tmp_path, scenario)
    assert [(r.name, r.verdict.value, r.extended) for r in response.results] == [
        ("f", "accepted", True),
        ("show_p", "rejected", False),
        ("show_p", "accepted", True),
    ]
    assert [r.start.line for r in response.results] == [3, 4, 5]
    envs = [env for cmd, env in sent if not cmd.startswith("#check (")]
    # f runs in the header environment; the wrong theorem and the next one both run in f's.
    assert envs[1] == envs[2] and envs[0] != envs[1]


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"target": "nope"}, ErrorCode.NOT_FOUND),
        ({"candidates": ["theorem other : True := trivial"]}, ErrorCode.INVALID_REQUEST),
        ({"candidates": [SHOW_P + "\n" + SHOW_P]}, ErrorCode.INVALID_REQUEST),
        ({"code": "import Mathlib\n" + SHOW_P}, ErrorCode.HEADER_MISMATCH),
        ({"candidates": ["-- " + "x" * 300_000 + "\n" + SHOW_P]}, ErrorCode.PAYLOAD_TOO_LARGE),
    ],
)
def test_refusals_are_coded_and_send_nothing(tmp_path, fields, code):
    async def scenario(checker, sent):
        with pytest.raises(LeanIndexError) as caught:
            await checker.check_target(target(**fields))
        return caught.value, sent

    error, sent = run(tmp_path, scenario)
    assert error.code is code and sent == []


def test_request_needs_the_fields_of_its_mode():
    with pytest.raises(ValueError):
        TargetCheckRequest(environment="TEST", code=FILE, target="show_p")
    with pytest.raises(ValueError):
        TargetCheckRequest(environment="TEST", code=FILE, mode="sequential", target="show_p", candidates=[SHOW_P])
    with pytest.raises(ValueError):
        TargetCheckRequest(environment="TEST", code=FILE, target="show_p", candidates=[SHOW_P] * 17)


def test_commands_of_a_file_and_their_names():
    body = (
        "/-! module doc -/\n"
        "namespace Foo\n"
        "/-- doc\n  more -/\n"
        "@[simp]\n"
        "private theorem bar : True :=\n  trivial\n"
        "-- a note\n"
        "instance (priority := 10) instX : Inhabited Nat := ⟨0⟩\n"
        "/- a block\ncomment -/\n"
        "end Foo\n"
        "example : True := trivial\n"
    )
    commands = split_commands(body)
    assert [(c.keyword, c.name, c.full_name, c.line) for c in commands] == [
        ("/-!", None, None, 1),
        ("namespace", None, None, 2),
        ("theorem", "bar", "Foo.bar", 3),
        ("instance", "instX", "Foo.instX", 9),
        ("end", None, None, 12),
        ("example", None, None, 13),
    ]
    assert commands[2].text.startswith("/-- doc") and commands[2].text.endswith("-- a note")
    assert find_target(commands, "Foo.bar") == find_target(commands, "bar") == 2
    assert find_target(commands, "baz") == -1


def test_a_timed_out_target_check_kills_its_worker(tmp_path):
    sleeping = SHOW_P + "\n-- standin: sleep"

    async def scenario(checker, sent):
        pool = checker.pool("TEST")
        before = set(pool.process_ids())
        with pytest.raises(LeanIndexError) as caught:
            await checker.check_target(target(candidates=[sleeping], timeout_s=1))
        after = await checker.check_target(target())
        return caught.value, before, set(pool.process_ids()), after

    error, before, now, after = run(tmp_path, scenario)
    assert error.code is ErrorCode.TIMEOUT
    assert before and not before & now  # the REPL that timed out is gone, a new one answers
    assert after.results[0].verdict.value == "accepted" and not after.reused


def test_a_forbidden_command_before_the_target_rejects_every_candidate(tmp_path):
    code = f"import Lean\n\n#eval 1 + 1\n\n{SHOW_P}\n"  # `#eval 1 + 1`: scripted info tree

    async def scenario(checker, sent):
        pool = checker.pool("TEST")
        before = set(pool.process_ids())
        response = await checker.check_target(target(code=code))
        await asyncio.sleep(0)
        return response, before, set(pool.process_ids())

    response, before, after = run(tmp_path, scenario)
    unit = response.results[0]
    assert unit.verdict.value == "rejected" and unit.reasons[0].code.value == "forbidden_command"
    assert unit.reasons[0].command == "#eval" and unit.reasons[0].start.line == 3  # its line in the file
    assert response.prefix_diagnostics[0].start.line == 3  # Lean's answer to it, at its file line
    assert not before & after  # the worker that ran it is retired
