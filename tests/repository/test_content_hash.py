"""The content hash is one digest however it is computed: migration 0054 skips normalising
a text already in NFC and folding one with no whitespace to fold, and must give what
migration 0001's expression gives for every text (stored hashes are compared with it on
every read: a digest that moved would quarantine every memory)."""

from __future__ import annotations

import random

import asyncpg

# Migration 0001's definition, as an expression of $1.
DEFINED = (
    "encode(sha256(convert_to(regexp_replace(btrim(normalize(t, NFC), E' \\t\\n\\r\\f\\v'),"
    " E'[ \\t\\n\\r\\f\\v]+', ' ', 'g'), 'UTF8')), 'hex')"
)
# What a text's normalising and folding turn on: whitespace of each kind, at either end and
# in runs; letters that compose (e + combining acute), precomposed ones, and compatibility
# forms NFC keeps; spaces that are not whitespace to btrim; a letter v (E'\v' is not one).
PIECES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\f",
    "\v",
    "a",
    "v",
    "word",
    "e\u0301",
    "\u00e9",
    "\u212b",
    "\u00c5",
    "A\u030a",
    "\ufb01",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\u200b",
    "\ufeff",
    "\u0301",
    "\U0001f600",
    "x",
]


async def test_the_digest_is_migration_0001s_for_every_text(db: asyncpg.Connection) -> None:
    rng = random.Random(54)
    texts = ["", " ", "plain text with single spaces", "a" * 3000 + "  b"]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 12))) for _ in range(3000)]
    differing = await db.fetch(
        f"SELECT t FROM unnest($1::text[]) t WHERE memory_content_hash(t) <> {DEFINED}", texts
    )
    assert [r["t"] for r in differing] == []
    # The texts cover both sides of each shortcut: normalised and folded, and neither.
    covered = await db.fetchrow(
        "SELECT count(*) FILTER (WHERE t IS NFC NORMALIZED) AS nfc,"
        " count(*) FILTER (WHERE t IS NOT NFC NORMALIZED) AS not_nfc,"
        " count(*) FILTER (WHERE t ~ E'[\\t\\n\\r\\f\\v]|  |^ | $') AS folded,"
        " count(*) FILTER (WHERE t !~ E'[\\t\\n\\r\\f\\v]|  |^ | $') AS unfolded"
        " FROM unnest($1::text[]) t",
        texts,
    )
    assert min(covered.values()) > 100, dict(covered)
