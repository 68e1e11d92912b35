"""Review 56: non-shell rule matching of paths.

A path that configures execution or holds credentials (config_paths) is ALWAYS only when
the ALWAYS rule that matched *names* it. Naming was a plain substring test, so a rule for
`.github/*` (a common "let the agent edit CI" rule) named `.git` and allowed a nested
repository's config and hooks, `.sshkeys-public/*` named `.ssh`, `.environments/*` named
`.env` and `.claude-plugin/*` named `.claude`: each of these writes came out ALWAYS where
a rule for `/workspace/*` alone is ASK.
"""

import pytest

from governance.policy import MatchArgument, Verdict, compile_policy

PATH = MatchArgument("path", "path")


def _verdict(rule: str, path: str) -> Verdict:
    policy = compile_policy(
        [{"pattern": rule, "action": "ALWAYS"}, {"pattern": "write_file:*", "action": "NEVER"}]
    )
    return policy.evaluate("write_file", {"path": path}, PATH).verdict


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        # proves: `.github` is not a naming of `.git` (a nested repository's hooks and config)
        ("write_file:/workspace/.github/*", "/workspace/.github/.git/hooks/pre-commit"),
        ("write_file:/workspace/.github/*", "/workspace/.github/workflows/.git/config"),
        # proves: `.sshkeys-public` is not `.ssh`, `.environments` not `.env`
        (
            "write_file:/workspace/.sshkeys-public/*",
            "/workspace/.sshkeys-public/.ssh/authorized_keys",
        ),
        ("write_file:/workspace/.environments/*", "/workspace/.environments/.env"),
        (
            "write_file:/workspace/.claude-plugin/*",
            "/workspace/.claude-plugin/.claude/settings.json",
        ),
        # proves: `foo.git/*` does not name `.git` (the text begins inside a component)
        ("write_file:/workspace/foo.git/*", "/workspace/foo.git/.git/config"),
        # proves: `.env.*` names no `.env` (the component is `.env.<something>`)
        ("write_file:/workspace/.env.*", "/workspace/.env.d/.env"),
    ],
)
def test_a_rule_holding_a_configuration_name_as_text_does_not_name_it(rule, path):
    assert _verdict(rule, path) is Verdict.ASK


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        # what held before and must hold after: rules that do name the path as a path
        ("write_file:/workspace/.git/hooks/*", "/workspace/.git/hooks/pre-commit"),
        ("write_file:/workspace/.git/*", "/workspace/.git/config"),
        ("write_file:*/.git/config", "/workspace/sub/.git/config"),
        ("write_file:/workspace/.cargo/config.toml", "/workspace/.cargo/config.toml"),
        ("write_file:/workspace/.cargo/*", "/workspace/.cargo/config.toml"),
        ("write_file:/workspace/.zshenv.zwc", "/workspace/.zshenv.zwc"),
        ("write_file:/workspace/.devcontainer.json", "/workspace/.devcontainer.json"),
        ("write_file:/home/u/.pyenv/shims/*", "/home/u/.pyenv/shims/python"),
        ("write_file:/workspace/*.pth", "/workspace/x.pth"),
        ("write_file:/workspace/.env", "/workspace/.env"),
        ("write_file:/workspace/.github/.git/*", "/workspace/.github/.git/config"),
    ],
)
def test_a_rule_that_names_a_configuration_path_still_allows_it(rule, path):
    assert _verdict(rule, path) is Verdict.ALWAYS


def test_an_ordinary_file_under_the_rule_is_still_allowed():
    # proves the fix only concerns configuration paths
    assert _verdict("write_file:/workspace/.github/*", "/workspace/.github/workflows/ci.yml") is (
        Verdict.ALWAYS
    )
