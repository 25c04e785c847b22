"""A user's standing rules and corrections, read from what they said without a model.

Where a rule stands:
- in a prompt of their own words (a few lines): a sentence that states a rule for the agent
  ("never ...", "always ...", "don't ...", "no need to ...", "from now on ...", "use X
  instead", "make sure ...", "we should ...", "I don't like ...", "it's better not to ...")
  or corrects its way of working ("no, use the make target");
- in a long brief pasted as a prompt: the bullets of its sections on rules, constraints,
  conventions and prohibitions (a brief's other sentences are its task);
- in the user's answer to the agent's own question, or their reason for refusing a call.

A task ("fix the upload test"), a question, a reply about this task alone ("don't push
yet", "for now") is none. How well this does on real sessions is measured by
bench/capture.py on labelled transcripts (docs/history.md); the rules were written beside
the development corpus's labels and are held to the repositories they were not written
from (its --loro figures)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory_client.shell import plain

OWN_WORDS_CHARS = 2_000  # a prompt longer than this is a brief: only its rule sections count
MAX_PROMPT_CHARS = 200_000
RULE_CHARS = 300
SAID_CHARS = 600
MIN_RULE_CHARS = 16
MIN_RULE_WORDS = 4  # a brief's bullet, one more: "use relative paths only" is this task's
RULES_A_PROMPT = 5

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|\[[ x]\])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+|\*\*)(?P<title>[^#*\n]{2,80})")
# The sections of a brief whose bullets are rules.
_RULE_SECTION = re.compile(
    r"\b(?:rules?|constraints?|conventions?|prohibit\w*|guidelines?|guardrails?|do ?n[o']t|don'?ts"
    r"|must ?nots?|never|principles?|standards?|policy|policies|invariants?)\b",
    re.IGNORECASE,
)
# A brief's bullet about this task's own set-up (who does what, what this task is): not a
# rule that outlives it.
_TASK_BULLET = re.compile(
    r"\b(?:task|this (?:pr|phase|change|session|round|ticket)|for now|the lead|lead\b|teammates?"
    r"|owns?\b|assigned|in parallel|the fix|this fix|shared file|same file|others do not"
    r"|break (?:any )?existing)\b",
    re.IGNORECASE,
)
# A limit on what this task may change ("Don't touch the billing/ folder"), given
# without a reason: the task's scope, not a rule that outlives it. With its reason ("...,
# it is generated") it is a rule; "never edit ..." is one as it stands.
_SCOPE = re.compile(r"^(?:do not|don['’]?t)\s+(?:modify|change|touch|alter)\b", re.I)
_REASON = re.compile(r"\s[—–]\s|\s--?\s|\bbecause\b|\bsince\b|\bit['’]?s\b|\bit is\b", re.I)
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# Pasted output in a prompt: a paragraph holding an error's or a log's own words.
_PASTED = re.compile(
    r"(?:^|\n)\s*(?:fatal|error|warning|hint|npm ERR!|Traceback)\b[:!]|\bat \S+:\d+"
    r"|\n\s*\$ \S",
    re.IGNORECASE,
)
# A correction's opening: "no,", "nope.", "wrong:", "actually,", "not like that".
_CORRECTION = re.compile(
    r"^(?:(?:no|nope|wrong)\s*[,.!:;-]+|(?:actually|not like that|that'?s wrong|that is wrong)\b"
    r"[\s,.!:;-]*)\s*",
    re.IGNORECASE,
)
_POLITE = re.compile(
    r"^(?:please|pls|and|but|also|so|ok|okay|btw|hmm+|right|yes|yeah)\b[\s,.]*", re.IGNORECASE
)
_NOT = r"(?:don['’]?t|do not|dont|never|avoid|stop)"
# A rule at a sentence's start.
_RULE_START = re.compile(
    rf"^(?:never|always|{_NOT} (?:ever )?\w+|avoid\b|from now on|going forward|in (?:the )?future"
    r"|for future reference|next time|in this (?:repo|repository|project|codebase)\b"
    r"|make sure\b|remember (?:to|that)\b|prefer\b|stop \w+ing\b|no need to\b|only use\b"
    r"|use \S+(?: \S+){0,4} instead\b|we (?:always|never|use|prefer|(?:don['’]?t|do not) use)\b"
    r"|you (?:should always|should never|should not)\b"
    r"|(?:i|we) (?:don['’]?t|do not|dont) want (?:you )?to (?:commit|push|run|use|add|touch|change"
    r"|edit|create|write|install|merge|deploy|delete|remove|test)\b"
    r"|i (?:prefer|like|want) (?:you to )?(?:always|never)\b"
    r"|(?:it['’]?s|it is) better (?:not )?to\b"
    r"|(?:all|every|any|each) \w+(?: \w+)? (?:should|must|needs? to|has to)\b)",
    re.IGNORECASE,
)
# A rule inside a sentence: "internal changes are never breaking changes".
_RULE_WITHIN = re.compile(
    r"\b(?:are|is|should|must|will|can) (?:never|always)\b|\b(?:should|must) (?:not|never|always)"
    r"\b|\bshould be (?:referred to|called|named|kept|used|run)\b",
    re.IGNORECASE,
)
# A bullet of a brief's rules section that states one: an imperative, or a must.
_RULE_BULLET = re.compile(
    r"^(?:use|keep|prefer|follow|avoid|all|every|each|no)\b|\b(?:must|never|always|do not"
    r"|don['’]?t)\b",
    re.IGNORECASE,
)
# A rule that points at what the session did ("never do that again"): not understood alone.
_DEICTIC = re.compile(
    r"\b(?:that|this|it|those|these) again\b|^(?:never|don['’]?t|do not) do"
    r" (?:that|this|it)\b",
    re.IGNORECASE,
)
# After a correction, an imperative is the rule ("no, use the make target").
_IMPERATIVE = re.compile(r"^(?:use|run|call|put|keep|write|add|remove|import)\b", re.IGNORECASE)
# About this task alone, however it reads.
_ONE_OFF = re.compile(
    r"^(?:don['’]?t|do not|dont) (?:worry|bother|forget to (?:push|commit)|stop|push yet|commit"
    r" yet|change anything yet|make any changes yet)\b|^(?:never ?mind|nevermind)\b"
    r"|\b(?:this time|for now|right now|yet|today|at the moment|for this (?:task|pr|one)|just"
    r" explain|any changes|let['’]?s see|understand this)\b",
    re.IGNORECASE,
)
_NOT_PROSE = re.compile(r"^\s*(?:[<!/{$|>]|```|\w+\s*[:=]\s*[\[{\"'])")
# The client's wording of an answer: `"question"="answer"` (Claude Code's AskUserQuestion).
_ANSWERED = re.compile(r'"(?P<question>[^"]{3,400})"="(?P<answer>[^"]{1,1000})"')
_JSON_ANSWERS = re.compile(r'"answers"\s*:\s*\{(?P<body>.*)\}', re.DOTALL)


@dataclass(frozen=True, slots=True)
class Rule:
    text: str  # the rule, as a draft says it
    said: str  # the user's words it comes from
    key: str  # one rule once, however often said
    why: str  # which part of the rule found it: start, within, correction, section


def own_words(text: str) -> str:
    """The prompt without what was pasted into it: a paragraph of an error's or a log's
    lines is output, not the user's rule."""
    text = _FENCED.sub("\n\n", text)  # a fenced block is pasted, whatever it holds
    return "\n\n".join(p for p in re.split(r"\n\s*\n", text) if not _PASTED.search(p))


def sentences_of(text: str) -> list[str]:
    found = []
    for line in joined_lines(own_words(text)):
        if _NOT_PROSE.match(line):
            continue
        line = _BULLET.sub("", line)
        found += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return found


def joined_lines(text: str) -> list[str]:
    """The text's lines, a line wrapped onto the next joined back: one that does not end a
    sentence, followed by one that is no bullet and does not start a sentence."""
    lines: list[str] = []
    for line in text.splitlines():
        wraps = (
            lines
            and lines[-1].strip()
            and line.strip()
            and not re.search(r"[.!?:;]\s*$", lines[-1])
            and not _BULLET.match(line)
            and not _HEADING.match(line)
            and (line.strip()[:1].islower() or line[:1] in " \t")
        )
        if wraps:
            lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
        else:
            lines.append(line)
    return lines


def section_bullets(text: str) -> list[str]:
    """The bullets (and lines) of a brief's sections on rules."""
    found: list[str] = []
    inside = False
    for line in joined_lines(text):
        heading = _HEADING.match(line)
        if heading and not _BULLET.match(line):
            inside = bool(_RULE_SECTION.search(heading.group("title")))
            continue
        if inside and _BULLET.match(line) and not _NOT_PROSE.match(_BULLET.sub("", line)):
            found.append(_BULLET.sub("", line).strip())
    return found


def _answers(text: str) -> str:
    """What the user answered, without the agent's questions around it."""
    answered = [m.group("answer") for m in _ANSWERED.finditer(text)]
    if answered:
        return "\n".join(answered)
    found = _JSON_ANSWERS.search(text)
    if found:
        return "\n".join(re.findall(r':\s*"((?:[^"\\]|\\.)*)"', found.group("body")))
    return text


def instructions_of(said: str, answer: bool = False) -> list[Rule]:
    """The standing rules `said` states (a prompt; with `answer`, the user's answer to the
    agent's question or their reason for refusing a call), at most RULES_A_PROMPT."""
    text = plain(said).strip()
    if answer:
        text = _answers(text)
    if not text or len(text) > MAX_PROMPT_CHARS:
        return []
    if len(text) > OWN_WORDS_CHARS:
        candidates = [(s, "section") for s in section_bullets(text)]
    else:
        candidates = [(s, "") for s in sentences_of(text)]
    rules: list[Rule] = []
    for sentence, where in candidates:
        rule = _rule_in(sentence, where)
        if rule is not None and all(r.key != rule.key for r in rules):
            # What the person reads it by: the words around it, as much as fits.
            said = around(text, sentence, SAID_CHARS) if where != "section" else sentence
            rules.append(Rule(rule.text, said[:SAID_CHARS], rule.key, rule.why))
        if len(rules) == RULES_A_PROMPT:
            break
    return rules


def around(text: str, sentence: str, chars: int) -> str:
    """The sentence with the words before and after it in `text`, at most `chars`."""
    flat, wanted = " ".join(text.split()), " ".join(sentence.split())
    at = flat.find(wanted)
    if at < 0 or len(flat) <= chars:
        return flat[:chars] if at >= 0 or len(flat) <= chars else wanted[:chars]
    room = max(0, chars - len(wanted))
    start = max(0, at - room // 2)
    return ("…" if start else "") + flat[start : start + chars - 1]


def instruction_of(said: str, answer: bool = False) -> Rule | None:
    """The first standing rule `said` states, or None."""
    found = instructions_of(said, answer)
    return found[0] if found else None


def _rule_in(sentence: str, where: str) -> Rule | None:
    corrected = _CORRECTION.match(sentence)
    rest = sentence[corrected.end() :] if corrected else sentence
    rest = _POLITE.sub("", _POLITE.sub("", rest))
    if rest.endswith(("?", ":")) or _ONE_OFF.search(rest) or _DEICTIC.search(rest):
        return None
    if len(rest) < MIN_RULE_CHARS or len(rest.split()) < MIN_RULE_WORDS + (where == "section"):
        return None
    if where != "section" and _TASK_BULLET.search(rest):
        return None
    if _SCOPE.match(rest) and not _REASON.search(rest):
        return None
    if where == "section":
        if not (_RULE_START.match(rest) or _RULE_WITHIN.search(rest) or _RULE_BULLET.search(rest)):
            return None
        if _TASK_BULLET.search(rest):
            return None
        why = "section"
    elif _RULE_START.match(rest):
        why = "start"
    elif corrected and _IMPERATIVE.match(rest):
        why = "correction"
    elif _RULE_WITHIN.search(rest):
        why = "within"
    else:
        return None
    rule = rest[:1].upper() + rest[1:]
    if len(rule) > RULE_CHARS:
        rule = rule[: RULE_CHARS - 3].rstrip() + "..."
    # One rule however it is worded around its examples: "(Django 5, Celery 5)" aside.
    gist = re.sub(r"\([^)]*\)|`[^`]*`", " ", rule.lower())
    key = "instruction|" + " ".join(re.findall(r"\w+", gist))[:120]
    return Rule(rule, sentence, key, why)
