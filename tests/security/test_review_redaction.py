"""Secrets in the shapes tools really send them reach no ledger event, reason or log.

Each canary here reached the ledger's `arguments_preview` (and most the decision's match
subject too) before the redactor learnt its shape: a header given as a name/value pair or
an argv's `--password` followed by its value, a key that is itself `password=…`, a URL's
userinfo, a quoted passphrase with spaces, `auth`, `curl -u user:…`, a PEM private key, a
JSON Web Token, `mysql -p…`, JSON escaped inside JSON; and tokens whose form alone says
what they are (a GitHub token as a clone URL's user, `OPENAI_KEY=sk-…`, npm's `_authToken`
followed by a space). And a long run of secret words in
one argument took the redactor's key pattern quadratic time (28 s for 64 KiB of `pass`).
A later review (stop 52) got more past it: `pwd` and `MYSQL_PWD`, Django's `sessionid`, a
`signing_key`, a JWT or a card's `cvv` by name, a `{"k": "password", "v": …}` pair, an XML
element (`<password>…</password>`), curl's `-u user:…` as an argv."""

import json
import logging
import time

import pytest
from django.db import connection

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from ledger.redaction import argument_preview, redact
from tests.conftest import Api, run_body
from tests.security.test_canary_arguments import gate

NAMES = "pair argv key userinfo passphrase auth curluser pem mysql escaped env har"
NAMES += " pwd mysqlpwd sessionid signing jwtname cvv kv xml xmlns argvuser"
SECRET = {name: f"cnry{name}7c3d9a" for name in NAMES.split()}
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjbnJ5and0In0.c2lnbmF0dXJlY25yeQ"
# Each in the form its issuer gives it, named by nothing around it.
TOKENS = {
    "github": "ghp_" + "cnrygithub7c3d9a".ljust(36, "A"),
    "github_pat": "github_pat_" + "11AAcnrypat7c3d9a".ljust(82, "B"),
    "gitlab": "glpat-cnrygitlab7c3d9a" + "H" * 4,
    "slack": "xoxb-123456789012-cnryslack7c3d9a",
    "npm": "npm_" + "cnrynpm7c3d9a".ljust(36, "J"),
    "openai": "sk-proj-cnryopenai7c3d9a" + "C" * 20,
    "anthropic": "sk-ant-api03-cnryant7c3d9a" + "D" * 40,
    "stripe": "sk_live_cnrystripe7c3d9a" + "E" * 8,
    "google": "AIza" + "cnrygoogle7c3d9a".ljust(35, "F"),
    "aws": "AKIA" + "CNRYAWS7C3D9A".ljust(16, "G"),
}

BUNDLE = """
name: review-tools
tools:
  - name: http_request
    access: read
    schema: {type: object}
"""

POLICY = """
name: default
autonomous_fallback: deny
rules:
  - pattern: "http_request:*"
    action: ALWAYS
  - pattern: "run_command:*"
    action: NEVER
"""

STRUCTURED = {
    "headers": [{"name": "X-Api-Key", "value": SECRET["har"]}, ["Authorization", SECRET["pair"]]],
    "argv": ["deploy", "--password", SECRET["argv"]],
    "env": [{"name": "DB_PASSWORD", "value": SECRET["env"]}],
    "extra": {f"password={SECRET['key']}": True},
    "url": f"https://deploy:{SECRET['userinfo']}@db.example.test/x",
    "auth": SECRET["auth"],
    "body": json.dumps(json.dumps({"api_key": SECRET["escaped"]})),
    "jwt": JWT,
    "pwd": SECRET["pwd"],
    "MYSQL_PWD": SECRET["mysqlpwd"],
    "sessionid": SECRET["sessionid"],
    "signing_key": SECRET["signing"],
    "refresh_jwt": SECRET["jwtname"],
    "cvv": SECRET["cvv"],
    "field": {"k": "password", "v": SECRET["kv"]},
    "soap": f"<password>{SECRET['xml']}</password><ns:ApiKey a='1'>{SECRET['xmlns']}</ns:ApiKey>",
    "curl_argv": ["curl", "-u", f"admin:{SECRET['argvuser']}", "https://x.test"],
}
COMMANDS = {
    "passphrase": f"unlock --passphrase 'correct horse {SECRET['passphrase']} staple'",
    "curl": f"curl -u admin:{SECRET['curluser']} https://x.test",
    "pem": "printf '-----BEGIN RSA PRIVATE KEY-----\\nMII"
    + SECRET["pem"]
    + "\\n-----END RSA PRIVATE KEY-----' > k",
    "mysql": f"mysql -uroot -p{SECRET['mysql']} shop",
    "github": f"git clone https://{TOKENS['github']}@github.com/acme/app",
    "github_pat": f"gh auth login --with-token <<< {TOKENS['github_pat']}",
    "gitlab": f"glab auth login --stdin <<< {TOKENS['gitlab']}",
    "slack": f"echo {TOKENS['slack']} | slackcat -c ops",
    "npm": f"npm config set //registry.npmjs.org/:_authToken {TOKENS['npm']}",
    "openai": f"OPENAI_KEY={TOKENS['openai']} python3 agent.py",
    "anthropic": f"echo {TOKENS['anthropic']} > .claude-key",
    "stripe": f"stripe charges list --live -k {TOKENS['stripe']}",
    "google": f"gcloud ml language analyze-entities --content=x --key={TOKENS['google']}",
    "aws": f"aws configure set aws_access_key_id {TOKENS['aws']}",
}


def canaries() -> list[str]:
    return [*SECRET.values(), JWT, *(token[:-4] for token in TOKENS.values())]


@pytest.mark.django_db
def test_secrets_in_real_shapes_reach_no_event_reason_table_response_or_log(
    org, operator, caplog, capfd
):
    caplog.set_level(logging.DEBUG)
    bundle_import(org=org, text=BUNDLE)
    policy_save(org=org, text=POLICY, author=None)
    created = operator.post("/v1/runs", run_body(bundles=["sandbox-basic", "review-tools"]))
    assert created.status_code == 201, created.content
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])
    responses = []

    def decided(call_id, tool, arguments):
        return gate(runner, run_id, tool, arguments, call_id, responses)["decision"]

    assert decided("c-structured", "http_request", STRUCTURED) == "allow"
    for name, command in COMMANDS.items():
        assert decided(f"c-{name}", "run_command", {"command": command}) == "deny"
    responses.append(operator.get(f"/v1/runs/{run_id}/events?limit=1000").content.decode())
    responses.append(operator.get(f"/v1/runs/{run_id}").content.decode())

    previews = [e.data["arguments_preview"] for e in Event.objects.filter(type="tool.requested")]
    # masked, not dropped (the preview is cut at 300 characters: keys sorted, uppercase first)
    assert '"MYSQL_PWD":"[redacted]","argv":["deploy","--password","[redacted]"]' in previews[0]
    for event in Event.objects.all():
        text = json.dumps(event.data, ensure_ascii=False)
        assert not any(canary in text for canary in canaries()), (event.type, event.data)
    for call in ToolCall.objects.all():
        stored = " ".join([call.reason, call.tool_error, json.dumps(call.rule)])
        assert not any(canary in stored for canary in canaries()), stored
    allowed_columns = {("governance_toolcall", "arguments"), ("governance_toolcall", "call_key")}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT * FROM "{table}"')
            columns = [column[0] for column in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    if (table, column) in allowed_columns:
                        continue
                    if isinstance(value, bytes | memoryview):
                        value = bytes(value).decode("latin-1")
                    text = value if isinstance(value, str) else repr(value)
                    assert not any(canary in text for canary in canaries()), (table, column)
    assert ToolCall.objects.count() == 1 + len(COMMANDS)
    for text in responses:
        assert not any(canary in text for canary in canaries()), text
    out, err = capfd.readouterr()
    for canary in canaries():
        assert canary not in caplog.text and canary not in out and canary not in err


def test_a_quoted_value_keeps_its_quotes_and_a_repeat_of_it_is_masked_too():
    command = 'export PASSWORD="two words" && echo two words'
    masked = redact({"subject": command}, arguments={"command": command}).data["subject"]
    assert masked == 'export PASSWORD="[redacted]" && echo [redacted]'


def test_harmless_look_alikes_are_kept():
    arguments = {
        "author": "ada",
        "authority": "x509",
        "command": "git push -u origin main && git checkout -b feature && pwd",
        "docker": ["docker", "run", "-u", "1000", "img"],
        "markup": "<b>bold</b> <author>ada</author>",
        "url": "https://example.test:8443/path?a=1",
        "tags": ["build", "release"],
    }
    assert argument_preview(arguments) == json.dumps(
        arguments, separators=(",", ":"), sort_keys=True
    )


def test_words_near_a_token_form_are_kept():
    # A token's prefix inside a word, or not followed by a token's body.
    arguments = {
        "branch": "task-" + "x" * 30,
        "zone": "Asia/Tokyo",
        "variable": "npm_config_registry",
        "file": "desk_live_" + "y" * 20,
    }
    assert argument_preview(arguments) == json.dumps(
        arguments, separators=(",", ":"), sort_keys=True
    )


@pytest.mark.parametrize(
    "unit",
    ["pass", "token", "api_key", "auth-", "mysql ", "curl ", "eyJ", "sk-", "xoxb-", "AKIA"]
    + ["<pwd", "<password ", "<x:token>"],
)
def test_a_long_run_of_one_shape_is_redacted_in_linear_time(unit):
    text = unit * (64 * 1024 // len(unit))
    started = time.monotonic()
    argument_preview({"note": text + "=x"})
    redact({"subject": text + ": y"}, arguments={"note": text})
    assert time.monotonic() - started < 2


@pytest.mark.django_db
def test_a_failing_webhooks_secret_path_reaches_no_log_nor_stored_error(
    org, make_run, caplog, capfd
):
    from governance.models import NotificationDelivery
    from governance.services.notifications import approval_notify_all, channel_create_webhook
    from tests.governance.gate.test_pipeline import ask
    from tests.governance.test_notifications import Receiver

    caplog.set_level(logging.DEBUG)
    path_secret = "T0CNRY/B0CNRY/cnryhookpath5d1e"
    failing = Receiver(fail_first=10)
    try:
        channel_create_webhook(
            org=org, name="slack", url=f"{failing.url}/{path_secret}", secret="signing-secret"
        )
        run_id, runner = make_run()
        approval_id = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
        approval_notify_all(approval_id=int(approval_id))
    finally:
        failing.close()
    delivery = NotificationDelivery.objects.get()
    assert delivery.last_error == "HTTPStatusError: 503 Service Unavailable"
    out, err = capfd.readouterr()
    assert "notification" in caplog.text and "503" in caplog.text
    assert path_secret not in caplog.text + out + err
