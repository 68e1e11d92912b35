"""Shapes from the eleventh shell-rules review (FINDINGS F103-F112): a link a command makes
opens what it names to writing, and a hook manager keeps git's hooks in the project; read by
the engine alone.

tests/shell_corpus/attacks.py ("links") proves the shapes in the oracle's sandbox: `cp -s
/workspace/.git/config c` and then `printf '[core]…' >> c` wrote git's configuration
through the link, and `git status` ran the planted fsmonitor, every part allowed by the
benign policy (`cp *`, `printf *`, a write into the workspace, `git status`); `ln -s .git h`
opened the hooks folder the same way; `cp -s /etc/passwd y && echo x >> y` wrote
/etc/passwd. The engine now counts the file a link names as written by the command that
makes the link, so the rules for writing decide it: outside the workspace NEVER, a
configuration path only through a rule that names it. Links inside the workspace stay
ALWAYS. With husky, `core.hooksPath` names `.husky/_`, whose stubs run `.husky/<hook>`: a
write there and an allowed `git commit` ran it (F104, in the sandbox with a husky-shaped
setup); the hook managers' folders and files are configuration paths. npx ran a planted
`node_modules/.bin/tsc` written by an earlier call (F105): node_modules is one too, and so is
`.python-version`, which may name an interpreter by path that uv runs (F107). make ran
`x!=CMD` and `x:=$(shell CMD)` from its command line with no makefile (F108), and gawk's
debugger takes its commands from elsewhere (F109). `npm test -- --basetemp=/etc/x` reached the
project's pytest (F110): what a package manager hands on is read as the runners' options. And
pytest 8.2+, tsc and mypy read options from an `@FILE` (F111), and `date -s` sets the clock (F112).
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_8 import verdict_under
from tests.shell_corpus.policies import kinds, links_policy


def verdict(command: str) -> Verdict:
    arguments = {"command": command}
    return links_policy().evaluate("run_command", arguments, kinds()["run_command"]).verdict


NEVER_ALLOWED = [
    # symbolic links to files and folders outside the workspace
    "cp -s /etc/passwd y",
    "cp --symbolic-link /etc/passwd y",
    "cp --sym /etc/passwd y",
    "cp -fs /etc/passwd y",
    "cp -rs /etc/ssh e",
    "cp -t /workspace -s /etc/passwd",
    "cp -s /etc/passwd /etc/shadow /workspace/d",
    "ln -s /etc/passwd y",
    "ln --symbolic /etc/passwd y",
    "ln --sym /etc/passwd y",
    "ln -sf /root r",
    "ln -s ../../etc h",
    "ln -s .. up",
    "ln -s ../../x a/b",
    "ln -sr /etc/passwd y",
    "ln -s --relative /etc/passwd y",
    "ln -st d /etc/passwd",
    "ln -s -t d /etc/passwd",
    "ln -s --target-directory=d /etc/passwd",
    "ln -s /etc/passwd",
    "ln -s /etc/passwd /etc/group d",
    "cd build && ln -s ../../etc e",
    # hard links: a write to the link is a write to the file
    "cp -l /home/agent/other/Makefile y",
    "cp --link /home/agent/.bashrc b",
    "ln /home/agent/.bashrc y",
    "ln -P /home/agent/.profile p",
    "link /home/agent/.bashrc y",
    "rsync -a --link-dest=/etc src/ dst/",
    "rsync -a --link-dest /etc src/ dst/",
    "rsync -a --link-dest=../../../etc src/ dst/",
    # the proven compositions
    "cp -s /etc/passwd y && echo x >> y",
    "ln -s ../../etc h; echo x > h/passwd",
]


@pytest.mark.parametrize("command", NEVER_ALLOWED)
def test_a_link_to_what_the_rules_forbid_writing_is_never_allowed(command):
    assert verdict(command) is Verdict.NEVER


NOT_ALLOWED = [
    # configuration paths: a rule must name them
    "cp -s /workspace/.git/config c",
    "cp -l /workspace/.git/config c",
    "ln -s /workspace/.git/config c",
    "ln /workspace/.git/config c",
    "ln -s .git h",
    "ln -s .git/hooks h",
    "ln -sf /workspace/.git/hooks/pre-commit h",
    "ln -s ../.git build/g",
    "cp -s /workspace/.git/hooks y",
    "ln -s /workspace/.vscode/settings.json s",
    "ln -s /workspace/.home/.bashrc b",
    "rsync -a --link-dest=/workspace/.git src/ dst/",
    # the proven compositions
    "cp -s /workspace/.git/config c && printf '[core]\\n\\tfsmonitor = x\\n' >> c && git status",
    "ln -s .git h && mkdir -p h/hooks && cp bin/pre-commit h/hooks/pre-commit && git commit -m x",
    # F104: a hook manager's hooks and settings are in the project
    "printf 'touch /workspace/PWNED\\n' > .husky/pre-commit && git commit -q --allow-empty -m x",
    "cp bin/pre-commit .githooks/pre-commit && git commit -m x",
    "printf 'repos: []' > .pre-commit-config.yaml && git commit -m x",
    "ln -s /workspace/.husky/pre-commit h",
    # F105: npx and npm scripts run node_modules/.bin first (the first of two calls)
    "mkdir -p node_modules/.bin && cp bin/pre-commit node_modules/.bin/tsc",
    "printf x > node_modules/typescript/lib/tsc.js",
    "ln -s /workspace/bin/pre-commit node_modules/.bin/tsc",
    # F107: `.python-version` may name an interpreter by path, which uv runs
    "uv python pin /workspace/bin/pre-commit",
    "uv python pin ../x/bin/python",
    "printf /workspace/bin/pre-commit > .python-version",
    # F108: make expands its command line's variables before any makefile
    "make 'x!=touch /workspace/PWNED'",
    "make 'x:=$(shell touch /workspace/PWNED)'",
    "make 'x::=$(shell id)'",
    "make 'x +=$(shell id)' test",
    "make 'x?=1' test",
    "make .SHELLFLAGS='-c id' test",
    "make 'a-b=$(shell id)' test",
    "make -j4 'CC:=$(shell id)' all",
    # F109: gawk's debugger reads its commands from stdin or a file
    "awk -D '{print}' notes.txt",
    "gawk --debug=cmds 'BEGIN{}'",
    "awk -MD '{print}' notes.txt",
    # F110: words handed on to the project's test runner
    "npm test -- --basetemp=/etc/x",
    "npm run test -- --outputFile=/etc/x",
    "npm test -- /etc/hostname",
    "npm test tests /etc/hostname",
    "yarn test --outputFile=/etc/x",
    "yarn workspace web test --outputFile=/etc/x",
    "yarn workspace web run test --outputFile=/etc/x",
    "yarn jest --outputFile=/etc/x",
    "pnpm --filter web test -- --outputFile=/etc/x",
    "pnpm test -- --coverageDirectory=/etc/x",
    "pnpm run test -p evil",
    "tox -- --basetemp=/etc/x",
    "cargo test -- --logfile /etc/x",
    # F111: response files
    "pytest @args.txt",
    "python -m pytest -q @args.txt",
    "coverage run -m pytest @args.txt",
    "npx tsc @args.txt",
    "mypy @args.txt",
    # F112: date -s sets the system clock
    "date -s 2020-01-01",
    "date --set=@0",
    "date -us '2020-01-01'",
    # as `jest --outputFile=…` itself: a writing option needs a rule that names it
    "npm test -- --coverage --outputFile=/workspace/report.json",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_a_link_to_a_configuration_path_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "ln -s ../lib/x.so build/x.so",
    "ln -sf src/app.py app.py",
    "ln -s README.md docs/README.md",
    "ln -sT ../src build/src",
    "ln -s --relative src/app.py build/app.py",
    "ln notes.txt hard.txt",
    "ln -s /workspace/src/app.py",
    "cd build && ln -s ../src/app.py app.py",
    "cp -s /workspace/src/app.py link.py",
    "cp -rs /workspace/src mirror",
    "cp -al src backup",
    "cp --link notes.txt n2",
    "cp -t out -s /workspace/src/app.py",
    "cd build && cp -s ../src/app.py .",
    "cp -r src out",
    "cp -a src out",
    "uv python pin 3.12",
    "cat .python-version",
    "ln -s ../src/app.py build/",
    "make test",
    "make -j4 all",
    "awk -M '{print}' notes.txt",
    "npm test -- --watch=false",
    "npm test -- tests/unit",
    "yarn test",
    "yarn add --dev jest",
    "yarn workspace web add lodash",
    "yarn workspace web test",
    "npm install test",
    "pnpm test -- --coverage",
    "cargo test -- --nocapture",
    "tox -e py311",
    "date -Iseconds",
    "date -u +%Y-%m-%dT%H:%M:%SZ",
    "date -d @0",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_links_inside_the_workspace_and_what_agents_run_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


BROAD = [
    ("run_command:npm *", "ALWAYS"),
    ("run_command:cargo *", "ALWAYS"),
    ("write_file:/workspace/*", "ALWAYS"),
    ("write_file:*", "NEVER"),
]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # the command found after npm's and cargo's own options and their values
        ("npm -w web test -- --basetemp=/etc/x", Verdict.ASK),
        ("npm --workspace web run test -- --outputFile=/etc/x", Verdict.ASK),
        ("cargo --color never test -- --logfile /etc/x", Verdict.ASK),
        ("npm -w web test", Verdict.ALWAYS),
        ("npm -w web test -- --watch=false", Verdict.ALWAYS),
        ("cargo --color never test -- --nocapture", Verdict.ALWAYS),
        ("npm install --save-dev jest", Verdict.ALWAYS),
    ],
)
def test_words_handed_on_are_found_after_the_managers_own_options(command, expected):
    assert verdict_under(BROAD, command) is expected
