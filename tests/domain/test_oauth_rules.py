"""The rules a connected client lives by (app/domain/oauth.py): what a person may grant,
which redirect URIs and client_id URLs are taken, which addresses a client document may be
fetched from, and how one resource is spelled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest

from app.domain.errors import ForbiddenError, InvalidInputError
from app.domain.oauth import (
    Grant,
    IssuedToken,
    access_refusal,
    canonical_url,
    client_document_url_problem,
    client_name,
    document_ttl_s,
    grantable_roles,
    is_public_address,
    may_manage,
    public_origin,
    public_url_problem,
    redirect_source,
    redirect_uri_problem,
    require_grantable,
    resource_metadata_url,
    same_redirect,
    scopes_asked,
)
from app.domain.principal import Principal

NOW = datetime(2026, 12, 7, tzinfo=UTC)


def grant(**changes: object) -> Grant:
    fields: dict[str, object] = {
        "tenant_id": "team", "id": uuid4(), "person_id": uuid4(), "granted_by_key": uuid4(),
        "client_id": "c", "client_name": "C", "redirect_uri": "https://c.example/cb",
        "role": "agent", "resource": "https://mem.example/mcp", "scopes": [],
        "created_at": NOW, "revoked_at": None,
    }  # fmt: skip
    return Grant(**{**fields, **changes})  # type: ignore[arg-type]


def test_a_person_grants_at_most_their_role_and_never_admin() -> None:
    assert grantable_roles("admin") == ("agent", "reader")
    assert grantable_roles("agent") == ("agent", "reader")
    assert grantable_roles("reader") == ("reader",)
    key = uuid4()
    require_grantable(Principal("t", "reader", key), "reader")
    for role, asked in (("reader", "agent"), ("admin", "admin"), ("agent", "owner")):
        with pytest.raises(ForbiddenError):
            require_grantable(Principal("t", role, key), asked)
    with pytest.raises(ForbiddenError, match="open mode"):
        require_grantable(Principal("default", "admin", None), "agent")


def test_who_sees_and_revokes_a_grant() -> None:
    ada, key = uuid4(), uuid4()
    theirs = grant(person_id=ada)
    assert may_manage(Principal("team", "reader", uuid4(), ada), theirs)
    assert not may_manage(Principal("team", "agent", uuid4(), uuid4()), theirs)
    assert may_manage(Principal("team", "admin", uuid4()), theirs)
    assert not may_manage(Principal("other", "admin", uuid4()), theirs)
    no_ones = grant(person_id=None, granted_by_key=key)
    assert may_manage(Principal("team", "agent", key), no_ones)
    assert not may_manage(Principal("team", "agent", uuid4()), no_ones)


@pytest.mark.parametrize(
    ("uri", "taken"),
    [
        ("https://claude.ai/api/mcp/auth_callback", True),
        ("http://localhost:3030/callback", True),
        ("http://127.0.0.1/callback", True),
        ("cursor://anysphere.cursor-mcp/oauth/callback", True),
        ("http://evil.example/cb", False),
        ("javascript:alert(1)", False),
        ("data:text/html,hi", False),
        ("https://claude.ai/cb#fragment", False),
        ("https:///no-host", False),
        ("https://x.example/" + "a" * 2_000, False),
    ],
)
def test_redirect_uris_a_client_may_register(uri: str, taken: bool) -> None:
    assert (redirect_uri_problem(uri) is None) is taken


def test_a_loopback_redirect_matches_on_any_port_and_nothing_else_loosely() -> None:
    registered = "http://localhost/callback"
    assert same_redirect("http://localhost:54498/callback", registered)
    assert same_redirect("http://127.0.0.1:8080/callback", "http://127.0.0.1/callback")
    assert not same_redirect("http://127.0.0.1:8080/callback", registered)  # another host
    assert not same_redirect("http://localhost:54498/other", registered)
    assert not same_redirect("https://claude.ai:444/cb", "https://claude.ai/cb")
    assert same_redirect("https://claude.ai/cb", "https://claude.ai/cb")


@pytest.mark.parametrize(
    ("url", "local", "taken"),
    [
        ("https://claude.ai/oauth/claude-code-client-metadata", False, True),
        ("http://claude.ai/oauth/client", False, False),
        ("https://claude.ai/", False, False),
        ("https://claude.ai", False, False),
        ("https://claude.ai/a/../b", False, False),
        ("https://claude.ai/client#x", False, False),
        ("https://user@claude.ai/client", False, False),
        ("https://93.184.216.34/client", False, False),
        ("https://localhost/client", False, False),
        ("https://localhost:8443/client", True, True),
        ("http://localhost:8080/client", True, True),
        ("http://example.com/client", True, False),
    ],
)
def test_client_document_urls_this_server_fetches(url: str, local: bool, taken: bool) -> None:
    assert (client_document_url_problem(url, on_loopback=local) is None) is taken


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:4700::1111", True),
        ("10.0.0.8", False),
        ("172.16.4.4", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # a cloud's metadata service
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),
        ("224.0.0.1", False),
        # An IPv4 address carried in IPv6 (NAT64, 6to4, the old compatible form) is judged
        # as that IPv4 address: a translator or relay would deliver it there.
        ("64:ff9b::a9fe:a9fe", False),
        ("64:ff9b::5db8:d822", True),
        ("2002:a00:1::1", False),
        ("2002:5db8:d822::1", True),
        ("::a00:1", False),
    ],
)
def test_only_public_addresses_are_fetched_from(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_a_fetched_document_is_kept_within_bounds() -> None:
    assert document_ttl_s(None) == 3_600
    assert document_ttl_s("public, max-age=60") == 300
    assert document_ttl_s("max-age=7200") == 7_200
    assert document_ttl_s("max-age=9999999") == 86_400
    assert document_ttl_s("no-store") == 300


def test_one_resource_has_one_spelling() -> None:
    assert canonical_url("HTTPS://Mem.Example:443/mcp/") == "https://mem.example/mcp"
    assert canonical_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert canonical_url("http://[::1]:80/mcp") == "http://[::1]/mcp"
    assert public_origin("https://mem.example/", "http://127.0.0.1:8080/") == "https://mem.example"
    assert public_origin(None, "http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert (
        resource_metadata_url("https://mem.example")
        == "https://mem.example/.well-known/oauth-protected-resource/mcp"
    )


@pytest.mark.parametrize(
    ("url", "taken"),
    [
        ("https://memory.example.com", True),
        ("https://memory.example.com:8443/", True),
        ("http://127.0.0.1:8080", True),
        ("http://memory.example.com", False),
        ("https://memory.example.com/memory", False),
        ("https://memory.example.com/?x=1", False),
        ("memory.example.com", False),
    ],
)
def test_public_url_is_an_https_origin(url: str, taken: bool) -> None:
    assert (public_url_problem(url) is None) is taken


def test_an_access_token_is_refused_for_what_it_is() -> None:
    resource = "https://mem.example/mcp"
    later = NOW + timedelta(hours=1)

    def token(**changes: object) -> IssuedToken:
        made = {"grant": grant(), "kind": "access", "expires_at": later, "rotated": False,
                "standing": True, **changes}  # fmt: skip
        return IssuedToken(**made)  # type: ignore[arg-type]

    assert access_refusal(token(), resource, NOW) is None
    assert access_refusal(token(), "https://MEM.example:443/mcp/", NOW) is None
    assert access_refusal(None, resource, NOW) == "unknown access token"
    assert "revoked" in str(access_refusal(token(grant=grant(revoked_at=NOW)), resource, NOW))
    assert "revoked" in str(access_refusal(token(standing=False), resource, NOW))
    assert "expired" in str(access_refusal(token(expires_at=NOW), resource, NOW))
    assert "issued for" in str(access_refusal(token(), "https://other.example/mcp", NOW))


def test_a_clients_name_is_one_line_in_one_script() -> None:
    assert client_name("  Claude  ", "id") == "Claude"
    assert client_name(None, "https://c.example/doc") == "https://c.example/doc"
    for bad in ("Сlaude", "Claude\u202e", "two\nlines", "x" * 101):  # a Cyrillic С first
        with pytest.raises(InvalidInputError):
            client_name(bad, "id")
    assert scopes_asked(["claudeai", ""]) == ["claudeai"]
    with pytest.raises(InvalidInputError):
        scopes_asked(["s"] * 21)


def test_the_consent_forms_target_is_the_redirects_origin_or_scheme() -> None:
    assert redirect_source("http://localhost:3030/callback?x=1") == "http://localhost:3030"
    assert redirect_source("https://claude.ai/api/mcp/auth_callback") == "https://claude.ai"
    assert redirect_source("cursor://anysphere.cursor-mcp/cb") == "cursor:"
    assert redirect_source("https://a.example;script-src *") is None
