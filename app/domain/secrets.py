"""No secrets in memory: every stored text is screened for credentials before it is written.

The detectors are Yelp's detect-secrets (maintained, one plugin per credential format),
used as a library on the text itself: no files, no network, no verification calls. A few
formats it has no plugin for are added here in its own plugin form (RegexBasedDetector).
What a memory service must not trip on is left out: hex strings (commit ids, hashes) and
IP addresses. docs/security.md has the list and the measured detection and false-refusal
rates (bench/secrets.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from detect_secrets.filters import heuristic
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from app.domain.errors import InvalidInputError
from app.domain.memory import NewMemory

SecretsPolicy = Literal["refuse", "redact"]
SECRETS_POLICIES: tuple[SecretsPolicy, ...] = ("refuse", "redact")


class GoogleApiKeyDetector(RegexBasedDetector):
    secret_type = "Google API Key"
    denylist = (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),)


class AnthropicKeyDetector(RegexBasedDetector):
    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"\bsk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_\-]{80,}"),)


class OpenAIProjectKeyDetector(RegexBasedDetector):
    # detect-secrets knows the legacy `sk-...T3BlbkFJ...` form only.
    secret_type = "OpenAI Token"
    denylist = (re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"),)


class HuggingFaceTokenDetector(RegexBasedDetector):
    secret_type = "Hugging Face Token"
    denylist = (re.compile(r"\bhf_[A-Za-z]{34}\b"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    secret_type = "GitHub Token"
    denylist = (re.compile(r"\bgithub_pat_[0-9A-Za-z_]{82}\b"),)


class AwsSecretKeyDetector(RegexBasedDetector):
    # The secret half of an AWS key pair, named as the SDKs and .env files name it (quoted
    # or not: detect-secrets' keyword detector wants quotes).
    secret_type = "AWS Secret Access Key"
    denylist = (
        re.compile(
            r"(?i)aws_?secret_?(?:access_?)?key\W{0,3}\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})\b"
        ),
    )


class UnquotedPasswordAssignmentDetector(RegexBasedDetector):
    # `PASSWORD=...` / `DB_PASSWORD: ...` as in .env files and shell exports: an upper-case
    # name ending in PASSWORD/SECRET/TOKEN and a value with no spaces. (Prose such as
    # "password: the usual one" is not this shape.)
    secret_type = "Secret Keyword"
    denylist = (
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY)\s*[=:]\s*"
            r"([^\s\"'$`{}<>]{8,})"
        ),
    )


# Formats with a fixed shape: a match is a secret.
_FORMAT_PLUGINS: tuple[type[BasePlugin], ...] = (
    ArtifactoryDetector,
    AWSKeyDetector,
    AzureStorageKeyDetector,
    BasicAuthDetector,
    DiscordBotTokenDetector,
    GitHubTokenDetector,
    GitLabTokenDetector,
    JwtTokenDetector,
    MailchimpDetector,
    NpmDetector,
    OpenAIDetector,
    PrivateKeyDetector,
    PypiTokenDetector,
    SendGridDetector,
    SlackDetector,
    SquareOAuthDetector,
    StripeDetector,
    TelegramBotTokenDetector,
    TwilioKeyDetector,
    GoogleApiKeyDetector,
    AnthropicKeyDetector,
    OpenAIProjectKeyDetector,
    HuggingFaceTokenDetector,
    GitHubFineGrainedTokenDetector,
    AwsSecretKeyDetector,
)
# Guesses from a name (`password = "..."`) or from randomness: the library's own
# false-positive filters apply to these.
_GUESSING_PLUGINS: tuple[type[BasePlugin], ...] = (
    KeywordDetector,
    UnquotedPasswordAssignmentDetector,
)
# A quoted string this random (bits per character, base64 alphabet), 20 characters or more.
ENTROPY_LIMIT = 4.5
_MIN_RANDOM_CHARS = 20


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    value: str


@cache
def _plugins() -> tuple[list[BasePlugin], list[BasePlugin], Base64HighEntropyString]:
    return (
        [p() for p in _FORMAT_PLUGINS],
        [p() for p in _GUESSING_PLUGINS],
        Base64HighEntropyString(limit=ENTROPY_LIMIT),
    )


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


def _placeholder(secret: str) -> bool:
    lowered = secret.lower().strip("<>[]{}()*'\"")
    return lowered in _PLACEHOLDERS or len(set(lowered)) <= 1 or "example" in lowered


def _guess_is_noise(secret: str, line: str) -> bool:
    return (
        _placeholder(secret)
        # A secret has no spaces; a sentence in quotes after "secret" is prose.
        or any(c.isspace() for c in secret)
        or heuristic.is_sequential_string(secret)
        or heuristic.is_potential_uuid(secret)
        or heuristic.is_templated_secret(secret)
        or heuristic.is_prefixed_with_dollar_sign(secret)
        or heuristic.is_indirect_reference(line)
        or heuristic.is_not_alphanumeric_string(secret)
    )


# Plugins whose pattern captures the secret itself (the password of a URL, the value of an
# assignment); every other plugin's capture, if any, is a prefix (ghp|gho|...), and the
# whole match is the secret (what redaction replaces).
_CAPTURES_SECRET = (BasicAuthDetector, AwsSecretKeyDetector, UnquotedPasswordAssignmentDetector)


def _format_matches(plugin: BasePlugin, line: str) -> Iterator[str]:
    if not isinstance(plugin, RegexBasedDetector) or isinstance(plugin, _CAPTURES_SECRET):
        yield from plugin.analyze_string(line)
        return
    for regex in plugin.denylist:
        for match in regex.finditer(line):
            yield match.group(0)


def find_secrets(text: str) -> list[Finding]:
    """Every credential found in `text`, in order of kind; empty when there is none."""
    formats, guesses, entropy = _plugins()
    found: dict[str, Finding] = {}
    # A private key block spans lines; every other format is found within one.
    for plugin in formats:
        if isinstance(plugin, PrivateKeyDetector):
            for value in plugin.analyze_string(text):
                found.setdefault(value, Finding(plugin.secret_type, value))
    for line in text.splitlines():
        for plugin in formats:
            if isinstance(plugin, PrivateKeyDetector):
                continue
            for value in _format_matches(plugin, line):
                if isinstance(plugin, BasicAuthDetector) and _placeholder(value):
                    continue  # postgresql://user:pass@host in a how-to
                found.setdefault(value, Finding(plugin.secret_type, value))
        for plugin in guesses:
            for value in plugin.analyze_string(line):
                if value and not _guess_is_noise(value, line):
                    found.setdefault(value, Finding(plugin.secret_type, value))
        for value in entropy.analyze_string(line):
            if (
                len(value) >= _MIN_RANDOM_CHARS
                and entropy.calculate_shannon_entropy(value) > ENTROPY_LIMIT
                and not _guess_is_noise(value, line)
            ):
                found.setdefault(value, Finding("High Entropy String", value))
    return list(found.values())


def redacted(text: str, findings: list[Finding]) -> str:
    for finding in sorted(findings, key=lambda f: -len(f.value)):
        text = text.replace(finding.value, f"[REDACTED:{finding.kind}]")
    return text


def screen(value: str, field: str, policy: SecretsPolicy) -> str:
    """The text as it may be stored: refused (422 naming the field and the kind of secret,
    never the secret) or with each secret replaced by [REDACTED:kind]."""
    findings = find_secrets(value)
    if not findings:
        return value
    if policy == "redact":
        return redacted(value, findings)
    kinds = ", ".join(sorted({f.kind for f in findings}))
    raise InvalidInputError(
        f"{field} holds what looks like a secret ({kinds}); memories are shared with every"
        " agent of the tenant, so credentials are never stored. Remove it, or reference where"
        " it is kept instead",
        field=field,
    )


def screen_json(value: Any, field: str, policy: SecretsPolicy) -> Any:
    """Every string in a JSON value (keys too), each named by its path."""
    if isinstance(value, str):
        return screen(value, field, policy)
    if isinstance(value, Mapping):
        return {
            screen(k, field, policy): screen_json(v, f"{field}.{k}", policy)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [screen_json(v, f"{field}.{i}", policy) for i, v in enumerate(value)]
    return value


def strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield k
            yield from strings_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)


# A secret that begins in the part of a text a log line keeps is found whole when it is at
# most this long; the rest of a long text is not scanned (a log line is no place for it).
LOG_SCAN_MARGIN = 400


def redact_for_log(text: str, keep: int) -> str:
    """The first `keep` characters of a text, for a log line, with any secret replaced.
    Redacted before it is cut: a cut secret would pass the detector."""
    window = text[: keep + LOG_SCAN_MARGIN]
    return redacted(window, find_secrets(window))[:keep]


def screen_memory(new: NewMemory, policy: SecretsPolicy, prefix: str = "") -> NewMemory:
    """Every stored text of a memory screened, each refusal naming its field (`prefix`
    names the item of a batch)."""
    return dataclasses.replace(
        new,
        content=screen(new.content, f"{prefix}content", policy),
        context=_optional(new.context, f"{prefix}context", policy),
        name=_optional(new.name, f"{prefix}name", policy),
        category=_optional(new.category, f"{prefix}category", policy),
        source_repo=_optional(new.source_repo, f"{prefix}source_repo", policy),
        task_id=_optional(new.task_id, f"{prefix}task_id", policy),
        tags=tuple(screen(t, f"{prefix}tags.{i}", policy) for i, t in enumerate(new.tags)),
        metadata=screen_json(new.metadata, f"{prefix}metadata", policy),
    )


def _optional(value: str | None, field: str, policy: SecretsPolicy) -> str | None:
    return None if value is None else screen(value, field, policy)


def memory_text_size(new: NewMemory) -> int:
    """How much text screening a memory reads (to decide whether it leaves the event loop)."""
    return len(new.content) + len(new.context or "") + sum(len(s) for s in strings_of(new.metadata))
