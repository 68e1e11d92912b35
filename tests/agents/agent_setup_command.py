"""`python -m runner.agent_setup <cli>` as a user runs it: the only fluidbox configuration
each end-to-end test gives its agent CLI."""

import os
import subprocess
import sys
from pathlib import Path

from tests.support.servers import ROOT


def _agent_setup(
    cli: str,
    url: str,
    run_id: str | None,
    project: Path,
    options: tuple[str, ...],
    home: Path | None,
) -> subprocess.CompletedProcess:
    run = ["--run", run_id] if run_id else []
    env = dict(os.environ)
    if home is not None:
        env.update(HOME=str(home), CODEX_HOME=str(home / ".codex"))
    return subprocess.run(
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
    )


def run_agent_setup(
    cli: str, url: str, run_id: str | None, project: Path, *options: str, home: Path | None = None
) -> str:
    """What it printed: every file it wrote, and what to export before starting the CLI.
    Without a run id the files name none (the hook reads `FLUIDBOX_RUN_ID`). `home` is the
    user's home as the CLI sees it (where `--trust` writes)."""
    done = _agent_setup(cli, url, run_id, project, options, home)
    assert done.returncode == 0, done.stderr
    return done.stdout


def refused_agent_setup(
    cli: str, url: str, run_id: str | None, project: Path, *, home: Path | None = None
) -> str:
    """Why it refused (exit 1): what it printed on stderr."""
    done = _agent_setup(cli, url, run_id, project, (), home)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stderr
