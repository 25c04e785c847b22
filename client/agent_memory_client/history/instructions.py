"""A user's correction or standing rule, read from a prompt without a model: a short prompt
(a few sentences, no code) with a sentence that states a rule for the agent ("never ...",
"always ...", "don't ...", "from now on ...", "use X instead ...") or corrects it ("no, use
the make target"). A task ("fix the upload test"), a question, or a one-off ("don't worry
about the tests") is none. Its precision is measured on labelled prompts
(tests/cli/test_history.py, docs/history.md)."""

from __future__ import annotations

import re

from agent_memory_client.drafting import plain

MAX_PROMPT_CHARS = 600  # past this, a prompt is a task's description, not a correction
MAX_SENTENCES = 4
RULE_CHARS = 300

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# A correction's opening: "no,", "nope.", "wrong:", "actually,", "not like that".
_CORRECTION = re.compile(
    r"^(?:no|nope|wrong|actually|not like that|that'?s wrong|that is wrong)\b[\s,.!:;-]*",
    re.IGNORECASE,
)
_POLITE = re.compile(r"^(?:please|pls|and|but|also|so)\b[\s,]*", re.IGNORECASE)
# A rule at a sentence's start.
_RULE = re.compile(
    r"^(?:never|always|don['’]t|do not|avoid|from now on|going forward|in this"
    r" (?:repo|repository|project|codebase)|make sure (?:to|you)|remember (?:to|that)|"
    r"prefer|stop \w+ing|use \S+(?: \S+){0,3} instead)\b",
    re.IGNORECASE,
)
# After a correction, an imperative is the rule ("no, use the make target").
_IMPERATIVE = re.compile(
    r"^(?:use|run|call|put|keep|write|add|remove|import|leave|edit|change|go|check|read|do)\b",
    re.IGNORECASE,
)
# One-offs that read like rules.
_ONE_OFF = re.compile(
    r"^(?:don['’]t|do not) (?:worry|bother|forget to (?:push|commit)|stop)\b|"
    r"^(?:never ?mind|nevermind)\b",
    re.IGNORECASE,
)
_NOT_PROSE = re.compile(r"```|^\s*[<!/]|^\s*\$ ", re.MULTILINE)


def instruction_of(prompt: str) -> str | None:
    """The rule a prompt states, as the sentences from it on (at most RULE_CHARS); None."""
    text = plain(prompt).strip()
    if not text or len(text) > MAX_PROMPT_CHARS or _NOT_PROSE.search(text):
        return None
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    if len(sentences) > MAX_SENTENCES:
        return None
    for i, sentence in enumerate(sentences):
        corrected = _CORRECTION.match(sentence)
        rest = _POLITE.sub("", sentence[corrected.end() :] if corrected else sentence)
        if rest.endswith("?") or _ONE_OFF.match(rest):
            continue
        if _RULE.match(rest) or (corrected and _IMPERATIVE.match(rest)):
            rule = " ".join([rest, *sentences[i + 1 :]])
            rule = rule[:1].upper() + rule[1:]
            return rule if len(rule) <= RULE_CHARS else rule[: RULE_CHARS - 3].rstrip() + "..."
    return None
