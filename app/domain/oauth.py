"""Remote MCP over OAuth 2.1 (the MCP authorization spec, 2025-11-25): the rules a connected
client lives by. A person signed in to the console approves a named client (a grant), with a
role no higher than their own and never admin; the client's tokens carry the grant's tenant,
role and person, are bound to this server's /mcp (RFC 8707) and are kept only as hashes.
Revoking the grant ends every token issued under it. docs/security.md#connected-clients-oauth."""

from __future__ import annotations

import ipaddress
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit
from uuid import UUID

from app.domain.errors import ForbiddenError, InvalidInputError
from app.domain.keys import hash_key
from app.domain.principal import Principal
from app.domain.validation import clean_line, forbid_mixed_scripts

# Where MCP is served, relative to the issuer (this server's public origin).
MCP_PATH = "/mcp"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"

# A bearer that is not an API key (app/domain/keys.py KEY_PREFIX) is one of these.
ACCESS_TOKEN_PREFIX = "amat_"
REFRESH_TOKEN_PREFIX = "amrt_"

# How long each secret lives. Access and refresh tokens are settings (OAUTH_*_TTL_S).
CODE_TTL_S = 300  # an authorization code, from the consent to its exchange
REQUEST_TTL_S = 900  # an authorization request, for the person to sign in and decide

# What a person may grant a client: their own role at most, and never admin (a client may
# not manage keys, people or other clients). The role of the key they signed in with.
GRANTABLE: dict[str, tuple[str, ...]] = {
    "admin": ("agent", "reader"),
    "agent": ("agent", "reader"),
    "reader": ("reader",),
}

# Bounds on what a client says of itself (registration, or its metadata document), and on
# any request body to the OAuth endpoints (a registration is the largest: well under this).
MAX_REQUEST_BYTES = 65_536
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2_000
MAX_CLIENT_NAME_CHARS = 100
MAX_SCOPES = 20
# Registrations (RFC 7591) anyone may make, no person has approved yet: past this many, the
# oldest are forgotten, so that registering in a loop fills no disk (a client whose
# registration went registers again when the server answers it an unknown client).
MAX_UNAPPROVED_CLIENTS = 1_000
MAX_SCOPE_CHARS = 100
# A client metadata document (draft-ietf-oauth-client-id-metadata-document): its size, the
# time its fetch may take, and how long a fetched one is kept (its Cache-Control max-age,
# within these bounds; an hour when it says none).
MAX_CLIENT_DOCUMENT_BYTES = 5_120
CLIENT_DOCUMENT_TIMEOUT_S = 5.0
CLIENT_DOCUMENT_TTL_S = (300, 3_600, 86_400)  # at least, when unsaid, at most
CLIENT_DOCUMENTS_KEPT = 1_000  # documents one process keeps at once (least recently used out)
# Schemes a redirect URI may never have: a browser would run or read it, not deliver it.
FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def new_secret(prefix: str = "") -> str:
    """256 random bits: a code, a token, an authorization request's address, a client
    secret. Stored only as hash_secret()'s hash."""
    return prefix + secrets.token_urlsafe(32)


hash_secret = hash_key  # 256 random bits: a plain SHA-256, indexed (app/domain/keys.py)


def is_access_token(bearer: str) -> bool:
    return bearer.startswith(ACCESS_TOKEN_PREFIX)


# This server's place as an authorization server and a resource.


def resource_of(issuer: str) -> str:
    """The resource its tokens are bound to: the issuer's /mcp."""
    return issuer.rstrip("/") + MCP_PATH


def issuer_of(resource: str) -> str:
    return resource.removesuffix(MCP_PATH)


def resource_metadata_url(issuer: str) -> str:
    """RFC 9728 §3.1: the well-known path, then the resource's path."""
    return issuer.rstrip("/") + PROTECTED_RESOURCE_PATH + MCP_PATH


def canonical_url(url: str) -> str:
    """A URL as two spellings of one resource compare (RFC 3986 §6.2.2-3): scheme and host in
    lower case, no default port, no trailing slash."""
    parts = urlsplit(url.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    default = {"http": 80, "https": 443}.get(scheme)
    try:
        port = parts.port
    except ValueError:
        return url
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != default:
        shown += f":{port}"
    return f"{scheme}://{shown}{parts.path.rstrip('/')}"


def public_origin(configured: str | None, request_origin: str) -> str:
    """The issuer: PUBLIC_URL when set (a server behind a TLS proxy), else the origin the
    request reached, which the request guard has confined to ALLOWED_HOSTS (the loopback
    names by default)."""
    return canonical_url(configured or request_origin)


def public_url_problem(url: str) -> str | None:
    """Why PUBLIC_URL cannot be an issuer (RFC 8414 §2: https, no query or fragment; http
    only on loopback), or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "PUBLIC_URL must be an http(s) URL, e.g. https://memory.example.com"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_NAMES:
        return "PUBLIC_URL must be https (OAuth clients refuse an http issuer off loopback)"
    if parts.path.strip("/") or parts.query or parts.fragment or parts.username:
        return (
            "PUBLIC_URL is the server's origin only (scheme, host, port): no path, query,"
            " fragment or user"
        )
    return None


# Roles.


def grantable_roles(role: str) -> tuple[str, ...]:
    return GRANTABLE.get(role, ())


def require_grantable(principal: Principal, role: str) -> None:
    allowed = grantable_roles(principal.role)
    if role not in allowed:
        raise ForbiddenError(
            f"a {principal.role} key may grant a client {' or '.join(allowed)}, not {role[:20]!r}",
            field="role",
        )
    if principal.key_id is None:
        raise ForbiddenError(
            "open mode has no one to grant for: create a key (the console's Keys page, or"
            " `agent-memory keys create`), sign in with it, then connect the client",
        )


# What a client says of itself.


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register this redirect URI, or None: https anywhere, http only
    to this machine's loopback (a native app, RFC 8252 §7.3), or an app's own scheme (§7.1);
    never a scheme a browser would run, never a fragment (RFC 6749 §3.1.2)."""
    if len(uri) > MAX_URI_CHARS:
        return f"a redirect URI is at most {MAX_URI_CHARS} characters"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or scheme in FORBIDDEN_SCHEMES:
        return f"redirect URI {uri[:100]!r}: a browser would not deliver a code there"
    if parts.fragment:
        return f"redirect URI {uri[:100]!r} has a fragment"
    if scheme == "http" and (parts.hostname or "") not in LOOPBACK_NAMES:
        return f"redirect URI {uri[:100]!r}: http is for this machine's loopback only; use https"
    if scheme in ("http", "https") and not parts.hostname:
        return f"redirect URI {uri[:100]!r} names no host"
    return None


_HOST_PORT = re.compile(r"[a-z0-9.\-]+(:\d+)?|\[[0-9a-f:.]+\](:\d+)?")
_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]*")


def redirect_source(uri: str) -> str | None:
    """Where a redirect URI leads as a CSP source (the consent form's form-action): its
    origin, or an app's own scheme; None when it is neither."""
    parts = urlsplit(uri)
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    if scheme in ("http", "https"):
        return f"{scheme}://{netloc}" if _HOST_PORT.fullmatch(netloc) else None
    return f"{scheme}:" if _SCHEME.fullmatch(scheme) else None


def same_redirect(asked: str, registered: str) -> bool:
    """Whether a redirect URI asked for at /authorize is one the client registered: the same
    string; for http on loopback, whatever the port (RFC 8252 §7.3: a native app listens
    on a port it gets at the time; Claude Code's document lists http://localhost/callback)."""
    if asked == registered:
        return True
    a, r = urlsplit(asked), urlsplit(registered)
    loopback = a.scheme == r.scheme == "http" and a.hostname in LOOPBACK_NAMES
    return loopback and (a.hostname, a.path, a.query) == (r.hostname, r.path, r.query)


def is_loopback_uri(uri: str) -> bool:
    return (urlsplit(uri).hostname or "") in LOOPBACK_NAMES


def client_name(name: str | None, client_id: str) -> str:
    """What the consent page and the console call a client: the name it gives itself, one
    line in one script (no look-alike letters), or its id."""
    cleaned = clean_line(name, "client_name", max_chars=MAX_CLIENT_NAME_CHARS)
    if cleaned is None:
        return client_id[:MAX_CLIENT_NAME_CHARS]
    forbid_mixed_scripts(cleaned, "client_name")
    return cleaned


def scopes_asked(scopes: list[str] | None) -> list[str]:
    """The scopes a client asks for, kept and echoed: they grant nothing (the role the person
    chose does), so any is accepted within bounds (claude.ai asks for `claudeai`)."""
    asked = [s for s in scopes or [] if s]
    if len(asked) > MAX_SCOPES or any(len(s) > MAX_SCOPE_CHARS for s in asked):
        raise InvalidInputError(
            f"at most {MAX_SCOPES} scopes of at most {MAX_SCOPE_CHARS} characters", field="scope"
        )
    return asked


# Client ID Metadata Documents: a URL the client chose, fetched by this server.


def is_client_document_url(client_id: str) -> bool:
    """Whether a client_id names a metadata document rather than a registration."""
    return client_id.startswith(("https://", "http://"))


def client_document_url_problem(url: str, on_loopback: bool) -> str | None:
    """Why this server will not fetch a client's metadata document from `url`, or None. The
    draft's rules (https, a path, no fragment, user or dot segments), and: no IP literal
    (the name is what the person is shown and what TLS checks). `on_loopback`
    (OAUTH_LOCAL_CLIENT_DOCUMENTS, for developing a client) allows localhost, over http too."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    local = on_loopback and host in LOOPBACK_NAMES
    if len(url) > MAX_URI_CHARS:
        return f"a client_id URL is at most {MAX_URI_CHARS} characters"
    if parts.scheme != "https" and not (local and parts.scheme == "http"):
        return "a client_id URL must be https"
    if not host or parts.username is not None or parts.password is not None:
        return "a client_id URL names a host, and no user"
    if parts.fragment or not parts.path.strip("/"):
        return "a client_id URL has a path and no fragment"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "a client_id URL has no . or .. segments"
    if host in LOOPBACK_NAMES and not local:
        return "a client_id URL on this machine is refused (OAUTH_LOCAL_CLIENT_DOCUMENTS allows it)"
    if is_ip_literal(host) and not local:
        return "a client_id URL names a host, not an address"
    return None


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_public_address(address: str) -> bool:
    """An address on the internet at large: not private, loopback, link-local, shared
    (100.64/10), multicast, reserved or unspecified; an IPv6 address that carries an IPv4
    one (mapped, NAT64, 6to4, compatible) as that IPv4 address, where a translator or a
    relay would deliver it."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _carried_ipv4(ip) or ip
    return ip.is_global and not ip.is_multicast


_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # RFC 4291 §2.5.5.1, deprecated


def _carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None or ip.sixtofour is not None:
        return ip.ipv4_mapped or ip.sixtofour
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):  # not :: or ::1
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    return None


def document_ttl_s(cache_control: str | None) -> int:
    """How long a fetched client document is kept: its max-age within bounds."""
    least, unsaid, most = CLIENT_DOCUMENT_TTL_S
    for directive in (cache_control or "").lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return least
        if name == "max-age" and value.strip().isdigit():
            return max(least, min(most, int(value.strip())))
    return unsaid


# A grant and its pieces, as stored.


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """What a client asked at /authorize, waiting for a person's decision."""

    client_id: str
    client_name: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    state: str | None
    scopes: list[str]
    resource: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Grant:
    """A person's approval of one client: the rotation family of every code and token."""

    tenant_id: str
    id: UUID
    person_id: UUID | None
    granted_by_key: UUID
    client_id: str
    client_name: str
    redirect_uri: str
    role: str
    resource: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    last_token_at: datetime | None = None  # when a token was last issued (a refresh)
    person_name: str | None = None  # as listed on the console

    @property
    def principal(self) -> Principal:
        """Who the client acts as: the grant's tenant, role and person; the audit trail names
        it by the grant's id (as it names a key by the key's)."""
        return Principal(self.tenant_id, self.role, self.id, self.person_id)

    @property
    def detail(self) -> dict[str, str | None]:
        """What an audit entry keeps of it."""
        return {
            "grant": str(self.id),
            "client_id": self.client_id,
            "client_name": self.client_name,
            "role": self.role,
            "person": str(self.person_id) if self.person_id else None,
        }


@dataclass(frozen=True, slots=True)
class IssuedCode:
    """A code as its exchange reads it."""

    grant: Grant
    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    expires_at: datetime
    used: bool


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """An access or refresh token as a lookup finds it (the grant may be revoked)."""

    grant: Grant
    kind: str
    expires_at: datetime
    rotated: bool  # a refresh token already exchanged
    standing: bool  # its person still present (a grant of no one: its key not revoked)

    @property
    def live(self) -> bool:
        """Not revoked, and someone still behind it (expiry is judged apart)."""
        return self.grant.revoked_at is None and self.standing


def access_refusal(token: IssuedToken | None, resource: str, now: datetime) -> str | None:
    """Why an access token does not let its client in at `resource`, or None. Each reason
    is a 401 `invalid_token` (RFC 6750 §3.1); the client refreshes or asks again."""
    if token is None:
        return "unknown access token"
    if not token.live:
        return "this client's access was revoked: connect it again"
    if token.expires_at <= now:
        return "the access token has expired: refresh it"
    if canonical_url(token.grant.resource) != canonical_url(resource):
        return f"the access token was issued for {token.grant.resource}, not {resource}"
    return None


def may_manage(principal: Principal, grant: Grant) -> bool:
    """Who may see and revoke a grant: an admin of its tenant; its person; for a grant of
    no one, the key that made it."""
    if principal.tenant_id != grant.tenant_id:
        return False
    if principal.can("admin"):
        return True
    if grant.person_id is not None:
        return principal.person_id == grant.person_id
    return principal.key_id == grant.granted_by_key
