"""The detectors: detect-secrets' plugins for the formats it knows, and the formats it has
no plugin for in its own plugin form (RegexBasedDetector); which of them are formats (a
match is a secret) and which are guesses (a name, randomness), and the one search that
passes over a line none of the formats can match."""

from __future__ import annotations

import re
from functools import cache
from typing import cast

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
# detector's took most of a text's time, and most memories name no credential's word:
# docs/benchmarks.md, "Where a write's time goes").
GUESS_HINTS: dict[type[BasePlugin], re.Pattern[str]] = {
    KeywordDetector: re.compile("|".join(KEYWORDS), re.IGNORECASE),
}
# A quoted string this random (bits per character, base64 alphabet), 20 characters or more.
ENTROPY_LIMIT = 4.5
MIN_RANDOM_CHARS = 20


@cache
def plugins() -> tuple[list[BasePlugin], list[BasePlugin], Base64HighEntropyString]:
    return (
        [p() for p in _FORMAT_PLUGINS],
        [p() for p in _GUESSING_PLUGINS],
        Base64HighEntropyString(limit=ENTROPY_LIMIT),
    )


# Guesses that read a value after a name, a header or a scheme: kept only when the value
# looks random, and (Docker) when it decodes to user:password.
NAMED_VALUE = (HeaderCredentialDetector, NamedSecretAssignmentDetector, UrlPasswordDetector)


# Plugins whose pattern captures the secret itself (the password of a URL, the value of an
# assignment); every other plugin's capture, if any, is a prefix (ghp|gho|...), and the
# whole match is the secret (what redaction replaces).
_CAPTURES_SECRET = (BasicAuthDetector, AwsSecretKeyDetector)


def own_patterns(plugin: BasePlugin) -> bool:
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
def format_hint() -> re.Pattern[str]:
    """Every pattern of the format plugins that read only their patterns, as one: a line
    it does not match, none of them matches (each alternative keeps its own flags), and it
    is passed over by one search instead of 50."""
    formats, _, _ = plugins()
    flags = ((re.IGNORECASE, "i"), (re.DOTALL, "s"), (re.MULTILINE, "m"), (re.VERBOSE, "x"))
    alternatives = []
    for plugin in formats:
        if not own_patterns(plugin):
            continue
        for regex in cast(RegexBasedDetector, plugin).denylist:
            scoped = "".join(letter for flag, letter in flags if regex.flags & flag)
            # In verbose mode a comment runs to the end of the line: end the pattern's line.
            ending = "\n" if "x" in scoped else ""
            alternatives.append(
                f"(?{scoped}:{regex.pattern}{ending})" if scoped else f"(?:{regex.pattern})"
            )
    return re.compile("|".join(alternatives))
