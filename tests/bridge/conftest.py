"""The real Claude ACP bridge at each version scripts/test installs (``testing_support.bridge``)."""

import pytest

from testing_support.bridge import BRIDGE_VERSIONS, Bridge, find_bridge


@pytest.fixture(scope="session", params=BRIDGE_VERSIONS)
def bridge(request: pytest.FixtureRequest) -> Bridge:
    """Each installed bridge version in turn."""
    return find_bridge(request.param)
