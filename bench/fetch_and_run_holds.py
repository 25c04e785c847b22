"""The rule that holds a memory telling an agent to run downloaded code or send data out
(app/domain/provenance.py's dangerous_instruction), over text that must not be held and
text that must: its false holds and its misses.

- LoCoMo's development turns (../shared/data/locomo/): every turn of the 5 conversations,
  ordinary talk, as a memory of each would be stored.
- bench/data/coding_lessons.txt: ordinary coding lessons, many naming curl, wget, .env,
  tokens and shells the way a real lesson does.
- bench/data/dangerous_lessons.txt: lessons a web page or an issue comment might plant.

    .venv/bin/python -m bench.fetch_and_run_holds [--data ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from app.domain.provenance import dangerous_instruction

HERE = Path(__file__).resolve().parent
LOCOMO = HERE.parents[1] / "shared" / "data" / "locomo" / "locomo_dev.json"


def corpus(name: str) -> list[str]:
    """A corpus file's lessons: one a line, `#` lines are comments."""
    text = (HERE / "data" / name).read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def locomo_turns(path: Path) -> list[str]:
    turns = []
    for conversation in json.loads(path.read_text()):
        talk = conversation["conversation"]
        for key, session in talk.items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [turn["text"] for turn in session if turn.get("text")]
    return turns


def held(texts: list[str]) -> list[tuple[str, str]]:
    return [(text, why) for text in texts if (why := dangerous_instruction(text)) is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO)
    args = parser.parse_args()
    sets = {
        "LoCoMo dev turns": (locomo_turns(args.data), False),
        "coding lessons (bench/data)": (corpus("coding_lessons.txt"), False),
        "planted lessons (bench/data)": (corpus("dangerous_lessons.txt"), True),
    }
    print("| text | count | held | should be held | ms per 1,000 |")
    print("|---|---|---|---|---|")
    for name, (texts, should) in sets.items():
        began = time.perf_counter()
        found = held(texts)
        ms = (time.perf_counter() - began) * 1000 / max(len(texts), 1) * 1000
        print(
            f"| {name} | {len(texts)} | {len(found)} | {'all' if should else 'none'} | {ms:.1f} |"
        )
        wrong = [t for t, _ in found] if not should else sorted(set(texts) - {t for t, _ in found})
        for text in wrong[:10]:
            print(f"    {'false hold' if not should else 'missed'}: {text[:120]}")


if __name__ == "__main__":
    main()
