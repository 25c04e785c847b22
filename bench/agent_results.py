"""What an agent is handed per search, on the LoCoMo dev split: the relevance floor chosen
by leave-one-conversation-out, and compact against full result sizes.

Every question (category != 5) is searched once in its conversation with the floor off
(limit 10, default alpha); the floor's effect is then computed on those rankings. For each
held-out conversation, the floor is chosen on the other four: among the candidates that
cost at most 0.01 recall@10 there, the one that removes the most rows. It is then scored
on the held-out conversation. The default is the choice on all five.

    .venv/bin/python -m bench.agent_results [--data ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.domain.compact import CompactHit, age
from app.logging import configure_logging
from app.main import create_app
from bench.floor import kept
from bench.locomo_retrieval import DEFAULT_DATA, load, questions_of
from bench.support import fresh_database

RATIOS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
MINIMUMS = (0.0, 0.01, 0.02, 0.05, 0.1)
MAX_LOSS = 0.01


@dataclass(frozen=True)
class Asked:
    conversation: str
    evidence: frozenset[str]
    ranked: list[tuple[str, float, float]]  # dia_id, score, similarity


def recall_and_rows(asked: list[Asked], ratio: float, minimum: float) -> tuple[float, int]:
    recall, rows = 0.0, 0
    for a in asked:
        shown = kept([(score, similarity) for _, score, similarity in a.ranked], ratio, minimum)
        recall += len(a.evidence & {a.ranked[i][0] for i in shown}) / len(a.evidence)
        rows += len(shown)
    return recall / len(asked), rows


def choose(asked: list[Asked]) -> tuple[float, float]:
    base, _ = recall_and_rows(asked, 0.0, 0.0)
    best = (0.0, 0.0)
    fewest = recall_and_rows(asked, 0.0, 0.0)[1]
    for ratio in RATIOS:
        for minimum in MINIMUMS:
            recall, rows = recall_and_rows(asked, ratio, minimum)
            if base - recall <= MAX_LOSS and rows < fewest:
                best, fewest = (ratio, minimum), rows
    return best


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    questions = questions_of(data)
    asked: list[Asked] = []
    contents: list[int] = []
    compacts: list[int] = []
    fulls: list[int] = []
    now = datetime.now(UTC)
    async with fresh_database("agent_memory_bench_locomo", reuse=args.reuse) as url:
        app = create_app(Settings(database_url=url), database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                await load(client, url, data)
                for sample, question, evidence, _ in questions:
                    body = {"q": question, "source_repo": sample, "limit": 10}
                    body |= {"floor": False, "track_access": False}
                    answer = (await client.post("/search", json=body)).json()
                    ranked = []
                    for rank, result in enumerate(answer["results"], start=1):
                        memory: dict[str, Any] = result["memory"]
                        ranked.append(
                            (memory["metadata"]["dia_id"], result["score"], result["similarity"])
                        )
                        hit = CompactHit(
                            memory["id"],
                            memory["memory_type"],
                            round(result["score"], 3),
                            age(datetime.fromisoformat(memory["created_at"]), now),
                            tuple(memory["tags"]),
                            memory["content"],
                            memory["context"],
                        )
                        contents.append(len(memory["content"]))
                        compacts.append(len(hit.line(rank)))
                        fulls.append(len(json.dumps(result, ensure_ascii=False)))
                    asked.append(Asked(sample, evidence, ranked))

    conversations = sorted({a.conversation for a in asked})
    print(f"{len(asked)} questions in {len(conversations)} conversations\n")
    print("| held out | floor chosen on the rest | R@10 without | R@10 with | rows removed |")
    print("|---|---|---|---|---|")
    losses, removed = [], []
    for held_out in conversations:
        train = [a for a in asked if a.conversation != held_out]
        test = [a for a in asked if a.conversation == held_out]
        ratio, minimum = choose(train)
        base, rows_base = recall_and_rows(test, 0.0, 0.0)
        floored, rows = recall_and_rows(test, ratio, minimum)
        losses.append(base - floored)
        removed.append(1 - rows / rows_base)
        print(
            f"| {held_out} | {ratio}, {minimum} | {base:.3f} | {floored:.3f} |"
            f" {1 - rows / rows_base:.1%} |"
        )
    print(
        f"\nheld-out recall@10 lost: mean {statistics.mean(losses):.4f}, max {max(losses):.4f};"
        f" rows removed: mean {statistics.mean(removed):.1%}"
        f" (min {min(removed):.1%}, max {max(removed):.1%})"
    )
    ratio, minimum = choose(asked)
    base, rows_base = recall_and_rows(asked, 0.0, 0.0)
    floored, rows = recall_and_rows(asked, ratio, minimum)
    print(
        f"chosen on all five: ratio {ratio}, min {minimum}: R@10 {base:.3f} -> {floored:.3f},"
        f" {1 - rows / rows_base:.1%} of rows removed"
    )
    overhead = [c - n for c, n in zip(compacts, contents, strict=True)]
    print(
        f"\nper result ({len(contents)} results): content {statistics.mean(contents):.0f} chars,"
        f" compact {statistics.mean(compacts):.0f} (content + {statistics.mean(overhead):.0f},"
        f" at most + {max(overhead)}), full JSON {statistics.mean(fulls):.0f}"
        f" (sent twice over MCP before: {2 * statistics.mean(fulls):.0f})"
    )


if __name__ == "__main__":
    asyncio.run(main())
