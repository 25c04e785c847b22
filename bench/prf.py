"""Pseudo-relevance feedback on the vector side, measured before it is built: the query's
vector moved toward the mean of its top k hits, q' = q + beta * mean(top k), normalised.

An experiment on the LoCoMo development split (the turns stored with their context, as
bench.locomo_retrieval stores them): exact cosine search over each conversation's stored
vectors, recall@10 without and with feedback, and (k, beta) chosen by
leave-one-conversation-out so that the held-out figure is what it would be worth.

    .venv/bin/python -m bench.prf       # reuses bench.locomo_retrieval's database if kept
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import defaultdict

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

from app.config import Settings
from app.embeddings.factory import build_embedder
from app.logging import configure_logging
from bench.locomo_retrieval import DEFAULT_DATA, dev_split_service, metrics_for, questions_of

KS = (3, 5, 10)
BETAS = (0.25, 0.5, 1.0)
Config = tuple[int, float]  # (k, beta); (0, 0.0) is no feedback


def recall_at_10(scores: np.ndarray, ids: list[str], evidence: frozenset[str]) -> float:
    ranked = [ids[i] for i in np.argsort(-scores)[:20]]
    return metrics_for(ranked, evidence)["recall@10"]


async def main() -> None:
    configure_logging("WARNING")
    data = json.loads(DEFAULT_DATA.read_text())
    questions = questions_of(data)
    async with dev_split_service(data) as (_, url):
        conn = await asyncpg.connect(url)
        await register_vector(conn)
        try:
            rows = await conn.fetch(
                "SELECT source_repo, metadata->>'dia_id' AS dia_id, embedding FROM memories"
                " WHERE embedding IS NOT NULL"
            )
        finally:
            await conn.close()
    stored: dict[str, tuple[list[str], np.ndarray]] = {}
    by_conversation: dict[str, list[tuple[str, np.ndarray]]] = defaultdict(list)
    for row in rows:
        by_conversation[row["source_repo"]].append((row["dia_id"], row["embedding"].to_numpy()))
    for conversation, pairs in by_conversation.items():
        stored[conversation] = ([d for d, _ in pairs], np.stack([v for _, v in pairs]))

    embedder = build_embedder(Settings())
    queries = np.array(await embedder.embed([q.text for q in questions], interactive=True))
    configs: list[Config] = [(0, 0.0), *itertools.product(KS, BETAS)]
    recall: dict[Config, list[float]] = {c: [] for c in configs}
    for question, query in zip(questions, queries, strict=True):
        ids, vectors = stored[question.conversation]
        first = vectors @ query
        top = np.argsort(-first)
        for k, beta in configs:
            if k == 0:
                recall[(k, beta)].append(recall_at_10(first, ids, question.evidence))
                continue
            moved = query + beta * vectors[top[:k]].mean(axis=0)
            moved /= np.linalg.norm(moved)
            recall[(k, beta)].append(recall_at_10(vectors @ moved, ids, question.evidence))

    print("vector-only recall@10, exact search (LoCoMo dev, turns with context)")
    print("| k | beta | R@10 |")
    print("|---|---|---|")
    for config in configs:
        values = recall[config]
        print(f"| {config[0]} | {config[1]} | {sum(values) / len(values):.3f} |")

    conversations = sorted({q.conversation for q in questions})
    print("\nleave-one-conversation-out: (k, beta) chosen on four, R@10 on the fifth")
    print("| held out | chosen (k, beta) | with feedback | without |")
    print("|---|---|---|---|")
    gains = []
    for held in conversations:

        def on(config: Config, inside: bool, held: str = held) -> float:
            values = [
                r
                for r, q in zip(recall[config], questions, strict=True)
                if (q.conversation == held) == inside
            ]
            return sum(values) / len(values)

        chosen = max(configs, key=lambda c: on(c, inside=False))
        with_feedback, without = on(chosen, inside=True), on((0, 0.0), inside=True)
        gains.append(with_feedback - without)
        print(f"| {held} | {chosen} | {with_feedback:.3f} | {without:.3f} |")
    print(
        f"\nheld-out gain: mean {sum(gains) / len(gains):+.3f}, "
        f"min {min(gains):+.3f}, max {max(gains):+.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
