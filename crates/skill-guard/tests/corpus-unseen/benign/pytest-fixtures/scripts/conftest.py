import os
import pytest

@pytest.fixture
def api_url():
    return os.environ.get("API_URL", "http://localhost:8000")

def pytest_collection_modifyitems(config, items):
    if os.environ.get("CI"):
        skip_slow = pytest.mark.skip(reason="slow tests do not run in CI")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip_slow)
