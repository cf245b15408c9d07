#!/usr/bin/env python3
"""Stand-in for the Lean REPL (leanprover-community/repl), for tests and benchmarks without Lean.

It speaks the REPL's protocol on stdin/stdout: a request is a JSON object followed by a blank
line, a response is a JSON object followed by a blank line. Answers come from, in order:

1. the real recorded transcripts in ../shared/fixtures/repl-transcripts/ (a recorded request,
   matched on `cmd` and on the `infotree` option when the recording set one, gets its recorded
   response; environment ids are renumbered consistently, and a request in an environment that
   came from a recording first looks for the recorded follow-up of that environment);
   A tactic on a proof state gets the recorded answer to the same tactic on the recorded state
   it stands for (proof states renumbered like environments);
2. scripted responses (`scripted.py`, clearly separate, never recorded Lean output) for what the
   recordings lack: info trees on some commands (a scripted command with an info tree is preferred
   over a recording without one when the request asks for the info tree), forbidden commands,
   `#print axioms` answers, and info trees added to recordings made without them;
3. fault behaviours triggered by a comment line in the command (also with `--instant`):
   `-- standin: sleep`, `-- standin: exit-mid-response`, `-- standin: garbage`,
   `-- standin: grow <MiB>`, `-- standin: kill-host` (SIGKILL the process that started the
   REPL, i.e. the checker hosting it: a poisoned input that takes its host down; needs the
   REPL started without a PID namespace, `network_isolation=False`, to see that process).

Options: `--transcripts DIR`, `--control FILE` (JSON read on every request:
`{"header_fails": bool, "delay_ms": int}`), `--instant` (no transcripts needed: answer every
command with an empty, successful response, a command with `sorry` with one proof state, and
every tactic on a known state with a new open state, for benchmarks).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scripted  # noqa: E402

_HOLD: list[bytearray] = []


def read_blocks(path: Path, join_lines: bool) -> list[str]:
    """Blank-line separated blocks; request lines are joined the way the REPL's `getLines` does."""
    blocks, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            current.append(line.rstrip() if join_lines else line)
        elif current:
            blocks.append(("" if join_lines else "\n").join(current))
            current = []
    if current:
        blocks.append(("" if join_lines else "\n").join(current))
    return blocks


def load_transcripts(folder: Path) -> list[tuple[str, list[tuple[dict, dict]]]]:
    transcripts = []
    for source in sorted(folder.glob("*.in")):
        out = source.with_name(source.name[: -len(".in")] + ".expected.out")
        if not out.exists():
            continue
        try:
            requests = [json.loads(b) for b in read_blocks(source, join_lines=True)]
            responses = [json.loads(b) for b in read_blocks(out, join_lines=False)]
        except json.JSONDecodeError:
            continue
        if len(requests) == len(responses):
            transcripts.append((source.stem, list(zip(requests, responses))))
    return transcripts


class StandIn:
    def __init__(self, transcripts, control: Path | None, instant: bool):
        self.transcripts = transcripts
        self.control = control
        self.instant = instant
        self.envs: dict[int, tuple[str, int] | None] = {}
        #: Proof state id -> the (transcript, recorded proof state id) pairs it may stand for.
        self.states: dict[int, list[tuple[str, int]]] = {}

    def settings(self) -> dict:
        if self.control is None or not self.control.exists():
            return {}
        return json.loads(self.control.read_text())

    def new_env(self, lineage: tuple[str, int] | None) -> int:
        env = len(self.envs)
        self.envs[env] = lineage
        return env

    def answer(self, request: dict) -> dict | None:
        settings = self.settings()
        if settings.get("delay_ms"):
            time.sleep(settings["delay_ms"] / 1000)
        if "tactic" in request and "proofState" in request:
            if self.instant:
                if request["proofState"] not in self.states:
                    return {"message": "Unknown proof state."}
                return {"proofState": self.new_state([]), "goals": ["⊢ True"], "proofStatus": "Incomplete: open goals remain"}
            return self.step(request["tactic"], request["proofState"])
        if "cmd" not in request:
            return {"message": "standin: only commands and tactics are supported"}
        answer = self.command(request, settings)
        if answer is not None and request.get("allTactics") and request["cmd"] in scripted.ALL_TACTICS:
            answer = {**answer, "tactics": scripted.ALL_TACTICS[request["cmd"]]}
        return self.with_states(request["cmd"], answer)

    def command(self, request: dict, settings: dict) -> dict | None:
        cmd, env = request["cmd"], request.get("env")
        if env is not None and env not in self.envs:
            return {"message": "Unknown environment."}  # recorded shape: unknown_environment
        fault = scripted.fault_of(cmd)
        if fault is not None:
            return self.fault(fault, cmd)
        if self.instant:
            answer = {"env": self.new_env(None), "infotree": [scripted.eoi(cmd)], "messages": scripted.nonce_echo(cmd)}
            if "sorry" in cmd:
                end = scripted.eoi(cmd)["node"]["stx"]["range"]["finish"]
                answer["sorries"] = [{"proofState": self.new_state([]), "goal": "⊢ True", "pos": end, "endPos": end}]
            return answer
        if cmd.startswith("import ") and settings.get("header_fails"):
            return {**scripted.failed_import(cmd), "env": self.new_env(None)}
        recorded = self.recorded(cmd, env, request.get("infotree"))
        if recorded is not None and "infotree" not in recorded and request.get("infotree") and cmd in scripted.INFOTREES:
            return {**recorded, "infotree": scripted.INFOTREES[cmd]}
        if recorded is not None and not ("infotree" not in recorded and request.get("infotree") and cmd in scripted.COMMANDS):
            return recorded
        answer = scripted.respond(cmd)
        if answer is None:
            return {"message": f"standin: no recorded or scripted response for {cmd[:80]!r}"}
        return {**answer, "env": self.new_env(None)}

    def new_state(self, lineage: list[tuple[str, int]]) -> int:
        state = len(self.states)
        self.states[state] = lineage
        return state

    def with_states(self, cmd: str, answer: dict | None) -> dict | None:
        """`answer` with the proof states of its sorries renumbered; each stands for the recorded
        states of the same number after the same command in any transcript."""
        if not answer or not answer.get("sorries"):
            return answer
        sorries = []
        for entry in answer["sorries"]:
            if "proofState" in entry:
                recorded = entry["proofState"]
                lineage = [
                    (name, recorded)
                    for name, pairs in self.transcripts
                    for req, resp in pairs
                    if req.get("cmd") == cmd and any(s.get("proofState") == recorded for s in resp.get("sorries", []))
                ]
                entry = {**entry, "proofState": self.new_state(lineage)}
            sorries.append(entry)
        return {**answer, "sorries": sorries}

    def step(self, tactic: str, state: int) -> dict | None:
        """A recorded answer to `tactic` on `state`, its states renumbered; the recorded refusal
        for a state this process never gave out."""
        fault = scripted.fault_of(tactic)
        if fault is not None:
            return self.fault(fault, tactic)
        if state not in self.states:
            return {"message": "Unknown proof state."}  # recorded shape: unknown_proof_state
        for name, recorded in self.states[state]:
            for request, response in dict(self.transcripts).get(name, []):
                if request.get("tactic") != tactic or request.get("proofState") != recorded:
                    continue
                if "proofState" not in response:
                    return response
                answer = {**response, "proofState": self.new_state([(name, response["proofState"])])}
                if "sorries" in response:
                    answer["sorries"] = [
                        {**s, "proofState": self.new_state([(name, s["proofState"])])} if "proofState" in s else s
                        for s in response["sorries"]
                    ]
                return answer
        return {"message": f"standin: no recorded response for tactic {tactic[:80]!r}"}

    def recorded(self, cmd: str, env: int | None, infotree: str | None) -> dict | None:
        lineage = self.envs.get(env) if env is not None else None
        candidates = []
        for name, pairs in self.transcripts:
            for request, response in pairs:
                if request.get("cmd") != cmd or "env" not in response:
                    continue
                if request.get("infotree") not in (None, infotree):
                    continue
                follows = lineage is not None and lineage[0] == name and request.get("env") == lineage[1]
                fresh = "env" not in request
                if follows or fresh:
                    candidates.append((0 if follows else 1, name, response))
        if not candidates:
            return None
        candidates.sort(key=lambda c: c[0])
        _, name, response = candidates[0]
        return {**response, "env": self.new_env((name, response["env"]))}

    def fault(self, fault: tuple[str, str], cmd: str) -> dict | None:
        kind, argument = fault
        if kind == "sleep":
            while True:
                time.sleep(3600)
        if kind == "exit-mid-response":
            sys.stdout.write('{"env": ')
            sys.stdout.flush()
            sys.exit(3)
        if kind == "garbage":
            sys.stdout.write("this is not JSON\n\n")
            sys.stdout.flush()
            return None
        if kind == "grow":
            block = bytearray(int(argument) * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
            _HOLD.append(block)
            return {"env": self.new_env(None), "infotree": [scripted.eoi(cmd)]}
        if kind == "kill-host":
            host = os.getppid()
            if host <= 1:
                return {"message": "standin: kill-host sees no host process (started in a PID namespace?)"}
            os.kill(host, signal.SIGKILL)
            while True:
                time.sleep(3600)
        return {"message": f"standin: unknown fault {kind}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transcripts", type=Path)
    parser.add_argument("--control", type=Path)
    parser.add_argument("--instant", action="store_true")
    args = parser.parse_args()
    transcripts = load_transcripts(args.transcripts) if args.transcripts else []
    standin = StandIn(transcripts, args.control, args.instant)
    lines: list[str] = []
    for raw in sys.stdin:
        if raw.strip():
            lines.append(raw.rstrip())
            continue
        if not lines:
            continue
        query, lines = "".join(lines), []
        try:
            request = json.loads(query)
        except json.JSONDecodeError as error:
            answer: dict | None = {"message": f"Could not parse JSON:\n{error}"}
        else:
            answer = standin.answer(request)
        if answer is not None:
            sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
