"""All configuration, read once from the environment (see the README's table)."""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.memory import DEFAULT_TENANT
from app.domain.oauth import public_url_problem
from app.domain.oidc import issuer_problem
from app.domain.origins import origin_of
from app.domain.provenance import UntrustedPolicy
from app.domain.validation import Limits

LIMITS = Limits()  # the defaults


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("agent-memory"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", case_sensitive=False, populate_by_name=True
    )

    # Database: an external server when set, else the embedded one under data_dir.
    database_url: str | None = None
    data_dir: Path = Field(default_factory=_default_data_dir, alias="AGENT_MEMORY_DATA_DIR")
    db_pool_min: int = Field(default=2, ge=1)
    db_pool_max: int = Field(default=10, ge=1)
    db_command_timeout_s: float = Field(default=30.0, gt=0)
    # How long a request waits for a free pooled connection before answering 503.
    db_acquire_timeout_s: float = Field(default=5.0, gt=0)
    # After a start, /readyz answers 503 until the database has read back what its buffers
    # held (pg_prewarm's autoprewarm), for at most this many seconds; then ready anyway,
    # logged (app/db/prewarm.py). 0: ready at once.
    prewarm_wait_s: float = Field(default=30.0, ge=0)
    # The role queries run as (SET ROLE): neither owner nor superuser, so row-level
    # security holds. Empty: connect directly as such a role instead.
    db_app_role: str = "agent_memory_app"
    # Requests per API key per minute (0: unlimited).
    rate_limit_per_minute: int = Field(default=1200, ge=0)
    # Requests one tenant may have in flight at once (0: twice the cores, at least 4): its
    # further requests wait for one of its own slots, up to TENANT_QUEUE_TIMEOUT_S, then
    # 429 with Retry-After. Bounds its share of the event loop, the model and the database.
    tenant_max_requests: int = Field(default=0, ge=0)
    tenant_queue_timeout_s: float = Field(default=10.0, gt=0)
    # A tenant with at least twice the requests of another being served yields to it:
    # after each request it idles until it was busy this fraction of the time, and past its
    # limit it runs one request at a time (0: it does not yield). See app/concurrency.py.
    tenant_backlog_duty: float = Field(default=0.25, ge=0, le=1)
    # Pooled connections one tenant may hold at once (0: half the pool, at least 1); its
    # further requests wait for one of its own, up to DB_ACQUIRE_TIMEOUT_S, then 503.
    tenant_max_connections: int = Field(default=0, ge=0)
    # A request body larger than this is refused (413) while it is read, before parsing;
    # MCP over stdio refuses a message line larger than this.
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    # An import streams its file (not held whole): a bound on the file, and each of its
    # lines is bounded by max_body_bytes like any one request.
    max_import_bytes: int = Field(default=1024 * 1024 * 1024, ge=1024)
    # Open mode (no key needed) is decided at start: only when no API key has ever been
    # created, and only on loopback unless ALLOW_OPEN_NETWORK; never with REQUIRE_KEYS.
    allow_open_network: bool = False
    require_keys: bool = False
    # Failed authentications (API or console) one client address, or one key, may make per
    # window; past that its failing attempts get 429 until the window ends, and a key that
    # keeps failing is not looked up again (0: no limit). A valid key always gets in.
    auth_max_failures: int = Field(default=20, ge=0)
    auth_failure_window_s: float = Field(default=60.0, gt=0)
    # Proxies (addresses or networks, comma-separated) whose X-Forwarded-For names the
    # client. Empty: none; the client is the direct peer, whatever a header says.
    trusted_proxies: str = ""

    # No connection held for free (app/http_server.py): a request's headers within this
    # many seconds of the connection (or its previous response); a body at this many bytes
    # a second after a grace; idle keep-alive closed after this many seconds; at most this
    # many connections per client address, and in all (0: what the descriptor limit allows).
    http_header_timeout_s: float = Field(default=10.0, gt=0)
    http_body_grace_s: float = Field(default=10.0, gt=0)
    http_min_body_rate: float = Field(default=1024.0, gt=0)
    http_keepalive_timeout_s: float = Field(default=5.0, ge=1)
    http_max_connections_per_client: int = Field(default=64, ge=1)
    http_max_connections: int = Field(default=0, ge=0)

    host: str = "127.0.0.1"
    # Host names the service answers for, comma-separated ("*": any). Empty: the loopback
    # names and HOST when it is one address. A request naming another host gets 421, so a
    # web page cannot reach the service by DNS rebinding (app/domain/origins.py).
    allowed_hosts: str = ""
    # Origins (scheme://host:port) whose pages may send state-changing requests besides
    # the service's own; a browser's request from any other origin gets 403.
    allowed_origins: str = ""
    port: int = Field(default=8080, ge=1, le=65535)
    # Remote MCP over OAuth 2.1 (app/domain/oauth.py). PUBLIC_URL: the server's origin as
    # clients reach it (https://memory.example.com behind a TLS proxy): the OAuth issuer,
    # and its /mcp the resource every token is bound to; its host is answered for. Empty:
    # the origin each request reached (the loopback names by default: local use).
    public_url: str = ""
    oauth_access_token_ttl_s: int = Field(default=3_600, ge=60, le=86_400)
    oauth_refresh_token_ttl_s: int = Field(default=30 * 86_400, ge=3_600)
    # A client registered (RFC 7591) that no one approved within this many days is deleted.
    oauth_unused_client_days: int = Field(default=30, ge=1)
    # Clients named by their metadata document's URL (claude.ai, Claude Code, VS Code): the
    # server fetches it (outbound https). Off: clients register themselves (RFC 7591).
    oauth_client_documents: bool = True
    # For developing a client: fetch its metadata document from localhost, over http too
    # (never otherwise: a client_id URL is fetched only from a public address, over https).
    oauth_local_client_documents: bool = False
    # Console sign-in through the team's identity provider (OpenID Connect; docs/team.md):
    # its issuer URL, this server's client id and secret there (the secret from the
    # environment, never logged; empty for a public client, PKCE alone), the claim naming a
    # person (matched to a person's name), the tenant its people are in, the button's name,
    # and how long a session lasts. No OIDC_ISSUER: keys only.
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr = SecretStr("")
    oidc_name_claim: str = "email"
    oidc_tenant: str = DEFAULT_TENANT
    oidc_provider_name: str = "your identity provider"
    console_session_hours: float = Field(default=12.0, gt=0, le=24 * 30)
    log_level: str = "INFO"
    # "auto": text at a terminal, JSON lines otherwise.
    log_format: Literal["auto", "json", "text"] = "auto"

    # Embeddings.
    embedding_provider: Literal["local", "openai", "hash"] = "local"
    embedding_dim: int = Field(default=384, ge=8, le=4000)
    # The local model: all-MiniLM-L6-v2, paraphrase-MiniLM-L3-v2, or both side by side
    # (768 dimensions: EMBEDDING_DIM=768). See docs/search.md for how they compare.
    embedding_model: Literal["minilm-l6", "minilm-l3", "minilm-l6+l3"] = "minilm-l6"
    embedding_model_path: Path | None = None  # a model file to load as it is
    # "dynamic": the packaged model re-quantized once for integer matmuls (faster queries:
    # docs/benchmarks.md, "What the local embedder costs"); "weights": the file as shipped.
    embedding_quantization: Literal["dynamic", "weights"] = "dynamic"
    model_cache_dir: Path | None = Field(default=None, alias="AGENT_MEMORY_CACHE_DIR")
    embedding_threads: int = Field(default=1, ge=1)
    embedding_lanes: int = Field(default=0, ge=0)
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: str | None = None
    openai_embedding_model: str = "text-embedding-3-small"
    openai_timeout_s: float = Field(default=10.0, gt=0)

    # Search and ranking. Alpha, the vector candidates (and ef_search to match) and the
    # floor below were chosen together by leave-one-conversation-out on the LoCoMo dev
    # split, the candidates also against exact search at 100k: docs/benchmarks.md.
    hybrid_alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    search_candidates: int = Field(default=100, ge=10, le=2000)
    keyword_term_cap: int = Field(default=200, ge=10)
    hnsw_ef_search: int = Field(default=100, ge=10, le=1000)
    # A search whose scope (tenant, repository, types, tags...) holds at most
    # sqrt(this x the memories in the HNSW graph) memories reads them whole and sorts by
    # exact distance instead of walking the graph (docs/search.md, "Filtered vector
    # search"). 0: always the graph.
    vector_exact_factor: float = Field(default=500.0, ge=0.0, le=1_000_000.0)
    # A repository with at least this many live memories gets an HNSW graph of its own,
    # which its searches walk instead of reading it whole (docs/search.md, "A repository's
    # own graph"); one that falls below half of it loses it. 0: no repository graphs. At
    # the crossover measured at 100,000 memories (docs/benchmarks.md, issue 69).
    repository_graph_rows: int = Field(default=2_000, ge=0)
    decay_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    decay_strength_days: float = Field(default=30.0, gt=0)
    # Hybrid results scoring below RATIO x the best match, or whose similarity to the query
    # is below MIN, are left out (unless a search asks for floor=false): MIN is what lets
    # a query nothing answers come back empty. Both chosen by leave-one-conversation-out
    # on the LoCoMo dev split, for hybrid searches only: docs/benchmarks.md.
    relevance_floor_ratio: float = Field(default=0.3, ge=0.0, le=1.0)
    relevance_floor_min: float = Field(default=0.21, ge=0.0, le=1.0)
    # A search that names the agent's branch ranks that branch's memories this much higher.
    branch_boost: float = Field(default=1.2, ge=1.0, le=3.0)
    # A search statement running longer is cancelled in the server (503, Retry-After).
    search_timeout_ms: int = Field(default=2_000, ge=100)
    # What a recall hook hands an agent unasked (app/domain/recall.py): only memories at
    # least this close to the prompt or error (cosine), at most this many tokens. The gate
    # is chosen on LoCoMo (bench/recall_gate.py, docs/benchmarks.md).
    recall_gate: float = Field(default=0.45, ge=0.0, le=1.0)
    recall_max_tokens: int = Field(default=300, ge=50, le=2_000)

    # Forgetting: archive what nobody uses (never deletes).
    prune_unused_days: int = Field(default=90, ge=1)
    prune_stale_days: int = Field(default=365, ge=1)
    prune_stale_min_accesses: int = Field(default=3, ge=1)
    prune_interval_s: float = Field(default=3600.0, ge=0)
    # Audit entries older than this are deleted when a tenant is pruned.
    audit_retention_days: int = Field(default=365, ge=30)

    # Sessions: an active one older than this is closed as abandoned (its agent never said
    # how it ended; no snapshot shows it).
    session_abandon_after_hours: float = Field(default=24.0, gt=0)
    # Sessions: how clients should capture learnings.
    capture_mode: Literal["ask-first", "silent", "off"] = "ask-first"
    silent_capture_budget: int = Field(default=5, ge=0)

    # Learning.
    strategy_min_quality: float = Field(default=7.0, ge=0)
    strategy_hint_threshold: float = Field(default=0.3, ge=0.0, le=1.0)
    feedback_helpful_step: float = Field(default=0.1, ge=0.0, le=1.0)
    feedback_unhelpful_step: float = Field(default=0.25, ge=0.0, le=1.0)
    relevance_ceiling: float = Field(default=1.5, ge=1.0, le=10.0)
    # Feedback from a key that may not write a memory's trust level (an agent's on a
    # person's or the operator's memory) never takes its relevance below this.
    feedback_trusted_floor: float = Field(default=1.0, ge=0.0, le=10.0)

    # A write holding a credential (cloud keys, tokens, private keys, passwords...):
    # "refuse" answers 422 naming the field and the kind; "redact" stores [REDACTED:kind].
    secrets_policy: Literal["refuse", "redact"] = LIMITS.secrets_policy
    # A memory written while a session that read untrusted input (a web page, another MCP
    # server's tool, a download) is open: "wait" holds it until a person approves it
    # (never handed over unasked meanwhile), "mark" hands it over marked with its sources,
    # "hand-over" as any other. A memory telling an agent to run downloaded code or send
    # data out is held whatever this says (app/domain/provenance.py).
    untrusted_memories: UntrustedPolicy = LIMITS.untrusted_memories

    # Input limits: app/domain/validation.py's Limits holds the defaults and the rules.
    max_content_chars: int = Field(default=LIMITS.max_content_chars, ge=1)
    max_context_chars: int = Field(default=LIMITS.max_context_chars, ge=1)
    max_tags: int = Field(default=LIMITS.max_tags, ge=0)
    max_tag_chars: int = Field(default=LIMITS.max_tag_chars, ge=1)
    max_metadata_bytes: int = Field(default=LIMITS.max_metadata_bytes, ge=2)
    max_batch: int = Field(default=LIMITS.max_batch, ge=1)
    max_query_chars: int = Field(default=LIMITS.max_query_chars, ge=1)
    max_query_terms: int = Field(default=LIMITS.max_query_terms, ge=1, le=1_000)

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if self.tenant_max_connections > self.db_pool_max:
            raise ValueError("TENANT_MAX_CONNECTIONS must not exceed DB_POOL_MAX")
        if self.db_pool_min > self.db_pool_max:
            raise ValueError("DB_POOL_MIN must not exceed DB_POOL_MAX")
        if self.public_url and (problem := public_url_problem(self.public_url)):
            raise ValueError(problem)
        if self.oidc_issuer and (problem := issuer_problem(self.oidc_issuer)):
            raise ValueError(problem)
        if self.oidc_issuer and not self.oidc_client_id:
            raise ValueError("OIDC_ISSUER needs OIDC_CLIENT_ID (this server's client there)")
        if self.embedding_provider == "openai" and not self.openai_base_url:
            raise ValueError("EMBEDDING_PROVIDER=openai needs OPENAI_BASE_URL")
        return self


@lru_cache
def get_settings() -> Settings:
    return Settings()


def tenant_connection_share(settings: Settings) -> int:
    return settings.tenant_max_connections or max(1, settings.db_pool_max // 2)


def tenant_request_share(settings: Settings) -> int:
    return settings.tenant_max_requests or max(4, 2 * (os.cpu_count() or 1))


def origins_of(settings: Settings) -> frozenset[str]:
    return frozenset(
        origin_of(origin) for origin in settings.allowed_origins.split(",") if origin.strip()
    )


def limits_of(settings: Settings) -> Limits:
    """The input limits as configured: every Limits field Settings has, by name."""
    configured = {
        f.name: getattr(settings, f.name)
        for f in dataclasses.fields(Limits)
        if f.name in Settings.model_fields
    }
    return Limits(**configured)
