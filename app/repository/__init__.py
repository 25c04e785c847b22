"""All SQL lives here. Every statement is scoped by tenant_id and uses bound parameters."""
