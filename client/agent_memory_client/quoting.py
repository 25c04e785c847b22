"""The one way stored text enters what an agent reads: as a quoted literal (the server's
app/domain/agent_text.py renders with this function too, and says why).

A JSON string literal in which a quote, a backslash, every line break and every control or
format character (U+2028 and U+2029 among them) is escaped: stored text cannot start a line,
close the quotes or draw nothing. `json.dumps` leaves the line and paragraph separators and
the format characters as they are; this does not.
"""

from __future__ import annotations

import re
import unicodedata

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Characters a reader could take for a line break, or that draw nothing: escaped as \uXXXX.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_NOT_PLAIN = re.compile(r"[^\x20-\x21\x23-\x5b\x5d-\x7e]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    if unicodedata.category(char) not in _HIDDEN_CATEGORIES:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quoted(text: str) -> str:
    """Stored text as data: one line, inside quotes it cannot close."""
    return '"' + _NOT_PLAIN.sub(_escape, text) + '"'
