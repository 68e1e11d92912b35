"""The per-process memories of the fast paths, attacked: remembered shell evaluations,
first matches, the redactor's clean strings and the approval wake-ups.

Each test makes the attempt from the side of someone holding one credential (a run token,
an operator key, a second organization's key) and then asserts that nothing was served
across the line the memory must not cross, or that nothing leaked."""

import gc
import threading
import uuid

import pytest

from governance.models import ToolCall
from governance.policy import MatchArgument, Verdict, compile_policy
from governance.policy import compiled as compiled_module
from governance.policy.compiled import CompiledPolicy
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY, Api, run_body

SHELL = MatchArgument("command", "shell")


def gate(runner: Api, run_id: str, command: str, call_id: str | None = None) -> dict:
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": call_id or uuid.uuid4().hex,
            "tool": "run_command",
            "arguments": {"command": command},
        },
    )
    assert response.status_code == 200, response.content
    return response.json()


def new_run(operator: Api) -> tuple[str, Api]:
    response = operator.post("/v1/runs", run_body())
    assert response.status_code == 201, response.content
    return response.json()["id"], Api(response.json()["session_token"])


def live_policies_naming(text: str) -> list[CompiledPolicy]:
    gc.collect()
    return [
        obj
        for obj in gc.get_objects()
        if type(obj) is CompiledPolicy and any(text in rule.pattern for rule in obj.rules)
    ]


# --- remembered shell evaluations and first matches: what they are keyed by -------------


@pytest.mark.django_db
def test_an_evaluation_remembered_for_one_org_is_not_served_to_another(
    org, other_org, operator, other_operator
):
    policy_save(
        org=org,
        text=TEST_POLICY.replace(
            "rules:\n", "rules:\n  - pattern: 'run_command:deploy *'\n    action: ALWAYS\n"
        ),
        author=None,
    )
    command = "deploy --to prod"
    run_id, runner = new_run(operator)
    assert gate(runner, run_id, command)["decision"] == "allow"

    # The same tool, the same command text, in the same process: the other org's policy has
    # no rule for it, so a supervised run is asked about it.
    other_run, other_runner = new_run(other_operator)
    answer = gate(other_runner, other_run, command)
    assert answer["decision"] == "pending"
    call = ToolCall.objects.get(run_id=other_run)
    assert call.decision == "pending"
    decided = Event.objects.get(run_id=other_run, type="approval.requested").data
    assert decided.get("rule") is None


@pytest.mark.django_db
def test_a_new_policy_version_is_not_answered_from_the_previous_versions_memory(org, operator):
    allowing = TEST_POLICY.replace(
        "rules:\n", "rules:\n  - pattern: 'run_command:deploy *'\n    action: ALWAYS\n"
    )
    policy_save(org=org, text=allowing, author=None)
    old_run, old_runner = new_run(operator)
    assert gate(old_runner, old_run, "deploy --to prod")["decision"] == "allow"

    denying = allowing.replace(
        "rules:\n", "rules:\n  - pattern: 'run_command:deploy --to prod'\n    action: NEVER\n"
    )
    policy_save(org=org, text=denying, author=None)
    new_run_id, new_runner = new_run(operator)
    assert gate(new_runner, new_run_id, "deploy --to prod")["decision"] == "deny"
    # Re-published with the same rules and one more test: still the denying rules.
    policy_save(
        org=org,
        text=denying + "  - call: 'run_command:deploy --to prod'\n    expect: NEVER\n",
        author=None,
    )
    third_id, third_runner = new_run(operator)
    assert gate(third_runner, third_id, "deploy --to prod")["decision"] == "deny"
    # A run keeps the version it froze (SPEC): the first run is still allowed.
    assert gate(old_runner, old_run, "deploy --to prod")["decision"] == "allow"


@pytest.mark.django_db
def test_an_allowed_command_remembered_for_a_trusted_run_is_no_pass_for_a_read_only_run(
    org, operator
):
    # The evaluation is remembered per policy and command; the trust tier, the autonomy and
    # the schema are stages of their own, decided for each run.
    trusted, trusted_runner = new_run(operator)
    assert gate(trusted_runner, trusted, "ls -la")["decision"] == "allow"

    response = operator.post("/v1/runs", run_body(trust_tier="read_only"))
    assert response.status_code == 201, response.content
    read_only, read_only_runner = response.json()["id"], Api(response.json()["session_token"])
    answer = gate(read_only_runner, read_only, "ls -la")
    assert (answer["decision"], answer["source"]) == ("deny", "trust_tier")

    # An ASK remembered for a supervised run (asked about) is the autonomous run's fallback.
    assert gate(trusted_runner, trusted, "make build")["decision"] == "pending"
    response = operator.post("/v1/runs", run_body(autonomy="autonomous"))
    autonomous, autonomous_runner = response.json()["id"], Api(response.json()["session_token"])
    answer = gate(autonomous_runner, autonomous, "make build")
    assert answer["decision"] == "deny"
    assert not ToolCall.objects.filter(run_id=autonomous, decision="pending").exists()


def test_an_evaluation_that_failed_unforeseen_is_not_remembered(monkeypatch):
    compiled_module.forget_evaluations()
    policy = compile_policy([{"pattern": "run_command:git status", "action": "ALWAYS"}])
    script = {"command": "git status"}
    real_read_call = compiled_module.read_call

    def failing_once(*args):
        monkeypatch.setattr(compiled_module, "read_call", real_read_call)
        raise MemoryError("a transient failure")

    monkeypatch.setattr(compiled_module, "read_call", failing_once)
    failed = policy.evaluate("run_command", script, SHELL)
    assert failed.verdict is Verdict.ASK and "transient" in failed.error
    # Fail closed that once; the next attempt is evaluated afresh, not served the failure.
    assert policy.evaluate("run_command", script, SHELL).verdict is Verdict.ALWAYS


def test_the_working_directory_dialect_and_write_tool_are_part_of_what_is_remembered():
    policy = compile_policy(
        [
            {"pattern": "run_command:echo *", "action": "ALWAYS"},
            {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
            {"pattern": "write_file:*", "action": "NEVER"},
            {"pattern": "put_file:*", "action": "ALWAYS"},
        ]
    )
    script = {"command": "echo hi > out.txt"}
    in_workspace = MatchArgument("command", "shell", cwd="/workspace")
    assert policy.evaluate("run_command", script, in_workspace).verdict is Verdict.ALWAYS
    # Same policy, tool and script: another working directory writes elsewhere.
    in_etc = MatchArgument("command", "shell", cwd="/etc")
    evaluation = policy.evaluate("run_command", script, in_etc)
    assert evaluation.verdict is Verdict.NEVER
    assert evaluation.segments[0].subject == "write_file:/etc/out.txt"
    assert policy.evaluate("run_command", script, SHELL).verdict is Verdict.NEVER
    # A bundle whose tool of the same name writes through another tool name.
    put = MatchArgument("command", "shell", write_tool="put_file")
    assert policy.evaluate("run_command", script, put).verdict is Verdict.ALWAYS
    assert policy.evaluate("run_command", script, in_etc).verdict is Verdict.NEVER
    # Another tool name with the same script is matched as that tool.
    assert policy.evaluate("shell", script, in_workspace).verdict is Verdict.ASK


def test_a_policy_made_at_a_dead_policys_address_gets_its_own_answers():
    # The memories name a policy by identity; CPython reuses a freed object's address at
    # once. Policies built and dropped in turn, answering the same keys differently, must
    # each get their own answers.
    for round_ in range(300):
        allow = round_ % 2 == 0
        policy = compile_policy(
            [{"pattern": "run_command:deploy *", "action": "ALWAYS" if allow else "NEVER"}]
        )
        expected = Verdict.ALWAYS if allow else Verdict.NEVER
        assert policy.evaluate("run_command", {"command": "deploy x"}, SHELL).verdict is expected
        assert policy.evaluate_key("run_command:deploy y").verdict is expected
        assert (policy.first_match("run_command:deploy z") is None) is False
        del policy


@pytest.mark.django_db
def test_drafts_sent_to_replay_and_failing_saves_are_not_kept_alive_by_the_memories(
    org, operator, make_run
):
    # An operator key may replay drafts (1 MB, up to 10,000 rules) as often as it likes;
    # each draft is compiled for that request. The evaluation and first-match memories
    # must not keep any of them alive after their request (a 10,000-rule draft is tens of
    # MiB: 8,192 remembered first matches could pin 8,192 of them).
    run_id, runner = make_run()
    gate(runner, run_id, "ls -la")
    gate(runner, run_id, "git status && ls")
    canaries = [f"pinned-{uuid.uuid4().hex[:12]}" for _ in range(3)]
    for canary in canaries:
        draft = TEST_POLICY.replace(
            "rules:\n", f"rules:\n  - pattern: 'run_command:{canary} *'\n    action: NEVER\n"
        )
        replayed = operator.post("/v1/policies/default/replay", {"draft": draft})
        assert replayed.status_code == 200, replayed.content
        assert replayed.json()["examined"] == 2
        # A save whose tests fail is refused, after its draft was compiled and tested.
        failing = draft + "  - call: 'run_command:ls -la'\n    expect: NEVER\n"
        refused = operator.client.put("/v1/policies/default", {"yaml": failing}, format="json")
        assert refused.status_code == 400, refused.content
    for canary in canaries:
        assert live_policies_naming(canary) == []


@pytest.mark.django_db
def test_drafts_linted_on_save_leave_none_of_their_patterns_atoms_behind(org, operator):
    # Every save (and every request of the policy editor) lints the draft. A rule without a
    # tool prefix is checked against each known tool and the answer remembered, 65,536 of
    # them: keyed by the pattern's atoms (an object per character, ~26 KiB for a pattern of
    # 900), those held ~1.6 GiB once full. Nothing of a linted draft's atoms may stay.
    from governance.policy.globs import Atom

    def live_atoms() -> int:
        gc.collect()
        return sum(1 for obj in gc.get_objects() if type(obj) is Atom)

    header = "name: default\nautonomous_fallback: deny\nrules:\n"
    before = live_atoms()
    for _ in range(3):
        tag = uuid.uuid4().hex[:8]
        rules = "".join(
            f"  - {{pattern: 'r*{tag}{i}{'ab' * 450}', action: ALWAYS}}\n" for i in range(100)
        )
        saved = operator.client.put("/v1/policies/default", {"yaml": header + rules}, format="json")
        assert saved.status_code == 201, saved.content[:300]
        # The rules were checked against the tools (`run_command`, `read_file` begin with r).
        assert not any(w["code"] == "unknown-tool" for w in saved.json()["lint"])
    # 300 patterns of 900 characters: 270,000 atoms when they were remembered.
    assert live_atoms() - before < 1000


def test_the_memories_stay_bounded_under_many_distinct_commands():
    compiled_module.forget_evaluations()
    policy = compile_policy(
        [
            {"pattern": "run_command:git *", "action": "ALWAYS"},
            {"pattern": "run_command:rm *", "action": "NEVER"},
        ]
    )
    for i in range(6000):
        command = f"git log -n {i} && ls dir{i} | grep x{i}"
        evaluation = policy.evaluate("run_command", {"command": command}, SHELL)
        assert evaluation.verdict is Verdict.ASK
    assert len(compiled_module._shell_evaluations._items) <= compiled_module._REMEMBERED
    assert len(compiled_module._first_matches) <= compiled_module._MEMO_SIZE


def test_threads_sharing_the_memories_each_get_their_own_commands_evaluation():
    compiled_module.forget_evaluations()
    allowing = compile_policy([{"pattern": "run_command:ok-*", "action": "ALWAYS"}])
    denying = compile_policy(
        [
            {"pattern": "run_command:ok-*", "action": "NEVER"},
            {"pattern": "run_command:bad-*", "action": "ALWAYS"},
        ]
    )
    wrong: list[str] = []
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        start.wait()
        # 700 distinct commands per policy and worker: more than the LRU holds, so entries
        # are evicted and re-added while other threads read them.
        for i in range(700):
            name = f"ok-{(i * 7 + worker) % 700}" if i % 2 else f"bad-{i}"
            for policy, verdict in (
                (allowing, Verdict.ALWAYS if name.startswith("ok") else Verdict.ASK),
                (denying, Verdict.NEVER if name.startswith("ok") else Verdict.ALWAYS),
            ):
                evaluation = policy.evaluate("run_command", {"command": name}, SHELL)
                subjects = {segment.subject for segment in evaluation.segments}
                if evaluation.verdict is not verdict or subjects != {f"run_command:{name}"}:
                    wrong.append(f"{name}: {evaluation}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


# --- the redactor's memory of clean strings -------------------------------------------


def records_after(run_id: str, seq: int, call_ids: list[str]) -> str:
    """Every ledger event of the run after `seq`, and the stored decision of the calls
    (their arguments and call key excepted: SPEC §4 keeps the call exactly as made)."""
    events = Event.objects.filter(run_id=run_id, seq__gt=seq).order_by("seq")
    calls = ToolCall.objects.filter(run_id=run_id, tool_call_id__in=call_ids).values(
        "reason", "rule", "original_verdict", "tool_error", "broker_error"
    )
    return repr([event.data for event in events]) + repr(list(calls))


def last_seq(run_id: str) -> int:
    return Event.objects.filter(run_id=run_id).order_by("-seq").values_list("seq", flat=True)[0]


@pytest.mark.django_db
def test_a_credential_planted_after_its_text_was_recorded_clean_is_masked_from_then_on(
    broker_org, operator, echo_server, make_run
):
    from tests.governance.broker.support import connect

    run_id, runner = make_run()
    first = f"cnry{uuid.uuid4().hex[:16]}"
    command = f"deploy --to {first}"
    gate(runner, run_id, command, "c-1")
    # Nothing said it was secret yet: the text was recorded, and remembered as clean.
    assert first in repr(list(Event.objects.filter(run_id=run_id).values_list("data")))
    mark = last_seq(run_id)

    connection_id = connect(operator, echo_server, credential=first)  # the vault handles it
    answer = gate(runner, run_id, command, "c-2")
    assert answer["decision"] == "pending"
    assert first not in repr(answer)
    assert first not in records_after(run_id, mark, ["c-2"])
    assert "[redacted]" in records_after(run_id, mark, ["c-2"])

    # The credential rotated: the new value too, once the vault has handled it.
    second = f"cnry{uuid.uuid4().hex[:16]}"
    gate(runner, run_id, f"deploy --to {second}", "c-3")
    mark = last_seq(run_id)
    rotated = operator.post(
        f"/v1/connections/{connection_id}/reconnect",
        {"credential": {"header": "Authorization", "value": second}},
    )
    assert rotated.status_code == 200, rotated.content
    operator.post(f"/v1/connections/{connection_id}/tools/refresh")
    answer = gate(runner, run_id, f"deploy --to {second}", "c-4")
    assert second not in repr(answer)
    assert second not in records_after(run_id, mark, ["c-4"])


@pytest.mark.django_db
def test_an_inline_secret_repeated_in_another_segment_of_the_command_is_masked_there_too(
    make_run,
):
    # `curl -H 'Authorization: Bearer T' … && echo T`: the header is masked by the inline
    # patterns; the second segment, `run_command:echo T`, holds no secret word at all (and
    # is remembered as clean), yet it carries the same value.
    run_id, runner = make_run()
    token = f"tok{uuid.uuid4().hex[:20]}"
    password = f"pw{uuid.uuid4().hex[:20]}"
    command = (
        f"curl -H 'Authorization: Bearer {token}' https://api.example.com && echo {token}"
        f" && mysql --password {password} -e 'select 1' ; printf '%s' {password}"
    )
    answer = gate(runner, run_id, command, "c-1")
    stored = records_after(run_id, 0, ["c-1"])
    assert "[redacted]" in stored
    assert token not in stored and password not in stored
    assert token not in repr(answer) and password not in repr(answer)


# --- approval wake-ups: one re-read per process for every parked call -----------------


@pytest.fixture
def gunicorn_server(transactional_db, tmp_path):
    from tests.support.servers import WebServer

    with WebServer(tmp_path, workers=2, threads=16) as server:
        yield server


def park(server, run_id: str, token: str, call_id: str, answers: dict) -> threading.Thread:
    """Send a call that needs an approval, waiting up to 30 s for it to be decided."""
    import httpx

    def send() -> None:
        answers[call_id] = httpx.post(
            f"{server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s-1",
                "tool_call_id": call_id,
                "tool": "send_email",
                "arguments": {"to": f"{call_id}@example.com"},
                "wait_seconds": 30,
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )

    thread = threading.Thread(target=send)
    thread.start()
    return thread


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_decision_on_one_parked_call_releases_no_other_runs_or_orgs_call(
    gunicorn_server, org, other_org, approver
):
    import httpx

    from governance.models import Approval, Role
    from governance.services.orgs import api_key_create, user_create
    from tests.support.waiting import wait_until

    operator = Api(api_key_create(org=org, name="ci").plaintext)
    other_operator = Api(api_key_create(org=other_org, name="ci").plaintext)
    runs = {}
    for call_id, who in (("a", operator), ("b", operator), ("c", other_operator)):
        response = who.post("/v1/runs", run_body())
        assert response.status_code == 201, response.content
        runs[call_id] = (response.json()["id"], response.json()["session_token"])
    keys = {
        "a": api_key_create(org=org, user=approver, name="alice").plaintext,
        "c": api_key_create(
            org=other_org,
            user=user_create(username="gus", org=other_org, role=Role.APPROVER, password="pw-g-1"),
            name="gus",
        ).plaintext,
    }
    keys["b"] = keys["a"]
    answers: dict = {}
    threads = {call_id: park(gunicorn_server, *runs[call_id], call_id, answers) for call_id in runs}
    wait_until(lambda: Approval.objects.filter(status="pending").count() == 3, "three parked calls")
    approval = {call_id: Approval.objects.get(run_id=runs[call_id][0]).pk for call_id in runs}

    def decide(call_id: str, decision: str) -> None:
        response = httpx.post(
            f"{gunicorn_server.url}/v1/approvals/{approval[call_id]}/decision",
            json={"decision": decision},
            headers={"Authorization": f"Bearer {keys[call_id]}"},
            timeout=60,
        )
        assert response.status_code == 200, response.content

    decide("a", "deny")
    threads["a"].join()
    assert answers["a"].json()["decision"] == "deny"
    # The wake-up for a's approval re-read b's and c's too: both are still parked.
    assert threads["b"].is_alive() and threads["c"].is_alive()

    decide("b", "approve")
    threads["b"].join()
    assert answers["b"].json()["decision"] == "allow"
    assert threads["c"].is_alive()

    decide("c", "deny")
    threads["c"].join()
    assert answers["c"].json()["decision"] == "deny"
    decisions = {
        call.tool_call_id: call.decision for call in ToolCall.objects.filter(tool="send_email")
    }
    assert decisions == {"a": "deny", "b": "allow", "c": "deny"}
    for call_id, (run_id, _) in runs.items():
        decided = Event.objects.filter(run_id=run_id, type="approval.decided")
        assert decided.count() == 1
        data = decided.get().data
        assert data["outcome"] == ("approved" if call_id == "b" else "denied")
        assert data["decided_by"] == ("gus" if call_id == "c" else "alice")
