"""`python -m runner.agent_setup`: what it writes into a project for each CLI."""

import json

import pytest

from runner.agent_setup import main, setup_gemini_cli


def test_agent_setup_lets_the_run_token_through_gemini_cli_redaction(tmp_path):
    # Gemini CLI strips `*TOKEN*` variables from a hook's environment when it redacts (on
    # GitHub Actions, or when asked): the settings name the run token as one to keep, once,
    # beside what the project already lets through.
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"security": {"environmentVariableRedaction": {"allowed": ["MY_VAR"]}}})
    )
    for _ in range(2):
        setup_gemini_cli(tmp_path, "http://127.0.0.1:8000", "run-1", "fluidbox")
    written = json.loads(settings.read_text())
    assert written["security"]["environmentVariableRedaction"]["allowed"] == [
        "MY_VAR",
        "FLUIDBOX_RUN_TOKEN",
    ]
    assert len(written["hooks"]["BeforeTool"]) == 1


@pytest.mark.parametrize(
    ("cli", "warning"),
    [
        ("codex", "/hooks -> Trust all and continue"),
        ("gemini-cli", "Never start it with --skip-trust"),
    ],
)
def test_agent_setup_says_what_the_cli_needs_before_it_runs_the_hook(
    cli, warning, tmp_path, capsys
):
    # Codex skips an untrusted hook silently, Gemini CLI's --skip-trust drops the project's
    # settings: either way every call would run unchecked. The user is told at setup.
    assert (
        main([cli, "--url", "http://127.0.0.1:8000", "--run", "run-1", "--dir", str(tmp_path)]) == 0
    )
    printed = capsys.readouterr().out
    assert warning in printed
    assert printed.index("export FLUIDBOX_RUN_TOKEN") < printed.index(warning)


def test_claude_code_needs_no_such_step(tmp_path, capsys):
    main(
        ["claude-code", "--url", "http://127.0.0.1:8000", "--run", "run-1", "--dir", str(tmp_path)]
    )
    assert capsys.readouterr().out.rstrip().endswith("<the run's session token>")


def test_without_a_run_the_files_name_none_and_the_user_is_told_to_export_it(tmp_path, capsys):
    # So the hook's command stays the same from run to run: Codex asks to trust a hook again
    # whenever its command changes.
    url = "http://127.0.0.1:8000"
    assert main(["codex", "--url", url, "--dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    hooks = (tmp_path / ".codex" / "hooks.json").read_text()
    assert "runner.hook codex" in hooks and "--run" not in hooks
    assert (
        "export FLUIDBOX_RUN_TOKEN=<the run's session token> FLUIDBOX_RUN_ID=<the run's id>"
        in printed
    )
    assert main(["codex", "--url", url, "--dir", str(tmp_path)]) == 0
    assert (tmp_path / ".codex" / "hooks.json").read_text() == hooks
