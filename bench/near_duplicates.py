"""The near-duplicate thresholds at write time (app/domain/duplicates.py), on LoCoMo's turns
(development split). False merges: a turn whose nearest other turn of its conversation
passes the rule (different turns must stay different). Merges found: near-duplicates made
from each turn by an edit an agent's re-statement makes (case and punctuation, a word
dropped, a short clause added). Likely contradictions flagged: the same turns with a
negation added.

    .venv/bin/python -m bench.near_duplicates [--data ...] [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np

from app.config import Settings
from app.domain.duplicates import Neighbour, judge, opposed, overlap, said
from app.embeddings.factory import build_embedder
from bench.locomo_retrieval import DEFAULT_DATA, turns_of

ID = UUID(int=1)
SIMILARITIES = (0.85, 0.88, 0.9, 0.92, 0.94, 0.95, 0.96, 0.97)
OVERLAPS = (0.4, 0.5, 0.6, 0.7, 0.8)


def restated(text: str, rng: random.Random) -> str:
    """What an agent's second telling of the same thing looks like."""
    words = text.split()
    kind = rng.randrange(3)
    if kind == 0:
        return re.sub(r"[.!?,]", "", text).lower()
    if kind == 1 and len(words) > 4:
        del words[rng.randrange(1, len(words))]
        return " ".join(words)
    return text.rstrip(".!?") + rng.choice([", as noted before.", ", again.", " too."])


def negated(text: str) -> str:
    return re.sub(r"\b(is|are|was|were|can|will|do|does|did)\b", r"\1 not", text, count=1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    embedder = build_embedder(Settings())
    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    for conversation in data:
        turns = [t["content"] for t in turns_of(conversation, with_context=False)]
        copies = [restated(t, rng) for t in turns]
        flipped = [negated(t) for t in turns]
        vectors = np.array(await embedder.embed(turns + copies + flipped), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        n = len(turns)
        base, copy, flip = vectors[:n], vectors[n : 2 * n], vectors[2 * n :]
        among = base @ base.T
        np.fill_diagonal(among, -1)
        for i, text in enumerate(turns):
            j = int(among[i].argmax())
            verdicts = {
                name: judge(new, "general", [Neighbour(ID, text, "general", similarity)])
                for name, new, similarity in (
                    ("other", turns[j], float(among[i, j])),
                    ("copy", copies[i], float(base[i] @ copy[i])),
                    ("flip", flipped[i], float(base[i] @ flip[i])),
                )
            }
            this, other, copied = said(text), said(turns[j]), said(copies[i])
            rows.append({
                "other": (float(among[i, j]), overlap(this, other), opposed(this, other)),
                "copy": (float(base[i] @ copy[i]), overlap(this, copied),
                         opposed(this, copied)),
                "flip": (float(base[i] @ flip[i]), flipped[i] != text),
                "verdicts": verdicts,
            })  # fmt: skip
    print(f"{len(rows)} turns of {len(data)} conversations\n")
    print("| cosine >= | overlap >= | false merges (other turns) | merges found (restated) |")
    print("|---|---|---|---|")
    for s in SIMILARITIES:
        for o in OVERLAPS:
            false = sum(r["other"][0] >= s and r["other"][1] >= o and not r["other"][2]
                        for r in rows)  # fmt: skip
            found = sum(r["copy"][0] >= s and r["copy"][1] >= o and not r["copy"][2]
                        for r in rows)  # fmt: skip
            print(f"| {s:.2f} | {o:.1f} | {false} ({false / len(rows):.4f}) |"
                  f" {found / len(rows):.3f} |")  # fmt: skip

    def share(name: str, kind: str, among: list[dict[str, Any]] = rows) -> str:
        hits = sum(getattr(r["verdicts"][name], kind) is not None for r in among)
        return f"{hits / len(among):.4f}"

    changed = [r for r in rows if r["flip"][1]]
    print("\nThe rule as shipped (app/domain/duplicates.py's judge):\n")
    print("| | merged | named as may-supersede |\n|---|---|---|")
    print(
        f"| nearest other turn (must stay apart) | {share('other', 'merge_into')} |"
        f" {share('other', 'may_supersede')} |"
    )
    print(
        f"| restated turn (should merge) | {share('copy', 'merge_into')} |"
        f" {share('copy', 'may_supersede')} |"
    )
    print(
        f"| negated turn (should be named) | {share('flip', 'merge_into', changed)} |"
        f" {share('flip', 'may_supersede', changed)} |"
    )
    flips = changed
    print("\n| contradiction at cosine >= | negated turns flagged | other turns flagged |")
    print("|---|---|---|")
    for s in (0.75, 0.8, 0.85, 0.9):
        flagged = sum(r["flip"][0] >= s for r in flips) / len(flips)
        wrongly = sum(r["other"][0] >= s and r["other"][2] for r in rows) / len(rows)
        print(f"| {s:.2f} | {flagged:.3f} of {len(flips)} | {wrongly:.4f} |")


if __name__ == "__main__":
    asyncio.run(main())
