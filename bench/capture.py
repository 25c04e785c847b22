"""Capture from past sessions, measured on real sessions labelled by hand.

    .venv/bin/python -m bench.capture [--sessions DIR] [--labels DIR] [--judged FILE]
        [--show] [--folder OWNER__REPO] [--loro]

Reads every labelled session (bench/data/capture_labels/, its README is the rubric) with
the product's own readers, names its repository as `import-history` does on a machine where
its folder is gone (measured apart: the drafts are made under the repository a person's
`--map` would name), and makes its drafts with the product's rules
(client/agent_memory_client/history/capture.py). Then, per kind (fix, instruction,
convention):

- drafts: how many, after one lesson once across sessions (as the import queues them);
- on a lesson: drafts made from a labelled lesson's moments (they share an anchor), the
  structural half of "useful": the draft points at what a person needs;
- judged: where a person (or a helper briefed with the rubric) judged the draft's text
  (`--judged`, bench/data/capture_judged.json: useful as written, after a light rewrite,
  or not useful), the shares; unjudged drafts are counted apart;
- recall: labelled lessons (one per id and repository) at least one draft is on.

And for provenance: outsider reads labelled and missed, calls flagged that no label calls
an outsider read (false alarms), and sessions held only by false alarms; for the
repository: sessions named, named right, and left out.

`--loro` prints the same figures per repository with that repository left out of nothing
the rules learn (they learn nothing from data: the figure per held-out repository is the
one to read, and the spread across repositories says how far the rules generalise).
`--show` prints every draft with its verdict. Nothing is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory_client.history import (
    Found,
    Origin,
    Report,
    Transcript,
    history_found,
    named_sessions,
)
from agent_memory_client.history.capture import candidates_of, outsider_reads
from agent_memory_client.history.formats import read_any
from agent_memory_client.history.repository import Namer

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT.parent / "shared" / "data" / "sessions"
LABELS = ROOT / "bench" / "data" / "capture_labels"
JUDGED = ROOT / "bench" / "data" / "capture_judged.json"
KINDS = ("fix", "instruction", "convention")
# A draft of one kind may stand on a lesson labelled as the other: a fix made by running a
# setup step is often labelled a convention, and the reverse.
COMPATIBLE = {
    "fix": {"fix", "convention"},
    "convention": {"convention", "fix"},
    "instruction": {"instruction"},
}
VERDICTS = ("as_written", "light_rewrite", "not_useful")
MIN_SHARED_WORDS = 2
STOPWORDS = frozenset(
    {
        "this",
        "that",
        "with",
        "from",
        "have",
        "when",
        "then",
        "than",
        "they",
        "them",
        "into",
        "only",
        "also",
        "what",
        "which",
        "there",
        "their",
        "about",
        "would",
        "should",
        "could",
        "your",
        "does",
        "just",
        "like",
        "more",
        "some",
        "each",
        "every",
        "before",
        "after",
    }
)


@dataclass
class Session:
    folder: str
    file: str
    label: dict[str, Any]
    transcript: Transcript | None = None
    repo: str | None = None
    why: str = ""
    drafts: list[Found] = field(default_factory=list)


@dataclass
class Figures:
    drafts: Counter[str] = field(default_factory=Counter)
    on_lesson: Counter[str] = field(default_factory=Counter)
    judged: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    lessons: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)
    reads: int = 0
    missed: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)
    sessions: int = 0
    falsely_held: list[str] = field(default_factory=list)
    exposed: int = 0  # sessions that made a labelled outsider read
    unheld: list[str] = field(default_factory=list)  # ... and that nothing flagged
    named: int = 0
    named_right: int = 0
    named_by_folder: int = 0
    named_wrong: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    by_rule: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def draft_id(session: Session, draft: Found) -> str:
    """A draft as its judges named it: its session's file (a convention: its repository's
    folder, whichever session carries it), its kind, and its text's digest."""
    digest = hashlib.sha1(draft.text.encode()).hexdigest()[:12]
    where = session.folder if draft.kind == "convention" else session.file
    return f"{where}#{draft.kind}#{digest}"


def load(labels: Path, sessions: Path, only: str | None) -> list[Session]:
    found = []
    for path in sorted(labels.glob("*.json")):
        data = json.loads(path.read_text())
        if only and data["folder"] != only:
            continue
        for label in data["sessions"]:
            found.append(Session(data["folder"], label["file"], label))
    for session in found:
        session.transcript = read_any(sessions / session.file)
    # Named as the import names them (another session of its folder may name one).
    by_origin = {s.transcript.origin: s for s in found if s.transcript is not None}
    report = Report()
    read = (s.transcript for s in found if s.transcript is not None)
    for transcript, repo, _ in named_sessions(read, report, name_of=Namer().name):
        by_origin[transcript.origin].repo = repo
    for left in report.left_out:
        by_origin[Origin(left.client, left.session)].why = left.reason
    return found


def mapped_repository(session: Session) -> str:
    """The repository a person who ran `import-history --map` would name for the session:
    the one it worked in, else the one its transcript was stored for."""
    labelled = (session.label.get("works_in") or {}).get("repository")
    return str(labelled or session.folder.replace("__", "/", 1))


def capture(sessions: list[Session]) -> None:
    """Each session's drafts, its repository's conventions from all of its sessions, then
    one lesson once per repository, as the import does; every session named as a person's
    map names it (the naming is measured apart)."""
    by_origin = {s.transcript.origin: s for s in sessions if s.transcript is not None}
    found = history_found(
        (s.transcript for s in sessions if s.transcript is not None),
        Report(),
        name_of=lambda t: (mapped_repository(by_origin[t.origin]), None, ""),
    )
    for origin, _, draft in found:
        by_origin[origin].drafts.append(draft)


def words(text: str) -> set[str]:
    """A text's words of four letters or more, lower case: what two sentences about one
    thing share."""
    return {w for w in re.findall(r"[a-z0-9_]{4,}", text.lower()) if w not in STOPWORDS}


def says_some(draft: Found, lesson: set[str]) -> bool:
    """The draft says some of what the lesson says: MIN_SHARED_WORDS of its words, in its
    text or its evidence (a draft on a lesson's moment that says something else, a brief's
    other bullet, is not on it)."""
    said = words(" ".join([draft.text, *draft.evidence.values()]))
    return len(said & lesson) >= MIN_SHARED_WORDS


def measure(sessions: list[Session], judged: dict[str, str]) -> Figures:
    figures = Figures()
    lesson_kinds: dict[tuple[str, str], str] = {}
    lesson_anchors: dict[tuple[str, str], set[str]] = defaultdict(set)
    lesson_words: dict[tuple[str, str], set[str]] = {}
    folder_anchors: dict[str, set[str]] = defaultdict(set)
    for session in sessions:
        for lesson in session.label["lessons"]:
            key = (session.folder, lesson["id"])
            lesson_kinds[key] = lesson["kind"]
            lesson_anchors[key] |= {f"{session.file}|{a}" for a in lesson["evidence"]}
            lesson_words[key] = words(lesson["lesson"])
            folder_anchors[session.folder] |= {f"{session.file}|{a}" for a in lesson["evidence"]}
    for kind in lesson_kinds.values():
        figures.lessons[kind] += 1
    recalled: set[tuple[str, str]] = set()
    for session in sessions:
        figures.sessions += 1
        _repository(session, figures)
        _provenance(session, figures)
        for draft in session.drafts:
            figures.drafts[draft.kind] += 1
            anchors = {f"{session.file}|{a}" for a in draft.anchors}
            if draft.kind == "convention":  # read over all of the repository's sessions
                anchors = {
                    k
                    for k in folder_anchors[session.folder]
                    if k.split("|")[1] in set(draft.anchors)
                }
            hits = [
                key
                for key, kind in lesson_kinds.items()
                if key[0] == session.folder
                and kind in COMPATIBLE[draft.kind]
                and anchors & lesson_anchors[key]
                and says_some(draft, lesson_words[key])
            ]
            figures.by_rule[draft.why]["drafts"] += 1
            if hits:
                figures.on_lesson[draft.kind] += 1
                figures.by_rule[draft.why]["on a lesson"] += 1
                recalled.update(hits)
            verdict = judged.get(draft_id(session, draft), "unjudged")
            figures.judged[draft.kind][verdict] += 1
            figures.shown.append(
                f"{draft.why:<22} {'ON ' + ','.join(h[1] for h in hits) if hits else 'off'}"
                f" [{verdict}] {session.file}\n    {draft.text}\n    id {draft_id(session, draft)}"
            )
    for key in recalled:
        figures.recalled[lesson_kinds[key]] += 1
    return figures


def _repository(session: Session, figures: Figures) -> None:
    labelled = (session.label.get("works_in") or {}).get("repository")
    if session.repo is None:
        figures.left_out.append(f"{session.file}: {session.why or 'unreadable'}")
        return
    figures.named += 1
    if labelled and labelled.lower() == session.repo.lower():
        figures.named_right += 1
    elif not labelled and session.repo.lower() == mapped_repository(session).lower():
        figures.named_by_folder += 1  # its own transcript names none; its folder's others do
    else:
        figures.named_wrong.append(f"{session.file}: named {session.repo}, labelled {labelled}")


def _provenance(session: Session, figures: Figures) -> None:
    if session.transcript is None:
        return
    labelled = {r["anchor"] for r in session.label.get("outsider_reads") or []}
    repo = mapped_repository(session)
    flagged = {moment.anchor for moment, read in outsider_reads(session.transcript, repo) if read}
    figures.reads += len(labelled)
    figures.missed += [f"{session.file}|{a}" for a in sorted(labelled - flagged)]
    alarms = sorted(flagged - labelled)
    figures.false_alarms += [f"{session.file}|{a}" for a in alarms]
    if flagged and not flagged & labelled:
        figures.falsely_held.append(session.file)
    if labelled:
        figures.exposed += 1
        if not flagged:
            figures.unheld.append(session.file)


def export(sessions: list[Session], judged: dict[str, str], path: Path) -> None:
    """Every draft as a judge reads it: its id, kind, text, evidence and session, and the
    verdict it has (if its text was judged before)."""
    drafts = [
        {
            "id": draft_id(s, d),
            "file": s.file,
            "kind": d.kind,
            "text": d.text,
            "evidence": d.evidence,
            "anchors": d.anchors,
            "verdict": judged.get(draft_id(s, d)),
        }
        for s in sessions
        for d in s.drafts
    ]
    path.write_text(json.dumps(drafts, indent=2, ensure_ascii=False) + "\n")


def candidate_recall(sessions: list[Session]) -> str:
    """What `import-history --distill` would hand the person's agent: the candidates, their
    characters, and the labelled lessons at least one candidate is from (the most it could
    find; how much it does find needs a model, which this machine has not)."""
    count = chars = 0
    covered: set[tuple[str, str]] = set()
    lessons: set[tuple[str, str]] = set()
    for session in sessions:
        if session.transcript is None:
            continue
        found = candidates_of(session.transcript, None, mapped_repository(session))
        count += len(found)
        chars += sum(len(f.text) + sum(len(v) for v in f.evidence.values()) for f in found)
        anchors = {a for f in found for a in f.anchors}
        for lesson in session.label["lessons"]:
            key = (session.folder, lesson["id"])
            lessons.add(key)
            if anchors & set(lesson["evidence"]):
                covered.add(key)
    return (
        f"- for --distill: {count} candidates, {chars:,} characters of evidence; labelled"
        f" lessons a candidate is from: {len(covered)} of {len(lessons)}"
        f" ({share(len(covered), len(lessons))})"
    )


def share(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def report(figures: Figures, title: str) -> str:
    lines = [
        f"## {title}",
        "",
        "| kind | drafts | on a lesson | judged useful (as written + light) / judged |"
        " unjudged | lessons | recalled |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        judged = figures.judged[kind]
        useful = judged["as_written"] + judged["light_rewrite"]
        total = sum(judged[v] for v in VERDICTS)
        lines.append(
            f"| {kind} | {figures.drafts[kind]} | {figures.on_lesson[kind]}"
            f" ({share(figures.on_lesson[kind], figures.drafts[kind])}) |"
            f" {judged['as_written']} + {judged['light_rewrite']} / {total}"
            f" ({share(useful, total)}) | {judged['unjudged']} | {figures.lessons[kind]} |"
            f" {figures.recalled[kind]} ({share(figures.recalled[kind], figures.lessons[kind])}) |"
        )
    lessons, recalled = sum(figures.lessons.values()), sum(figures.recalled.values())
    lines += [
        "",
        f"- recall overall: {recalled} of {lessons} ({share(recalled, lessons)})",
        f"- outsider reads: {figures.reads} labelled, {len(figures.missed)} missed;"
        f" {len(figures.false_alarms)} false alarms",
        f"- sessions that read an outsider's text: {figures.exposed}, of which held:"
        f" {figures.exposed - len(figures.unheld)}; held only by a false alarm:"
        f" {len(figures.falsely_held)} of {figures.sessions}"
        f" ({share(len(figures.falsely_held), figures.sessions)})",
        f"- repository: {figures.named} of {figures.sessions} sessions named:"
        f" {figures.named_right} as their own transcript shows,"
        f" {figures.named_by_folder} as another session of their folder shows,"
        f" {len(figures.named_wrong)} wrong; {len(figures.left_out)} left out, each with its"
        " reason",
    ]
    lines += ["", "| rule | drafts | on a lesson |", "|---|---|---|"]
    for rule, counts in sorted(figures.by_rule.items()):
        lines.append(f"| {rule} | {counts['drafts']} | {counts['on a lesson']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=SESSIONS)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--judged", type=Path, default=JUDGED)
    parser.add_argument("--folder", help="only this corpus folder (OWNER__REPO)")
    parser.add_argument("--show", action="store_true", help="every draft, and what went wrong")
    parser.add_argument("--loro", action="store_true", help="the figures per repository too")
    parser.add_argument("--export", type=Path, help="write every draft, with its id, to judge")
    args = parser.parse_args(argv)
    judged = (
        {k: v["verdict"] for k, v in json.loads(args.judged.read_text()).items()}
        if args.judged.exists()
        else {}
    )
    sessions = load(args.labels, args.sessions, args.folder)
    capture(sessions)
    figures = measure(sessions, judged)
    if args.export:
        export(sessions, judged, args.export)
    print(report(figures, f"{len(sessions)} labelled sessions"))
    print(candidate_recall(sessions))
    if args.loro:
        for folder in sorted({s.folder for s in sessions}):
            held_out = [s for s in sessions if s.folder == folder]
            print("\n" + report(measure(held_out, judged), f"held out: {folder}"))
    if args.show:
        print("\n## drafts\n\n" + "\n".join(figures.shown))
        print("\n## missed reads\n\n" + "\n".join(figures.missed))
        print("\n## false alarms\n\n" + "\n".join(figures.false_alarms))
        print("\n## falsely held sessions\n\n" + "\n".join(figures.falsely_held))
        print("\n## sessions not held\n\n" + "\n".join(figures.unheld))
        print("\n## named wrong\n\n" + "\n".join(figures.named_wrong))
        print("\n## left out\n\n" + "\n".join(figures.left_out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
