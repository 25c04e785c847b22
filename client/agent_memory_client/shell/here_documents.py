"""Here-documents in a command line (`cat <<'EOF'` ... `EOF`): a body is data (a commit
message, a file written inline), never commands, so the readers of a command leave it out.

Read in one pass over the command, whatever it holds: each marker's end is looked up among
the lines that can end a here-document, never searched for from the marker on (a command of
many markers that never close would cost the square of its length: a security review's
finding, issue 66).
"""

from __future__ import annotations

import re
from bisect import bisect_left

# `<<WORD`, `<<-WORD`, `<< 'WORD'`, `<<"WORD"`.
_MARKER = re.compile(r"<<-?\s*(['\"]?)(\w+)")
_WORD = re.compile(r"\w+")


class HereDocuments:
    """The here-documents of a command line, each as its (start, end) in the text: from its
    marker `<<WORD` to the end of the first word WORD that opens a line after the marker's
    own (leading blanks allowed). Where WORD never opens such a line, the longest start of
    it that does ends it (how the reading has always matched a marker glued to what follows
    it). `steps`: the lookups it made, a bounded few for each character of the command."""

    __slots__ = ("spans", "steps")

    def __init__(self, command: str) -> None:
        self.spans: list[tuple[int, int]] = []
        self.steps = 0
        if "<<" not in command:
            return
        ends = self._line_words(command)
        lengths = sorted({len(word) for word in ends})
        size = len(command)
        newline = -1  # the first line break after the marker being read (size: none)
        at = 0
        while (start := command.find("<<", at)) >= 0:
            self.steps += 1
            end = None
            marker = _MARKER.match(command, start)
            if marker is not None:
                quote, word = marker.group(1), marker.group(2)
                rest = marker.end() + len(quote)
                if not quote or command.startswith(quote, marker.end()):
                    if newline < rest:  # markers come in order: one search for each line
                        found = command.find("\n", rest)
                        newline = found if found >= 0 else size
                    if newline < size:
                        end = self._end(ends, word, lengths, newline + 1, quoted=bool(quote))
            if end is None:
                at = start + 1
            else:
                self.spans.append((start, end))
                at = end

    def _line_words(self, command: str) -> dict[str, tuple[list[int], list[int]]]:
        """Each word that opens a line (all of its word characters), with the line breaks
        before those lines and where each of those words ends."""
        found: dict[str, tuple[list[int], list[int]]] = {}
        offset = 0
        for number, line in enumerate(command.split("\n")):
            self.steps += 1
            if number:
                text = line.lstrip()
                word = _WORD.match(text)
                if word is not None:
                    breaks, word_ends = found.setdefault(word.group(), ([], []))
                    breaks.append(offset - 1)
                    word_ends.append(offset + len(line) - len(text) + word.end())
            offset += len(line) + 1
        return found

    def _end(
        self,
        ends: dict[str, tuple[list[int], list[int]]],
        word: str,
        lengths: list[int],
        body: int,
        quoted: bool,
    ) -> int | None:
        """Where the here-document of `word` whose body starts at `body` ends: at `word`
        opening a line, else (unquoted) at its longest start that does; None for none.
        `lengths`: of the words that open lines, in order (a start of another length is
        never looked up)."""
        tried = [len(word)]
        if not quoted:  # fewer than len(word) of them: the lookups stay within the word
            shorter = bisect_left(lengths, len(word))
            tried += [lengths[n] for n in range(shorter - 1, -1, -1)]
        for length in tried:
            self.steps += 1
            kept = ends.get(word[:length])
            if kept is not None:
                breaks, word_ends = kept
                index = bisect_left(breaks, body)
                if index < len(breaks):
                    return word_ends[index]
        return None

    def replaced(self, command: str, by: str) -> str:
        """The command with each here-document replaced by `by`."""
        if not self.spans:
            return command
        parts, at = [], 0
        for start, end in self.spans:
            parts += [command[at:start], by]
            at = end
        return "".join([*parts, command[at:]])


def without_here_documents(command: str, by: str = " ") -> str:
    """The command line with each here-document (its marker to its end) replaced by `by`."""
    return HereDocuments(command).replaced(command, by)
