"""JSON with `//` and `/* */` comments, as the agent clients read their settings (Gemini
CLI: strip-json-comments, then JSON.parse), read with the place of every value, and edited
by the smallest change of text: a user's comments and layout outside what changes stay
byte for byte.

`edited(text, value)` writes `value` over the document `text`: a member or an element
whose value is unchanged keeps its text; one removed takes its line (and one comma) with
it; one added goes at the end of its object or array, indented as its neighbours are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

DEFAULT_INDENT = "  "


class JsoncError(ValueError):
    """Not JSON, even with its comments left out: the message says where."""


@dataclass(slots=True)
class Node:
    """A value and where its text is: `text[start:end]`. An object's children are its
    members (`keys[i]` names child i, which starts at its key); an array's, its elements."""

    start: int
    end: int
    value: Any
    kind: str  # "object", "array" or "scalar"
    children: list[Node] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    # Where each child's text starts: its key for a member, itself for an element.
    child_starts: list[int] = field(default_factory=list)


def loads(text: str) -> Any:
    return parse(text).value


def parse(text: str) -> Node:
    reader = _Reader(text)
    node = reader.value()
    reader.skip_blank()
    if reader.at < len(text):
        raise reader.error("more after the end of the document")
    return node


def dumps(value: Any) -> str:
    """A new document, as the installers have always written one."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def edited(text: str | None, value: Any) -> str:
    """`text` changed as little as it takes to hold `value` (a new document when empty)."""
    if text is None or not text.strip():
        return dumps(value)
    root = parse(text)
    editor = _Editor(text, root)
    editor.patch(root, value, multiline=editor.multiline(root))
    return editor.applied()


# ---- reading ------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_SCALAR = json.JSONDecoder(parse_constant=_reject_constant)
_BLANK = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)  # always matches


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def error(self, what: str) -> JsoncError:
        line = self.text.count("\n", 0, self.at) + 1
        column = self.at - (self.text.rfind("\n", 0, self.at) + 1) + 1
        return JsoncError(f"{what} (line {line} column {column})")

    def skip_blank(self) -> None:
        """Whitespace and comments, which JSON.parse never sees."""
        self.at = _BLANK.match(self.text, self.at).end()  # type: ignore[union-attr]
        if self.text.startswith("/*", self.at):
            raise self.error("a comment that never ends")

    def value(self) -> Node:
        self.skip_blank()
        if self.at >= len(self.text):
            raise self.error("a value was expected")
        char = self.text[self.at]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        start = self.at
        try:
            value, self.at = _SCALAR.raw_decode(self.text, start)
        except ValueError:
            raise self.error("a value was expected") from None
        return Node(start, self.at, value, "scalar")

    def object(self) -> Node:
        node = Node(self.at, self.at, {}, "object")
        self.at += 1
        self.skip_blank()
        if self.text.startswith("}", self.at):
            self.at += 1
            node.end = self.at
            return node
        while True:
            self.skip_blank()
            if not self.text.startswith('"', self.at):
                raise self.error("a member's name in double quotes was expected")
            key_start = self.at
            key = self.value()
            self.skip_blank()
            if not self.text.startswith(":", self.at):
                raise self.error("':' was expected")
            self.at += 1
            member = self.value()
            node.keys.append(key.value)
            node.children.append(member)
            node.child_starts.append(key_start)
            node.value[key.value] = member.value  # the last of a repeated name wins
            if self.separator("}"):
                node.end = self.at
                return node

    def array(self) -> Node:
        node = Node(self.at, self.at, [], "array")
        self.at += 1
        self.skip_blank()
        if self.text.startswith("]", self.at):
            self.at += 1
            node.end = self.at
            return node
        while True:
            element = self.value()
            node.children.append(element)
            node.child_starts.append(element.start)
            node.value.append(element.value)
            if self.separator("]"):
                node.end = self.at
                return node

    def separator(self, close: str) -> bool:
        """After a child: a comma (then another child), or the end of its container."""
        self.skip_blank()
        if self.text.startswith(",", self.at):
            self.at += 1
            self.skip_blank()
            if self.text.startswith(close, self.at):
                raise self.error(f"a comma before '{close}' (JSON.parse refuses it)")
            return False
        if self.text.startswith(close, self.at):
            self.at += 1
            return True
        raise self.error(f"',' or '{close}' was expected")


# ---- editing ------------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (true is not 1; the order of an object's members is not kept)."""
    return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(slots=True)
class _Added:
    """Children to add after kept child `after` (-1: before the first)."""

    after: int
    texts: list[tuple[str | None, Any]]  # each child: its key (None in an array), its value


class _Editor:
    """The edits that turn `text` into a new value, gathered, then applied at once."""

    def __init__(self, text: str, root: Node) -> None:
        self.text = text
        self.root = root
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
        self.unit = self.indent_unit(root)
        self.newline = "\r\n" if "\r\n" in text else "\n"  # a file's own line ends

    def applied(self) -> str:
        out, at = [], 0
        for start, end, replacement in sorted(self.edits, key=lambda e: (e[0], e[1])):
            out.append(self.text[at:start])
            out.append(replacement)
            at = max(at, end)
        out.append(self.text[at:])
        return "".join(out)

    # -- layout

    def line_start(self, at: int) -> int:
        return self.text.rfind("\n", 0, at) + 1

    def indent_of(self, at: int) -> str:
        start = self.line_start(at)
        end = start
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return self.text[start:end]

    def begins_line(self, at: int) -> bool:
        return not self.text[self.line_start(at) : at].strip(" \t")

    def multiline(self, node: Node) -> bool:
        return "\n" in self.text[node.start : node.end]

    def indent_unit(self, root: Node) -> str:
        """The document's step of indentation: that of the first child on a line of its
        own, below its container's line."""
        stack = [root]
        while stack:
            node = stack.pop(0)
            for start in node.child_starts:
                if self.begins_line(start) and self.line_start(start) > node.start:
                    outer, inner = self.indent_of(node.start), self.indent_of(start)
                    if inner.startswith(outer) and len(inner) > len(outer):
                        return inner[len(outer) :]
            stack.extend(c for c in node.children if c.kind != "scalar")
        return DEFAULT_INDENT

    def render(self, value: Any, indent: str | None) -> str:
        """`value` as new text: laid out on lines at `indent`, or on one line (None)."""
        if indent is None:
            return json.dumps(value, ensure_ascii=False)
        text = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return text.replace("\n", self.newline + indent)

    # -- the change

    def patch(self, node: Node, value: Any, multiline: bool) -> None:
        if _same(node.value, value):
            return
        if node.kind == "object" and isinstance(value, dict):
            self.patch_object(node, value)
        elif node.kind == "array" and isinstance(value, list):
            self.patch_array(node, value)
        else:
            indent = self.indent_of(node.start) if multiline else None
            self.edits.append((node.start, node.end, self.render(value, indent)))

    def patch_object(self, node: Node, value: dict[str, Any]) -> None:
        last = {key: i for i, key in enumerate(node.keys)}  # a repeated name: the last counts
        deleted = {i for i, key in enumerate(node.keys) if key not in value}
        inner = self.multiline(node)
        for key, i in last.items():
            if key in value:
                self.patch(node.children[i], value[key], inner)
        kept = [i for i in range(len(node.children)) if i not in deleted]
        added: list[tuple[str | None, Any]] = [
            (key, v) for key, v in value.items() if key not in last
        ]
        self.rebuild(node, deleted, [_Added(kept[-1] if kept else -1, added)] if added else [])

    def patch_array(self, node: Node, value: list[Any]) -> None:
        old = [_canonical(v) for v in node.value]
        new = [_canonical(v) for v in value]
        deleted: set[int] = set()
        added: list[_Added] = []
        inner = self.multiline(node)
        matcher = SequenceMatcher(a=old, b=new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if op == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    self.patch(node.children[i], value[j], inner)
                continue
            deleted.update(range(i1, i2))
            if j2 > j1:
                kept_before = [i for i in range(i1) if i not in deleted]
                after = kept_before[-1] if kept_before else -1
                added.append(_Added(after, [(None, v) for v in value[j1:j2]]))
        self.rebuild(node, deleted, added)

    def rebuild(self, node: Node, deleted: set[int], added: list[_Added]) -> None:
        """Delete the children `deleted` and add `added`, in place, leaving every other
        byte of the container (its comments too) as it was."""
        if not deleted and not added:
            return
        count = len(node.children)
        kept = [i for i in range(count) if i not in deleted]
        if not kept and not self.has_comments(node):
            self.edits.append((node.start + 1, node.end - 1, ""))  # `{}`, then any added
            self.add(node, added, kept=[], emptied=True)
            return
        commas = self.commas(node)
        # A child before the last kept one takes its own comma with it; one after, the
        # comma before it: what remains has one comma between each two children.
        tail = kept[-1] + 1 if kept else count
        removed = set()
        for i in deleted:
            if i >= tail:
                removed.add(commas[i - 1])
            elif i < count - 1:
                removed.add(commas[i])
        ranges = [self.deleted_range(node, i, commas, removed) for i in sorted(deleted)]
        ranges += [self.comma_range(node, comma, deleted) for comma in removed]
        for start, end in _merged(ranges):
            self.edits.append((start, end, ""))
        self.add(node, added, kept, emptied=False)

    def commas(self, node: Node) -> list[int]:
        """The place of the comma after each child but the last."""
        found = []
        for child in node.children[:-1]:
            reader = _Reader(self.text)
            reader.at = child.end
            reader.skip_blank()
            found.append(reader.at)
        return found

    def has_comments(self, node: Node) -> bool:
        """Whether a comment stands between the container's children (where nothing else
        but blanks and commas can)."""
        starts = [*node.child_starts, node.end - 1]
        ends = [node.start + 1, *(child.end for child in node.children)]
        gaps = (self.text[end:start] for end, start in zip(ends, starts, strict=True))
        return any("//" in gap or "/*" in gap for gap in gaps)

    def deleted_range(
        self, node: Node, i: int, commas: list[int], removed: set[int]
    ) -> tuple[int, int]:
        """Child i's text, with its comma when that goes, and its line when it had the line
        to itself."""
        start, end = node.child_starts[i], node.children[i].end
        after = self.skip_spaces(end)
        if i < len(commas) and commas[i] in removed and after == commas[i]:
            after = self.skip_spaces(commas[i] + 1)
        if self.begins_line(start) and (after >= len(self.text) or self.text[after] == "\n"):
            return self.line_start(start), min(after + 1, len(self.text))
        if i < len(commas) and commas[i] in removed and after > commas[i]:
            return start, after  # `"a": 1, ` on a line that goes on
        return start, end

    def comma_range(self, node: Node, comma: int, deleted: set[int]) -> tuple[int, int]:
        """A comma that goes, with the spaces after it when they lead to a deleted child on
        the same line (`, "b": 2` as a whole)."""
        after = self.skip_spaces(comma + 1)
        starts = {node.child_starts[i] for i in deleted}
        return (comma, after) if after in starts else (comma, comma + 1)

    def skip_spaces(self, at: int) -> int:
        while at < len(self.text) and self.text[at] in " \t\r":
            at += 1
        return at

    def add(self, node: Node, added: list[_Added], kept: list[int], emptied: bool) -> None:
        if not added:
            return
        # An empty container takes the document's layout; an empty document, lines.
        inner = self.multiline(node) or (
            emptied and (node is self.root or "\n" in self.text.strip())
        )
        outer, nl = self.indent_of(node.start), self.newline
        indent = ""
        if inner:
            on_lines = [i for i in kept if self.begins_line(node.child_starts[i])]
            indent = (
                self.indent_of(node.child_starts[on_lines[-1]]) if on_lines else outer + self.unit
            )
        for group in added:
            body = (f",{nl}{indent}" if inner else ", ").join(
                (f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else "")
                + self.render(value, indent if inner else None)
                for key, value in group.texts
            )
            following = [i for i in kept if i > group.after]
            if following and (group.after < 0 or not inner):
                at = node.child_starts[following[0]]  # before the next child, with a comma
                self.edits.append((at, at, body + (f",{nl}{indent}" if inner else ", ")))
            elif following:
                at = self.line_end(self.skip_comma(node.children[group.after].end))
                self.edits.append((at, at, f"{nl}{indent}{body},"))
            elif group.after >= 0:  # after the last child: it takes a comma
                end = node.children[group.after].end
                self.edits.append((end, end, ","))
                at = self.line_end(end) if inner else end
                self.edits.append((at, at, (f"{nl}{indent}" if inner else " ") + body))
            else:  # the first child
                closing = f"{nl}{outer}" if inner and emptied else ""
                at = node.start + 1
                self.edits.append((at, at, (f"{nl}{indent}" if inner else "") + body + closing))

    def skip_comma(self, end: int) -> int:
        at = self.skip_spaces(end)
        return at + 1 if self.text.startswith(",", at) else end

    def line_end(self, at: int) -> int:
        """The end of the line `at` is on, past what follows on it (a comma, comments),
        or the first thing that is not."""
        text = self.text
        while at < len(text):
            at = self.skip_spaces(at)
            if at >= len(text) or text[at] == "\n":
                break
            if text[at] == ",":
                at += 1
            elif text.startswith("//", at):
                newline = text.find("\n", at)
                at = len(text) if newline < 0 else newline
                break
            elif text.startswith("/*", at) and "\n" not in text[at : text.find("*/", at)]:
                at = text.find("*/", at) + 2
            else:
                return at
        return at - 1 if text[at - 1 : at + 1] == "\r\n" else at


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
