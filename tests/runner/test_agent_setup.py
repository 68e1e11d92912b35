"""`python -m runner.agent_setup`: what it writes into a project for each CLI."""

import json

from runner.agent_setup import setup_gemini_cli


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
