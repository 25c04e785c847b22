"""The absolute relevance floor, chosen by leave-one-conversation-out on the LoCoMo dev split:
the score below which a hybrid search hands back nothing rather than its weakest match.

Every question (category != 5) is searched twice with the floor off (limit 10, default
alpha): in its own conversation, where its evidence is (a "relevant" search), and in the
next conversation of the split, where nothing answers it (an "unanswerable" one). The
floor's effect is then computed on those rankings (bench/floor.py, the statement's rule):
the relative floor stays at its default, and for each held-out conversation the minimum is
chosen on the other four's questions: the highest that costs at most 0.002 recall@10 there.
It is scored on the held-out conversation's questions: recall@10 of the relevant searches,
and how many unanswerable ones come back empty.

    BENCH_DATA_DIR=/tmp/am-locomo .venv/bin/python -m bench.absolute_floor [--reuse]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.logging import configure_logging
from bench.floor import Scored, kept
from bench.locomo_retrieval import DEFAULT_DATA, dev_split_service, questions_of

MINIMUMS = tuple(round(0.01 * i, 2) for i in range(0, 41))
# An absolute floor empties whole answers, so it may cost less than the relative one's 0.01.
MAX_LOSS = 0.002


@dataclass(frozen=True)
class Asked:
    conversation: str
    evidence: frozenset[str]
    relevant: list[tuple[str, Scored]]  # dia_id, (score, similarity): in its conversation
    unanswerable: list[Scored]  # searched in another conversation


def measure(asked: list[Asked], ratio: float, minimum: float) -> tuple[float, float, float]:
    """Recall@10 of the relevant searches, the share of unanswerable ones answered with
    nothing, and the mean number of results an unanswerable one still returns."""
    recall = emptied = rows = 0.0
    for a in asked:
        shown = kept([scored for _, scored in a.relevant], ratio, minimum)
        recall += len(a.evidence & {a.relevant[i][0] for i in shown}) / len(a.evidence)
        left = len(kept(a.unanswerable, ratio, minimum))
        emptied += left == 0
        rows += left
    n = len(asked)
    return recall / n, emptied / n, rows / n


def choose(asked: list[Asked], ratio: float) -> float:
    """The highest minimum costing at most MAX_LOSS recall@10 beside the relative floor alone."""
    base = measure(asked, ratio, 0.0)[0]
    return max(m for m in MINIMUMS if base - measure(asked, ratio, m)[0] <= MAX_LOSS)


def scored(asked: list[Asked], ratio: float, minimum: float) -> str:
    """A table row's cells: the minimum, and its effect on `asked` against none."""
    before, empty_before, rows_before = measure(asked, ratio, 0.0)
    after, empty_after, rows_after = measure(asked, ratio, minimum)
    return (
        f"{minimum} | {before:.3f} | {after:.3f} | {empty_before:.1%} -> {empty_after:.1%}"
        f" | {rows_before:.2f} -> {rows_after:.2f}"
    )


async def searched(client: httpx.AsyncClient, question: str, repo: str) -> list[tuple[str, Scored]]:
    body = {"q": question, "source_repo": repo, "limit": 10, "floor": False}
    answer = (await client.post("/search", json=body | {"track_access": False})).json()
    return [
        (r["memory"]["metadata"]["dia_id"], (r["score"], r["similarity"]))
        for r in answer["results"]
    ]


async def searched_all(
    data: list[dict[str, Any]], elsewhere: dict[str, str], reuse: bool
) -> list[Asked]:
    """Every question searched in its conversation and in the next one, the floor off."""
    asked: list[Asked] = []
    async with dev_split_service(data, reuse) as (client, _):
        for sample, question, evidence, _ in questions_of(data):
            relevant = await searched(client, question, sample)
            other = await searched(client, question, elsewhere[sample])
            asked.append(Asked(sample, evidence, relevant, [s for _, s in other]))
    return asked


async def main() -> None:
    configure_logging("WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database")
    parser.add_argument("--dump", type=Path, help="also write every ranking to this file")
    parser.add_argument("--rankings", type=Path, help="read the rankings --dump wrote instead")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    conversations = [c["sample_id"] for c in data]
    elsewhere = {
        c: conversations[(i + 1) % len(conversations)] for i, c in enumerate(conversations)
    }
    settings = Settings()
    ratio = settings.relevance_floor_ratio
    if args.rankings:
        asked = [
            Asked(
                a["conversation"],
                frozenset(a["evidence"]),
                [(dia, (score, similarity)) for dia, (score, similarity) in a["relevant"]],
                [(score, similarity) for score, similarity in a["unanswerable"]],
            )
            for a in json.loads(args.rankings.read_text())
        ]
    else:
        asked = await searched_all(data, elsewhere, args.reuse)
    if args.dump:
        rows = [dataclasses.asdict(a) | {"evidence": sorted(a.evidence)} for a in asked]
        args.dump.write_text(json.dumps(rows))
    print(
        f"{len(asked)} questions in {len(conversations)} conversations; relative floor {ratio};"
        f" alpha {settings.hybrid_alpha}\n"
    )
    print(
        "| held out | minimum chosen on the rest | R@10 without | R@10 with"
        " | unanswerable answered empty | results an unanswerable search returns |"
    )
    print("|---|---|---|---|---|---|")
    for held_out in conversations:
        train = [a for a in asked if a.conversation != held_out]
        test = [a for a in asked if a.conversation == held_out]
        print(f"| {held_out} | {scored(test, ratio, choose(train, ratio))} |")
    print(f"| chosen on all five | {scored(asked, ratio, choose(asked, ratio))} |")
    best_relevant = [a.relevant[0][1][1] for a in asked if a.relevant]
    best_unanswerable = [a.unanswerable[0][1] for a in asked if a.unanswerable]
    for name, scores in (("relevant", best_relevant), ("unanswerable", best_unanswerable)):
        cuts = statistics.quantiles(scores, n=20)
        print(
            f"the best result's similarity in a {name} search: p5 {cuts[0]:.3f}, p25 {cuts[4]:.3f},"
            f" median {statistics.median(scores):.3f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
