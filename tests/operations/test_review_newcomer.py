"""What a newcomer following the README stumbled on: each test does what the README says, from
the outside (the command line, the API), and reads the answer and the ledger."""

import json
import socket
import subprocess
import sys
import textwrap
import time
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from governance.models import Connection, Organization
from governance.services.notifications import sign
from governance.services.orgs import api_key_create
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.mcp_servers.fixtures import free_port
from tests.support.servers import ROOT, child_environment


def agent_setup(home, *args):
    env = {**child_environment(), "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "runner.agent_setup", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("127.0.0.1:8000", "is not fluidbox's base URL: give it as http://HOST:PORT"),
        ("localhost:8000", "is not fluidbox's base URL: give it as http://HOST:PORT"),
        ("http://127.0.0.1:8000/v1/mcp", "names an endpoint: give fluidbox's base URL"),
        ("", "is not fluidbox's base URL"),
    ],
)
def test_agent_setup_refuses_a_url_the_hook_could_not_use_and_writes_nothing(tmp_path, url, says):
    # `--url 127.0.0.1:8000` was written into .mcp.json and the hook as given; the agent then
    # started with every call denied ("base_url must be an http(s) URL") and the MCP server
    # unreachable. Now the command itself says so, before writing anything.
    project = tmp_path / "app"
    done = agent_setup(tmp_path, "claude-code", "--url", url, "--dir", str(project))
    assert done.returncode == 2
    assert says in done.stderr
    assert not project.exists()


def test_agent_setup_refuses_an_empty_run_id_instead_of_writing_a_configuration_without_one(
    tmp_path,
):
    # `--run "$RUN_ID"` with RUN_ID unset used to write the files as if --run had been left
    # out, silently: the hook then wanted $FLUIDBOX_RUN_ID, which the README's next step (for
    # Claude Code) does not export.
    project = tmp_path / "app"
    url = "http://127.0.0.1:8000"
    done = agent_setup(tmp_path, "claude-code", "--url", url, "--run", "", "--dir", str(project))
    assert done.returncode == 2
    assert "'' is not a run id" in done.stderr
    assert "is $RUN_ID set?" in done.stderr
    assert not project.exists()


def test_agent_setup_still_writes_the_readme_configuration(tmp_path):
    project = tmp_path / "app"
    done = agent_setup(
        tmp_path,
        "claude-code",
        "--url",
        "http://127.0.0.1:8000/",
        "--run",
        "3f0c9a2e-0000-4000-8000-000000000001",
        "--dir",
        str(project),
    )
    assert done.returncode == 0, done.stderr
    assert '"url": "http://127.0.0.1:8000/v1/mcp"' in (project / ".mcp.json").read_text()


@pytest.mark.django_db
def test_seed_demo_follows_the_demo_server_to_another_port(demo_mcp_server):
    # The README: "If either port is taken, `make run PORT=8080 MCP_PORT=8766`". After an
    # earlier `make run`, the seeded `tracker` connection kept the old port: the run's
    # brokered calls failed with "could not connect to the MCP server", and `make demo`
    # ended with 8 of 11 decisions as expected.
    old_url = f"http://127.0.0.1:{free_port()}/mcp"  # the first `make run`, now gone
    call_command("seed_demo", "--mcp-url", old_url)
    demo = Organization.objects.get(slug="demo")
    tracker = Connection.objects.get(org=demo, slug="tracker")
    generation = tracker.authorization_generation

    out = StringIO()
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url, stdout=out)
    assert f"demo MCP connection moved to {demo_mcp_server.url} (was {old_url})" in out.getvalue()
    assert "demo MCP server photographed" in out.getvalue()
    tracker.refresh_from_db()
    assert tracker.url == demo_mcp_server.url
    # a credential never follows a connection to another URL unless entered anew with it
    assert tracker.authorization_generation == generation + 1

    operator = Api(api_key_create(org=demo, name="newcomer").plaintext)
    created = operator.post("/v1/runs", run_body(connections=["tracker"]))
    assert created.status_code == 201, created.content
    run = Api(created.json()["session_token"])
    answer = run.post(
        f"/v1/runs/{created.json()['id']}/tools/tracker.list_issues/call",
        {"session_id": "s-1", "tool_call_id": "c-1", "arguments": {}},
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["decision"] == "allow"
    assert answer.json()["broker"]["status"] == "succeeded"
    brokered = Event.objects.get(run_id=created.json()["id"], type="tool.brokered")
    assert brokered.data["status"] == "succeeded"

    again = StringIO()
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url, stdout=again)
    assert "moved" not in again.getvalue()  # idempotent once it is there
    tracker.refresh_from_db()
    assert tracker.authorization_generation == generation + 1


@pytest.mark.django_db
def test_seed_demo_writes_keys_this_database_accepts_after_the_database_changed(
    settings, tmp_path, demo_mcp_server
):
    # SQLite, then `DATABASE_URL=postgres://…`, then SQLite again: the data folder's files held
    # the other database's keys and password, and every README example answered 401.
    settings.DATA_DIR = tmp_path
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url, stdout=StringIO())
    # what seeding the other database left in the data folder
    for name in ("demo-operator-key.txt", "demo-approver-key.txt"):
        (tmp_path / name).write_text("fbx_" + "a" * 40 + "\n")
    (tmp_path / "admin-password.txt").write_text("another-database\n")
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url, stdout=StringIO())

    operator = Api((tmp_path / "demo-operator-key.txt").read_text().strip())
    assert operator.get("/v1/policies/default").status_code == 200
    approver = Api((tmp_path / "demo-approver-key.txt").read_text().strip())
    assert approver.get("/v1/approvals").status_code == 200
    login = StringIO()
    call_command("seed_demo", "--print-login", stdout=login)
    assert "another-database" not in login.getvalue()
    assert "no password of this database's admin is in" in login.getvalue()
    assert "manage.py changepassword admin" in login.getvalue()
    # Without the file, the admin the database has keeps their password too.
    (tmp_path / "admin-password.txt").unlink()
    admin = User.objects.get(username="admin")
    admin.set_password("chosen-by-the-admin")
    admin.save()
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url, stdout=StringIO())
    assert User.objects.get(username="admin").check_password("chosen-by-the-admin")


def test_seed_demo_with_another_vault_key_says_so_instead_of_a_traceback(tmp_path):
    # `make run MCP_PORT=…` with a data folder whose machine key did not seal this database's
    # demo credential ended in a VaultSealed traceback.
    env = child_environment(
        FLUIDBOX_DATA_DIR=str(tmp_path / "var"),
        DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
    )

    def manage(*args, **extra):
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert manage("migrate", "-v", "0").returncode == 0
    first = manage("seed_demo", "--mcp-url", f"http://127.0.0.1:{free_port()}/mcp")
    assert first.returncode == 0, first.stderr
    other_key = "ZmRlZmRlZmRlZmRlZmRlZmRlZmRlZmRlZmRlZmRlZmQ="  # another folder's machine key

    moved = manage(
        "seed_demo",
        "--mcp-url",
        f"http://127.0.0.1:{free_port()}/mcp",
        FLUIDBOX_MACHINE_KEY=other_key,
    )

    assert moved.returncode != 0
    assert "vault key is not the one the database was seeded with" in moved.stderr
    assert "Traceback" not in moved.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["", "a+b/c", "Bad Slug", "x" * 65])
def test_create_org_refuses_a_slug_the_admin_refuses(slug):
    # An organization named `Bad Slug` got a ledger its own offline verifier rejected.
    with pytest.raises(CommandError, match="is not a slug: letters, digits"):
        call_command("create_org", slug)
    assert not Organization.objects.filter(slug=slug).exists()
    call_command("create_org", "bad-slug", stdout=StringIO())
    assert Organization.objects.filter(slug="bad-slug").exists()


@pytest.mark.django_db
def test_policy_import_into_an_organization_without_the_tool_says_why_its_tests_fail(tmp_path):
    # The README's order is create_org, then policies as code: a shell test failed with no
    # hint that the organization had no `run_command` tool (no bundle) to split the command.
    call_command("create_org", "globex", stdout=StringIO())
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "name: default\n"
        "rules:\n"
        '  - {pattern: "run_command:rm *", action: NEVER}\n'
        "tests:\n"
        '  - {call: "run_command:ls; rm -rf /", expect: NEVER}\n'
    )

    with pytest.raises(CommandError) as refused:
        call_command("policy", "import", str(policy), "--org", "globex")

    assert "run_command:ls; rm -rf /: expected NEVER, got ASK" in str(refused.value)
    assert "globex has no tool 'run_command' yet" in str(refused.value)
    call_command(
        "bundle",
        "import",
        str(ROOT / "runner/bundles/claude-code.yaml"),
        "--org",
        "globex",
        stdout=StringIO(),
    )
    call_command("policy", "import", str(policy), "--org", "globex", stdout=StringIO())


def test_manage_py_without_the_development_switch_says_so_in_one_line(tmp_path):
    # The README's second terminal: `manage.py ledger verify --all` without
    # `export FLUIDBOX_DEVELOPMENT=1`. The reason came at the end of a 40-line traceback
    # that began "KeyError: 'ledger'", as if the command did not exist.
    env = {
        name: value
        for name, value in child_environment(FLUIDBOX_DATA_DIR=str(tmp_path / "var")).items()
        if name not in ("FLUIDBOX_DEVELOPMENT", "SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE")
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "ledger", "verify", "--all"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "manage.py: SECRET_KEY is required outside development "
        "(set FLUIDBOX_DEVELOPMENT=1 for a dev key)\n"
    )
    assert done.stdout == ""
    # help and the version still answer without settings, as in Django
    version = subprocess.run(
        [sys.executable, "manage.py", "--version"], cwd=ROOT, env=env, capture_output=True
    )
    assert version.returncode == 0


@pytest.mark.parametrize("taken", ["web", "mcp"])
def test_make_run_on_a_taken_port_says_so_and_starts_nothing(tmp_path, taken):
    # With port 8765 taken, `make run` started the rest, seeded the demo against whatever
    # answered on that port, printed the logins and stopped, the reason in the middle of the
    # output. Now it names the port and how to serve on others, before starting anything.
    with socket.socket() as occupant:
        occupant.bind(("127.0.0.1", 0))
        occupant.listen()
        busy = occupant.getsockname()[1]
        port, mcp_port = (busy, free_port()) if taken == "web" else (free_port(), busy)
        env = child_environment(FLUIDBOX_DATA_DIR=str(tmp_path / "var"))
        done = subprocess.run(
            ["bash", "scripts/serve.sh", str(port), str(mcp_port)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"make run: port {busy} is taken; serve on others: make run PORT=8080 MCP_PORT=8766 "
        "(and make demo PORT=8080)\n"
    )
    assert done.stdout == ""
    assert not (tmp_path / "var").exists()  # nothing seeded


def test_the_hook_written_without_run_names_the_missing_run_id(tmp_path):
    # Written without --run (as the README advises for Codex), the hook reads the run from
    # $FLUIDBOX_RUN_ID. Forgotten, every call was denied "the hook has no --url/--run", though
    # the command line has its --url.
    project = tmp_path / "app"
    url = "http://127.0.0.1:9"
    assert agent_setup(tmp_path, "claude-code", "--url", url, "--dir", str(project)).returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    env = {
        **{k: v for k, v in child_environment().items() if k != "FLUIDBOX_RUN_ID"},
        "FLUIDBOX_RUN_TOKEN": "fbr_x",
    }
    event = {
        "session_id": "s-1",
        "tool_use_id": "t-1",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=project,
        env=env,
        input=json.dumps(event),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"] == (
        "fluidbox: no run id ($FLUIDBOX_RUN_ID is not set, and no --run); denied"
    )


def readme_webhook_verifier():
    """The README's receiver check, as published (the block that defines `verify`)."""
    text = (ROOT / "README.md").read_text()
    start = text.index("```python\n  import hashlib, hmac, time")
    block = text[text.index("\n", start) + 1 : text.index("```", start + 3)]
    namespace: dict = {}
    exec(textwrap.dedent(block), namespace)
    return namespace["verify"]


@pytest.mark.parametrize(
    "header",
    ["", "sha256=abc", "t=now,v1=abc", "t=1700000000", "v1=abc", "t=1,v1=ü", "garbage"],
)
def test_the_readme_webhook_check_refuses_a_malformed_signature_instead_of_crashing(header):
    # A receiver copied from the README raised KeyError/ValueError (a 500 in most frameworks)
    # on a request without a proper X-Fluidbox-Signature, instead of refusing it.
    verify = readme_webhook_verifier()
    assert verify("s3cret", header, b"{}") is False


def test_the_readme_webhook_check_accepts_what_fluidbox_signs_and_refuses_a_replay():
    verify = readme_webhook_verifier()
    body = b'{"approval_id": "1"}'
    now = int(time.time())
    assert verify("s3cret", sign("s3cret", body, now), body) is True
    assert verify("other", sign("s3cret", body, now), body) is False
    assert verify("s3cret", sign("s3cret", body, now - 301), body) is False
