"""Pure functions and value types: no I/O here."""
