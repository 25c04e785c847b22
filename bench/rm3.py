"""Pseudo-relevance feedback on the keyword side (RM3-style expansion), measured before it
is built: the query searched once, the words that weigh most in its top k hits (each hit's
term frequencies, weighted by its score) appended to the query, and the search run again.

The service's keyword side takes a query's distinct words and weighs them by IDF, so the
expansion words cannot be given lower weights than the query's own through the API: this
is the unweighted form, the one a client could do. On the LoCoMo development split (turns
with their context, as bench.locomo_retrieval stores them), hybrid recall@10 without and
with expansion, and (k, words) chosen by leave-one-conversation-out.

    .venv/bin/python -m bench.rm3        # reuses bench.locomo_retrieval's database if kept
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections import Counter

import httpx

from app.logging import configure_logging
from bench.locomo_retrieval import (
    DEFAULT_DATA,
    Question,
    Scored,
    dev_split_service,
    leave_one_conversation_out,
    mean,
    metrics_for,
    questions_of,
)

HITS = (3, 5, 10)
WORDS = (2, 4, 8)
ALPHA = 0.6
# English stop words and LoCoMo's speaker chatter, which every turn has.
STOP = frozenset(
    """a about after again all also am an and any are as at be because been before being but
    by can could did do does doing for from had has have having he her here hers him his how
    i if in into is it its just like me more most my no not now of on one or our out over
    really so some such than that the their them then there these they this to too up very
    was we were what when where which while who why will with would yes you your yeah oh
    wow thanks thank great good hey hi""".split()  # noqa: SIM905 - a word list, read as one
)


def words_of(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z']+", text.lower()) if w not in STOP and len(w) > 2]


async def search(client: httpx.AsyncClient, question: Question, q: str) -> list[dict[str, object]]:
    response = await client.post(
        "/search",
        json={
            "q": q,
            "source_repo": question.conversation,
            "limit": 20,
            "alpha": ALPHA,
            "track_access": False,
            "floor": False,
        },
    )
    response.raise_for_status()
    results: list[dict[str, object]] = response.json()["results"]
    return results


def expansion(results: list[dict[str, object]], query: str, hits: int, words: int) -> list[str]:
    own = set(words_of(query))
    weights: dict[str, float] = {}
    for result in results[:hits]:
        memory = result["memory"]
        assert isinstance(memory, dict)
        counts = Counter(w for w in words_of(str(memory["content"])) if w not in own)
        length = sum(counts.values()) or 1
        for word, n in counts.items():
            weights[word] = weights.get(word, 0.0) + float(str(result["score"])) * n / length
    return sorted(weights, key=lambda w: (-weights[w], w))[:words]


def dia_ids(results: list[dict[str, object]]) -> list[str]:
    out = []
    for r in results:
        memory = r["memory"]
        assert isinstance(memory, dict)
        out.append(str(memory["metadata"]["dia_id"]))
    return out


async def main() -> None:
    configure_logging("WARNING")
    data = json.loads(DEFAULT_DATA.read_text())
    questions = questions_of(data)
    configs = [(0, 0), *itertools.product(HITS, WORDS)]
    by_config: dict[tuple[int, int], list[Scored]] = {c: [] for c in configs}
    async with dev_split_service(data) as (client, _):
        for question in questions:
            first = await search(client, question, question.text)
            by_config[(0, 0)].append(
                Scored(question, metrics_for(dia_ids(first), question.evidence), {})
            )
            for hits, words in configs[1:]:
                extra = expansion(first, question.text, hits, words)
                again = await search(client, question, f"{question.text} {' '.join(extra)}")
                by_config[(hits, words)].append(
                    Scored(question, metrics_for(dia_ids(again), question.evidence), {})
                )
    print("hybrid (alpha 0.6) recall@10 on the development split, by (hits, words) expanded")
    print("| hits, words | R@10 | MRR |")
    print("|---|---|---|")
    for config, rows in by_config.items():
        name = "no expansion" if config == (0, 0) else f"{config[0]}, {config[1]}"
        print(f"| {name} | {mean(rows, 'recall@10'):.3f} | {mean(rows, 'mrr'):.3f} |")
    leave_one_conversation_out(by_config, "(hits, words)")


if __name__ == "__main__":
    asyncio.run(main())
