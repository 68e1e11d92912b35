"""Two allowed steps that compose into damage: the defences a careful user expects."""

import pytest

from governance.policy import MatchArgument, Verdict, compile_policy
from tests.shell_corpus.policies import review_policy

SHELL = MatchArgument("command", "shell")
PATH = MatchArgument("path", "path")


def workspace_policy(*extra: str):
    return compile_policy(
        [
            *({"pattern": p, "action": "ALWAYS"} for p in extra),
            {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
            {"pattern": "read_file:/workspace/*", "action": "ALWAYS"},
            {"pattern": "run_command:python -m pytest *", "action": "ALWAYS"},
            {"pattern": "run_command:*", "action": "ALWAYS"},
        ]
    )


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/.git/config",
        "/workspace/.git/hooks/pre-commit",
        "/workspace/sub/.git/config",
        "/workspace/.git",
        "/workspace/.bashrc",
        "/workspace/.profile",
        "/workspace/.zshenv",
        "/workspace/.ssh/authorized_keys",
        "/workspace/.npmrc",
        "/workspace/.cargo/config.toml",
        "/workspace/.claude/settings.json",
        # Found by an attacker: the agent CLIs' and editors' own settings were writable.
        "/workspace/.gemini/settings.json",
        "/workspace/.claude.json",
        "/workspace/.vscode/tasks.json",
        "/workspace/.cursor/mcp.json",
        "/workspace/.envrc",
        "/workspace/.GIT/CONFIG",
        # Other version control systems' repository settings: hooks, pagers, diff tools.
        "/workspace/.hg/hgrc",
        "/workspace/vendor/lib/.hg/hgrc",
        "/workspace/.sl/config",
        "/workspace/.jj/repo/config.toml",
        "/workspace/.home/.config/jj/config.toml",
        "/workspace/.home/.hgrc",
        "/workspace/.home/.subversion/config",
        # Start-up files command-line clients run in batch mode too (FINDINGS F101).
        "/workspace/.home/.sqliterc",
        "/workspace/.home/.gdbinit",
        "/workspace/.home/.config/gdb/gdbinit",
        "/workspace/.home/.tmux.conf",
        "/workspace/.home/.config/tmux/tmux.conf",
        "/workspace/.home/.psqlrc",
        "/workspace/.home/.psqlrc-15",
        "/workspace/.home/.my.cnf",
        "/workspace/.home/.terraformrc",
        "/workspace/.home/terraform.rc",
        "/workspace/.home/.mailrc",
        "/workspace/.home/.ipython/profile_default/startup/00-x.py",
        "/workspace/.home/.jupyter/jupyter_server_config.py",
        "/workspace/.home/.gradle/gradle.properties",
        "/workspace/.home/.rustup/settings.toml",
        "/workspace/.home/.local/bin/git",
        # The other programs folders ahead of the system's on PATH: a planted `bash` there
        # answered an agent CLI's hook in fluidbox's place.
        "/workspace/.home/.cargo/bin/bash",
        "/workspace/.home/.pyenv/shims/node",
        "/workspace/.home/.nvm/versions/node/v20.1.0/bin/git",
        "/workspace/.home/.volta/bin/node",
        "/workspace/.home/.bun/bin/bash",
        "/workspace/.home/.deno/bin/git",
        # A module a .pth file imports runs as Python starts (FINDINGS F102).
        "/workspace/.venv/lib/python3.11/site-packages/_distutils_hack/__init__.py",
        "/workspace/venv/lib/python3.12/site-packages/__editable___app_finder.py",
        "/workspace/.home/.local/lib/python3.11/site-packages/yaml.py",
        "/workspace/root/usr/lib/python3/dist-packages/apt/__init__.py",
        "/workspace/.venv/pyvenv.cfg",
        # npx and npm scripts run node_modules/.bin first (FINDINGS F105).
        "/workspace/node_modules/.bin/tsc",
        "/workspace/web/node_modules/typescript/lib/tsc.js",
        "/workspace/.home/.npm/_npx/0a1b/node_modules/prettier/index.js",
        # Hook managers' files: git's installed hook runs what they name (FINDINGS F104).
        "/workspace/.husky/pre-commit",
        "/workspace/web/.husky/pre-push",
        "/workspace/.githooks/pre-commit",
        "/workspace/.pre-commit-config.yaml",
        "/workspace/.pre-commit-config.yml",
        "/workspace/lefthook.yml",
        "/workspace/.lefthook-local.toml",
        "/workspace/.lintstagedrc.json",
        "/workspace/.lintstagedrc",
        "/workspace/lint-staged.config.mjs",
        "/workspace/.simple-git-hooks.json",
        "/workspace/.overcommit.yml",
        "/workspace/.devcontainer/devcontainer.json",
        "/workspace/.devcontainer.json",
        # From the manuals: mise's configuration, agents' and editors' project settings.
        "/workspace/mise.toml",
        "/workspace/.mise.toml",
        "/workspace/mise.local.toml",
        "/workspace/.mise/config.toml",
        "/workspace/mise/config.toml",
        "/workspace/.home/.config/mise/config.toml",
        "/workspace/.aider.conf.yml",
        "/workspace/.continue/config.ts",
        "/workspace/.zed/settings.json",
        "/workspace/.Rprofile",
        "/workspace/.home/.Renviron",
        "/workspace/.home/.julia/config/startup.jl",
        "/workspace/rust-toolchain.toml",
        "/workspace/crates/x/rust-toolchain",
        "/workspace/.python-version",
        "/workspace/.tool-versions",
    ],
)
def test_a_write_to_an_execution_configuration_file_needs_a_rule_that_names_it(path):
    policy = workspace_policy()

    through_tool = policy.evaluate("write_file", {"path": path}, PATH)
    through_shell = policy.evaluate("run_command", {"command": f"echo x > {path}"}, SHELL)
    through_tee = policy.evaluate("run_command", {"command": f"echo x | tee {path}"}, SHELL)

    for evaluation in (through_tool, through_shell, through_tee):
        assert evaluation.verdict is Verdict.ASK
        assert any("configures what programs run" in (s.reason or "") for s in evaluation.segments)


def test_a_rule_that_names_the_configuration_path_allows_it():
    policy = workspace_policy("write_file:/workspace/.git/hooks/*")

    allowed = policy.evaluate("write_file", {"path": "/workspace/.git/hooks/pre-commit"}, PATH)
    other = policy.evaluate("write_file", {"path": "/workspace/.git/config"}, PATH)

    assert allowed.verdict is Verdict.ALWAYS
    assert other.verdict is Verdict.ASK


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/.npmrc",
        "/workspace/.home/.pgpass",
        "/workspace/.home/.config/gh/hosts.yml",
        "/workspace/.home/.config/gcloud/access_tokens.db",
        "/workspace/.home/.azure/msal_token_cache.json",
        "/workspace/.home/.terraform.d/credentials.tfrc.json",
        "/workspace/.home/.vault-token",
        "/workspace/.home/.pulumi/credentials.json",
        "/workspace/.home/.gem/credentials",
        "/workspace/.home/.cargo/credentials.toml",
        "/workspace/.home/.config/composer/auth.json",
        "/workspace/.home/.composer/auth.json",
        "/workspace/.home/.nuget/NuGet/NuGet.Config",
        "/workspace/.home/.password-store/github.gpg",
        "/workspace/.home/.local/share/keyrings/login.keyring",
    ],
)
def test_credentials_are_read_only_through_a_rule_that_names_them(path):
    policy = workspace_policy()

    assert policy.evaluate("read_file", {"path": path}, PATH).verdict is Verdict.ASK
    assert policy.evaluate("write_file", {"path": path}, PATH).verdict is Verdict.ASK
    assert policy.evaluate("read_file", {"path": "/workspace/a.txt"}, PATH).verdict is (
        Verdict.ALWAYS
    )


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/.venv/lib/python3.11/site-packages/django/db/models/query.py",
        "/workspace/.venv/pyvenv.cfg",
        "/workspace/.home/.rustup/toolchains/stable/lib/rustlib/src/rust/library/core/src/lib.rs",
        "/workspace/.home/.local/bin/black",
        "/workspace/.home/.cargo/bin/rustfmt",
        "/workspace/.hg/hgrc",
        "/workspace/.home/.tmux.conf",
        "/workspace/.husky/pre-commit",
        "/workspace/.pre-commit-config.yaml",
        "/workspace/.devcontainer/devcontainer.json",
        "/workspace/node_modules/react/index.js",
    ],
)
def test_code_and_settings_that_hold_no_secret_are_read_freely_and_written_by_name(path):
    policy = workspace_policy("list_dir:/workspace/*")

    read = policy.evaluate("read_file", {"path": path}, PATH)
    listed = policy.evaluate("list_dir", {"path": path}, PATH)
    grepped = policy.evaluate("run_command", {"command": f"grep -n def < {path}"}, SHELL)
    written = policy.evaluate("write_file", {"path": path}, PATH)
    redirected = policy.evaluate("run_command", {"command": f"echo x >> {path}"}, SHELL)

    assert (read.verdict, listed.verdict, grepped.verdict) == (Verdict.ALWAYS,) * 3
    assert (written.verdict, redirected.verdict) == (Verdict.ASK,) * 2


@pytest.mark.parametrize("path", ["/workspace/.home/.hgrc", "/workspace/.home/.my.cnf"])
def test_settings_that_may_hold_a_password_are_not_read_freely(path):
    policy = workspace_policy()

    assert policy.evaluate("read_file", {"path": path}, PATH).verdict is Verdict.ASK
    assert policy.evaluate("run_command", {"command": f"wc -l < {path}"}, SHELL).verdict is (
        Verdict.ASK
    )


@pytest.mark.parametrize(
    "path",
    [
        "/workspace/src/app.py",
        "/workspace/conftest.py",
        "/workspace/.github/x.yml",
        "/workspace/.slack/notes.md",
        "/workspace/src/hg.py",
        "/workspace/.hgignore",
        "/workspace/.jjconfig.bak",
        "/workspace/db/my.cnf.example",
        "/workspace/infra/main.tf",
        "/workspace/docs/tmux.md",
        "/workspace/gradle.properties",
        "/workspace/.gradle/8.5/checksums/checksums.lock",
        "/workspace/notebooks/analysis.ipynb",
        "/workspace/docs/site-packages.md",
        "/workspace/src/packages/site.py",
        "/workspace/composer.json",
        "/workspace/src/gem/credentials_helper.rb",
        "/workspace/docs/azure.md",
        "/workspace/bin/pre-commit",
        "/workspace/docs/husky.md",
        "/workspace/src/lefthook.py",
        "/workspace/devcontainer-notes.txt",
        "/workspace/src/premise.toml",
        "/workspace/docs/continue.md",
        "/workspace/src/zed.py",
        "/workspace/docs/node_modules.md",
        "/workspace/src/julia.jl",
        "/workspace/R/profile.R",
        "/workspace/docs/rust-toolchain.md",
    ],
)
def test_project_files_stay_writable_by_the_workspace_rule(path):
    assert workspace_policy().evaluate("write_file", {"path": path}, PATH).verdict is (
        Verdict.ALWAYS
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo 'import os' > /workspace/conftest.py; python -m pytest -q tests",
        "echo 'all:' > /workspace/Makefile && make",
        "cp /workspace/x.py /workspace/tests/test_x.py && pytest",
        "printf x | tee /workspace/pytest.ini; python -m pytest tests",
    ],
)
def test_a_script_that_writes_files_then_runs_the_projects_code_is_ask(command):
    evaluation = workspace_policy().evaluate("run_command", {"command": command}, SHELL)

    assert evaluation.verdict is Verdict.ASK
    assert any("runs the project's code" in (s.reason or "") for s in evaluation.segments)


@pytest.mark.parametrize(
    "command",
    [
        "python -m pytest -q > /workspace/out.txt 2>&1",
        "python -m pytest -q; echo done > /workspace/status",
        "mkdir -p /workspace/build && make",
    ],
)
def test_output_of_the_run_itself_and_empty_directories_do_not_count(command):
    assert workspace_policy().evaluate("run_command", {"command": command}, SHELL).verdict is (
        Verdict.ALWAYS
    )


@pytest.mark.parametrize("command", ["find * -delete", "git log *", "find . -name x *"])
def test_globs_that_could_expand_to_option_words_are_never_allowed(command):
    # A file the agent created named `-delete` or `--output=/x` would become an option.
    assert review_policy().evaluate("run_command", {"command": command}, SHELL).verdict is (
        Verdict.ASK
    )


@pytest.mark.parametrize("command", ["cat -- *", "ls ./*", "ls -la *.md", "grep -n x src/*"])
def test_a_glob_for_a_program_no_option_of_which_acts_is_what_its_rule_admits(command):
    # `cat *` admits any words: a file named `-n` adds nothing it did not already admit.
    assert review_policy().evaluate("run_command", {"command": command}, SHELL).verdict is (
        Verdict.ALWAYS
    )
