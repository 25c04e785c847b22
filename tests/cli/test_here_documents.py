"""A command's here-documents (client/agent_memory_client/shell/here_documents.py) are read in
bounded work whatever the command holds: a hostile one of many markers that never close is
read in a few lookups a character, not the square of its length (issue 66's review), and
what it finds is what the regular expression it replaced found."""

from __future__ import annotations

import random
import re

import pytest

from agent_memory_client.shell import segments, shown
from agent_memory_client.shell.here_documents import HereDocuments, without_here_documents

# The reading before (a lazy search from each marker to the command's end): the oracle of
# what a here-document is, on commands small enough for it.
_BEFORE = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?\n\s*\2\b", re.DOTALL)
HOSTILE_CHARS = 100_000


def test_a_here_document_is_data_in_a_command_and_in_its_draft() -> None:
    command = "cat <<'EOF' > notes.md\nrm -rf /\nEOF\ngit commit -F notes.md"
    assert segments(command) == [["cat"], ["git", "commit", "-F", "notes.md"]]
    assert shown(command) == "cat <<… git commit -F notes.md"
    # An indented end (`<<-`), and a marker that never closes (the rest is commands).
    assert segments("python - <<-PY\n\tprint(1)\n\tPY\npytest -q") == [
        ["python", "-"],
        ["pytest", "-q"],
    ]
    assert segments("cat <<EOF\nls") == [["cat"], ["ls"]]


def test_what_it_finds_is_what_the_regular_expression_found() -> None:
    pieces = ["<", "<<", "-", " ", "\n", "'", '"', "E", "O", "F", "EOF", "x", "\t", ">", "é"]
    rng = random.Random(66)
    for _ in range(20_000):
        command = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert without_here_documents(command) == _BEFORE.sub(" ", command), repr(command)


@pytest.mark.parametrize(
    "shape",
    [
        "<<A\n",  # a marker a line, none closed: each a search to the end, before
        "<<A ",  # many markers on one line that never ends
        "<<",  # markers overlapping, no word
        "<<EOF x\n\n  EOG\n",  # a near miss on every line
        "cat <<EOF\nbody\nEOF\n",  # closed ones: each found
    ],
)
def test_a_hostile_command_is_read_in_bounded_work(shape: str) -> None:
    """The lookups grow as the command does: at most two a character, and twice the
    command is twice the work (the regular expression made each unclosed marker a search
    to the command's end: 25,000 of them over 100 KB)."""
    command = shape * (HOSTILE_CHARS // len(shape))
    read = HereDocuments(command)
    doubled = HereDocuments(command * 2)
    assert read.steps <= 2 * len(command)
    assert doubled.steps <= 2 * read.steps + 2
    closed = shape.startswith("cat")
    assert len(read.spans) == (HOSTILE_CHARS // len(shape) if closed else 0)


def test_a_marker_of_a_long_word_looks_up_only_the_lengths_that_end_lines() -> None:
    """A bare marker ends at the longest start of its word that opens a line: the starts
    looked up are those of the lengths the command's lines open with, never every one."""
    ends = "".join(f"\n{'w' * n}" for n in range(1, 300))  # 299 lengths that open lines
    command = "cat <<" + "w" * 50_000 + "X\n" + ends
    read = HereDocuments(command)
    assert read.spans == [(4, len(command))]  # the longest start: 299 w's, the last line
    assert read.steps <= 2 * len(command)
