"""Credentials in their real formats, made fresh from random bytes (none is a live secret):
what a memory must never hold. Shared by bench/secrets.py and the tests."""

from __future__ import annotations

import base64
import json
import random
import string

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": _r(rng, string.digits, 10), "name": "ci-bot", "iat": 1764000000}
    payload = _b64url(json.dumps(claims).encode())
    return f"{header}.{payload}.{_r(rng, URLSAFE, 43)}"


def _pem(rng: random.Random, label: str) -> str:
    body = "\n".join(_r(rng, B64, 64) for _ in range(6))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def samples(seed: int = 7) -> list[tuple[str, str]]:
    """(kind, text holding one secret of that kind), several of each kind."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(3):
        r = rng
        out += [
            ("aws access key id", f"The deploy role uses AKIA{_r(r, UPPER_DIGITS, 16)} in CI"),
            ("aws access key id", f"aws_access_key_id = ASIA{_r(r, UPPER_DIGITS, 16)}"),
            ("aws secret key", f"AWS_SECRET_ACCESS_KEY={_r(r, B64, 40)}"),
            ("aws secret key", f'aws_secret_access_key: "{_r(r, B64, 40)}"'),
            ("github token", f"export GH_TOKEN=ghp_{_r(r, ALNUM, 36)}"),
            ("github token", f"the app token gho_{_r(r, ALNUM, 36)} expired"),
            ("github token", f"ghs_{_r(r, ALNUM, 36)} is the installation token"),
            ("github token", f"fine-grained github_pat_{_r(r, ALNUM + '_', 82)}"),
            ("gitlab token", f"use glpat-{_r(r, URLSAFE, 20)} for the registry"),
            ("slack token", f"bot token xoxb-{_r(r, string.digits, 12)}-{_r(r, ALNUM, 24)}"),
            (
                "slack webhook",
                "post to https://hooks.slack.com/services/"
                f"T{_r(r, UPPER_DIGITS, 8)}/B{_r(r, UPPER_DIGITS, 8)}/{_r(r, ALNUM, 24)}",
            ),
            ("stripe key", f"STRIPE_KEY is sk_live_{_r(r, ALNUM, 24)}"),
            ("stripe key", f"restricted key rk_live_{_r(r, ALNUM, 24)}"),
            ("twilio key", f"Twilio API key SK{_r(r, HEX, 32)}"),
            ("sendgrid key", f"SG.{_r(r, URLSAFE, 22)}.{_r(r, URLSAFE, 43)} sends mail"),
            ("npm token", f"//registry.npmjs.org/:_authToken=npm_{_r(r, ALNUM, 36)}"),
            ("pypi token", f"twine uses pypi-AgEIcHlwaS5vcmc{_r(r, URLSAFE, 70)}"),
            (
                "openai key",
                f"OPENAI_API_KEY=sk-{_r(r, ALNUM, 20)}T3BlbkFJ{_r(r, ALNUM, 20)}",
            ),
            ("openai key", f"the project key sk-proj-{_r(r, URLSAFE, 48)}"),
            ("anthropic key", f"sk-ant-api03-{_r(r, URLSAFE, 93)}AA works locally"),
            ("google api key", f"Maps key AIza{_r(r, URLSAFE, 35)} is restricted"),
            ("hugging face token", f"HF_TOKEN hf_{_r(r, string.ascii_letters, 34)}"),
            ("jwt", f"Authorization: Bearer {_jwt(r)}"),
            ("private key", _pem(r, "RSA PRIVATE KEY")),
            ("private key", _pem(r, "OPENSSH PRIVATE KEY")),
            ("private key", _pem(r, "EC PRIVATE KEY")),
            ("private key", _pem(r, "PRIVATE KEY")),
            (
                "connection string",
                f"DATABASE_URL=postgresql://app:{_r(r, ALNUM, 16)}@db.internal:5432/prod",
            ),
            ("connection string", f"mongodb+srv://admin:{_r(r, ALNUM, 14)}@cluster0.example.net"),
            ("connection string", f"redis://default:{_r(r, ALNUM, 20)}@cache:6379/0"),
            ("password assignment", f'password = "{_r(r, ALNUM, 14)}"'),
            ("password assignment", f"DB_PASSWORD={_r(r, ALNUM, 16)}"),
            ("password assignment", f'"client_secret": "{_r(r, ALNUM, 32)}"'),
            (
                "discord token",
                f"bot token M{_r(r, URLSAFE, 23)}.{_r(r, URLSAFE, 6)}.{_r(r, URLSAFE, 27)}",
            ),
            ("telegram token", f"{_r(r, string.digits, 10)}:AA{_r(r, URLSAFE, 33)} is the bot"),
            ("mailchimp key", f"mailchimp {_r(r, HEX, 32)}-us12"),
            (
                "azure storage key",
                f"AccountName=prod;AccountKey={_r(r, B64, 86)}==;EndpointSuffix=core.windows.net",
            ),
            ("square token", f"sq0csp-{_r(r, URLSAFE, 43)} for payments"),
            ("high entropy assignment", f'api_key: "{_r(r, B64, 40)}"'),
        ]
    return out
