"""How long import-files takes to read a file agents read at the size Codex's memories reach
(openai/codex#29818: a MEMORY.md of 2,450 lines and 325 KB): a file of that shape, written
here (49 task groups of 49 rules each), read into its rules as import-files reads one.
Median of N reads, and what the bounds leave (rules read, rules drafted).

    .venv/bin/python -m bench.rule_files_read [-n 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agent_memory_client.rule_files import read_file
from agent_memory_client.rule_files.where import RuleFile

GROUPS, LINES = 49, 50


def codex_memory() -> str:
    """A MEMORY.md of task groups, each a heading and its rules (2,450 lines, 390 KB)."""
    return "".join(
        f"# Task group {g}\n"
        if n == 0
        else f"- In service {g}-{n}, the retry budget is {n} attempts with jittered backoff;"
        " never retry a 4xx response, log it with the request id and move on to the next"
        " message.\n"
        for g in range(GROUPS)
        for n in range(LINES)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("-n", type=int, default=5, help="reads (default 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "MEMORY.md"
        path.write_text(codex_memory())
        file = RuleFile(path, "~/.codex/memories/MEMORY.md", "Codex memories")
        times = []
        for _ in range(args.n):
            began = time.perf_counter()
            read = read_file(file)
            times.append(time.perf_counter() - began)
        lines = path.read_text().count("\n")
        print(
            f"{lines} lines, {path.stat().st_size} bytes: {len(read.rules)} rules read,"
            f" {len(read.drafted)} drafted ({read.left_out} past the bound), cut: {read.cut};"
            f" median {statistics.median(times) * 1000:.0f} ms a read of {args.n}"
        )


if __name__ == "__main__":
    main()
