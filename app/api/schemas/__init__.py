"""REST request bodies: the shapes a client may send, a module per resource as app/api has
a router per resource (`memories.py` for app/api/memories.py, ...), what they share in
`body.py` (strictness) and `memory_fields.py` (a memory's fields and their rules). Types
only: every rule on the values lives in app/domain and is applied by the services, the same
for every door. The limits shown in OpenAPI are read from the domain's table, so the docs
cannot drift from the rule."""
