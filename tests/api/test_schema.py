"""`/v1/schema` as a newcomer reaches it: a plain JSON link, and the answers it documents."""

import json

import httpx
import pytest

from tests.concurrency.conftest import fire_at_once
from tests.conftest import run_body
from tests.support.openapi import assert_documented, response_schema
from tests.support.servers import WebServer


def schema_document(client) -> dict:
    response = client.get("/v1/schema.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    return json.loads(response.content)


@pytest.mark.django_db
def test_the_schema_is_json_at_a_plain_link_and_by_format(client):
    by_link = schema_document(client)
    by_format = client.get("/v1/schema?format=json")
    assert by_format["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert json.loads(by_format.content) == by_link
    assert by_link["openapi"].startswith("3.")
    yaml = client.get("/v1/schema")
    assert yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert yaml.content.startswith(b"openapi:")


@pytest.mark.django_db
def test_the_201_of_creating_a_run_documents_every_field_it_returns(client, operator):
    document = schema_document(client)
    created = operator.post("/v1/runs", run_body())
    assert created.status_code == 201
    body = created.json()
    documented = response_schema(document, "/v1/runs", "post", 201)
    assert_documented(body, documented, document)
    properties = document["components"]["schemas"][documented["$ref"].rsplit("/", 1)[1]]
    assert {"id", "session_token", "tools", "trust_tier"} <= set(properties["required"])
    assert set(properties["required"]) == set(body)


@pytest.mark.slow
def test_concurrent_first_schema_requests_to_a_fresh_server_all_succeed(transactional_db, tmp_path):
    # drf-spectacular's first generation was not thread-safe: a burst of first requests
    # (a slow start, a readiness probe retrying) got 500s.
    with WebServer(tmp_path, workers=1, threads=32) as server:

        def fetch(client: httpx.Client, index: int) -> httpx.Response:
            return client.get(f"{server.url}/v1/schema.json")

        responses = fire_at_once(20, fetch)
    assert [r.status_code for r in responses] == [200] * 20
    assert len({r.content for r in responses}) == 1
