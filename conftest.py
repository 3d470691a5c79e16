"""Suite-wide test ordering.

Sync Playwright leaves an event loop running in the main thread once a browser
test has run, which breaks every later pytest-asyncio test; browser tests
therefore run last.
"""

import pytest

BROWSER_FIXTURES = {"page", "browser", "context", "new_context"}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: bool(BROWSER_FIXTURES & set(getattr(item, "fixturenames", ()))))
