"""How long a Claude Code hook takes from exec to exit when it has nothing to send (the
Stop hook of a session it does not know): the interpreter's start and the imports, which
every hook pays before its first request. Median and worst of N runs, side by side for
each command given (default: the client half's).

    .venv/bin/python -m bench.hook_start [-n 30] [--command "CMD ..."]...
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

CLIENT = [str(Path(__file__).resolve().parents[1] / ".venv/bin/agent-memory-client"), "hook"]


def timed(command: list[str], cache: str) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache, "AGENT_MEMORY_URL": "http://127.0.0.1:9"}
    began = time.perf_counter()
    subprocess.run(
        [*command, "stop"], input=b'{"session_id": "unknown"}', env=env,
        capture_output=True, check=True,
    )  # fmt: skip
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=30)
    parser.add_argument("--command", action="append", help="a hook command, before its event")
    args = parser.parse_args()
    commands = [shlex.split(c) for c in args.command] if args.command else [CLIENT]
    with tempfile.TemporaryDirectory() as cache:
        runs: dict[int, list[float]] = {i: [] for i in range(len(commands))}
        for _ in range(args.n):  # interleaved: the machine's load falls on each alike
            for i, command in enumerate(commands):
                runs[i].append(timed(command, cache))
    for i, command in enumerate(commands):
        times = sorted(runs[i])
        print(
            f"{' '.join(command)}: median {statistics.median(times) * 1000:.0f} ms,"
            f" worst {times[-1] * 1000:.0f} ms ({args.n} runs)"
        )


if __name__ == "__main__":
    main()
