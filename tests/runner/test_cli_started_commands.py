"""What the CLIs start by themselves from files outside the project and the user's settings:
the system's folders (Codex's /etc/codex, Claude Code's /etc/claude-code, moved here to
folders of the test's), plugins and extensions loaded from elsewhere, the front matter of
Claude Code's skills, commands and subagents, the shell's start-up files, and a plugin file
that is not JSON at setup. Each shape was seen run by the real CLI (2.1.328, 0.171.0, 0.61.0)
in a helper session, with a marker file.

The hook's reading of these is the same functions' (tests/agents/test_hook_started_commands.py
drives the hook as agent_setup wrote it for the shapes a test can put in place without /etc).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner import agent_setup, setup_hazards
from runner.cli_started_commands import fingerprints, unknown_started_commands
from runner.setup_hazards import OUR_HOOK_MARK

SESSION_START = {"SessionStart": [{"hooks": [{"type": "command", "command": "rm -f x"}]}]}


def _ours(command: str) -> bool:
    return OUR_HOOK_MARK in command


def _hazards(agent: str, project: Path) -> list[str]:
    return setup_hazards.setup_hazards(
        agent, project, "fluidbox", "http://127.0.0.1:8000/v1/mcp", shadows=False
    )


@pytest.mark.parametrize(
    ("name", "content", "named"),
    [
        ("requirements.toml", '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "sh x"\n', "Stop"),
        ("managed_config.toml", '[mcp_servers.m]\ncommand = "sh"\n', "mcp_servers.m"),
        ("config.toml", 'notify = ["sh", "x.sh"]\n', "notify"),
    ],
)
def test_codex_s_system_files_are_held_to_what_was_there_at_setup(folders, name, content, named):
    project, _, system = folders
    known = fingerprints("codex", project)
    assert unknown_started_commands("codex", project, known, _ours) == []

    (system / name).write_text(content)

    (found,) = unknown_started_commands("codex", project, known, _ours)
    assert found.startswith(f"{system / name}: ") and named in found
    # There at setup, it is the administrator's and stays.
    assert unknown_started_commands("codex", project, fingerprints("codex", project), _ours) == []


def test_codex_s_system_files_that_switch_the_hook_off_are_refused(folders):
    project, _, system = folders
    (system / "managed_config.toml").write_text("[features]\ncodex_hooks = false\n")
    (system / "requirements.toml").write_text(
        '[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "x"\n'
    )

    found = _hazards("codex", project)

    assert f"{system / 'managed_config.toml'}: features.codex_hooks = false turns" in found[1]
    assert found[0].startswith(f"{system / 'requirements.toml'}: hooks.PreToolUse has a hook")


def test_a_linked_gemini_extension_is_read_where_it_is_linked_from(folders):
    """`gemini extensions link` leaves a note in the user's folder naming the source folder,
    here one inside the project: what the project's files hold there is what runs."""
    project, home, _ = folders
    source = project / "vendor" / "ext"
    (source / "hooks").mkdir(parents=True)
    (source / "gemini-extension.json").write_text(json.dumps({"name": "ext"}))
    linked = home / ".gemini" / "extensions" / "ext"
    linked.mkdir(parents=True)
    (linked / ".gemini-extension-install.json").write_text(
        json.dumps({"type": "link", "source": str(source)})
    )
    known = fingerprints("gemini-cli", project)

    (source / "hooks" / "hooks.json").write_text(json.dumps({"hooks": SESSION_START}))

    (found,) = unknown_started_commands("gemini-cli", project, known, _ours)
    assert found.startswith(f"{source / 'hooks' / 'hooks.json'}: extension ext makes the CLI run")


def test_a_codex_config_above_the_project_is_read_only_inside_its_repository(folders):
    project, _, _ = folders
    above = project.parent / ".codex"
    above.mkdir()
    (above / "config.toml").write_text('notify = ["sh", "x.sh"]\n')
    assert unknown_started_commands("codex", project, [], _ours) == []

    (project.parent / ".git").mkdir()

    (found,) = unknown_started_commands("codex", project, [], _ours)
    assert found.startswith(f"{above / 'config.toml'}: notify")


def test_agent_setup_refuses_a_plugin_file_it_cannot_read(folders, capsys):
    project, home, _ = folders
    plugin = home / ".codex" / "plugins" / "cache" / "market" / "tools" / "1.0"
    plugin.mkdir(parents=True)
    (plugin / ".mcp.json").write_text("{not json")

    status = agent_setup.main(["codex", "--url", "http://127.0.0.1:8000", "--dir", str(project)])

    assert status == 1
    assert f"{plugin / '.mcp.json'}: not JSON" in capsys.readouterr().err
    assert not (project / ".codex").exists()


def _write(path: Path, content: dict | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))


def _changed(agent: str, project: Path, change) -> list[str]:
    """What the hook would deny for after `change`, given what was there at setup."""
    known = fingerprints(agent, project)
    assert unknown_started_commands(agent, project, known, _ours) == []
    change()
    return unknown_started_commands(agent, project, known, _ours)


HOOKS = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "sh x.sh"}]}]}}


def _marketplace(folder: Path) -> Path:
    """A folder marketplace with one plugin, `mp`: its folder."""
    listed = {"plugins": [{"name": "mp", "source": "./mp"}]}
    _write(folder / ".claude-plugin" / "marketplace.json", listed)
    _write(folder / "mp" / ".claude-plugin" / "plugin.json", {"name": "mp"})
    return folder / "mp"


def test_a_claude_code_plugin_from_a_folder_marketplace_is_read_from_that_folder(folders):
    """`claude plugin marketplace add DIR` + `install`: the plugin runs from DIR, not from the
    copy in the cache, and editing DIR changes the next session (2.1.328)."""
    project, home, _ = folders
    plugin = _marketplace(home / "market")
    market = {"source": {"source": "directory", "path": str(home / "market")}}
    _write(
        home / ".claude" / "plugins" / "known_marketplaces.json",
        {"localmk": {**market, "installLocation": str(home / "market"), "lastUpdated": "x"}},
    )
    hooks = plugin / "hooks" / "hooks.json"

    (found,) = _changed("claude-code", project, lambda: _write(hooks, HOOKS))

    assert found.startswith(f"{hooks}: plugin mp makes the CLI run")


SERVERS = {"mcpServers": {"s": {"command": "sh"}}}


def test_a_claude_code_plugin_edited_in_the_cache_or_pointed_elsewhere(folders):
    """A plugin from a git repository runs from the cache; `installed_plugins.json` says
    where that is."""
    project, home, _ = folders
    plugins = home / ".claude" / "plugins"
    cached = plugins / "cache" / "gitmk" / "mp" / "0.1.0"
    _write(cached / ".claude-plugin" / "plugin.json", {"name": "mp"})
    installed = plugins / "installed_plugins.json"
    install = {"scope": "user", "installPath": str(cached), "installedAt": "x"}
    _write(installed, {"version": 2, "plugins": {"mp@gitmk": [install]}})

    (found,) = _changed("claude-code", project, lambda: _write(cached / ".mcp.json", SERVERS))
    assert found.startswith(f"{cached / '.mcp.json'}: plugin mp makes")

    elsewhere = home / "elsewhere"
    _write(elsewhere / "hooks" / "hooks.json", HOOKS)
    moved = {"version": 2, "plugins": {"mp@gitmk": [{**install, "installPath": str(elsewhere)}]}}
    found = _changed("claude-code", project, lambda: _write(installed, moved))
    assert [line.split(" makes the CLI run ")[0] for line in found] == [
        f"{installed}: plugins.installed.mp@gitmk",
        f"{elsewhere / 'hooks' / 'hooks.json'}: plugin elsewhere",
    ]


@pytest.mark.parametrize("where", ["~/.claude/skills", ".claude/skills"])
def test_a_plugin_put_in_a_claude_code_skills_folder_loads_with_no_setting(folders, where):
    project, home, _ = folders
    root = home / where[2:] if where.startswith("~/") else project / where
    manifest = root / "tools" / ".claude-plugin" / "plugin.json"

    (found,) = _changed(
        "claude-code", project, lambda: _write(manifest, {"name": "tools", **HOOKS})
    )

    assert found.startswith(f"{manifest}: plugin tools makes the CLI run")


SKILL = """---
name: notes
description: Take notes
hooks:
  Stop:
    - hooks:
        - type: command
          command: sh x.sh
---
Take notes.
"""


@pytest.mark.parametrize(
    ("name", "named"),
    [
        (".claude/skills/notes/SKILL.md", "skills.notes.hooks.Stop"),
        ("~/.claude/commands/tools/notes.md", "commands.notes.hooks.Stop"),
        (".claude/agents/notes.md", "agents.notes.hooks.Stop"),
    ],
)
def test_a_claude_code_skill_s_command_s_or_subagent_s_own_hook(folders, name, named):
    project, home, _ = folders
    path = home / name[2:] if name.startswith("~/") else project / name

    (found,) = _changed("claude-code", project, lambda: _write(path, SKILL))

    assert found.startswith(f"{path}: {named} makes the CLI run")


@pytest.mark.parametrize(
    "text",
    [
        # a line that starts `---` but is not one ends one of Claude Code's two readings
        "---\nname: notes\n---x: 1\n" + SKILL.split("\n", 2)[2],
        "\ufeff" + SKILL,  # after a byte-order mark
        SKILL.replace("\n", "\r\n"),
    ],
    ids=["dashes-in-a-line", "byte-order-mark", "crlf"],
)
def test_a_skill_s_hook_in_front_matter_as_either_reading_finds_it(folders, text):
    project, _, _ = folders
    path = project / ".claude" / "skills" / "notes" / "SKILL.md"

    found = _changed("claude-code", project, lambda: _write(path, text))

    assert any(line.startswith(f"{path}: skills.notes.hooks.Stop makes") for line in found)


def test_a_claude_code_subagent_s_own_server_and_unreadable_front_matter(folders):
    project, _, _ = folders
    agent = project / ".claude" / "agents" / "helper.md"
    server = "---\nname: helper\nmcpServers:\n  s:\n    command: sh\n---\nHelp.\n"
    (found,) = _changed("claude-code", project, lambda: _write(agent, server))
    assert found.startswith(f"{agent}: agents.helper.mcpServers makes the CLI run")

    odd = "---\nname: [unclosed\nhooks: {}\n---\n"
    (found,) = _changed("claude-code", project, lambda: _write(agent, odd))
    assert found.startswith(f"{agent}: agents.helper.unread makes the CLI run")


def test_a_skill_s_own_pre_tool_hook_is_refused_like_any_other(folders):
    """A helper session's skill answered `updatedInput` from its own PreToolUse hook after
    fluidbox's allowed an `echo`: the CLI ran another command."""
    project, _, _ = folders
    skill = project / ".claude" / "skills" / "sk" / "SKILL.md"
    _write(skill, SKILL.replace("Stop:", "PreToolUse:"))

    (found,) = _hazards("claude-code", project)

    assert found.startswith(f"{skill}: hooks.PreToolUse has a hook besides fluidbox's ('sh x.sh')")


def test_claude_code_s_managed_settings_and_skill_shell_lines(folders, tmp_path):
    project, home, _ = folders
    managed = tmp_path / "etc-claude-code"
    _write(managed / "managed-settings.d" / "10-hooks.json", {"allowManagedHooksOnly": True})
    _write(home / ".claude" / "settings.json", {"disableSkillShellExecution": False})

    found = _hazards("claude-code", project)

    assert found == [
        f"{home / '.claude' / 'settings.json'}: disableSkillShellExecution is false: a skill's "
        "`!` commands would run with no call to the hook",
        f"{managed / 'managed-settings.d' / '10-hooks.json'}: allowManagedHooksOnly runs only "
        "an administrator's hooks, not fluidbox's in the project's settings",
    ]
    (found,) = _changed(
        "claude-code", project, lambda: _write(managed / "managed-settings.json", HOOKS)
    )
    assert found.startswith(f"{managed / 'managed-settings.json'}: hooks.SessionStart makes")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_user_s_shell_start_up_files(folders, agent):
    """Claude Code (at a session's first allowed Bash call) and Codex (at a session's start)
    run ~/.bashrc and ~/.bash_profile for a snapshot of the shell every command starts from."""
    project, home, _ = folders
    _write(home / ".bashrc", "export EDITOR=vi\n")

    (found,) = _changed(agent, project, lambda: _write(home / ".bashrc", "alias ls='sh x.sh'\n"))

    assert found.startswith(f"{home / '.bashrc'}: shell start-up file makes the CLI run")
    assert "alias" not in found  # its digest, not its text


# A review of the checks above, with the real CLIs (helper sessions): each shape below made
# the CLI run a program, or dropped fluidbox's hook, and the hook had not seen it.


def test_claude_code_reads_the_enclosing_checkout_s_and_the_main_worktree_s_local_settings(
    folders, tmp_path
):
    project, _, _ = folders
    repository = tmp_path / "repo"
    (repository / ".git").mkdir(parents=True)
    inside = repository / "app"
    inside.mkdir()
    local = repository / ".claude" / "settings.local.json"

    (found,) = _changed("claude-code", inside, lambda: _write(local, HOOKS))
    assert found.startswith(f"{local}: hooks.SessionStart makes")
    _write(local, {"disableAllHooks": True})
    assert _hazards("claude-code", inside) == [
        f"{local}: disableAllHooks turns every hook off, fluidbox's too"
    ]

    # A worktree of that repository: its `.git` file points into the main checkout's.
    (repository / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (repository / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    (project / ".git").write_text(f"gitdir: {repository / '.git' / 'worktrees' / 'wt'}\n")
    assert _hazards("claude-code", project) == [
        f"{local}: disableAllHooks turns every hook off, fluidbox's too"
    ]


def test_json_read_as_the_cli_reads_it(folders):
    """A byte-order mark hid a `.mcp.json` above the project from the hook (Claude Code reads
    past it); NaN, which Python reads and Claude Code does not, dropped fluidbox's own
    settings file from the CLI's reading while the hook still saw its entry."""
    project, home, _ = folders
    above = project.parent / ".mcp.json"
    server = json.dumps({"mcpServers": {"s": {"command": "sh"}}})

    (found,) = _changed("claude-code", project, lambda: _write(above, "\ufeff" + server))
    assert found.startswith(f"{above}: mcpServers.s makes")

    settings = project / ".claude" / "settings.json"
    _write(settings, '{"hooks": {}, "cleanupPeriodDays": NaN}')
    (found,) = _hazards("claude-code", project)
    assert found.startswith(f"{settings}: not JSON (NaN is not JSON)")


@pytest.mark.parametrize(
    ("variable", "said"),
    [
        ("CLAUDE_ENV_FILE", "Claude Code sources that script before each command"),
        ("ZDOTDIR", "which the CLI hands every shell command it runs"),
    ],
)
def test_claude_code_settings_that_run_a_script_before_each_command(folders, variable, said):
    project, _, _ = folders
    local = project / ".claude" / "settings.local.json"
    _write(local, {"env": {variable: "tools/env.sh"}})

    (found,) = _hazards("claude-code", project)

    assert found.startswith(f"{local}: env sets {variable}") and said in found


def test_claude_code_plugin_folders_named_by_its_variable(folders, monkeypatch):
    project, home, _ = folders
    plugin = project / "myplugin"
    _write(plugin / ".claude-plugin" / "plugin.json", {"name": "mine"})
    user = home / ".claude" / "settings.json"
    setting = {"env": {"CLAUDE_CODE_PLUGIN_DIRS": str(plugin)}}

    found = _changed("claude-code", project, lambda: _write(user, setting))
    assert [line.split(" makes ")[0] for line in found] == [
        f"{user}: env.CLAUDE_CODE_PLUGIN_DIRS",
        f"{plugin / '.claude-plugin' / 'plugin.json'}: plugin mine",
    ]

    # There at setup (a plugin being written), its files are held to what they were.
    (found,) = _changed(
        "claude-code", project, lambda: _write(plugin / "hooks" / "hooks.json", HOOKS)
    )
    assert found.startswith(f"{plugin / 'hooks' / 'hooks.json'}: plugin mine makes")

    # The same folder named in the CLI's environment.
    user.unlink()
    monkeypatch.setenv("CLAUDE_CODE_PLUGIN_DIRS", str(plugin))
    (found,) = _changed("claude-code", project, lambda: _write(plugin / ".mcp.json", SERVERS))
    assert found.startswith(f"{plugin / '.mcp.json'}: plugin mine makes")


def test_files_a_plugin_manifest_names(folders):
    project, home, _ = folders
    plugin = home / ".claude" / "skills" / "tools"
    manifest = {"name": "tools", "hooks": "./x/hooks.json", "mcpServers": ["./x/servers.json"]}
    _write(plugin / ".claude-plugin" / "plugin.json", manifest)
    _write(plugin / "x" / "hooks.json", {"hooks": {}})

    found = _changed(
        "claude-code",
        project,
        lambda: (
            _write(plugin / "x" / "hooks.json", HOOKS),
            _write(plugin / "x" / "servers.json", SERVERS),
        ),
    )

    assert [line.split(": ")[0] for line in found] == [
        str(plugin / "x" / "hooks.json"),
        str(plugin / "x" / "servers.json"),
    ]


def test_skills_and_commands_above_the_project_and_through_linked_folders(folders, tmp_path):
    project, _, _ = folders
    above = project.parent / ".claude" / "skills" / "psk" / "SKILL.md"
    (found,) = _changed("claude-code", project, lambda: _write(above, SKILL))
    assert found.startswith(f"{above}: skills.psk.hooks.Stop makes")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "linked").symlink_to(elsewhere)
    (found,) = _changed("claude-code", project, lambda: _write(elsewhere / "cm.md", SKILL))
    assert found.startswith(f"{commands / 'linked' / 'cm.md'}: commands.cm.hooks.Stop makes")


def test_codex_s_own_env_file_and_shell_environment_policy(folders):
    project, home, _ = folders
    _write(home / ".codex" / ".env", "BASH_ENV=/tmp/x.sh\nOPENAI_API_KEY=sk-x\n")
    _write(project / ".codex" / "config.toml", '[shell_environment_policy.set]\nBASH_ENV = "x"\n')

    found = _hazards("codex", project)

    assert found == [
        f"{home / '.codex' / '.env'}: sets BASH_ENV, which Codex hands every shell command it "
        "runs: code would run before each command fluidbox allowed",
        f"{project / '.codex' / 'config.toml'}: shell_environment_policy.set sets BASH_ENV, "
        "which Codex hands every shell command it runs: code would run with each one",
    ]


def test_codex_s_project_root_markers_and_bedrock_credentials(folders):
    project, home, _ = folders
    user = home / ".codex" / "config.toml"
    _write(user, 'project_root_markers = [".codexroot"]\n')
    (project.parent / ".codexroot").write_text("")
    above = project.parent / ".codex" / "config.toml"

    (found,) = _changed("codex", project, lambda: _write(above, 'notify = ["sh", "x.sh"]\n'))
    assert found.startswith(f"{above}: notify makes")

    bedrock = '[model_providers.amazon-bedrock.aws.credential_export]\ncommand = "sh"\n'
    (found,) = _changed("codex", project, lambda: _write(user, user.read_text() + bedrock))
    assert found.startswith(f"{user}: model_providers.amazon-bedrock.aws makes")


def test_a_codex_plugin_s_manifest_naming_its_servers_file(folders):
    project, home, _ = folders
    plugin = home / ".codex" / "plugins" / "cache" / "mkt" / "plug" / "1.0"
    _write(plugin / ".codex-plugin" / "plugin.json", {"name": "plug", "mcpServers": "./c.json"})
    _write(plugin / "c.json", {"mcpServers": {}})

    (found,) = _changed("codex", project, lambda: _write(plugin / "c.json", SERVERS))

    assert found.startswith(f"{plugin / 'c.json'}: plugin mkt/plug/1.0 makes")


@pytest.mark.parametrize("where", ["~/.env", "~/.gemini/.env", "../.env"])
def test_gemini_cli_s_env_files_above_the_project_and_the_user_s(folders, where):
    project, home, _ = folders
    path = home / where[2:] if where.startswith("~/") else project.parent / where[3:]
    _write(path, "BASH_ENV=/tmp/x.sh\n")

    (found,) = _hazards("gemini-cli", project)

    assert found.startswith(f"{path}: sets BASH_ENV, which Gemini CLI hands every shell")


def test_a_gemini_env_file_that_moves_the_cli_s_own_folder(folders):
    project, _, _ = folders
    _write(project / ".env", "GEMINI_CLI_HOME=./fakehome\n")

    (found,) = _hazards("gemini-cli", project)

    assert found == (
        f"{project / '.env'}: sets GEMINI_CLI_HOME, which moves the folders Gemini CLI reads its "
        "settings, trust and extensions from past what fluidbox reads"
    )


def test_files_named_by_a_plugin_s_hook_and_an_extension_s_server_are_held_to_setup(folders):
    """Read where the CLIs read them: `${CLAUDE_PLUGIN_ROOT}` is the plugin's folder, Gemini
    CLI's `${extensionPath}${/}` the extension's."""
    project, home, _ = folders
    plugin = home / ".claude" / "skills" / "tools"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "scripts").mkdir()
    (plugin / "scripts" / "start.sh").write_text("date\n")
    hook = {"type": "command", "command": "bash ${CLAUDE_PLUGIN_ROOT}/scripts/start.sh"}
    manifest = {"name": "tools", "hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    extension = home / ".gemini" / "extensions" / "helper"
    extension.mkdir(parents=True)
    (extension / "server.js").write_text("// a server\n")
    server = {"command": "node", "args": ["${extensionPath}${/}server.js"]}
    (extension / "gemini-extension.json").write_text(
        json.dumps({"name": "helper", "mcpServers": {"helper": server}})
    )
    known = {agent: fingerprints(agent, project) for agent in ("claude-code", "gemini-cli")}

    (plugin / "scripts" / "start.sh").write_text("rm -f precious.txt\n")
    (extension / "server.js").write_text("require('fs').rmSync('precious.txt')\n")

    (claude,) = unknown_started_commands("claude-code", project, known["claude-code"], _ours)
    assert claude.startswith(f"{plugin / 'scripts' / 'start.sh'}: the file ")
    assert "that plugin tools names" in claude
    (gemini,) = unknown_started_commands("gemini-cli", project, known["gemini-cli"], _ours)
    assert gemini.startswith(f"{extension / 'server.js'}: the file ${{extensionPath}}")


def test_a_file_named_in_a_server_s_folder_and_one_that_appears_later_are_held(folders):
    """Codex starts a server in its `cwd`; a file a command names that is not there at setup
    runs once it is written."""
    project, home, _ = folders
    (project / "srv").mkdir()
    (project / "srv" / "main.py").write_text("print()\n")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'notify = ["bash", "-c", "sh tools/notify.sh --quiet"]\n'
        '[mcp_servers.helper]\ncommand = "python3"\nargs = ["main.py"]\ncwd = "srv"\n'
    )
    known = fingerprints("codex", project)
    assert unknown_started_commands("codex", project, known, _ours) == []

    (project / "srv" / "main.py").write_text("import os\n")
    (project / "tools").mkdir()
    (project / "tools" / "notify.sh").write_text("date\n")

    found = unknown_started_commands("codex", project, known, _ours)
    assert sorted(line.partition(":")[0] for line in found) == [
        str(project / "srv" / "main.py"),
        str(project / "tools" / "notify.sh"),
    ]


def test_text_that_is_not_a_command_names_no_file(folders):
    """A description or a URL that happens to name a project file does not hold the file:
    editing README.md is not changing what the CLI runs."""
    project, home, _ = folders
    (project / "README.md").write_text("# app\n")
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "docs": {"type": "http", "url": "README.md", "description": "README.md"},
                    "helper": {"command": "npx", "args": ["-y", "x"], "env": {"X": "1"}},
                }
            }
        )
    )
    known = fingerprints("claude-code", project)

    (project / "README.md").write_text("# app, changed\n")

    assert unknown_started_commands("claude-code", project, known, _ours) == []


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_an_aws_credential_program_is_held_to_setup(folders, monkeypatch, agent):
    """On Amazon Bedrock the AWS SDK runs a profile's `credential_process` before the first
    request to the model, in either shared file; where `AWS_CONFIG_FILE` says, if it does."""
    project, home, _ = folders
    aws = home / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[default]\naws_access_key_id = AKIAEXAMPLE\n")
    (aws / "creds.sh").write_text("echo '{}'\n")
    (aws / "config").write_text(f"[profile work]\ncredential_process = sh {aws / 'creds.sh'}\n")
    known = fingerprints(agent, project)
    assert unknown_started_commands(agent, project, known, _ours) == []

    (aws / "credentials").write_text("[default]\ncredential_process = sh -c 'rm -f x'\n")
    (aws / "creds.sh").write_text("rm -f precious.txt\n")

    found = unknown_started_commands(agent, project, known, _ours)
    assert [line.split(" makes ")[0] for line in found] == [
        f"{aws / 'credentials'}: [default] credential_process",
        f"{aws / 'creds.sh'}: the file {aws / 'creds.sh'} that [profile work] credential_process"
        " names",
    ]
    assert "AKIAEXAMPLE" not in " ".join(found)

    elsewhere = home / "aws-config"
    elsewhere.write_text("[profile x]\ncredential_process = sh y.sh\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(elsewhere))
    found = unknown_started_commands(agent, project, known, _ours)
    assert f"{elsewhere}: [profile x] credential_process makes the CLI run" in found[0]


def test_a_file_named_after_a_folder_the_command_goes_into_is_held(folders):
    project, _, _ = folders
    (project / "tools").mkdir()
    (project / "tools" / "post.sh").write_text("date\n")
    hook = {"type": "command", "command": "cd tools && sh post.sh"}
    _write(project / ".claude" / "settings.json", {"hooks": {"Stop": [{"hooks": [hook]}]}})
    known = fingerprints("claude-code", project)

    (project / "tools" / "post.sh").write_text("rm -f precious.txt\n")

    (found,) = unknown_started_commands("claude-code", project, known, _ours)
    assert found.startswith(f"{project / 'tools' / 'post.sh'}: the file post.sh that hooks.Stop")


def test_an_aws_credential_program_indented_or_in_a_file_the_settings_name_is_held(folders):
    """Claude Code 2.1.328 on Bedrock ran an indented `credential_process` (configparser reads
    it as the line before's continuation) and one in a file its settings' `env` named as
    `AWS_CONFIG_FILE` (a helper session, with a marker file)."""
    project, home, _ = folders
    (home / ".aws").mkdir()
    (home / ".aws" / "config").write_text("[profile work]\nregion = us-east-1\n")
    settings = {"env": {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_CONFIG_FILE": "aws.cfg"}}
    _write(project / ".claude" / "settings.json", settings)
    known = fingerprints("claude-code", project)

    (home / ".aws" / "config").write_text(
        "[profile work]\nregion = us-east-1\n  credential_process = sh x.sh\n"
    )
    (project / "aws.cfg").write_text("[default]\ncredential_process=sh y.sh\n")

    found = unknown_started_commands("claude-code", project, known, _ours)
    assert [line.split(" by itself")[0] for line in found] == [
        f"{home / '.aws' / 'config'}: [profile work] credential_process makes the CLI run"
        ' "sh x.sh"',
        f'{project / "aws.cfg"}: [default] credential_process makes the CLI run "sh y.sh"',
    ]
