"""No secrets in memory: every stored text is screened for credentials before it is written.

The detectors are Yelp's detect-secrets (maintained, one plugin per credential format),
used as a library on the text itself: no files, no network, no verification calls. A few
formats it has no plugin for are added here in its own plugin form (RegexBasedDetector).
What a memory service must not trip on is left out: hex strings (commit ids, hashes) and
IP addresses. docs/security.md has the list and the measured detection and false-refusal
rates (bench/secrets.py).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, TypeVar, cast

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
from detect_secrets.plugins.keyword import DENYLIST as KEYWORDS
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


class AwsSecretKeyDetector(RegexBasedDetector):
    # The secret half of an AWS key pair, named as the SDKs and .env files name it (quoted
    # or not: detect-secrets' keyword detector wants quotes).
    secret_type = "AWS Secret Access Key"
    denylist = (
        re.compile(
            r"(?i)aws_?secret_?(?:access_?)?key\W{0,3}\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})\b"
        ),
    )


def _prefixed(kind: str, *patterns: str) -> type[RegexBasedDetector]:
    """A detector for tokens a provider marks with a prefix of its own."""
    compiled = tuple(re.compile(p) for p in patterns)
    return type(
        kind.title().replace(" ", "") + "Detector",
        (RegexBasedDetector,),
        {"secret_type": kind, "denylist": compiled},
    )


# The end of a token whose alphabet holds `-`: `\b` after a final `-` wants a word
# character next, and a key that ended in one was stored (issue 50).
_TOKEN_END = r"(?![0-9A-Za-z_\-])"

# Providers' own prefixes, from their documentation of each token format.
_PREFIXED: tuple[type[RegexBasedDetector], ...] = (
    _prefixed("Google API Key", r"\bAIza[0-9A-Za-z_\-]{35}" + _TOKEN_END),
    _prefixed("Anthropic API Key", r"\bsk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_\-]{80,}"),
    # detect-secrets knows the legacy `sk-...T3BlbkFJ...` form only.
    _prefixed("OpenAI Token", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"),
    _prefixed("Hugging Face Token", r"\bhf_[A-Za-z]{34}\b"),
    _prefixed("GitHub Token", r"\bgithub_pat_[0-9A-Za-z_]{82}\b"),
    _prefixed("Vault Token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    _prefixed("Shopify Token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    _prefixed("DigitalOcean Token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    _prefixed("NPM Token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _prefixed("Google OAuth Client Secret", r"\bGOCSPX-[A-Za-z0-9_\-]{28}" + _TOKEN_END),
    _prefixed(
        "Grafana Token", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b", r"\bglc_[A-Za-z0-9+/]{32,}"
    ),
    _prefixed("Linear API Key", r"\blin_api_[A-Za-z0-9]{40}\b"),
    _prefixed("Postman API Key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    _prefixed("Doppler Token", r"\bdp\.(?:st|ct|sa|scim|audit)\.[A-Za-z0-9_.\-]{40,}"),
    _prefixed("Sentry Token", r"\bsntry[su]_[A-Za-z0-9_=+/\-]{40,}"),
    _prefixed("Databricks Token", r"\bdapi[a-f0-9]{32}\b"),
    _prefixed("Pulumi Token", r"\bpul-[a-f0-9]{40}\b"),
    _prefixed("Supabase Token", r"\bsbp_[a-f0-9]{40}\b"),
    _prefixed("Age Secret Key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    _prefixed("Mailgun Key", r"\bkey-[0-9a-f]{32}\b"),
    _prefixed(
        "Discord Webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{60,}",
    ),
)

# What follows the name or the scheme: a value with no white space, quote, or the marks of
# a reference ($VAR, ${VAR}, <placeholder>, {{template}}), nor a separator of its own.
_VALUE = r"([^\s\"'`$<>{}\[\](),;]{8,})"


class HeaderCredentialDetector(RegexBasedDetector):
    # `Authorization: Bearer ...`, `X-API-Key: ...` as curl commands and HTTP logs write them.
    secret_type = "HTTP Credential Header"
    denylist = (
        re.compile(r"(?i)\bauthorization\s*[:=]\s*(?:bearer|token|basic)\s+" + _VALUE),
        re.compile(r"(?i)\bx-(?:api|auth)-(?:key|token)\s*:\s*" + _VALUE),
    )


class NamedSecretAssignmentDetector(RegexBasedDetector):
    # `password: ...`, `api_key = ...`, `token=...`, `secret_access_key: ...` (YAML, .env,
    # INI, connection strings' `Password=...;`), whatever the case: a name ending in a word
    # for a credential, then a value; and the same said on a command line (`--password X`,
    # `-pX`, `sshpass -p 'X'`), in .netrc (`password X`) and .pgpass (`host:port:db:user:X`).
    # Kept only when the value looks random (below).
    secret_type = "Secret Keyword"
    denylist = (
        re.compile(
            r"(?i)(?<![A-Za-z0-9])[a-z0-9_.\-]*(?:pass|password|passwd|pwd|secret|token|api_?key"
            r"|access_?key|auth_?key|private_?key)(?![A-Za-z0-9_])\s*[:=]\s*[\"']?" + _VALUE
        ),
        re.compile(r"(?:^|\s)--(?:password|passwd|token|api-key|secret)(?:=|\s+)[\"']?" + _VALUE),
        re.compile(r"(?:^|\s)-p(?:[\"']|\s+[\"'])?" + r"([^\s\"'`$<>{}]{8,})"),
        re.compile(r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+" + _VALUE),
        re.compile(r"(?:^|\s)[A-Za-z0-9.*\-]+:(?:\d+|\*):[^:\s]+:[^:\s]+:([^:\s]{8,})$"),
    )


class UrlPasswordDetector(RegexBasedDetector):
    # scheme://user:password@host, the user possibly empty (redis://:password@host).
    secret_type = "Basic Auth Credentials"
    denylist = (re.compile(r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]*:([^/\s:@]{6,})@"),)


class DockerAuthDetector(RegexBasedDetector):
    # A registry login kept in a Docker config: base64 of user:password.
    secret_type = "Docker Registry Auth"
    denylist = (re.compile(r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{12,}={0,2})\""),)


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
    AwsSecretKeyDetector,
    *_PREFIXED,
)
# Guesses from a name (`password = "..."`) or from randomness: the library's own
# false-positive filters apply to these.
_GUESSING_PLUGINS: tuple[type[BasePlugin], ...] = (
    KeywordDetector,
    HeaderCredentialDetector,
    NamedSecretAssignmentDetector,
    UrlPasswordDetector,
    DockerAuthDetector,
)
# A word every pattern of a guessing plugin holds (case aside), read first: a line without
# one is passed over by one search instead of the plugin's every pattern (the keyword
# detector's took 0.3 of a text's 0.55 ms, and 94% of bench.synthetic's memories name no
# credential's word).
_GUESS_HINTS: dict[type[BasePlugin], re.Pattern[str]] = {
    KeywordDetector: re.compile("|".join(KEYWORDS), re.IGNORECASE),
}
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


def _placeholder_token(value: str) -> bool:
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
    _, _, entropy = _plugins()
    return classes >= 2 or (len(value) >= 16 and entropy.calculate_shannon_entropy(value) >= 3.5)


# Content-addressed hashes (npm lockfiles' integrity, HTML subresource integrity, CSP
# sources) are random by construction and public: never a secret.
_DIGEST_PREFIX = re.compile(r"^(?:sha1|sha256|sha384|sha512)-")


def _guess_is_noise(secret: str, line: str, *, named: bool = False) -> bool:
    """`named`: the value was found after a credential's name, so even a UUID is one (many
    services issue UUID-shaped keys); found by its randomness alone, a UUID is an id."""
    return (
        _placeholder(secret)
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


# Guesses that read a value after a name, a header or a scheme: kept only when the value
# looks random, and (Docker) when it decodes to user:password.
_NAMED_VALUE = (HeaderCredentialDetector, NamedSecretAssignmentDetector, UrlPasswordDetector)


# `process.env.DB_PASSWORD`, `settings.SECRET_KEY`: where a credential is read from.
_CODE_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _guess_holds(plugin: BasePlugin, value: str, line: str) -> bool:
    named = isinstance(plugin, _NAMED_VALUE)
    if not value or _guess_is_noise(value, line, named=named):
        return False
    if named and _CODE_REFERENCE.fullmatch(value):
        return False
    if isinstance(plugin, _NAMED_VALUE):
        return _looks_random(value)
    if isinstance(plugin, DockerAuthDetector):
        decoded = _printable(_b64decode(value))
        return decoded is not None and ":" in decoded
    return True


# Plugins whose pattern captures the secret itself (the password of a URL, the value of an
# assignment); every other plugin's capture, if any, is a prefix (ghp|gho|...), and the
# whole match is the secret (what redaction replaces).
_CAPTURES_SECRET = (BasicAuthDetector, AwsSecretKeyDetector)


def _own_patterns(plugin: BasePlugin) -> bool:
    """Whether a format plugin's matches are its patterns' own (each pattern's whole match
    is the secret), so that reading them is all it does."""
    return _reads_own_patterns(type(plugin))


@cache
def _reads_own_patterns(kind: type[BasePlugin]) -> bool:
    # By class, once: asked for each plugin of every line screened.
    return issubclass(kind, RegexBasedDetector) and not issubclass(
        kind, (*_CAPTURES_SECRET, PrivateKeyDetector)
    )


@cache
def _format_hint() -> re.Pattern[str]:
    """Every pattern of the format plugins that read only their patterns, as one: a line
    it does not match, none of them matches (each alternative keeps its own flags), and it
    is passed over by one search instead of 50."""
    formats, _, _ = _plugins()
    flags = ((re.IGNORECASE, "i"), (re.DOTALL, "s"), (re.MULTILINE, "m"), (re.VERBOSE, "x"))
    alternatives = []
    for plugin in formats:
        if not _own_patterns(plugin):
            continue
        for regex in cast(RegexBasedDetector, plugin).denylist:
            scoped = "".join(letter for flag, letter in flags if regex.flags & flag)
            # In verbose mode a comment runs to the end of the line: end the pattern's line.
            ending = "\n" if "x" in scoped else ""
            alternatives.append(
                f"(?{scoped}:{regex.pattern}{ending})" if scoped else f"(?:{regex.pattern})"
            )
    return re.compile("|".join(alternatives))


def _format_matches(plugin: BasePlugin, line: str) -> Iterator[str]:
    if not _own_patterns(plugin):
        yield from plugin.analyze_string(line)
        return
    for regex in cast(RegexBasedDetector, plugin).denylist:
        for match in regex.finditer(line):
            yield match.group(0)


def _formats_in(text: str) -> Iterator[Finding]:
    """Credentials of a fixed format in `text` (no guesses): what an encoded or split
    credential is checked for once it is put back together."""
    formats, _, _ = _plugins()
    lines = text.splitlines()
    hinted = [line for line in lines if _format_hint().search(line)]
    for plugin in formats:
        if isinstance(plugin, PrivateKeyDetector):
            for value in plugin.analyze_string(text):
                yield Finding(plugin.secret_type, value)
            continue
        for line in hinted if _own_patterns(plugin) else lines:
            for value in _format_matches(plugin, line):
                if isinstance(plugin, BasicAuthDetector) and _placeholder(value):
                    continue  # postgresql://user:pass@host in a how-to
                if _placeholder_token(value):
                    continue
                yield Finding(plugin.secret_type, value)


# Encoded forms a credential is pasted in: base64 (standard or URL-safe), hex, and
# percent-encoding. Each token is decoded, and what decodes to text is checked for the
# fixed formats (guesses would read noise into decoded bytes).
_BASE64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_TOKEN = re.compile(r"\b(?:[0-9a-fA-F]{2}){10,}\b")
_PERCENT_TOKEN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")


def _b64decode(token: str) -> bytes | None:
    padded = token + "=" * (-len(token) % 4)
    try:
        if "-" in token or "_" in token:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _printable(data: bytes | None) -> str | None:
    """The bytes as text when they are text (UTF-8, nearly all printable), else None."""
    if not data or len(data) < 8:
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    shown = sum(c.isprintable() or c.isspace() for c in text)
    return text if shown >= 0.95 * len(text) else None


def _decoded(text: str) -> Iterator[tuple[str, str, str]]:
    """(encoding, the token as written, what it decodes to) for each token that decodes to
    text."""
    for match in _BASE64_TOKEN.finditer(text):
        decoded = _printable(_b64decode(match.group()))
        if decoded is not None:
            yield "base64", match.group(), decoded
    for match in _HEX_TOKEN.finditer(text):
        decoded = _printable(bytes.fromhex(match.group()))
        if decoded is not None:
            yield "hex", match.group(), decoded
    if "%" in text:
        for match in _PERCENT_TOKEN.finditer(text):
            decoded = urllib.parse.unquote(match.group())
            if decoded != match.group():
                yield "URL-encoded", match.group(), decoded


# No credential of any format is shorter (a field like `medium` or `agent` holds none).
_SHORTEST_SECRET = 8


def find_secrets(text: str) -> list[Finding]:
    """Every credential found in `text`, in order of kind; empty when there is none."""
    if len(text) < _SHORTEST_SECRET:
        return []
    _, guesses, entropy = _plugins()
    found: dict[str, Finding] = {}
    for finding in _formats_in(text):
        found.setdefault(finding.value, finding)
    for line in text.splitlines():
        for plugin in guesses:
            hint = _GUESS_HINTS.get(type(plugin))
            if hint is not None and not hint.search(line):
                continue
            for value in plugin.analyze_string(line):
                if _guess_holds(plugin, value, line):
                    found.setdefault(value, Finding(plugin.secret_type, value))
        for value in entropy.analyze_string(line):
            if (
                len(value) >= _MIN_RANDOM_CHARS
                and entropy.calculate_shannon_entropy(value) > ENTROPY_LIMIT
                and not _guess_is_noise(value, line)
            ):
                found.setdefault(value, Finding("High Entropy String", value))
    for encoding, token, decoded in _decoded(text):
        if token in found:
            continue
        for finding in _formats_in(decoded):
            found.setdefault(token, Finding(f"{finding.kind}, {encoding}", token))
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


T = TypeVar("T")


def screen_fields(record: T, policy: SecretsPolicy, prefix: str = "") -> T:
    """Every string a write shape (a dataclass) holds, screened, each refusal naming its
    field: strings, lists of them, mappings (metadata, key changes) and nested shapes, by
    their type. A field added to a shape is screened without being named here."""
    assert dataclasses.is_dataclass(record) and not isinstance(record, type)
    changes = {
        f.name: _screened(getattr(record, f.name), f"{prefix}{f.name}", policy)
        for f in dataclasses.fields(record)
    }
    return dataclasses.replace(record, **changes)


def _screened(value: Any, field: str, policy: SecretsPolicy) -> Any:
    if isinstance(value, str):
        return screen(value, field, policy)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return screen_fields(value, policy, f"{field}.")
    if isinstance(value, Mapping):
        return screen_json(value, field, policy)
    if isinstance(value, (list, tuple)):
        return type(value)(_screened(v, f"{field}.{i}", policy) for i, v in enumerate(value))
    return value


# A credential has no white space: one cut in two is the last word of one field and the
# first word of another, read together.
_LAST_WORD = re.compile(r"\S+$")
_MIN_SPLIT_CHARS = 16  # shorter than any fixed format
# Fields whose values come from a closed vocabulary: no one cuts a key into `general`, and
# read against them a content ending in half a token would complete it by accident.
_VOCABULARY_FIELDS = frozenset({"memory_type", "trust_level", "confidence"})
_FIRST_WORD = re.compile(r"^\S+")


def screen_memory(new: NewMemory, policy: SecretsPolicy, prefix: str = "") -> NewMemory:
    """Every stored text of a memory screened (every field the field table lets a writer
    set), each refusal naming its field (`prefix` names the item of a batch); then each
    field's end read against every other field's start, for a credential cut in two."""
    screened = screen_fields(new, policy, prefix)
    texts = {
        f.name: getattr(screened, f.name)
        for f in dataclasses.fields(screened)
        if isinstance(getattr(screened, f.name), str) and f.name not in _VOCABULARY_FIELDS
    }
    while (split := next(_split_across(texts), None)) is not None:
        first, second, finding, at = split
        if policy == "refuse":
            raise InvalidInputError(
                f"{prefix}{first} and {prefix}{second} hold what looks like a secret cut in"
                f" two ({finding.kind}); memories are shared with every agent of the tenant,"
                " so credentials are never stored",
                field=f"{prefix}{first}",
            )
        label = f"[REDACTED:{finding.kind}]"
        head, tail = finding.value[:at], finding.value[at:]
        texts[first] = texts[first][: len(texts[first]) - len(head)] + label
        texts[second] = label + texts[second][len(tail) :]
        screened = dataclasses.replace(screened, **{first: texts[first], second: texts[second]})
    return screened


def _split_across(texts: Mapping[str, str]) -> Iterator[tuple[str, str, Finding, int]]:
    """(first field, second field, the credential, where the cut is in it) for a fixed-format
    credential that only the end of one field and the start of the other make whole."""
    ends = {name: _LAST_WORD.search(text) for name, text in texts.items()}
    starts = {name: _FIRST_WORD.match(text) for name, text in texts.items()}
    for first, end in ends.items():
        for second, start_word in starts.items():
            if first == second or end is None or start_word is None:
                continue
            tail, head = end.group(), start_word.group()
            joined = tail + head
            if len(joined) < _MIN_SPLIT_CHARS:
                continue
            for finding in _formats_in(joined):
                start = joined.find(finding.value)
                if start < len(tail) < start + len(finding.value):
                    yield first, second, finding, len(tail) - start


def memory_text_size(new: NewMemory) -> int:
    """How much text screening a memory reads (to decide whether it leaves the event loop)."""
    return len(new.content) + len(new.context or "") + sum(len(s) for s in strings_of(new.metadata))
