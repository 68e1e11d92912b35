"""The oracle's tests need bubblewrap, strace and user namespaces; CI insists on them."""

import os

import pytest

from tests.shell_oracle.sandbox import unavailable_reason


@pytest.fixture(scope="session")
def sandbox() -> None:
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("FLUIDBOX_REQUIRE_SANDBOX"):
        pytest.fail(f"FLUIDBOX_REQUIRE_SANDBOX is set but {reason}")
    pytest.skip(reason)
