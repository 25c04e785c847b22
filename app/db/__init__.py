"""Database plumbing: the embedded server, the connection pool, migrations."""
