"""The rules in a file agents read (CLAUDE.md, AGENTS.md, a Cursor rule, ...), each with its
line: no model, only the file's own structure.

- a bullet (or a numbered item) is a rule, its wrapped lines joined; a bullet that ends in
  a colon leads the bullets under it ("Testing:" then "use -x" is "Testing: use -x");
- a table's row is a rule ("`make test`: the unit tests");
- a section's prose is one rule when short (its heading first: "Architecture: ..."), else
  a rule a paragraph; a paragraph that ends in a colon leads what follows and is none,
  unless a short code block follows it (then the command joins it);
- not read: headings alone, code blocks, front matter, HTML comments (what the rendered
  file hides is no rule the team sees), the section `agent-memory render` writes (it is the
  memory's, not a person's), `@file` imports, a line that is only a link, and Claude Code's
  `/init` preamble.

A rule of fewer than MIN_RULE_WORDS words is none (the server keeps no shorter learning); a
longer one than RULE_CHARS is cut. Its key is its words, lower case, without its heading:
the same rule in two files, or moved under another heading, is one rule.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from agent_memory_client.rule_files.section import without_section

RULE_CHARS = 500  # a draft's text (the server's DRAFT_CHARS; a test holds them equal)
MIN_RULE_WORDS = 3  # the server's MIN_LEARNING_WORDS (a test holds them equal)
KEY_CHARS = 200  # the server's DRAFT_KEY_CHARS
SHORT_CODE_LINES = 3  # a code block after a lead-in that joins it as the command
SHORT_CODE_CHARS = 200
KIND_INSTRUCTION, KIND_CONVENTION = "instruction", "convention"

# Its closing #s are taken off in heading_title(): a pattern for them backtracks (a line
# of spaces took minutes).
_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})\s+(?P<title>.*)$")
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+•]|\d{1,9}[.)])(?:\s+\[[ xX]\])?\s+(?P<text>.*)$")
_FENCE = re.compile(r"^\s{0,3}(?P<fence>`{3,}|~{3,})")
_BREAK = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,}|={3,})$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IMPORT = re.compile(r"^@\S+$")  # Claude Code's `@path/to/file`
_LINK_ONLY = re.compile(r"^(?:\[[^\]]*\]\([^)]*\)|<?https?://\S+>?)[.;,]?$")
# What `/init` writes first: about the file, not a rule.
_PREAMBLE = re.compile(r"^this file provides guidance to\b", re.IGNORECASE)
# How the project is built, tested, linted, run or shipped: a rule about it that names a
# command is a convention, any other an instruction.
_CONVENTION_WORDS = re.compile(
    r"\b(?:build\w*|test\w*|lint\w*|format\w*|type-?check\w*|commands?|scripts?|develop\w*"
    r"|set ?up|install\w*|run\w*|deploy\w*|release\w*|ci|make|migrat\w*|tooling|workflow)\b",
    re.IGNORECASE,
)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BOLD_ONLY = re.compile(r"^(?:\*\*|__)[^*_]{1,80}(?:\*\*|__):?$")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
# Front matter: at most this many lines, each a YAML key (`globs: app/**/*.py`, `applyTo:`).
FRONT_MATTER_LINES = 200
_FRONT_MATTER_KEY = re.compile(r"^[A-Za-z_][\w.-]*\s*:(?:\s|$)")


@dataclass(frozen=True, slots=True)
class Rule:
    text: str  # as a draft says it
    line: int  # where it starts in its file (1-based)
    heading: str  # the heading it stands under ("" at the top)
    kind: str  # instruction or convention
    key: str  # the same rule wherever it is written


@dataclass
class _Item:
    """A bullet being read: its indent, its text so far, its line."""

    indent: int
    text: str
    line: int
    lead: str = ""  # the bullet above it that ends in a colon
    children: int = 0


@dataclass
class _Reader:
    rules: list[Rule] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    headings: dict[int, str] = field(default_factory=dict)
    prose: list[tuple[str, int]] = field(default_factory=list)  # the section's paragraphs
    paragraph: list[str] = field(default_factory=list)
    paragraph_line: int = 0
    items: list[_Item] = field(default_factory=list)  # open bullets, outermost first
    header: list[str] | None = None  # a table's header row, once its rule line is seen

    @property
    def heading(self) -> str:
        return self.headings[max(self.headings)] if self.headings else ""

    def add(self, text: str, line: int, key_text: str | None = None) -> None:
        text = " ".join(text.split())
        if not text or len(text.split()) < MIN_RULE_WORDS:
            return
        if _PREAMBLE.match(text) or _LINK_ONLY.match(text) or _IMPORT.match(text):
            return
        key = key_of(key_text if key_text is not None else text)
        if key in self.keys:
            return
        self.keys.add(key)
        self.rules.append(Rule(cut(text), line, self.heading, kind_of(text, self.heading), key))

    # --- bullets ---------------------------------------------------------------------

    def bullet(self, indent: int, text: str, line: int) -> None:
        self.end_paragraph()
        while self.items and self.items[-1].indent >= indent:
            self.close_item()
        lead = ""
        if self.items:
            parent = self.items[-1]
            parent.children += 1
            if parent.text.rstrip().endswith(":"):
                lead = f"{parent.lead}{parent.text.rstrip().rstrip(':')}: "
        self.items.append(_Item(indent, text.strip(), line, lead))

    def close_item(self) -> None:
        item = self.items.pop()
        text = item.text.strip()
        if text.endswith(":") and item.children:
            return  # a lead-in: its bullets carry it
        self.add(item.lead + text, item.line)

    def close_items(self) -> None:
        while self.items:
            self.close_item()

    # --- prose -----------------------------------------------------------------------

    def line_of_prose(self, text: str, line: int) -> None:
        if not self.paragraph:
            self.paragraph_line = line
        self.paragraph.append(text.strip())

    def end_paragraph(self, code: str | None = None) -> None:
        if not self.paragraph:
            return
        text = " ".join(self.paragraph)
        self.paragraph = []
        if _BOLD_ONLY.match(text):
            return  # a heading written in bold
        if text.endswith(":"):
            if code is None:
                return  # a lead-in to what follows
            text = f"{text} `{code}`"
        self.prose.append((text, self.paragraph_line))

    def end_code(self, code: str | None) -> None:
        """A code block closed: a short one is the command of the lead-in before it (a
        bullet's or a paragraph's)."""
        if self.items and not self.paragraph:
            item = self.items[-1]
            if code is not None and item.text.rstrip().endswith(":"):
                item.text = f"{item.text.rstrip()} `{code}`"
            return
        self.end_paragraph(code)

    def end_section(self) -> None:
        """The section's prose: one rule when short, its heading first; else a rule a
        paragraph (a long one cut at its sentences)."""
        self.end_paragraph()
        self.close_items()
        prose, self.prose = self.prose, []
        if not prose:
            return
        whole = " ".join(text for text, _ in prose)
        # A section's own heading names it; a file's title (level 1) does not.
        titled = f"{self.heading}: {whole}" if self.headings and max(self.headings) > 1 else whole
        if len(titled) <= RULE_CHARS:
            self.add(titled, prose[0][1], key_text=whole)
            return
        for text, line in prose:
            for piece in pieces(text):
                self.add(piece, line)

    # --- tables ----------------------------------------------------------------------

    def table_row(self, line_text: str, line: int) -> None:
        cells = [c.strip() for c in line_text.strip().strip("|").split("|")]
        if self.header is None:
            return
        kept = [c for c in cells if c]
        if len(kept) == 2:
            self.add(f"{kept[0]}: {kept[1]}", line)
        elif kept:
            self.add("; ".join(kept), line)


def heading_title(text: str) -> str:
    """A heading's words without its closing #s, which stand apart from them ("## Build ##"
    is "Build"; "## C#" stays "C#")."""
    title = text.strip()
    words = title.rstrip("#")
    if words != title and (not words or words[-1].isspace()):
        return words.strip()
    return title


def cut(text: str, chars: int = RULE_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def pieces(text: str) -> list[str]:
    """A long paragraph as runs of whole sentences, each at most RULE_CHARS (a sentence
    longer than that alone, cut)."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if found and len(found[-1]) + 1 + len(sentence) <= RULE_CHARS:
            found[-1] = f"{found[-1]} {sentence}"
        else:
            found.append(sentence)
    return found


def key_of(text: str) -> str:
    """One rule however it is written: its words, lower case, in order (a long rule's
    first words and a digest of them all)."""
    words = " ".join(re.findall(r"\w+", text.lower()))
    key = f"rule|{words}"
    if len(key) <= KEY_CHARS:
        return key
    digest = hashlib.sha256(words.encode()).hexdigest()[:16]
    return f"{key[: KEY_CHARS - len(digest) - 1]}#{digest}"


def kind_of(text: str, heading: str) -> str:
    """A convention: a rule naming a command, about how the project is built, tested or
    run (in its words or its heading's); any other rule is an instruction."""
    about = _CONVENTION_WORDS.search(heading) or _CONVENTION_WORDS.search(_CODE_SPAN.sub(" ", text))
    return KIND_CONVENTION if about and _CODE_SPAN.search(text) else KIND_INSTRUCTION


def readable(text: str) -> list[str]:
    """The file's lines as read: without a BOM, its front matter, HTML comments and the
    section render writes, each blanked so that every line keeps its number."""
    text = without_section(text.removeprefix("\ufeff"))
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    end = front_matter_end(lines)
    if end:
        lines[: end + 1] = [""] * (end + 1)
    return lines


def front_matter_end(lines: list[str]) -> int:
    """The line that closes the file's front matter (a Cursor rule's, a Copilot one's), or 0
    for none: a first line `---`, a closing `---` (or `...`) within FRONT_MATTER_LINES, and
    between them YAML's `key: value` lines (a key's indented or listed values under it).
    A file that opens with a horizontal rule and goes on in Markdown has none."""
    if not lines or lines[0].strip() != "---":
        return 0
    keyed = False
    for end in range(1, min(len(lines), FRONT_MATTER_LINES)):
        line = lines[end]
        if line.strip() in ("---", "..."):
            return end if keyed else 0
        if _FRONT_MATTER_KEY.match(line):
            keyed = True
        elif line.strip() and not line.lstrip().startswith("#"):
            under_a_key = keyed and (line[:1].isspace() or line.startswith("- "))
            if not under_a_key:
                return 0
    return 0


def rules_in(text: str) -> list[Rule]:
    """The rules of a file's text, in its order, each once."""
    reader = _Reader()
    fence: str | None = None
    code: list[str] = []
    after_blank = False
    for number, line in enumerate(readable(text), start=1):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
                joined = [c.strip() for c in code if c.strip()]
                short = (
                    len(joined) <= SHORT_CODE_LINES and sum(map(len, joined)) <= SHORT_CODE_CHARS
                )
                reader.end_code("; ".join(joined) if joined and short else None)
            else:
                code.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, code = opened.group("fence"), []
            continue
        if not line.strip():
            reader.end_paragraph()
            reader.header = None
            after_blank = True
            continue
        heading = _HEADING.match(line)
        if heading:
            reader.end_section()
            level = len(heading.group("marks"))
            reader.headings = {k: v for k, v in reader.headings.items() if k < level}
            reader.headings[level] = heading_title(heading.group("title"))
            after_blank = False
            continue
        if _BREAK.match(line):
            reader.end_paragraph()
            reader.close_items()
            after_blank = False
            continue
        if _TABLE_ROW.match(line) or (reader.header is not None and "|" in line):
            reader.end_paragraph()
            reader.close_items()
            if _TABLE_RULE.match(line):
                reader.header = []
            else:
                reader.table_row(line, number)
            after_blank = False
            continue
        bullet = _BULLET.match(line)
        if bullet:
            reader.bullet(len(bullet.group("indent").expandtabs(4)), bullet.group("text"), number)
            after_blank = False
            continue
        indent = len(line) - len(line.lstrip())
        if reader.items and (not after_blank or indent > reader.items[-1].indent):
            # A bullet's wrapped line, or its own paragraph (indented under it).
            reader.items[-1].text += " " + line.strip()
            after_blank = False
            continue
        reader.close_items()
        reader.line_of_prose(_QUOTE.sub("", line), number)
        after_blank = False
    reader.end_section()
    return sorted(reader.rules, key=lambda rule: rule.line)
