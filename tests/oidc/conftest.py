"""The headless Chromium of tests/helpers/browser.py, as a fixture for this directory."""

from tests.helpers.browser import browser

__all__ = ["browser"]
