"""Credentials generated from each published format's grammar, pasted the ways a paste
comes (after `KEY=`, in quotes, in JSON, in a URL, at the end of a line or of the text):
how many of them the secret screen would store. Every one should be refused.

tests/domain/test_secret_grammars.py holds the screen to these grammars with hypothesis;
this prints the rate per format, side by side for the code it runs on.

    .venv/bin/python -m bench.secret_grammars [-n 3000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class Part:
    """A run of `alphabet`, between `least` and `most` characters long."""

    alphabet: str
    least: int
    most: int | None = None

    def draw(self, rng: random.Random) -> str:
        length = rng.randint(self.least, self.most or self.least)
        return "".join(rng.choice(self.alphabet) for _ in range(length))


# A format: its literal prefixes (one is drawn), then its parts, literals between them.
Piece = str | Part


@dataclass(frozen=True)
class Grammar:
    prefixes: tuple[str, ...]
    pieces: tuple[Piece, ...]

    def draw(self, rng: random.Random) -> str:
        drawn = [p if isinstance(p, str) else p.draw(rng) for p in self.pieces]
        return rng.choice(self.prefixes) + "".join(drawn)


# From each provider's documentation of its token format (as the detectors in
# app/domain/secrets/detectors.py and detect-secrets' plugins state them).
GRAMMARS: dict[str, Grammar] = {
    "Google API Key": Grammar(("AIza",), (Part(URLSAFE, 35),)),
    "GitHub Token": Grammar(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), (Part(ALNUM + "_", 36),)),
    "GitHub fine-grained token": Grammar(("github_pat_",), (Part(ALNUM + "_", 82),)),
    "GitLab Token": Grammar(("glpat-", "gldt-", "glft-", "glrt-"), (Part(URLSAFE, 20, 50),)),
    "Slack Token": Grammar(
        ("xoxb-", "xoxp-"),
        (
            Part(string.digits, 10, 13),
            "-",
            Part(string.digits, 10, 13),
            "-",
            Part(LOWER_ALNUM, 24),
        ),
    ),
    "Stripe Key": Grammar(("sk_live_", "rk_live_"), (Part(ALNUM, 24),)),
    "AWS Access Key": Grammar(
        ("AKIA", "ASIA"), (Part(string.ascii_uppercase + string.digits, 16),)
    ),
    "OpenAI legacy key": Grammar(("sk-",), (Part(ALNUM, 20), "T3BlbkFJ", Part(ALNUM, 20))),
    "OpenAI project key": Grammar(("sk-proj-", "sk-svcacct-"), (Part(URLSAFE, 40, 120),)),
    "Anthropic API Key": Grammar(("sk-ant-api03-",), (Part(URLSAFE, 80, 100),)),
    "PyPI Token": Grammar(("pypi-AgEIcHlwaS5vcmc",), (Part(URLSAFE, 70, 120),)),
    "SendGrid Key": Grammar(("SG.",), (Part(URLSAFE, 22), ".", Part(URLSAFE, 43))),
    "Twilio Key": Grammar(("AC", "SK"), (Part(LOWER_ALNUM, 32),)),
    "Telegram Bot Token": Grammar(("",), (Part(string.digits, 8, 10), ":", Part(URLSAFE, 35))),
    "Discord Bot Token": Grammar(
        ("M", "N", "O"), (Part(URLSAFE, 23, 25), ".", Part(URLSAFE, 6), ".", Part(URLSAFE, 27))
    ),
    "Mailchimp Key": Grammar(("",), (Part(LOWER_ALNUM, 32), "-us", Part(string.digits, 1, 2))),
    "Square OAuth Secret": Grammar(("sq0csp-",), (Part(URLSAFE, 43),)),
    "Hugging Face Token": Grammar(("hf_",), (Part(string.ascii_letters, 34),)),
    "Vault Token": Grammar(("hvs.", "hvb."), (Part(URLSAFE, 24, 100),)),
    "Shopify Token": Grammar(("shpat_", "shpss_"), (Part(HEX, 32),)),
    "DigitalOcean Token": Grammar(("dop_v1_", "doo_v1_"), (Part(HEX, 64),)),
    "NPM Token": Grammar(("npm_",), (Part(ALNUM, 36),)),
    "Google OAuth Client Secret": Grammar(("GOCSPX-",), (Part(URLSAFE, 28),)),
    "Grafana Token": Grammar(("glsa_",), (Part(ALNUM, 32), "_", Part(HEX, 8))),
    "Linear API Key": Grammar(("lin_api_",), (Part(ALNUM, 40),)),
    "Postman API Key": Grammar(("PMAK-",), (Part(HEX, 24), "-", Part(HEX, 34))),
    "Doppler Token": Grammar(("dp.st.", "dp.sa."), (Part(URLSAFE, 40, 60),)),
    "Sentry Token": Grammar(("sntrys_",), (Part(URLSAFE, 40, 80),)),
    "Databricks Token": Grammar(("dapi",), (Part(HEX, 32),)),
    "Pulumi Token": Grammar(("pul-",), (Part(HEX, 40),)),
    "Supabase Token": Grammar(("sbp_",), (Part(HEX, 40),)),
    "Age Secret Key": Grammar(("AGE-SECRET-KEY-1",), (Part(BECH32, 58),)),
    "Mailgun Key": Grammar(("key-",), (Part(HEX, 32),)),
    "Azure Storage Key": Grammar(
        ("AccountKey=",), (Part(string.ascii_letters + string.digits + "+/", 86), "==")
    ),
}

# The ways a credential is pasted.
CONTEXTS: dict[str, Callable[[str], str]] = {
    "alone": lambda t: t,
    "KEY=": lambda t: f"API_KEY={t}",
    "quoted": lambda t: f'token = "{t}"',
    "JSON": lambda t: json.dumps({"api_key": t}),
    "URL": lambda t: f"https://api.example.org/v1/items?key={t}",
    "end of a line": lambda t: f"export TOKEN={t}\nthen run the deploy",
    "in a sentence": lambda t: f"The staging credential is {t} for now",
}


def stored_share(n: int, seed: int) -> dict[str, float]:
    """Per format, the share of n tokens (pasted in each context in turn) the screen
    would store."""
    from app.domain.secrets.find import find_secrets

    rng = random.Random(seed)
    shares = {}
    contexts = list(CONTEXTS.values())
    for name, grammar in GRAMMARS.items():
        stored = sum(
            not find_secrets(contexts[i % len(contexts)](grammar.draw(rng))) for i in range(n)
        )
        shares[name] = stored / n
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name, share in stored_share(args.n, args.seed).items():
        print(f"{name:28} stored {share:7.2%} of {args.n}")


if __name__ == "__main__":
    main()
