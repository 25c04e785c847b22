"""An ID token is believed only when signed by a key of the provider's JWKS, from the
configured issuer, for this client, unexpired and carrying this sign-in's nonce: each wrong
one refused with what is wrong. Tokens built here with joserfc, as a provider (or an
attacker with a key of their own) would."""

from __future__ import annotations

import time
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from app.domain.errors import UnauthorizedError
from app.domain.oidc import (
    check_state,
    flow_of,
    new_flow_secret,
    person_named_by,
    session_role,
    verified_claims,
)

ISSUER = "https://sso.example.com"
CLIENT = "agent-memory-console"
NONCE = "the-nonce-of-this-sign-in"
PROVIDER_KEY = RSAKey.generate_key(2048, parameters={"kid": "provider-1"})
JWKS = KeySet([PROVIDER_KEY]).as_dict(private=False)


def token(key: RSAKey = PROVIDER_KEY, alg: str = "RS256", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": CLIENT, "sub": "u-1", "iat": now, "exp": now + 300,
            "nonce": NONCE, "email": "ada@example.com", **claims}  # fmt: skip
    body = {name: value for name, value in body.items() if value is not None}
    return jwt.encode({"alg": alg, "kid": key.kid}, body, key)


def verify(id_token: str) -> dict[str, Any]:
    return verified_claims(id_token, JWKS, ISSUER, CLIENT, NONCE)


def test_a_good_token_gives_its_claims() -> None:
    assert verify(token())["email"] == "ada@example.com"


@pytest.mark.parametrize(
    ("wrong", "said"),
    [
        ({"aud": "another-client"}, "aud"),
        ({"iss": "https://evil.example.com"}, "iss"),
        ({"nonce": "a-replayed-nonce"}, "nonce"),
        ({"nonce": None}, "'nonce'"),
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"sub": None}, "'sub'"),
        ({"aud": [CLIENT, "other"], "azp": "other"}, "azp"),
    ],
)
def test_a_wrong_claim_is_refused(wrong: dict[str, Any], said: str) -> None:
    with pytest.raises(UnauthorizedError) as refused:
        verify(token(**wrong))
    assert said in refused.value.detail


def test_a_token_signed_by_another_key_is_refused() -> None:
    attacker = RSAKey.generate_key(2048, parameters={"kid": "provider-1"})
    with pytest.raises(UnauthorizedError, match="signature"):
        verify(token(attacker))


def test_an_unsigned_or_mac_token_is_refused() -> None:
    unsigned = token().rsplit(".", 1)[0].split(".")[1]
    header = "eyJhbGciOiJub25lIn0"  # {"alg":"none"}
    with pytest.raises(UnauthorizedError):
        verify(f"{header}.{unsigned}.")


def test_the_state_must_be_this_browsers() -> None:
    secret = new_flow_secret()
    assert check_state(secret, flow_of(secret).state) == flow_of(secret)
    with pytest.raises(UnauthorizedError, match="does not match"):
        check_state(new_flow_secret(), flow_of(secret).state)
    with pytest.raises(UnauthorizedError, match="not started in this browser"):
        check_state(None, flow_of(secret).state)
    # The verifier is one RFC 7636 allows: 43 characters of its alphabet.
    assert len(flow_of(secret).code_verifier) == 43


def test_the_name_claim_must_be_there_and_an_email_verified() -> None:
    assert person_named_by({"email": " ada@example.com "}, "email") == "ada@example.com"
    assert person_named_by({"preferred_username": "ada"}, "preferred_username") == "ada"
    with pytest.raises(UnauthorizedError, match="sent no 'preferred_username'"):
        person_named_by({"email": "ada@example.com"}, "preferred_username")
    with pytest.raises(UnauthorizedError, match="not verified"):
        person_named_by({"email": "ada@example.com", "email_verified": False}, "email")


def test_a_session_acts_with_the_lower_of_its_role_and_the_keys_now() -> None:
    assert session_role("admin", ["reader", "admin"]) == "admin"
    assert session_role("admin", ["agent"]) == "agent"  # the admin key was revoked
    assert session_role("agent", ["admin"]) == "agent"  # promoted: sign in again for more
    assert session_role("agent", []) is None  # no key left: signed out


def test_the_settings_refuse_an_issuer_that_cannot_be_one_and_never_show_the_secret() -> None:
    from pydantic import ValidationError

    from app.config import Settings

    with pytest.raises(ValidationError, match="OIDC_ISSUER must be https"):
        Settings(oidc_issuer="http://sso.example.com", oidc_client_id="c")
    with pytest.raises(ValidationError, match="needs OIDC_CLIENT_ID"):
        Settings(oidc_issuer="https://sso.example.com")
    configured = Settings(
        oidc_issuer="https://sso.example.com", oidc_client_id="c", oidc_client_secret="s3cr3t-value"
    )
    assert "s3cr3t-value" not in repr(configured) and "s3cr3t-value" not in str(configured)
    assert configured.oidc_client_secret.get_secret_value() == "s3cr3t-value"
