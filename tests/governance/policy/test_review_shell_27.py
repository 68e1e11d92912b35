"""Shapes from a shell-rules review of stop 54 (after F162): a write the engine cannot name file
by file, into a folder that holds configuration paths.

A copy of a whole folder (`cp -r kit/. .cargo/`, `cp -r kit .cargo`, `mv kit .cargo`, `rsync -a
kit/ .cargo/`, `unzip a.zip -d .cargo`, a link `ln -s kit .bundle`) is read as a write of the
folder (`.cargo`) or of its files (`.cargo/<files>`). Neither was matched against the
configuration paths inside the folder (`.cargo/config.toml`, `.bundle/config`,
`.config/git/config`, `.gradle/gradle.properties`, a `.local/lib/python3.11/site-packages`), so
the tree landed under the benign rules' `cp *` and `write_file:/workspace/*` while
`cp kit/config.toml .cargo/config.toml` asks.

Oracle (bubblewrap sandbox, bash, git 2.39; the sandbox's $HOME is /workspace/.home): with
`kit/git/config` holding `[core] fsmonitor = touch /workspace/PWNED; false` (written by an
allowed `printf`), each of `cp -r kit/. .home/.config/`, `cp -r kit .home/.config`,
`mv kit .home/.config`, `cd .home && cp -r ../kit/. .config` was ALWAYS, and a later allowed
`git status` ran the fsmonitor command: /workspace/PWNED written. The same copy into `build/`:
nothing ran. cargo and bundler are not where the oracle runs: the project's `.cargo/config.toml`
(cargo reads it in every folder from the one it runs in up) and `.bundle/config` are from their
manuals, the same landing.

A write of a whole folder now needs the rule to name every configuration path that may lie
inside it (config_paths.config_folder_names); a folder in which only a name that may be in any
folder could land (`CLAUDE.md`, `.envrc` in `build/`) is not held: copies into ordinary folders
stay allowed.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy_with, kinds, links_policy
from tests.shell_corpus.policies import shell_verdict as _verdict

GITCONF = "printf '[core]\\n\\tfsmonitor = touch /workspace/PWNED; false\\n'"
STAGED = "mkdir -p kit/git && " + GITCONF + " > kit/git/config && "

TREES_INTO_CONFIGURATION_FOLDERS = [
    # the review's own (F162, not mended)
    "cp -r kit/. .cargo/",
    "cp -r kit/. .cargo",
    "cp -R kit/. .bundle",
    "cp -a kit/. ./.cargo/",
    "cp -r kit/. .cargo/../.cargo/",
    "cd .cargo && cp -r ../kit/. .",
    # a folder copied or moved to the name (when it does not exist: the copy is the folder)
    "cp -r kit .cargo",
    "cp -rT kit .cargo",
    "cp -rT kit .config",
    "mv kit .cargo",
    "mv kit .bundle",
    # a folder of that name copied or moved into another: cargo reads every ancestor's
    "cp -r kit/.cargo src/",
    "cp -r kit/.bundle sub/",
    "mv kit/.cargo src/",
    # folders that hold configuration paths further down
    "cp -r kit/. .config/",
    "cp -r kit/. .gradle/",
    "cp -r kit/. .local/",
    "cp -r kit/. .local/lib/python3.11/",
    "cp -r kit/. .m2/",
    "cp -r kit/. .pyenv/versions/3.11/",
    "cp -r kit/. .nvm/versions/node/v20/",
    # oracle: git status then ran the fsmonitor of $HOME/.config/git/config
    STAGED + "cp -r kit/. .home/.config/",
    STAGED + "cp -r kit .home/.config",
    STAGED + "mv kit .home/.config",
    STAGED + "cd .home && cp -r ../kit/. .config",
    "cp -r kit/. .home/.config/ && git status",
    # a named file moved into the folder: mv does not name where it lands
    "mv kit/config.toml .cargo/",
    "mv -t .cargo kit/config.toml",
    "mv kit/config .bundle/",
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", TREES_INTO_CONFIGURATION_FOLDERS)
def test_a_folder_written_whole_into_a_configuration_folder_needs_its_rule(script, shell):
    # as `cp kit/config.toml .cargo/config.toml` does
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    ("rule", "script"),
    [
        ("rsync *", "rsync -a kit/ .cargo/"),
        ("rsync -a *", "rsync -a kit .home/.config"),
        ("unzip *", "unzip a.zip -d .cargo"),
        ("unzip *", "unzip -o a.zip -d .home/.config"),
    ],
)
def test_a_rule_for_the_program_does_not_name_the_configuration_it_lands(rule, script):
    named = benign_policy_with(rule)
    verdict = named.evaluate("run_command", {"command": script}, kinds()["run_command"]).verdict
    assert verdict is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script", ["ln -sfn kit .bundle", "ln -s /workspace/kit .home/.config", "ln -s kit .cargo"]
)
def test_a_link_that_makes_a_configuration_folder_needs_its_rule(script):
    # `.bundle/config` is then kit/config
    verdict = links_policy().evaluate("run_command", {"command": script}, kinds()["run_command"])
    assert verdict.verdict is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "cp -r src/. build/",
        "cp -r kit/. src/",
        "cp -r kit/. sub/",
        "cp -r src dist",
        "cp -rT src build",
        "mv build dist",
        "cp -r .config/. backup/",  # reading the folder is not writing into one
        STAGED + "cp -r kit/. build/",  # oracle: nothing ran
        "mkdir -p .cargo",
        "mkdir -p .config && ls .config",
        "cp README.md docs/",
        "mkdir -p build && cp -t build src/app.py notes.txt",
        "cd build && cp -r ../src/. .",
        "cp -r kit/. .github/",  # no configuration path of config_paths.py lies there
        "cp -r kit/. mycargo/",
        "cp -r kit/. src/config/",
    ],
)
def test_look_alikes_stay_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("rule", "script"),
    [("rsync *", "rsync -a kit/ build/"), ("unzip *", "unzip a.zip -d vendor")],
)
def test_a_rule_for_the_program_still_allows_it_into_ordinary_folders(rule, script):
    named = benign_policy_with(rule)
    verdict = named.evaluate("run_command", {"command": script}, kinds()["run_command"]).verdict
    assert verdict is Verdict.ALWAYS
