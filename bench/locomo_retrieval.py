"""Retrieval quality on LoCoMo: keyword-only vs vector-only vs hybrid, side by side.

Every turn becomes a memory scoped to its conversation (source_repo = sample_id,
dia_id in metadata), with the turn before it in the session as its `context` (turned
off by --without-context); every non-adversarial question (category != 5) is searched
within its conversation. A hit is a returned memory whose dia_id is in the
question's evidence. Runs the real service in-process with the default embedder.

    .venv/bin/python -m bench.locomo_retrieval [--data ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app.config import Settings
from app.logging import configure_logging
from app.main import create_app
from bench.support import fresh_database

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
)
KS = (1, 5, 10, 20)


def turns_of(conversation: dict[str, Any], with_context: bool = True) -> list[dict[str, Any]]:
    sample = conversation["sample_id"]
    conv = conversation["conversation"]
    memories = []
    for key, turns in conv.items():
        if not key.startswith("session_") or not isinstance(turns, list):
            continue
        when = conv.get(f"{key}_date_time")
        previous = None
        for turn in turns:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            memory = {
                "content": text,
                "memory_type": "general",
                "source_repo": sample,
                "source": "import",
                "metadata": {"dia_id": turn["dia_id"], "session_date": when},
            }
            if with_context and previous is not None:
                memory["context"] = previous
            memories.append(memory)
            previous = text
    return memories


def questions_of(data: list[dict[str, Any]]) -> list[tuple[str, str, frozenset[str]]]:
    """(conversation, question, evidence dia_ids) for every non-adversarial question."""
    return [
        (c["sample_id"], q["question"], frozenset(q["evidence"]))
        for c in data
        for q in c["qa"]
        if q.get("category") != 5 and q.get("evidence")
    ]


async def load(
    client: httpx.AsyncClient, url: str, data: list[dict[str, Any]], with_context: bool = True
) -> int:
    """Store every turn (unless the database already holds them), then ANALYZE; the count
    stored."""
    count = 0
    if not (await client.get("/stats")).raise_for_status().json()["total"]:
        for conversation in data:
            memories = turns_of(conversation, with_context=with_context)
            for i in range(0, len(memories), 500):
                batch = {"memories": memories[i : i + 500]}
                (await client.post("/memories/batch", json=batch)).raise_for_status()
            count += len(memories)
    # As the owner: the service's pooled connections run as a role that may not.
    owner = await asyncpg.connect(url)
    try:
        await owner.execute("ANALYZE memories")
    finally:
        await owner.close()
    return count


def metrics_for(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall@{k}"] = len(evidence & set(ranked[:k])) / len(evidence)
    first = next((i for i, d in enumerate(ranked) if d in evidence), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in evidence)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(evidence), 10)))
    out["ndcg@10"] = dcg / ideal
    return out


async def evaluate(
    client: httpx.AsyncClient, questions: list[tuple[str, str, frozenset[str]]], alpha: float
) -> dict[str, float]:
    totals: dict[str, float] = {}
    for sample, question, evidence in questions:
        response = await client.post(
            "/search",
            json={
                "q": question,
                "source_repo": sample,
                "limit": 20,
                "alpha": alpha,
                "track_access": False,
                "floor": False,  # ranking quality; the floor's cost: bench.agent_results
            },
        )
        response.raise_for_status()
        ranked = [r["memory"]["metadata"]["dia_id"] for r in response.json()["results"]]
        for key, value in metrics_for(ranked, evidence).items():
            totals[key] = totals.get(key, 0.0) + value
    return {key: value / len(questions) for key, value in totals.items()}


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--alphas", default="0,1,0.6", help="comma-separated; 0 = keyword only")
    parser.add_argument(
        "--without-context",
        action="store_true",
        help="store each turn alone, without the turn before it as its context",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep the loaded database between runs (tuning)"
    )
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    questions = questions_of(data)
    database = "agent_memory_bench_locomo" + ("_alone" if args.without_context else "")
    async with fresh_database(database, reuse=args.reuse) as url:
        settings = Settings(database_url=url)
        app = create_app(settings, database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                started = time.perf_counter()
                count = await load(client, url, data, with_context=not args.without_context)
                print(
                    f"stored {count} turns in {time.perf_counter() - started:.1f}s; "
                    f"{len(questions)} questions"
                )
                header = ["mode", *[f"R@{k}" for k in KS], "MRR", "nDCG@10"]
                print("| " + " | ".join(header) + " |")
                print("|" + "---|" * len(header))
                for alpha in (float(a) for a in args.alphas.split(",")):
                    name = {0.0: "keyword only (alpha 0)", 1.0: "vector only (alpha 1)"}.get(
                        alpha, f"hybrid (alpha {alpha})"
                    )
                    m = await evaluate(client, questions, alpha)
                    cells = [m[f"recall@{k}"] for k in KS] + [m["mrr"], m["ndcg@10"]]
                    print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")


if __name__ == "__main__":
    asyncio.run(main())
