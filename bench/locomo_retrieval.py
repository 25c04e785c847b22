"""Retrieval quality on LoCoMo: keyword-only vs vector-only vs hybrid, side by side.

Every turn becomes a memory scoped to its conversation (source_repo = sample_id,
dia_id in metadata), with the turn before it in the session as its `context` (turned
off by --without-context); every non-adversarial question (category != 5) is searched
within its conversation. A hit is a returned memory whose dia_id is in the
question's evidence. Runs the real service in-process with the default embedder.

    .venv/bin/python -m bench.locomo_retrieval [--data ../shared/data/locomo/locomo_dev.json]
        [--loo-alphas 0.3,0.4,0.5,0.6,0.7,0.8]
        [--loo-ranking '0.5,0.6,0.7;0.4,0.6,0.9,1.2;0.1,0.3,0.6;0.1,0.2,0.4']
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import asyncpg
import httpx

import app.repository.search_keyword as search_sql
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


# LoCoMo's question categories as its data numbers them (5, adversarial, is skipped).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SIDES = ("keyword", "vector", "both")


class Question(NamedTuple):
    conversation: str
    text: str
    evidence: frozenset[str]
    category: str


def questions_of(data: list[dict[str, Any]]) -> list[Question]:
    """Every non-adversarial question with evidence, with its conversation and category."""
    return [
        Question(
            c["sample_id"],
            q["question"],
            frozenset(q["evidence"]),
            CATEGORIES.get(q.get("category"), "other"),
        )
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


@contextlib.asynccontextmanager
async def dev_split_service(
    data: list[dict[str, Any]], reuse: bool = True
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """The service in-process on the development split as stored by default (turns with
    their context, the default model), kept between runs unless not `reuse`: for the
    experiments beside this benchmark (bench.absolute_floor, bench.recall_gate)."""
    async with fresh_database("agent_memory_bench_locomo", reuse=reuse) as url:
        app = create_app(Settings(database_url=url), database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                await load(client, url, data)
                yield client, url


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


def side_of(result: dict[str, Any], alpha: float) -> str:
    """Which side carried a hybrid result: the larger of its two weighted parts ("both"
    within 10% of each other)."""
    keyword = (1 - alpha) * result["keyword_score"]
    vector = alpha * result["vector_similarity"]
    if abs(keyword - vector) <= 0.1 * max(keyword, vector):
        return "both"
    return "keyword" if keyword > vector else "vector"


class Scored(NamedTuple):
    question: Question
    metrics: dict[str, float]
    # Evidence turns in the top 10, by the side that found them.
    found_by: dict[str, int]


async def evaluate(
    client: httpx.AsyncClient, questions: list[Question], alpha: float
) -> list[Scored]:
    scored = []
    for question in questions:
        response = await client.post(
            "/search",
            json={
                "q": question.text,
                "source_repo": question.conversation,
                "limit": 20,
                "alpha": alpha,
                "track_access": False,
                "floor": False,  # ranking quality; the floor's cost: bench.agent_results
            },
        )
        response.raise_for_status()
        results = response.json()["results"]
        ranked = [r["memory"]["metadata"]["dia_id"] for r in results]
        found_by = dict.fromkeys(SIDES, 0)
        for result in results[:10]:
            if result["memory"]["metadata"]["dia_id"] in question.evidence:
                found_by[side_of(result, alpha)] += 1
        scored.append(Scored(question, metrics_for(ranked, question.evidence), found_by))
    return scored


def mean(rows: Sequence[Scored], key: str) -> float:
    return sum(r.metrics[key] for r in rows) / len(rows) if rows else float("nan")


def report(name: str, scored: list[Scored]) -> str:
    """The overall row of the main table; the breakdowns are printed by `breakdown`."""
    cells = [mean(scored, f"recall@{k}") for k in KS] + [
        mean(scored, "mrr"),
        mean(scored, "ndcg@10"),
    ]
    return f"| {name} | " + " | ".join(f"{v:.3f}" for v in cells) + " |"


def breakdown(runs: dict[str, list[Scored]]) -> None:
    """R@10 by question category and by conversation (the folds: mean and spread), and
    which side found the evidence each mode returned in its top 10."""
    names = list(runs)
    first = runs[names[0]]
    categories = sorted({r.question.category for r in first})
    print("\nrecall@10 by question category")
    print(
        "| mode | "
        + " | ".join(f"{c} ({sum(r.question.category == c for r in first)})" for c in categories)
        + " |"
    )
    print("|" + "---|" * (len(categories) + 1))
    for name in names:
        cells = [
            mean([r for r in runs[name] if r.question.category == c], "recall@10")
            for c in categories
        ]
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    conversations = sorted({r.question.conversation for r in first})
    print("\nrecall@10 by conversation (fold), with the mean and spread across them")
    print("| mode | " + " | ".join(conversations) + " | mean | sd | min-max |")
    print("|" + "---|" * (len(conversations) + 4))
    for name in names:
        folds = [
            mean([r for r in runs[name] if r.question.conversation == c], "recall@10")
            for c in conversations
        ]
        centre = sum(folds) / len(folds)
        spread = (sum((f - centre) ** 2 for f in folds) / len(folds)) ** 0.5
        print(
            f"| {name} | "
            + " | ".join(f"{f:.3f}" for f in folds)
            + f" | {centre:.3f} | {spread:.3f} | {min(folds):.3f}-{max(folds):.3f} |"
        )
    print("\nevidence in the top 10 of a hybrid search, by the side that carried it")
    print("| mode | keyword | vector | both (within 10%) | total |")
    print("|---|---|---|---|---|")
    for name in (n for n in names if n.startswith("hybrid")):
        sides = {side: sum(r.found_by[side] for r in runs[name]) for side in SIDES}
        total = sum(sides.values())
        print(
            f"| {name} | "
            + " | ".join(f"{sides[s]} ({sides[s] / total:.0%})" for s in SIDES)
            + f" | {total} |"
        )


def leave_one_conversation_out(by_setting: dict[Any, list[Scored]], label: str) -> None:
    """The setting chosen on four conversations, recall@10 measured on the fifth, for each
    fold: what tuning is worth on a conversation it never saw."""
    settings = list(by_setting)
    conversations = sorted({r.question.conversation for r in by_setting[settings[0]]})
    print(f"\nleave-one-conversation-out: {label} chosen on the other four, R@10 on this one")
    print(f"| held out | chosen {label} | R@10 held out | R@10 at the best {label} for it |")
    print("|---|---|---|---|")

    def r10(setting: Any, conversation: str, inside: bool) -> float:
        rows = by_setting[setting]
        chosen = [r for r in rows if (r.question.conversation == conversation) == inside]
        return mean(chosen, "recall@10")

    held_out = []
    for conversation in conversations:
        chosen = max(settings, key=lambda s: r10(s, conversation, inside=False))
        best = max(r10(s, conversation, inside=True) for s in settings)
        held_out.append(r10(chosen, conversation, inside=True))
        print(f"| {conversation} | {chosen} | {held_out[-1]:.3f} | {best:.3f} |")
    centre = sum(held_out) / len(held_out)
    spread = (sum((h - centre) ** 2 for h in held_out) / len(held_out)) ** 0.5
    print(
        f"\nheld-out R@10: mean {centre:.3f}, sd {spread:.3f}, "
        f"min {min(held_out):.3f}, max {max(held_out):.3f}"
    )


class Ranking(NamedTuple):
    """The keyword side's constants (app/repository/search.py) and the fusion weight."""

    alpha: float
    k1: float
    b: float
    context_weight: float

    def __str__(self) -> str:
        return f"alpha {self.alpha}, k1 {self.k1}, b {self.b}, context {self.context_weight}"


@contextlib.contextmanager
def ranking_constants(ranking: Ranking) -> Iterator[None]:
    """The search statement reads these module constants each time it is built."""
    saved = (search_sql.BM25_K1, search_sql.BM25_B, search_sql.FIELD_WEIGHTS)
    others = search_sql.FIELD_WEIGHTS.strip("{}").split(",")[1:]
    search_sql.BM25_K1, search_sql.BM25_B = ranking.k1, ranking.b
    search_sql.FIELD_WEIGHTS = "{" + ", ".join([str(ranking.context_weight), *others]) + "}"
    try:
        yield
    finally:
        search_sql.BM25_K1, search_sql.BM25_B, search_sql.FIELD_WEIGHTS = saved


def grid(spec: str) -> list[Ranking]:
    """`alphas;k1s;bs;context weights`, each comma-separated."""
    axes = [[float(v) for v in part.split(",")] for part in spec.split(";")]
    if len(axes) != 4:
        raise SystemExit("--loo-ranking takes four lists: alphas;k1s;bs;context weights")
    return [Ranking(*values) for values in itertools.product(*axes)]


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
    parser.add_argument(
        "--loo-alphas",
        default="",
        help="comma-separated hybrid alphas to choose from by leave-one-conversation-out",
    )
    parser.add_argument(
        "--loo-ranking",
        default="",
        help="a grid `alphas;k1s;bs;context weights` (each comma-separated) to choose from"
        " jointly by leave-one-conversation-out",
    )
    parser.add_argument(
        "--model",
        default="minilm-l6",
        choices=["minilm-l6", "minilm-l3", "minilm-l6+l3"],
        help="the local embedding model (EMBEDDING_MODEL)",
    )
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    questions = questions_of(data)
    database = "agent_memory_bench_locomo" + ("_alone" if args.without_context else "")
    if args.model != "minilm-l6":
        database += "_" + args.model.replace("minilm-", "").replace("+", "_")
    dim = 768 if "+" in args.model else 384
    os.environ["EMBEDDING_DIM"] = str(dim)  # read by the migration that creates the column
    async with fresh_database(database, reuse=args.reuse) as url:
        settings = Settings(database_url=url, embedding_model=args.model, embedding_dim=dim)
        app = create_app(settings, database_url=url)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                started = time.perf_counter()
                count = await load(client, url, data, with_context=not args.without_context)
                print(
                    f"stored {count} turns in {time.perf_counter() - started:.1f}s; "
                    f"{len(questions)} questions"
                )
                header = ["mode", *[f"R@{k}" for k in KS], "MRR", "nDCG@10"]
                print("| " + " | ".join(header) + " |")
                print("|" + "---|" * len(header))
                runs: dict[str, list[Scored]] = {}
                for alpha in (float(a) for a in args.alphas.split(",")):
                    name = {0.0: "keyword only (alpha 0)", 1.0: "vector only (alpha 1)"}.get(
                        alpha, f"hybrid (alpha {alpha})"
                    )
                    runs[name] = await evaluate(client, questions, alpha)
                    print(report(name, runs[name]))
                breakdown(runs)
                if args.loo_alphas:
                    alphas = [float(a) for a in args.loo_alphas.split(",")]
                    by_alpha = {a: await evaluate(client, questions, a) for a in alphas}
                    leave_one_conversation_out(by_alpha, "alpha")
                if args.loo_ranking:
                    by_ranking = {}
                    for ranking in grid(args.loo_ranking):
                        with ranking_constants(ranking):
                            by_ranking[ranking] = await evaluate(client, questions, ranking.alpha)
                    leave_one_conversation_out(by_ranking, "ranking")


if __name__ == "__main__":
    asyncio.run(main())
