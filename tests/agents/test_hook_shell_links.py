"""A shell command's paths through the links the project already holds: the hook reports the
links on the way of the command's words, and the gate judges where they lead as well.

Each test is an attacker's attempt from a project they control: a link planted earlier (a
checkout's, an archive's, one `cp -a` copied) makes an allowed write land elsewhere.
"""

from __future__ import annotations

import pytest

from governance.models import ToolCall
from runner.cli_paths import links_on_the_way
from tests.agents.test_hook_targets import gated_run, project  # noqa: F401


@pytest.fixture
def checkout(project):  # noqa: F811  (the fixture imported above)
    """The attacker's checkout (tests/agents/test_hook_targets.py), with git's configuration."""
    (project / ".git" / "config").write_text("[core]\n")
    return project


@pytest.fixture
def gated(fluidbox_server, demo_org, operator, checkout):
    """A run that lets the agent print, copy and write in the checkout, and nothing else."""
    ws = checkout
    rules = f"""  - {{pattern: "run_command:printf *", action: ALWAYS}}
  - {{pattern: "run_command:echo *", action: ALWAYS}}
  - {{pattern: "run_command:cp *", action: ALWAYS}}
  - {{pattern: "run_command:cd *", action: ALWAYS}}
  - {{pattern: "write_file:{ws}/*", action: ALWAYS}}
  - {{pattern: "read_file:{ws}/*", action: ALWAYS}}
  - {{pattern: "write_file:*", action: NEVER}}
  - {{pattern: "read_file:*", action: NEVER}}
"""
    ask = gated_run(fluidbox_server, demo_org, operator, "shelllinks", rules, project_dir=ws)

    def bash(command: str, tool_use_id: str, cwd=ws) -> tuple[str, str]:
        return ask("claude-code", "Bash", {"command": command}, tool_use_id, cwd)

    bash.run_id = ask.run_id
    return bash


def recorded(run_id: str, tool_call_id: str) -> ToolCall:
    return ToolCall.objects.get(run_id=run_id, tool_call_id=tool_call_id)


@pytest.mark.slow
def test_a_write_through_a_link_to_git_config_waits_for_a_human(gated, checkout):
    (checkout / "notes").symlink_to(".git/config")
    command = f"printf '[core]\\n\\tfsmonitor = ./x\\n' >> {checkout}/notes"

    decision, reason = gated(command, "toolu_cfg")

    assert decision == "deny" and "awaits a human's approval" in reason
    call = recorded(gated.run_id, "toolu_cfg")
    assert call.arguments["links_on_disk"] == {
        "cwd": str(checkout),
        "targets": {str(checkout / "notes"): str(checkout / ".git/config")},
    }
    assert (checkout / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.slow
def test_a_write_through_a_linked_folder_outside_the_checkout_is_refused(gated, checkout):
    (checkout / "docs").symlink_to(checkout.parent)

    decision, reason = gated(f"echo x > {checkout}/docs/secret", "toolu_out")

    assert decision == "deny" and "awaits" not in reason
    assert recorded(gated.run_id, "toolu_out").decision == "deny"


@pytest.mark.slow
def test_a_relative_path_after_the_cd_the_hook_adds_is_followed_too(gated, checkout):
    (checkout / "notes").symlink_to(".git/config")

    decision, _ = gated("cp README.md ../notes", "toolu_rel", cwd=checkout / "sub")

    assert decision == "deny"
    call = recorded(gated.run_id, "toolu_rel")
    assert call.arguments["command"] == f"cd {checkout / 'sub'} && cp README.md ../notes"
    assert call.arguments["links_on_disk"]["cwd"] == str(checkout / "sub")


@pytest.mark.slow
def test_a_climb_out_of_a_linked_folder_the_command_enters_is_followed_from_where_it_leads(
    gated, checkout
):
    # After `cd hooks`, `..` is .git (the kernel climbs from where the link led), not the
    # checkout: the write lands in git's configuration (F119).
    (checkout / "hooks").symlink_to(".git/hooks")
    command = f"cd {checkout}/hooks && printf '[core]\\n\\tfsmonitor = ./x\\n' >> ../config"

    decision, reason = gated(command, "toolu_climb")

    assert decision == "deny" and "awaits a human's approval" in reason
    assert recorded(gated.run_id, "toolu_climb").arguments["links_on_disk"]["targets"] == {
        str(checkout / "hooks"): str(checkout / ".git/hooks")
    }
    assert (checkout / ".git" / "config").read_text() == "[core]\n"
    # the same climb from a real folder stays where it is written
    assert gated(f"cd {checkout}/sub && printf x >> ../notes.txt", "toolu_real")[0] == "allow"


@pytest.mark.slow
def test_writes_without_links_or_through_links_inside_the_checkout_stay_allowed(gated, checkout):
    (checkout / "alias.md").symlink_to("README.md")

    assert gated(f"echo hi > {checkout}/README.md", "toolu_plain")[0] == "allow"
    assert "links_on_disk" not in recorded(gated.run_id, "toolu_plain").arguments
    assert gated(f"echo hi >> {checkout}/alias.md", "toolu_alias")[0] == "allow"
    assert recorded(gated.run_id, "toolu_alias").arguments["links_on_disk"]["targets"] == {
        str(checkout / "alias.md"): str(checkout / "README.md")
    }


def test_links_are_found_in_words_options_redirections_and_after_a_cd(tmp_path):
    root = tmp_path.resolve()
    (root / "real").mkdir()
    (root / "dir").symlink_to("real")
    (root / "file").symlink_to("/etc/hostname")
    (root / "chain").symlink_to("dir/../file")
    (root / "real" / "inner").symlink_to("../file")

    assert links_on_the_way("cat file", str(root)) == {str(root / "file"): "/etc/hostname"}
    assert links_on_the_way("sort -o file x", str(root)) == {str(root / "file"): "/etc/hostname"}
    assert links_on_the_way("sort -ofile x", str(root)) == {str(root / "file"): "/etc/hostname"}
    assert links_on_the_way("tool --out=file", str(root)) == {str(root / "file"): "/etc/hostname"}
    assert links_on_the_way("echo x>>file", str(root)) == {str(root / "file"): "/etc/hostname"}
    assert links_on_the_way("cd dir && echo x > inner", str(root)) == {
        str(root / "dir"): str(root / "real"),
        str(root / "real" / "inner"): str(root / "real" / "../file"),
        str(root / "file"): "/etc/hostname",
    }
    # a chain: each link with its target as written, joined to the link's folder
    assert links_on_the_way("cat chain", str(root)) == {
        str(root / "chain"): str(root / "dir/../file"),
        str(root / "dir"): str(root / "real"),
        str(root / "file"): "/etc/hostname",
    }
    assert links_on_the_way("echo 'open quote", str(root)) == {}
    assert links_on_the_way("ls missing/dir", str(root)) == {}


def test_a_loop_of_links_ends(tmp_path):
    root = tmp_path.resolve()
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")

    found = links_on_the_way("cat a", str(root))

    assert found == {str(root / "a"): str(root / "b"), str(root / "b"): str(root / "a")}
