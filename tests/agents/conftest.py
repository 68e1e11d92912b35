from tests.runner_live.conftest import (  # noqa: F401
    approver_key,
    demo_org,
)
