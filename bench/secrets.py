"""The secret screen measured: detection on credentials in their real formats (samples made
per detector, and bench/secret_corpus.py's hand-written corpus, with encoded and split
forms), and false refusals on text that holds none (the corpus's look-alikes, the LoCoMo dev
split's turns, and this project's own docs and code cut into memory-sized pieces).

    .venv/bin/python -m bench.secrets [--data ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from app.domain.errors import InvalidInputError
from app.domain.memory import NewMemory
from app.domain.secrets.find import find_secrets
from app.domain.secrets.screen import screen_memory
from bench import secret_corpus
from bench.secret_samples import samples

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
CHUNK_CHARS = 1_000


def locomo_turns(path: Path) -> Iterator[str]:
    for conversation in json.loads(path.read_text()):
        talk = conversation["conversation"]
        for key, turns in talk.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    yield turn["text"]
                    if turn.get("blip_caption"):
                        yield turn["blip_caption"]


def project_chunks() -> Iterator[tuple[str, str]]:
    """(file, piece) of README, docs, app, tests, bench and migrations, cut on line ends."""
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("app", "tests", "bench", "migrations", "integrations"):
        files += sorted(
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in {".py", ".md", ".sh", ".json", ".html"}
        )
    for path in files:
        piece = ""
        for line in path.read_text(errors="replace").splitlines(keepends=True):
            if len(piece) + len(line) > CHUNK_CHARS and piece:
                yield str(path.relative_to(ROOT)), piece
                piece = ""
            piece += line
        if piece.strip():
            yield str(path.relative_to(ROOT)), piece


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LOCOMO)
    args = parser.parse_args()

    made = samples()
    missed = Counter(kind for kind, text in made if not find_secrets(text))
    kinds = Counter(kind for kind, _ in made)
    found = len(made) - sum(missed.values())
    print(f"detection: {found} of {len(made)} ({found / len(made):.1%}) over {len(kinds)} kinds")
    for kind in sorted(kinds):
        print(f"  {kind:24} {kinds[kind] - missed[kind]}/{kinds[kind]}")

    report("corpus credentials", secret_corpus.positives(), want=True)
    report("held-out credentials", secret_corpus.held_out(), want=True)
    report("corpus look-alikes (false refusals)", secret_corpus.negatives(), want=False)
    report("encoded credentials", secret_corpus.encoded(), want=True)
    split = secret_corpus.split()
    caught = sum(refused_as_memory(content, context) for _, content, context in split)
    print(f"split between content and context: {caught} of {len(split)} refused")

    turns = list(locomo_turns(args.data))
    started = time.perf_counter()
    refused = [t for t in turns if find_secrets(t)]
    took = time.perf_counter() - started
    print(
        f"LoCoMo dev turns: {len(refused)} of {len(turns)} refused"
        f" ({took / len(turns) * 1e6:.0f} us a turn)"
    )
    for text in refused[:10]:
        print("   ", text[:120])

    chunks = list(project_chunks())
    flagged = [(f, c, find_secrets(c)) for f, c in chunks]
    flagged = [x for x in flagged if x[2]]
    print(
        f"project docs and code, {CHUNK_CHARS}-character pieces:"
        f" {len(flagged)} of {len(chunks)} refused"
    )
    for file, _, findings in flagged:
        print(f"    {file}: {', '.join(sorted({f.kind for f in findings}))}")


def report(title: str, cases: list[tuple[str, str]], *, want: bool) -> None:
    """How many cases the screen flags, by kind; `want`: whether it should."""
    hits = Counter(kind for kind, text in cases if bool(find_secrets(text)))
    kinds = Counter(kind for kind, _ in cases)
    total = sum(hits.values())
    print(f"{title}: {total} of {len(cases)} flagged ({total / len(cases):.1%})")
    for kind in sorted(kinds):
        if (hits[kind] < kinds[kind]) if want else hits[kind]:
            print(f"  {kind:24} {hits[kind]}/{kinds[kind]}")


def refused_as_memory(content: str, context: str) -> bool:
    try:
        screen_memory(NewMemory(content, context=context), "refuse")
    except InvalidInputError:
        return True
    return False


if __name__ == "__main__":
    main()
