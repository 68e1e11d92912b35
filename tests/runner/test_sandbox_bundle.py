"""The sandbox-basic bundle file is the bundle the runner implements."""

from __future__ import annotations

from pathlib import Path

import yaml

from runner.tools import SANDBOX_BASIC, ToolSpec, bundle_document

BUNDLE_FILE = Path(__file__).resolve().parents[2] / "runner" / "bundles" / "sandbox-basic.yaml"


def test_the_yaml_bundle_matches_the_runners_tools() -> None:
    assert yaml.safe_load(BUNDLE_FILE.read_text()) == bundle_document(
        "sandbox-basic", SANDBOX_BASIC
    )


def test_each_tool_declares_how_the_policy_matches_it() -> None:
    declared = {
        tool["name"]: (tool["access"], tool["match_argument"]["kind"], tool["secrets"])
        for tool in yaml.safe_load(BUNDLE_FILE.read_text())["tools"]
    }
    assert declared == {
        "read_file": ("read", "path", False),
        "write_file": ("write", "path", False),
        "list_dir": ("read", "path", False),
        "run_command": ("write", "shell", False),
    }


def test_a_bundle_entry_builds_the_same_tool_with_a_chosen_handler() -> None:
    entries = yaml.safe_load(BUNDLE_FILE.read_text())["tools"]
    rebuilt = [ToolSpec.from_bundle_entry(e, handler=e["name"]) for e in entries]
    assert tuple(rebuilt) == SANDBOX_BASIC
