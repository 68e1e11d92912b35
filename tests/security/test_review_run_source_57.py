"""A token in a run's source reaches no reader of the run: the API masks it as the ledger does.

The timeline page and `run.created` masked a clone URL's token
(`https://x-access-token:TOKEN@github.com/...`, GitHub Actions' own form) while
`GET /v1/runs/{id}` returned the source as posted, to every operator and member of the
organization, and `POST /v1/runs` echoed it back.
"""

import pytest

from governance.services.orgs import api_key_create
from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db

CLONE_TOKEN = "ghs_9aQ3e42F292c6912E7710c838347Ae178B4b"
REPOSITORY = f"https://x-access-token:{CLONE_TOKEN}@github.com/acme/app"


def test_the_operators_read_the_runs_source_with_its_token_masked(org, operator):
    created = operator.post(
        "/v1/runs", run_body(source={"kind": "manual", "repository": REPOSITORY})
    )
    assert created.status_code == 201, created.content
    run_id = created.json()["id"]
    assert CLONE_TOKEN not in created.content.decode()

    another_operator = Api(api_key_create(org=org, name="nightly").plaintext)
    for reader in (operator, another_operator):
        response = reader.get(f"/v1/runs/{run_id}")
        assert response.status_code == 200, response.content
        assert CLONE_TOKEN not in response.content.decode()
        # Still shown, as run.created holds it.
        assert response.json()["source"]["repository"].startswith(
            "https://x-access-token:[redacted]"
        )
