"""What looks like a credential and is not: placeholders documentation writes where one
goes, content-addressed hashes, references to where one is kept, words; and the rule that
keeps a guess only when its value looks random."""

from __future__ import annotations

import re

from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin

from app.domain.secrets.detectors import NAMED_VALUE, DockerAuthDetector, plugins
from app.domain.secrets.encodings import base64_decoded, printable

# What documentation writes where a password goes: not a secret.
_PLACEHOLDERS = frozenset(
    {
        "pass",
        "password",
        "passwd",
        "secret",
        "changeme",
        "example",
        "test",
        "dummy",
        "user",
        "username",
        "admin",
        "root",
        "redacted",
        "none",
        "null",
        "token",
        "key",
        "apikey",
    }
)


def is_placeholder(secret: str) -> bool:
    lowered = secret.lower().strip("<>[]{}()*'\"")
    return lowered in _PLACEHOLDERS or len(set(lowered)) <= 1 or "example" in lowered


# Words .env.example files and docs put where a credential goes (`xoxb-your-token-here`,
# `ghp_xxxxxx...`, `YOUR_API_KEY`), each in one case as a person writes it: lower, UPPER or
# Title. A random token holds one by chance about once in 10,000 (bench/secret_grammars.py;
# `FaKE` or `xXxX` in mixed case, five times as often, is no longer taken for one).
_WORDS = (
    "your", "here", "example", "placeholder", "changeme", "dummy", "redacted", "sample",
    "insert", "replace", "fake",
)  # fmt: skip
_PLACEHOLDER_WORDS = re.compile(
    "|".join(form for w in _WORDS for form in (w, w.upper(), w.title()))
    + r"|x{6,}|X{6,}|\.\.\.|<|>"
)


def is_placeholder_token(value: str) -> bool:
    """A token of a known format that is a placeholder: a placeholder's words, or a body
    of one or two letters repeated (`ghp_xxxxxxxx`, `sk-proj-0000...`). The body is the
    token's longest run between separators: the part after its first `-` or `_` may be a
    real key's last character or two (a Google key read so was stored, issue 50)."""
    longest = max(re.split(r"[_\-.:]", value), key=len)
    return bool(_PLACEHOLDER_WORDS.search(value)) or len(set(longest.lower())) <= 2


def _looks_random(value: str) -> bool:
    """A value a person did not write as words: letters of both cases, or letters and digits
    (`hunter22`, `Xk9...`), or a long high-entropy string. `read_from_vault`, `3600` and
    `production` are not."""
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    _, _, entropy = plugins()
    return classes >= 2 or (len(value) >= 16 and entropy.calculate_shannon_entropy(value) >= 3.5)


# Content-addressed hashes (npm lockfiles' integrity, HTML subresource integrity, CSP
# sources) are random by construction and public: never a secret.
_DIGEST_PREFIX = re.compile(r"^(?:sha1|sha256|sha384|sha512)-")


def guess_is_noise(secret: str, line: str, *, named: bool = False) -> bool:
    """`named`: the value was found after a credential's name, so even a UUID is one (many
    services issue UUID-shaped keys); found by its randomness alone, a UUID is an id."""
    return (
        is_placeholder(secret)
        or bool(_PLACEHOLDER_WORDS.search(secret))
        or bool(_DIGEST_PREFIX.match(secret))
        # A secret has no spaces; a sentence in quotes after "secret" is prose.
        or any(c.isspace() for c in secret)
        or heuristic.is_sequential_string(secret)
        or (not named and heuristic.is_potential_uuid(secret))
        or heuristic.is_templated_secret(secret)
        or heuristic.is_prefixed_with_dollar_sign(secret)
        or heuristic.is_indirect_reference(line)
        or heuristic.is_not_alphanumeric_string(secret)
    )


# `process.env.DB_PASSWORD`, `settings.SECRET_KEY`: where a credential is read from.
_CODE_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def guess_holds(plugin: BasePlugin, value: str, line: str) -> bool:
    named = isinstance(plugin, NAMED_VALUE)
    if not value or guess_is_noise(value, line, named=named):
        return False
    if named and _CODE_REFERENCE.fullmatch(value):
        return False
    if isinstance(plugin, NAMED_VALUE):
        return _looks_random(value)
    if isinstance(plugin, DockerAuthDetector):
        decoded = printable(base64_decoded(value))
        return decoded is not None and ":" in decoded
    return True
