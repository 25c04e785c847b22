"""The encoded forms a credential is pasted in (base64, hex, percent-encoding), decoded to
text where they are text."""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Iterator

# Encoded forms a credential is pasted in: base64 (standard or URL-safe), hex, and
# percent-encoding. Each token is decoded, and what decodes to text is checked for the
# fixed formats (guesses would read noise into decoded bytes).
_BASE64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_TOKEN = re.compile(r"\b(?:[0-9a-fA-F]{2}){10,}\b")
_PERCENT_TOKEN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")


def base64_decoded(token: str) -> bytes | None:
    padded = token + "=" * (-len(token) % 4)
    try:
        if "-" in token or "_" in token:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def printable(data: bytes | None) -> str | None:
    """The bytes as text when they are text (UTF-8, nearly all printable), else None."""
    if not data or len(data) < 8:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    shown = sum(c.isprintable() or c.isspace() for c in text)
    return text if shown >= 0.95 * len(text) else None


def decoded_tokens(text: str) -> Iterator[tuple[str, str, str]]:
    """(encoding, the token as written, what it decodes to) for each token that decodes to
    text."""
    for match in _BASE64_TOKEN.finditer(text):
        decoded = printable(base64_decoded(match.group()))
        if decoded is not None:
            yield "base64", match.group(), decoded
    for match in _HEX_TOKEN.finditer(text):
        decoded = printable(bytes.fromhex(match.group()))
        if decoded is not None:
            yield "hex", match.group(), decoded
    if "%" in text:
        for match in _PERCENT_TOKEN.finditer(text):
            decoded = urllib.parse.unquote(match.group())
            if decoded != match.group():
                yield "URL-encoded", match.group(), decoded
