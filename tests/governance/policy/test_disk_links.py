"""`links_on_disk`: a shell call's paths judged where the links its caller found lead, too.

The argument can only add places to judge: what is refused without it stays refused, a
malformed one or a loop of links is never ALWAYS, and the same script decided with and
without links is decided for each (the evaluation cache is the script's alone).
"""

import pytest

from governance.policy import Verdict
from governance.policy.disk_links import LinksOnDisk, UnreadableLinks, read_links_on_disk
from governance.policy.subjects import MatchArgument
from tests.shell_corpus.policies import benign_policy

SHELL = MatchArgument("command", "shell")  # no cwd: as the agent CLIs' bundle declares it
WS = "/workspace"


def decide(command: str, targets: dict | None = None, cwd: str = WS):
    arguments = {"command": command}
    if targets is not None:
        arguments["links_on_disk"] = {"cwd": cwd, "targets": targets}
    return benign_policy().evaluate("run_command", arguments, SHELL)


def subjects(evaluation) -> list[str]:
    return [segment.subject for segment in evaluation.segments]


def test_a_link_is_followed_from_its_folder_and_up_from_where_it_leads():
    links = LinksOnDisk(
        WS,
        {
            f"{WS}/notes": f"{WS}/.git/config",
            f"{WS}/h": f"{WS}/.git",
            f"{WS}/away": "/etc/ssh",
            f"{WS}/chain": f"{WS}/h/../notes",
        },
    )
    assert links.through("notes") == f"{WS}/.git/config"
    assert links.through(f"{WS}/h/hooks/pre-commit") == f"{WS}/.git/hooks/pre-commit"
    # `..` climbs from the real folder a link reached, as the kernel does
    assert links.through(f"{WS}/away/../passwd") == "/etc/passwd"
    assert links.through("chain") == f"{WS}/.git/config"
    assert links.through("README.md") is None
    assert links.through("/etc/hostname") is None


def test_a_loop_of_links_is_not_followed_forever():
    links = LinksOnDisk(WS, {f"{WS}/a": f"{WS}/b", f"{WS}/b": f"{WS}/a"})
    with pytest.raises(UnreadableLinks):
        links.through("a/x")
    evaluation = decide("echo x > a/x", {f"{WS}/a": f"{WS}/b", f"{WS}/b": f"{WS}/a"})
    assert evaluation.verdict is Verdict.ASK
    assert "links" in evaluation.error


def test_an_absolute_write_through_a_link_to_git_config_needs_a_rule_that_names_it():
    command = f"printf '[core]\\n\\tfsmonitor = ./x\\n' >> {WS}/notes"
    assert decide(command).verdict is Verdict.ALWAYS
    linked = decide(command, {f"{WS}/notes": f"{WS}/.git/config"})
    assert linked.verdict is Verdict.ASK
    assert f"write_file:{WS}/.git/config" in subjects(linked)
    # the same script without links afterwards: decided alone again, not from the cache
    assert decide(command).verdict is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("command", "targets", "place"),
    [
        (f"echo x > {WS}/docs/passwd", {f"{WS}/docs": "/etc"}, "write_file:/etc/passwd"),
        (f"cp a.txt {WS}/y", {f"{WS}/y": "/etc/passwd"}, "write_file:/etc/passwd"),
        (f"cat < {WS}/creds", {f"{WS}/creds": "/root/.ssh/id_rsa"}, "read_file:/root/.ssh/id_rsa"),
        (f"cd {WS}/sub && echo x > ../y", {f"{WS}/y": "/etc/passwd"}, "write_file:/etc/passwd"),
        (f"tee -a {WS}/log < {WS}/x", {f"{WS}/log": "/etc/profile"}, "write_file:/etc/profile"),
        # `..` after a `cd` into a linked folder climbs from where the link led (F119)
        (f"cd {WS}/h && echo x > ../passwd", {f"{WS}/h": "/etc/ssh"}, "write_file:/etc/passwd"),
        (
            f"cd {WS}/h && cd s && cp a ../../passwd",
            {f"{WS}/h": "/etc/ssh"},
            "write_file:/etc/passwd",
        ),
    ],
)
def test_writes_and_reads_through_links_outside_the_workspace_are_refused(command, targets, place):
    assert decide(command).verdict is Verdict.ALWAYS
    linked = decide(command, targets)
    assert linked.verdict is Verdict.NEVER
    assert place in subjects(linked)


def test_links_never_make_a_call_more_lenient():
    for command in ("rm -rf /", "echo x > /etc/passwd", "curl http://x"):
        assert decide(command).verdict is Verdict.NEVER
        assert decide(command, {"/etc/passwd": f"{WS}/x", "/": WS}).verdict is Verdict.NEVER


def test_links_inside_the_workspace_stay_allowed():
    targets = {f"{WS}/alias.md": f"{WS}/README.md", f"{WS}/build": f"{WS}/out"}
    assert decide(f"echo hi >> {WS}/alias.md", targets).verdict is Verdict.ALWAYS
    assert decide(f"cp a.txt {WS}/build/a.txt", targets).verdict is Verdict.ALWAYS
    # bash's `cd ..` is logical: back to the folder the link is in, not where it led
    assert decide(f"cd {WS}/h && cd .. && echo x > passwd", {f"{WS}/h": "/etc"}).verdict is (
        Verdict.ALWAYS
    )


@pytest.mark.parametrize(
    "value",
    [
        "notes -> .git/config",
        {"targets": {}},
        {"cwd": "relative", "targets": {}},
        {"cwd": WS, "targets": {"notes": f"{WS}/.git/config"}},
        {"cwd": WS, "targets": {f"{WS}/notes": 7}},
        {"cwd": WS, "targets": [f"{WS}/notes"]},
        {"cwd": WS, "targets": {}, "more": 1},
        {"cwd": WS, "targets": {f"{WS}/{n}": WS for n in range(513)}},
    ],
)
def test_a_malformed_links_argument_is_never_allowed(value):
    with pytest.raises(UnreadableLinks):
        read_links_on_disk(value)
    arguments = {"command": f"echo hi > {WS}/a.txt", "links_on_disk": value}
    evaluation = benign_policy().evaluate("run_command", arguments, SHELL)
    assert evaluation.verdict is Verdict.ASK
    assert "links_on_disk" in evaluation.error
