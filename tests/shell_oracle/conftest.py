"""The oracle's tests need bubblewrap, strace and user namespaces; CI insists on them."""

import os

import pytest

from tests.shell_oracle.sandbox import unavailable_reason


@pytest.fixture(scope="session")
def sandbox() -> None:
    if os.environ.get("FLUIDBOX_ORACLE_RAN"):
        # .ci/run's second pass (SQLite): the oracle uses no database and ran in the first.
        pytest.skip("the shell oracle ran in this CI run's PostgreSQL pass")
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("FLUIDBOX_REQUIRE_SANDBOX"):
        pytest.fail(f"FLUIDBOX_REQUIRE_SANDBOX is set but {reason}")
    pytest.skip(reason)
