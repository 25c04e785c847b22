"""Synthetic but realistic coding-agent memories: decisions, error patterns, code patterns,
strategies and learnings over a shared vocabulary, with a long tail of identifiers."""

from __future__ import annotations

import random

COMPONENTS = [
    "auth service",
    "billing worker",
    "search API",
    "rate limiter",
    "session store",
    "payment gateway",
    "notification queue",
    "user profile page",
    "admin dashboard",
    "migration runner",
    "cache layer",
    "upload handler",
    "webhook dispatcher",
    "CI pipeline",
    "feature flag client",
    "GraphQL resolver",
    "metrics exporter",
    "scheduler",
    "CLI",
    "config loader",
    "email sender",
    "audit log",
    "report generator",
    "image resizer",
]
TECH = [
    "PostgreSQL",
    "Redis",
    "FastAPI",
    "SQLAlchemy",
    "React",
    "TypeScript",
    "Docker",
    "Kafka",
    "pytest",
    "alembic",
    "asyncpg",
    "Celery",
    "nginx",
    "Terraform",
    "GitHub Actions",
    "httpx",
    "pydantic",
    "uvicorn",
    "Next.js",
    "Prisma",
    "Jest",
    "webpack",
    "S3",
    "gRPC",
]
VERBS = [
    "times out",
    "returns a 500",
    "leaks connections",
    "deadlocks",
    "double-charges",
    "drops messages",
    "retries forever",
    "logs secrets",
    "blocks the event loop",
    "serialises dates wrong",
    "ignores the tenant",
    "races on startup",
    "runs out of memory",
]
FIXES = [
    "wrap the call in a transaction",
    "add an index on the foreign key",
    "use a bounded pool",
    "validate input with pydantic",
    "add exponential backoff with jitter",
    "pin the version",
    "move the work to a background task",
    "cache the result for five minutes",
    "use INSERT ... ON CONFLICT",
    "stream the response",
    "close the client in a finally block",
    "set a statement timeout",
    "split the migration in two",
    "use keyset pagination",
]
ERRORS = [
    "TypeError: Cannot read property '{x}' of undefined",
    "KeyError: '{x}'",
    "asyncpg.exceptions.DeadlockDetectedError",
    "sqlalchemy.exc.TimeoutError",
    "ECONNRESET while calling {x}",
    "ValueError: invalid literal for int() with base 10",
    "psycopg.errors.UniqueViolation on {x}_pkey",
    "RecursionError in {x}",
]
TYPES = ["decision", "error_pattern", "code_pattern", "strategy", "learning", "general"]


def identifier(rng: random.Random) -> str:
    head = rng.choice(["get", "check", "build", "load", "sync", "parse", "render", "validate"])
    mid = rng.choice(["User", "Rate", "Session", "Invoice", "Token", "Order", "Cache", "Job"])
    tail = rng.choice(["Limit", "State", "Batch", "Config", "Handler", "Id", "Cursor", "Queue"])
    return f"{head}{mid}{tail}{rng.randrange(1000)}"


def memory_text(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(TYPES)
    comp, tech, ident = rng.choice(COMPONENTS), rng.choice(TECH), identifier(rng)
    if kind == "decision":
        use = rng.choice(["storage", "queues", "tests", "deploys"])
        text = (
            f"Decision: the {comp} uses {tech} for {use}; "
            f"we {rng.choice(FIXES)} because the old approach {rng.choice(VERBS)}."
        )
    elif kind == "error_pattern":
        err = rng.choice(ERRORS).format(x=ident)
        text = (
            f"{err} in the {comp} when {tech} {rng.choice(VERBS)}. "
            f"Fix: {rng.choice(FIXES)} in {ident}()."
        )
    elif kind == "code_pattern":
        text = (
            f"In the {comp}, {ident} should {rng.choice(FIXES)}; see the {tech} docs. "
            f"Callers must not assume it {rng.choice(VERBS)}."
        )
    elif kind == "strategy":
        steps = " → ".join(rng.sample(FIXES, 3))
        text = f'Strategy for "{comp} change": {steps}.'
    elif kind == "learning":
        text = (
            f"Learned that {tech} {rng.choice(VERBS)} under load in the {comp}; "
            f"always {rng.choice(FIXES)} before shipping."
        )
    else:
        text = (
            f"Note on the {comp}: {ident} is owned by the {tech} team"
            f" and {rng.choice(VERBS)} rarely."
        )
    return text, kind


QUERIES = [
    "why does the auth service time out",
    "checkRateLimit",
    "how should we paginate large result sets",
    "TypeError: Cannot read property",
    "the error when the pipeline runs the tests",
    "what did we decide about Redis for queues",
    "deadlock in the billing worker",
    "strategy for a migration change",
    "how do we avoid blocking the event loop",
    "connection leaks in asyncpg pool",
    "use a bounded pool",
    "retry with exponential backoff",
    "which team owns the session store",
    "webhook dispatcher drops messages",
    "the service returns a 500 when",
]
