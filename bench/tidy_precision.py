"""Tidy proposals' precision (app/domain/tidy.py), on data labelled by hand: what share of
the merge, replace and retire proposals a person tidying the memory would accept.

- `locomo`: every turn of each LoCoMo development conversation as a memory of its own
  repository, its nearest turns read exactly (`near_pairs_of` here, as the service's one
  read of the nearest reads a small repository) and proposals made by the service's own
  function `pair_proposals`. Labels: bench/data/tidy_labels_locomo.json, by dia_id (no
  text of the data is kept here), each true where
  the turns say the same thing (merge) or the newer corrects the older (replace).
- `scripted`: a codebase's memory as an agent team writes it over months (bench/data/
  tidy_history.json): restatements of one lesson, decisions that changed, and lessons
  about neighbouring things that are all true (which a proposal must leave alone). Labels
  come with the script.
- `retire`: lessons about encode/httpx's files as learned at 0.23.0, each labelled by hand
  at 0.24.0 and at 0.28.0, one and two and a half years later, outdated or not (bench/data/
  tidy_retire_httpx.json, with the files `git diff --name-only` gives since 0.23.0). A
  retire proposal is a memory whose files changed (the session start's stale mark: its
  `files` overlap the changed ones), then 14 days unread; the history cannot say who read
  what, so every marked memory counts as unread: right when it is outdated.
- `heldout`: a second such history (bench/data/tidy_history_heldout.json), written before
  the contradiction rule of 2026-11-30 was tried on it: the rule was shaped on the two
  above, so this is the figure that says whether it generalises.

    .venv/bin/python -m bench.tidy_precision locomo [--show]    # --show: each, labelled
    .venv/bin/python -m bench.tidy_precision scripted [--show]
    .venv/bin/python -m bench.tidy_precision heldout [--show]
    .venv/bin/python -m bench.tidy_precision retire [--show]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID, uuid5

import numpy as np

from app.config import Settings
from app.domain.duplicates import CONTRADICTION_SIMILARITY, NEAREST
from app.domain.tidy import Candidate, NearPair, Proposal, pair_proposals, retire_proposal
from app.embeddings.factory import build_embedder
from bench.locomo_retrieval import DEFAULT_DATA, turns_of

HERE = Path(__file__).parent / "data"
LABELS = HERE / "tidy_labels_locomo.json"
RETIRE = HERE / "tidy_retire_httpx.json"
HISTORIES = {"scripted": HERE / "tidy_history.json", "heldout": HERE / "tidy_history_heldout.json"}


BLOCK = 512  # rows of cosines at a time


# Each item's nearest others read exactly, as the service's one read of the nearest does for
# a repository small beside the graph (memory_nearest(), app/repository/nearest.py), here in
# memory.
def near_pairs_of(
    memories: list[Candidate], vectors: np.ndarray, nearest: int, min_similarity: float
) -> list[NearPair]:
    """Each memory's `nearest` others (of one repository: the caller's scope), at
    `min_similarity` or nearer, each pair once: exact cosines, a block of rows at a time so
    that a scope of n memories takes BLOCK x n floats, not n x n."""
    if len(memories) < 2:
        return []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    units = (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)
    take = min(nearest, len(memories) - 1)
    seen: set[tuple[int, int]] = set()
    pairs = []
    for start in range(0, len(memories), BLOCK):
        cosines = units[start : start + BLOCK] @ units.T
        for row in range(cosines.shape[0]):
            cosines[row, start + row] = -1.0  # not itself
        best = np.argpartition(-cosines, take - 1, axis=1)[:, :take]
        for row, columns in enumerate(best):
            i = start + row
            for j in (int(c) for c in columns):
                similarity = float(cosines[row, j])
                key = (min(i, j), max(i, j))
                if similarity >= min_similarity and key not in seen:
                    seen.add(key)
                    pairs.append(NearPair(memories[i], memories[j], similarity))
    return pairs


NAMESPACE = UUID(int=52)
START = datetime(2026, 1, 1, tzinfo=UTC)


def candidates(items: list[tuple[str, str, str]]) -> list[Candidate]:
    """items: (key, text, memory_type), in the order written."""
    return [
        Candidate(uuid5(NAMESPACE, key), text, kind, "r", 1, START + timedelta(hours=i), 0)
        for i, (key, text, kind) in enumerate(items)
    ]


def label_key(proposal: Proposal, keys: dict[UUID, str]) -> str:
    return proposal.kind + ":" + "|".join(sorted(keys[i] for i in proposal.memory_ids))


async def proposals_of(
    groups: list[list[tuple[str, str, str]]],
) -> tuple[list[Proposal], dict[UUID, str], dict[str, str]]:
    embedder = build_embedder(Settings())
    found: list[Proposal] = []
    keys: dict[UUID, str] = {}
    texts: dict[str, str] = {}
    for items in groups:
        vectors = np.array(await embedder.embed([t for _, t, _ in items]), dtype=np.float32)
        pairs = near_pairs_of(candidates(items), vectors, NEAREST, CONTRADICTION_SIMILARITY)
        found += pair_proposals(pairs)
        for key, text, _ in items:
            keys[uuid5(NAMESPACE, key)] = key
            texts[key] = text
    return found, keys, texts


def report(
    found: list[Proposal], keys: dict[UUID, str], texts: dict[str, str],
    labels: dict[str, bool], show: bool, items: int,
) -> None:  # fmt: skip
    print(f"{items} memories, {len(found)} proposals\n")
    print("| kind | proposals | labelled | accepted | precision |\n|---|---|---|---|---|")
    for kind in ("merge", "replace"):
        mine = [p for p in found if p.kind == kind]
        labelled = [labels[k] for p in mine if (k := label_key(p, keys)) in labels]
        right = sum(labelled)
        precision = f"{right / len(labelled):.2f}" if labelled else "-"
        print(f"| {kind} | {len(mine)} | {len(labelled)} | {right} | {precision} |")
    if show:
        for p in found:
            key = label_key(p, keys)
            print(f"\n{key}  (cosine {p.similarity or 0:.3f}, labelled {labels.get(key)})")
            for i in p.memory_ids:
                print(f"    {texts[keys[i]]}")


def scripted_labels(
    found: list[Proposal], keys: dict[UUID, str], history: dict[str, Any]
) -> dict[str, bool]:
    """A merge is right when all its memories restate one lesson; a replace, when it keeps
    the newer of a decision that changed."""
    same = [set(group) for group in history["same"]]
    changed = {tuple(pair) for pair in history["changed"]}
    labels = {}
    for p in found:
        named = [keys[i] for i in p.memory_ids]
        if p.kind == "merge":
            right = any(set(named) <= group for group in same)
        else:
            right = (named[1], named[0]) in changed  # the newer kept first
        labels[label_key(p, keys)] = right
    return labels


def retire_precision(show: bool) -> None:
    data = json.loads(RETIRE.read_text())
    memories = data["memories"]
    learned = candidates([(m["key"], m["text"], "learning") for m in memories])
    print(f"{len(memories)} memories learned at {data['learned_at']['tag']}\n")
    print("| checked at | proposals | outdated among them | outdated in all | precision |")
    print("|---|---|---|---|---|")
    shown = []
    for check in data["checks"]:
        changed, outdated = set(check["changed_files"]), check["outdated"]
        found = [
            (retire_proposal(candidate, f"{', '.join(files)} changed"), memory)
            for candidate, memory in zip(learned, memories, strict=True)
            if (files := sorted(changed.intersection(memory["files"])))
        ]
        right = sum(memory["key"] in outdated for _, memory in found)
        print(f"| {check['tag']} ({check['date']}) | {len(found)} | {right} | {len(outdated)} |"
              f" {right / len(found):.2f} |")  # fmt: skip
        shown += [(check["tag"], p, m, outdated.get(m["key"])) for p, m in found]
    for tag, proposal, memory, why in shown if show else []:
        print(f"\n{tag} {memory['key']}: {'outdated: ' + why if why else 'holds'}")
        print(f"    {memory['text']}\n    {proposal.reason}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", choices=["locomo", *HISTORIES, "retire"])
    parser.add_argument("--locomo", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", action="store_true", help="print each proposal and its label")
    args = parser.parse_args()
    if args.data == "retire":
        retire_precision(args.show)
        return
    if args.data == "locomo":
        conversations = json.loads(args.locomo.read_text())
        groups = [
            [(f"{c['sample_id']}/{t['metadata']['dia_id']}", t["content"], "general")
             for t in turns_of(c, with_context=False)]
            for c in conversations
        ]  # fmt: skip
        labels = json.loads(LABELS.read_text()) if LABELS.exists() else {}
        found, keys, texts = await proposals_of(groups)
    else:
        history = json.loads(HISTORIES[args.data].read_text())
        groups = [[(m["key"], m["text"], m["type"]) for m in history["memories"]]]
        found, keys, texts = await proposals_of(groups)
        labels = scripted_labels(found, keys, history)
    report(found, keys, texts, labels, args.show, sum(len(g) for g in groups))


if __name__ == "__main__":
    asyncio.run(main())
