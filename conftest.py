"""Suite-wide test ordering, which tests a database runs, and the fixtures every suite shares.

Sync Playwright leaves an event loop running in the main thread once a browser
test has run, which breaks every later pytest-asyncio test; browser tests
therefore run last. Tests marked ``slow`` (a module or a test that takes a
large share of a run) start first: started last, one would run alone at the
end while the other workers had nothing left to do.

Tests marked ``postgres_only`` are about PostgreSQL itself (its connection
pool): the SQLite run leaves them out, the PostgreSQL pass of scripts/test
runs them.
"""

import os
from pathlib import Path

import pytest

#: The fixtures every suite shares (pytest reads ``pytest_plugins`` from the root conftest only).
pytest_plugins = ["testing_support.fixtures"]

BROWSER_FIXTURES = {"page", "browser", "context", "new_context"}


#: Where scripts/test has the modules holding tests marked postgres or postgres_only written, for its
#: PostgreSQL pass to collect those alone rather than every module again.
POSTGRES_MODULES_VAR = "KANDEV_POSTGRES_MODULES"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    from django.conf import settings

    if path := os.environ.get(POSTGRES_MODULES_VAR):
        _write_postgres_modules(Path(path), items)
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        left_out = [item for item in items if item.get_closest_marker("postgres_only")]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if not item.get_closest_marker("postgres_only")]
    # A stable sort: otherwise pytest's order, a module's tests together.
    items.sort(
        key=lambda item: (
            bool(BROWSER_FIXTURES & set(getattr(item, "fixturenames", ()))),
            item.get_closest_marker("slow") is None,
        )
    )


def _write_postgres_modules(path: Path, items) -> None:
    modules = {
        item.nodeid.split("::")[0]
        for item in items
        if item.get_closest_marker("postgres") or item.get_closest_marker("postgres_only")
    }
    # Each xdist worker collects the same tests and writes the same list: whole, never half of one.
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    partial.write_text("".join(f"{module}\n" for module in sorted(modules)))
    partial.replace(path)


@pytest.fixture(scope="session")
def redis_url():
    """The Redis that scripts/test starts for this run."""
    url = os.environ.get("KANDEV_TEST_REDIS_URL")
    if not url:
        pytest.fail("KANDEV_TEST_REDIS_URL is not set: run the suite with scripts/test, which starts Redis.")
    return url


def pytest_report_header(config):
    """Which database this run uses: scripts/test runs the tests marked postgres a second time, on PostgreSQL."""
    from django.conf import settings

    return f"database: {settings.DATABASES['default']['ENGINE']}"
