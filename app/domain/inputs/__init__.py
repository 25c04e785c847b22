"""What a client sends for each operation, as it arrives, and the rule that turns it into
a value the services may act on. Every door (REST, MCP, CLI) builds these from its own
parsing and hands them to a service, which validates them here: one rule per field.

A module an operation: `memories.py` (a memory written or edited), `learning.py`
(remember, strategies, feedback), `retry.py`, `search.py`, `listing.py` (a page and its
cursor), `budgets.py` (how much an answer holds), `keys.py`, and `mappings.py` (a nested
object from a plain mapping).
"""
