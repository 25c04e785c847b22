"""Finding credentials in a text (every format, the guesses, the encoded forms), and a text
with them redacted."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector

from app.domain.secrets.detectors import (
    ENTROPY_LIMIT,
    GUESS_HINTS,
    MIN_RANDOM_CHARS,
    format_hint,
    own_patterns,
    plugins,
)
from app.domain.secrets.encodings import decoded_tokens
from app.domain.secrets.look_alikes import (
    guess_holds,
    guess_is_noise,
    is_placeholder,
    is_placeholder_token,
)


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    value: str


def _format_matches(plugin: BasePlugin, line: str) -> Iterator[str]:
    if not own_patterns(plugin):
        yield from plugin.analyze_string(line)
        return
    for regex in cast(RegexBasedDetector, plugin).denylist:
        for match in regex.finditer(line):
            yield match.group(0)


def formats_in(text: str) -> Iterator[Finding]:
    """Credentials of a fixed format in `text` (no guesses): what an encoded or split
    credential is checked for once it is put back together."""
    formats, _, _ = plugins()
    lines = text.splitlines()
    hinted = [line for line in lines if format_hint().search(line)]
    for plugin in formats:
        if isinstance(plugin, PrivateKeyDetector):
            for value in plugin.analyze_string(text):
                yield Finding(plugin.secret_type, value)
            continue
        for line in hinted if own_patterns(plugin) else lines:
            for value in _format_matches(plugin, line):
                if isinstance(plugin, BasicAuthDetector) and is_placeholder(value):
                    continue  # postgresql://user:pass@host in a how-to
                if is_placeholder_token(value):
                    continue
                yield Finding(plugin.secret_type, value)


# No credential of any format is shorter (a field like `medium` or `agent` holds none).
_SHORTEST_SECRET = 8


def find_secrets(text: str) -> list[Finding]:
    """Every credential found in `text`, in order of kind; empty when there is none."""
    if len(text) < _SHORTEST_SECRET:
        return []
    _, guesses, entropy = plugins()
    found: dict[str, Finding] = {}
    for finding in formats_in(text):
        found.setdefault(finding.value, finding)
    for line in text.splitlines():
        for plugin in guesses:
            hint = GUESS_HINTS.get(type(plugin))
            if hint is not None and not hint.search(line):
                continue
            for value in plugin.analyze_string(line):
                if guess_holds(plugin, value, line):
                    found.setdefault(value, Finding(plugin.secret_type, value))
        for value in entropy.analyze_string(line):
            if (
                len(value) >= MIN_RANDOM_CHARS
                and entropy.calculate_shannon_entropy(value) > ENTROPY_LIMIT
                and not guess_is_noise(value, line)
            ):
                found.setdefault(value, Finding("High Entropy String", value))
    for encoding, token, decoded in decoded_tokens(text):
        if token in found:
            continue
        for finding in formats_in(decoded):
            found.setdefault(token, Finding(f"{finding.kind}, {encoding}", token))
    return list(found.values())


def redacted(text: str, findings: list[Finding]) -> str:
    for finding in sorted(findings, key=lambda f: -len(f.value)):
        text = text.replace(finding.value, f"[REDACTED:{finding.kind}]")
    return text


# A secret that begins in the part of a text a log line keeps is found whole when it is at
# most this long; the rest of a long text is not scanned (a log line is no place for it).
LOG_SCAN_MARGIN = 400


def redact_for_log(text: str, keep: int) -> str:
    """The first `keep` characters of a text, for a log line, with any secret replaced.
    Redacted before it is cut: a cut secret would pass the detector."""
    window = text[: keep + LOG_SCAN_MARGIN]
    return redacted(window, find_secrets(window))[:keep]
