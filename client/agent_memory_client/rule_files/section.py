"""The section of a file that `agent-memory render` writes: the lines between two marker
lines, and nothing else. Everything outside it stays as it was, byte for byte (a BOM, CRLF
line breaks, a last line without one, bytes that are not UTF-8); the section takes the
file's line breaks.

The begin marker records a digest of what render wrote inside, so that a section a person
changed by hand is told from one that is only out of date. A marker is a whole line: the
rendered memories are quoted literals on lines of their own, so no memory's text can be
taken for one. import-files reads a file without its section (what the memory wrote there
is no rule a person wrote)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

BEGIN = "<!-- agent-memory:begin"
END = "<!-- agent-memory:end -->"
NOTE = "written by `agent-memory render`: change the memories, not these lines"
DIGEST_CHARS = 16
_DIGEST = rf"(?: digest=(?P<digest>[0-9a-f]{{{DIGEST_CHARS}}}))?"
_BEGIN_LINE = re.compile(rf"^{re.escape(BEGIN)}{_DIGEST}(?: [^\r\n]*)? -->[ \t]*$")
_END_LINE = re.compile(rf"^{re.escape(END)}[ \t]*$")
# Read and written so that any byte comes back as it was, UTF-8 or not.
ENCODING = "utf-8"
ERRORS = "surrogateescape"


class SectionError(ValueError):
    """A file whose markers do not make one section (said with their lines)."""


@dataclass(frozen=True, slots=True)
class Section:
    start: int  # where its begin marker's line starts (an offset in the text)
    end: int  # just past its end marker's line, line break included
    body: str  # the lines between the markers, as in the file
    digest: str | None  # what its begin marker records
    line: int  # its begin marker's line (1-based)
    line_break: str  # the begin marker's own: "\r\n" or "\n"

    @property
    def edited(self) -> bool:
        """Changed by hand inside since render wrote it: a body whose digest is not the one
        its marker records (or that records none). An empty one holds nothing to lose."""
        return bool(self.body.strip()) and self.digest != digest_of(self.body)


def lines_of(text: str) -> list[tuple[int, str, str]]:
    """(offset, line without its break, its break) for each line: only "\\n" (and "\\r\\n")
    break a line, as git and every editor count them."""
    found = []
    at = 0
    while at < len(text):
        cut = text.find("\n", at)
        if cut < 0:
            found.append((at, text[at:], ""))
            break
        line = text[at:cut]
        if line.endswith("\r"):
            found.append((at, line[:-1], "\r\n"))
        else:
            found.append((at, line, "\n"))
        at = cut + 1
    return found


def digest_of(body: str) -> str:
    """The body's digest, its line breaks counted as "\\n" (a checkout's CRLF is no edit)."""
    return hashlib.sha256(body.replace("\r\n", "\n").encode(ENCODING, ERRORS)).hexdigest()[
        :DIGEST_CHARS
    ]


def find(text: str) -> Section | None:
    """The file's section, None when it has none; SectionError when its markers do not
    make exactly one."""
    begins, ends = [], []
    for number, (at, line, brk) in enumerate(lines_of(text), start=1):
        if _BEGIN_LINE.match(line.removeprefix("\ufeff")):
            begins.append((number, at, line, brk))
        elif _END_LINE.match(line):
            ends.append((number, at, line, brk))
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0][0] < begins[0][0]:
        said = ", ".join(f"line {n}" for n, *_ in sorted([*begins, *ends]))
        raise SectionError(
            f"its agent-memory markers ({said}) do not make one section: fix them by hand"
            f" (one `{BEGIN} ... -->` line, then one `{END}` line)"
        )
    number, start, line, brk = begins[0]
    _, end_start, end_line, end_brk = ends[0]
    marker = _BEGIN_LINE.match(line.removeprefix("\ufeff"))
    assert marker is not None
    return Section(
        start=start + (1 if line.startswith("\ufeff") else 0),  # the file's BOM stays out
        end=end_start + len(end_line) + len(end_brk),
        body=text[start + len(line) + len(brk) : end_start],
        digest=marker.group("digest"),
        line=number,
        line_break=brk or "\n",
    )


def section_text(body: str, line_break: str, last_break: bool = True) -> str:
    """The section as written: its markers around `body` (lines ending in "\\n"), in the
    file's line breaks."""
    lines = body.removesuffix("\n").split("\n") if body else []
    digest = digest_of("".join(f"{line}\n" for line in lines))
    head = f"{BEGIN} digest={digest} {NOTE} -->"
    text = line_break.join([head, *lines, END])
    return text + line_break if last_break else text


def line_break_of(text: str) -> str:
    """The file's line break, as its first line ends ("\\n" for a file of one line)."""
    cut = text.find("\n")
    return "\r\n" if cut > 0 and text[cut - 1] == "\r" else "\n"


def written(text: str | None, body: str, head: str = "") -> str:
    """The file's text with `body` as its section: in place of the section it has (all
    else as it was), after its last line when it has none, or, for a new file (`text`
    None), `head` and the section alone."""
    if text is None:
        return head + section_text(body, "\n")
    found = find(text)
    if found is not None:
        last_break = text[found.end - 1 : found.end] == "\n"
        section = section_text(body, found.line_break, last_break)
        return text[: found.start] + section + text[found.end :]
    line_break = line_break_of(text)
    if not text.strip("\ufeff"):
        return text + section_text(body, line_break)
    # One blank line between the file's last line and the section.
    gap = line_break if text.endswith("\n") else line_break * 2
    return text + gap + section_text(body, line_break)


def without_section(text: str) -> str:
    """The text with its section's lines blank (the lines counted as before): what
    import-files reads. Markers that make no one section: from the first begin marker on."""
    try:
        found = find(text)
    except SectionError:
        first = next(
            (
                at
                for at, line, _ in lines_of(text)
                if _BEGIN_LINE.match(line.removeprefix("\ufeff"))
            ),
            None,
        )
        if first is None:
            return text
        return text[:first] + "\n" * text[first:].count("\n")
    if found is None:
        return text
    inside = text[found.start : found.end]
    return text[: found.start] + "\n" * inside.count("\n") + text[found.end :]
