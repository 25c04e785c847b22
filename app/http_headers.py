"""Security headers for every page a browser renders (the console, /docs, /redoc): one set,
so that no page is framed, sniffed, cached or allowed a script it did not ship."""

from __future__ import annotations

import base64
import hashlib
import re

# What every page sends; each page adds its Content-Security-Policy.
COMMON = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
# Beyond each policy's own sources: nothing may frame the page, rebase it or post it away.
_LOCKED = "frame-ancestors 'none'; base-uri 'none'"

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def page_headers(csp: str) -> dict[str, str]:
    return {"Content-Security-Policy": f"{csp}; {_LOCKED}", **COMMON}


def script_hashes(html: str) -> str:
    """CSP sources for the inline scripts a page holds: those exact scripts run, no other."""
    hashes = []
    for script in _INLINE_SCRIPT.findall(html):
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        hashes.append(f"'sha256-{digest}'")
    return " ".join(hashes)
