"""Signing in to the console with the team's identity provider (OpenID Connect): the rules,
without I/O. app/services/oidc.py talks to the provider; app/console/oidc.py is the door.

- A browser's sign-in is one random secret (a cookie of its own, for the few minutes the
  provider's pages take): the `state`, the `nonce` and the PKCE verifier are derived from
  it, so the callback needs nothing stored on a server (any worker, after a restart) and a
  callback from another browser's sign-in does not match.
- The ID token is verified with joserfc: its signature by a key of the provider's JWKS, its
  issuer, its audience (this client), its expiry and its nonce.
- Who it is: one claim of the token (OIDC_NAME_CLAIM, `email` by default) is the name of a
  present person; an email the provider says is unverified is no one.
- The role: the highest among the person's active keys (a person with none may not sign
  in), at most the role they signed in with, decided again on every request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from joserfc import jwt
from joserfc.errors import ExpiredTokenError, JoseError, MissingClaimError
from joserfc.jwk import KeySet, KeySetSerialization

from app.domain.errors import UnauthorizedError
from app.domain.oauth import LOOPBACK_NAMES

# The path the provider sends the browser back to: PUBLIC_URL + this is what an admin
# registers as the redirect URI (docs/team.md).
CALLBACK_PATH = "/console/oidc/callback"
START_PATH = "/console/oidc/start"
# A session id in the console's cookie, told from a pasted key (am_...) by its prefix.
SESSION_PREFIX = "amsession_"
# What the sign-in asks of the provider: who (openid), and the claims naming a person.
SCOPES = "openid email profile"
# Signatures an ID token may carry (never `none`, never a MAC with a guessable secret).
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
# Seconds of clock difference between the provider and this server that an ID token's
# times tolerate.
LEEWAY_S = 60
# How long a browser may take on the provider's pages.
FLOW_TTL_S = 600
# Roles from least to most: a person's console role is the highest of their keys'.
ROLE_RANK = ("reader", "agent", "admin")


@dataclass(frozen=True, slots=True)
class Flow:
    """What one browser's sign-in sends and expects, all from its secret."""

    state: str
    nonce: str
    code_verifier: str


def issuer_problem(issuer: str) -> str | None:
    """Why OIDC_ISSUER cannot be a provider's issuer (https; http on loopback only, for a
    provider run beside the server), or None."""
    parts = urlsplit(issuer)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "OIDC_ISSUER must be the provider's issuer URL, e.g. https://accounts.google.com"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
        return "OIDC_ISSUER must be https (http only on loopback)"
    if parts.query or parts.fragment:
        return "OIDC_ISSUER has no query or fragment"
    return None


def _derived(secret: str, purpose: str) -> str:
    digest = hmac.new(secret.encode(), purpose.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def new_flow_secret() -> str:
    return secrets.token_urlsafe(32)


def flow_of(secret: str) -> Flow:
    return Flow(
        _derived(secret, "state"), _derived(secret, "nonce"), _derived(secret, "pkce-verifier")
    )


def check_state(secret: str | None, state: str | None) -> Flow:
    """This browser's flow, when the provider sent back its state; else a refusal (an old
    tab, another browser's link, or a forged callback)."""
    if not secret or not state:
        raise UnauthorizedError(
            "this sign-in was not started in this browser, or took too long: start again"
        )
    flow = flow_of(secret)
    if not hmac.compare_digest(flow.state, state):
        raise UnauthorizedError("this sign-in's state does not match this browser's: start again")
    return flow


def verified_claims(
    id_token: str,
    jwks: Mapping[str, Any],
    issuer: str,
    client_id: str,
    nonce: str,
    now: int | None = None,
) -> dict[str, Any]:
    """The claims of an ID token from `issuer` for `client_id` with this sign-in's nonce,
    signed by a key of `jwks`, unexpired; else UnauthorizedError saying what is wrong."""
    try:
        token = jwt.decode(
            id_token, KeySet.import_key_set(cast(KeySetSerialization, jwks)), algorithms=ALGORITHMS
        )
        jwt.JWTClaimsRegistry(
            now=now,
            leeway=LEEWAY_S,
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": client_id},
            sub={"essential": True},
            exp={"essential": True},
            nonce={"essential": True, "value": nonce},
        ).validate(token.claims)
    except ExpiredTokenError as exc:
        raise UnauthorizedError("the identity provider's ID token has expired") from exc
    except MissingClaimError as exc:
        raise UnauthorizedError(f"the ID token has no {exc.claim!r} claim") from exc
    except JoseError as exc:
        raise UnauthorizedError(
            f"the ID token was refused: {exc.error}: {exc.description}"
        ) from exc
    # A token for several audiences must name this client as the one it was issued to.
    azp = token.claims.get("azp")
    if isinstance(token.claims.get("aud"), list) and azp not in (None, client_id):
        raise UnauthorizedError("the ID token was issued to another client (azp)")
    return dict(token.claims)


def person_named_by(claims: Mapping[str, Any], claim: str) -> str:
    """The person's name the identity carries in `claim`; refused when absent, or an email
    its provider has not verified (anyone may type an address into an account)."""
    value = claims.get(claim)
    if not isinstance(value, str) or not value.strip():
        raise UnauthorizedError(
            f"your identity provider sent no {claim!r} for you, which this server matches to a"
            " person: an admin sets OIDC_NAME_CLAIM to a claim it sends (docs/team.md)"
        )
    if claim == "email" and claims.get("email_verified") is False:
        raise UnauthorizedError(
            "your identity provider has not verified your email address: verify it there"
        )
    return value.strip()


def highest_role(roles: list[str]) -> str | None:
    ranked = [role for role in ROLE_RANK if role in roles]
    return ranked[-1] if ranked else None


def session_role(signed_in_as: str, keys_now: list[str]) -> str | None:
    """The role a session acts with now: the lower of the role it signed in with and the
    highest among the person's keys now; None (signed out) when no key is left."""
    best = highest_role(keys_now)
    if best is None:
        return None
    return ROLE_RANK[min(ROLE_RANK.index(best), ROLE_RANK.index(signed_in_as))]


def new_session_id() -> str:
    return SESSION_PREFIX + secrets.token_urlsafe(32)


def is_session_id(value: str) -> bool:
    return value.startswith(SESSION_PREFIX)


def hash_session_id(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()
