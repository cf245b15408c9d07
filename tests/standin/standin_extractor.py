"""A stand-in for `leanindex-extract`, for tests on machines without Lean.

Writes the NDJSON file named by STANDIN_STREAM to stdout line by line (sleeping STANDIN_DELAY_S
seconds after each line when set), then behaves as STANDIN_MODE says:
  ok        exit 0
  crash     stop after half of the lines, complain on stderr, exit 1
  hang      stop after half of the lines and sleep until killed
  garbage   insert a line that is not JSON after the third line, then go on, exit 0
  truncate  leave out the footer line, exit 0
Its arguments, LEAN_PATH and pid are written as JSON to STANDIN_ARGS_LOG when set.
"""

import json
import os
import sys
import time


def main(args: list[str]) -> int:
    record = os.environ.get("STANDIN_ARGS_LOG")
    if record:
        with open(record, "w", encoding="utf-8") as handle:
            json.dump({"args": args, "lean_path": os.environ.get("LEAN_PATH"), "pid": os.getpid()}, handle)
    mode = os.environ.get("STANDIN_MODE", "ok")
    delay = float(os.environ.get("STANDIN_DELAY_S", "0"))
    with open(os.environ["STANDIN_STREAM"], "rb") as handle:
        lines = handle.read().splitlines(keepends=True)
    print(f"leanindex-extract: importing {' '.join(a for a in args if not a.startswith('-'))}", file=sys.stderr, flush=True)
    if mode in ("crash", "hang"):
        lines = lines[: len(lines) // 2]
    if mode == "truncate":
        lines = lines[:-1]
    out = sys.stdout.buffer
    for number, line in enumerate(lines, start=1):
        out.write(line)
        out.flush()
        if mode == "garbage" and number == 3:
            out.write(b"this is not json\n")
            out.flush()
        if delay:
            time.sleep(delay)
    if mode == "crash":
        print("INTERNAL PANIC: out of memory while printing Nat.add_comm", file=sys.stderr, flush=True)
        return 1
    if mode == "hang":
        print("waiting forever", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)
    if mode == "truncate":
        print("stopping before the footer", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
