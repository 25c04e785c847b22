"""The console's fixtures, held in tests/helpers/ (tests in other directories import them
from there): a key of each role in one tenant, and a headless Chromium."""

from tests.helpers.browser import browser
from tests.helpers.console import keys

__all__ = ["browser", "keys"]
