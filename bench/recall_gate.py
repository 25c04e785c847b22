"""The recall hooks' gate, chosen on LoCoMo (development split): for each question, the hits
a recall would hand over within its budget, against its own conversation's memories (is an
evidence turn among them?) and against another conversation's (is anything handed over at
all? nothing there is relevant). Leave-one-conversation-out: the gate is chosen on four
conversations and scored on the fifth.

A gate is a least vector similarity (cosine, the hit's `vector_similarity`); the budget
packs the compact rendering's cost (content + 100 characters a hit, 4 characters a token).

    .venv/bin/python -m bench.recall_gate [--budget 300] [--data ...]
    BENCH_DATA_DIR=/tmp/am-bench keeps the database between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from app.logging import configure_logging
from bench.locomo_retrieval import DEFAULT_DATA, dev_split_service, questions_of

GATES = [round(0.20 + 0.025 * i, 3) for i in range(21)]  # 0.20 .. 0.70
HIT_OVERHEAD_CHARS = 100  # the compact head and quoting (docs/benchmarks.md)


def handed(hits: list[dict[str, Any]], gate: float, budget_tokens: int) -> list[dict[str, Any]]:
    """The hits a recall hands over: best first, past the gate, within the budget."""
    out: list[dict[str, Any]] = []
    used = 0.0
    for hit in hits:
        if hit["vector_similarity"] < gate:
            continue
        cost = (len(hit["content"]) + HIT_OVERHEAD_CHARS) / 4
        if used + cost > budget_tokens:
            break
        out.append(hit)
        used += cost
    return out


def rates(rows: list[dict[str, Any]], gate: float, budget: int) -> tuple[float, float]:
    """(evidence handed over on its own conversation, anything handed over on another)."""
    found = sum(
        any(h["dia_id"] in r["evidence"] for h in handed(r["own"], gate, budget)) for r in rows
    )
    injected = sum(bool(handed(r["other"], gate, budget)) for r in rows)
    return found / len(rows), injected / len(rows)


def choose(rows: list[dict[str, Any]], budget: int) -> float:
    """The gate that hands over the most evidence for the fewest false injections."""

    def gain(gate: float) -> float:
        found, injected = rates(rows, gate, budget)
        return found - injected

    return max(GATES, key=gain)


async def search(client: Any, q: str, repo: str) -> list[dict[str, Any]]:
    answer = await client.post(
        "/search",
        json={"q": q, "source_repo": repo, "limit": 10, "track_access": False, "scope": "repo"},
    )
    answer.raise_for_status()
    return [
        {
            "dia_id": r["memory"]["metadata"]["dia_id"],
            "content": r["memory"]["content"],
            "vector_similarity": r["vector_similarity"],
            "score": r["score"],
        }
        for r in answer.json()["results"]
    ]


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--budget", type=int, default=300, help="tokens a recall may hand over")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    conversations = [c["sample_id"] for c in data]
    other = {c: conversations[(i + 1) % len(conversations)] for i, c in enumerate(conversations)}
    rows = []
    async with dev_split_service(data) as (client, _):
        for question in questions_of(data):
            rows.append(
                {
                    "conversation": question.conversation,
                    "evidence": sorted(question.evidence),
                    "own": await search(client, question.text, question.conversation),
                    "other": await search(client, question.text, other[question.conversation]),
                }
            )
    print(f"{len(rows)} questions, budget {args.budget} tokens\n")
    print("| gate | evidence handed over | false injections |\n|---|---|---|")
    for gate in GATES:
        found, injected = rates(rows, gate, args.budget)
        print(f"| {gate:.3f} | {found:.3f} | {injected:.3f} |")
    print("\nleave-one-conversation-out:\n")
    print("| held out | gate chosen | evidence handed over | false injections |\n|---|---|---|---|")
    for held in conversations:
        gate = choose([r for r in rows if r["conversation"] != held], args.budget)
        found, injected = rates([r for r in rows if r["conversation"] == held], gate, args.budget)
        print(f"| {held} | {gate:.3f} | {found:.3f} | {injected:.3f} |")
    gate = choose(rows, args.budget)
    print(f"\nchosen on all five: {gate:.3f}, rates {rates(rows, gate, args.budget)}")


if __name__ == "__main__":
    asyncio.run(main())
