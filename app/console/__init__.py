"""The web console: server-rendered pages for the people who own the memory (a door, like
app/api and app/mcp: it parses, calls the services, renders). A module a page (search.py,
browse.py, memory.py, sessions.py, strategies.py, review.py, drafts.py, tidy.py, stats.py,
audit.py, keys.py, sign_in.py; oauth.py for consent and connections, oidc.py for the
identity provider), what they share in pages.py (templates, the route class, a page's
services) and auth.py (who is signed in, the forms' CSRF token), and router.py to mount."""
