"""`python -m runner.agent_setup <cli>` as a user runs it: the only fluidbox configuration
each end-to-end test gives its agent CLI."""

import os
import subprocess
import sys
from pathlib import Path

from tests.support.servers import ROOT


def run_agent_setup(
    cli: str, url: str, run_id: str | None, project: Path, *options: str, home: Path | None = None
) -> str:
    """What it printed: every file it wrote, and what to export before starting the CLI.
    Without a run id the files name none (the hook reads `FLUIDBOX_RUN_ID`). `home` is the
    user's home as the CLI sees it (where `--trust` writes)."""
    run = ["--run", run_id] if run_id else []
    env = dict(os.environ)
    if home is not None:
        env.update(HOME=str(home), CODEX_HOME=str(home / ".codex"))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "runner.agent_setup",
            cli,
            "--url",
            url,
            *run,
            "--dir",
            str(project),
            *options,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout
