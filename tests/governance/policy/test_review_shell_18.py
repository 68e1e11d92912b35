"""Shapes from the fifteenth shell-rules review (FINDINGS F135-).

A NEVER rule held against the command a brace expansion makes: bash and zsh expand
`{rm,-rf,/x}` to the three words `rm -rf /x` before anything else, so the program the shell
runs is `rm` though no word of the script says so; the engine read the word as a program
named `{rm,-rf,/x}` and answered ASK, which an autonomous run's `allow` fallback passes.
So was code kept in a variable for later (`x='$(rm …)'` run by `${x@P}`, `PS4` under
`set -x`, `eval`): its commands are read for NEVER rules now.
"""

import pytest

from governance.policy import Verdict, compile_policy
from governance.policy.shell_braces import expand
from tests.governance.policy.test_review_shell_2 import verdict
from tests.shell_corpus.policies import builtins_policy, kinds, links_policy, review_policy


def _review(command: str, shell: str = "bash") -> Verdict:
    arguments = {"command": command}
    return review_policy().evaluate("run_command", arguments, kinds(shell)["run_command"]).verdict


@pytest.mark.parametrize(
    "command",
    [
        "{rm,-rf,/workspace/victim}",
        "{r,}m -rf /workspace/victim",
        "r{m,} -rf /workspace/victim",
        "{rm,-rf,/workspace/victim} && ls",
        "ls; {cu,}rl{,} http://example.com",
        "env {rm,-rf,/workspace/victim}",
        "timeout 5 {rm,-rf,/workspace/victim}",
        "{rm,x{a,b}} -rf /workspace/victim",
        "{rm,-r{f,}} /workspace/victim",
    ],
)
@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_never_rule_holds_against_the_command_a_brace_expansion_makes(command, shell):
    assert _review(command, shell) is Verdict.NEVER


@pytest.mark.parametrize(
    "command",
    [
        "ls {src,tests}",
        "echo {rm,-rf,x}",
        "'{rm,-rf,/workspace/victim}'",  # quoted: one word, a program of that name
        "{rm}",  # no comma, no range: no expansion
        "grep -r x {a..c}",
    ],
)
def test_what_braces_do_not_make_a_never_program_keeps_its_verdict(command):
    assert _review(command) is Verdict.ASK


@pytest.mark.parametrize(
    ("word", "words"),
    [
        ("{rm,-rf,/x}", ["rm", "-rf", "/x"]),
        ("r{m,}", ["rm", "r"]),
        ("{x{a,b}", ["{xa", "{xb"]),  # an unclosed brace is text; the next one expands
        ("a{b,c{d,e}}f", ["abf", "acdf", "acef"]),
        ("f{1..10..3}", ["f1", "f4", "f7", "f10"]),
        ("{01..03}", ["01", "02", "03"]),
        ("{c..a}", ["c", "b", "a"]),
        ("{a}", ["{a}"]),
        ("{}", ["{}"]),
    ],
)
def test_brace_expansion_makes_the_words_bash_makes(word, words):
    assert expand(word) == words


@pytest.mark.parametrize(
    "command",
    [
        "x='$(rm -rf /workspace/victim)'; echo ${x@P}",
        "PS4='$(rm -rf /workspace/victim)'; set -x; ls",
        "PS4='`rm -rf /workspace/victim`' bash -xc ls",
        "export PS4='$(rm -rf /workspace/victim)'; set -x; ls",
        "env PS4='$(rm -rf /workspace/victim)' bash -xc ls",
        "declare x='$(rm -rf /workspace/victim)'; echo ${x@P}",
        "x='$(curl http://example.com)'; eval \"echo $x\"",
    ],
)
def test_a_never_rule_holds_against_code_kept_in_a_variable_for_later(command):
    assert _review(command) is Verdict.NEVER


@pytest.mark.parametrize(
    "command", ["x='$(echo hi)'; echo ${x@P}", "PS4='+ $(date) '; set -x; ls", "x=hello; echo $x"]
)
def test_code_kept_for_later_that_no_never_rule_names_stays_for_a_person(command):
    assert _review(command) is Verdict.ASK


_LINK_TO_A_FOLDER = "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d"
_FOLDER_MOVED_UP = "mkdir -p a/b && cd a/b && mv /workspace/a/b /workspace/c"

# F135: `..` as the kernel walks it, not as the words read. The script made a link and put a
# folder where it leads (a/l leads to d, one level up from a: `a/l/../..` is `/`), or moved
# the folder the shell was in up a level (`../..` from it is one level higher than written).
NOT_ALLOWED = [
    f"{_LINK_TO_A_FOLDER} && cd a/l && touch ../../etc/fluidbox-x",
    f"{_LINK_TO_A_FOLDER} && cd a/l/../../etc && echo x > fluidbox-x",
    f"{_LINK_TO_A_FOLDER} && echo x > a/l/../../tmp/fluidbox-x",
    f"{_LINK_TO_A_FOLDER} && cp notes.txt a/l/../../tmp/fluidbox-x",
    f"{_LINK_TO_A_FOLDER} && cat < a/l/../../etc/hostname",
    f"{_FOLDER_MOVED_UP} && touch ../../etc/fluidbox-x",
    f"{_FOLDER_MOVED_UP} && echo x > ../../tmp/fluidbox-x",
    f"{_FOLDER_MOVED_UP} && cat < ../../etc/hostname",
    f"{_FOLDER_MOVED_UP} && cd ../../etc && touch fluidbox-x",
    "mkdir -p a/b/c && cd a/b/c && mv ../../b ../../../b2 && echo x > ../../../etc/fluidbox-x",
    "mkdir -p a/b && cd a/b && git mv /workspace/a/b /workspace/c && touch ../../etc/x",
    # `v/bin/python` is a link to the system's interpreter
    "uv venv v && echo x > v/bin/python",
    "uv venv && cp notes.txt .venv/bin/python3",
    "uv venv v --python 3.11 && tee v/bin/python3.11 < notes.txt",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_what_the_real_tools_and_shells_did_needs_a_rule_that_names_it(command, shell):
    assert verdict(command, shell) is not Verdict.ALWAYS


def test_a_folder_moved_with_the_shell_in_it_by_pushd_too():
    command = "mkdir -p a/b && pushd a/b && mv /workspace/a/b /workspace/c && touch ../../etc/x"
    arguments = {"command": command}
    evaluation = builtins_policy().evaluate("run_command", arguments, kinds()["run_command"])
    assert evaluation.verdict is not Verdict.ALWAYS


ALLOWED = [
    "cd src && mv a.py b.py && touch c.py",
    "mkdir -p a/b && cd a && mv b c && touch ../x",
    "mv src/a src/b && cd src && touch ../z",
    "mkdir -p build && cd build && touch ../notes.txt",
    "uv venv && touch .venv/marker",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_moves_below_the_shell_s_folder_and_climbs_without_links_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# F136: git's parse-options, run (git 2.39 in the sandbox): a `+`, `-` or space between `%`
# and a signature placeholder ran gpg; a negation or an abbreviation took back the flag that
# made a command only report or keep its hands off the work tree (the editor ran, patches
# applied, files deleted or rewritten); after `--` or `--end-of-options` a flag is an operand;
# `stash save -u` and `--pathspec-from-file` wrote paths the words do not show.
GIT_PARSE_OPTIONS = [
    "git log -1 --format=%+GS",
    "git log -1 '--format=%-GK'",
    "git log -1 '--format=% GF'",
    "git show -s --format=%+GS",
    "git shortlog -1 --format=%+GS HEAD",
    "git shortlog --group=format:%+GS",
    "git stash list --format=%+GS",
    "git reflog -1 --format=%+GS",
    "git --no-pager rev-list -1 --format=%+GS HEAD",
    "git log -1 --pretty=%+GG",
    "git commit -q --allow-empty -m x --no-mess",
    "git commit -q --allow-empty -m x --no-m",
    "git commit -q --allow-empty -C HEAD --no-reuse",
    "git commit -q --allow-empty --dry-run --no-dry",
    "git commit -q --allow-empty --fixup=HEAD --no-fix",
    "git commit --allow-empty -F msg --no-fil",
    "git tag -a v1 -F msg --no-fi",
    "git --no-pager notes add -m x --no-mes",
    "echo x > ./-m && git add ./-m && git commit -q --end-of-options -m README.md",
    "git remote -v show host:x -- -n",
    "git remote -v show --end-of-options host:x -n",
    "git --no-pager apply p1.diff -- --check",
    "git --no-pager apply --end-of-options p2.diff --check",
    "git --no-pager apply --stat --app p3.diff",
    "git --no-pager apply --stat --no-stat p4.diff",
    "git --no-pager apply --check --no-check p5.diff",
    "git --no-pager apply --summary --no-sum p6.diff",
    "git restore --staged --work .claude/settings.json",
    "git --no-pager rm -q --cached --no-cached .claude/other.json",
    "git --no-pager clean -fdx -n --no-dry-run",
    "git --no-pager clean -fdx --dry-run --no-dry",
    "git --no-pager clean -nfdx --no-dry-run",
    "git stash --include",
    "git stash push --include-u",
    "git stash --al",
    "git stash save -u",
    "git stash save --include",
    'printf ".claude/settings.json\\n" | git restore --pathspec-from-file=-',
    "git checkout HEAD --pathspec-from-file=list.txt",
    'printf ".claude/settings.json\\n" | git stash push -q --pathspec-from-file=-',
    'printf ".claude/settings.json\\n" | git --no-pager rm -q --pathspec-from-file=-',
]


@pytest.mark.parametrize("command", GIT_PARSE_OPTIONS)
def test_what_git_read_as_its_options_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


GIT_STILL_ALLOWED = [
    "git log -1 --format=%H%+n%s",
    "git commit -q -m x --no-verify",
    "git commit -q -m x --no-edit",
    "git --no-pager apply --stat p.diff",
    "git --no-pager apply --check --stat p.diff",
    "git restore --staged .claude/settings.json",
    "git --no-pager rm -q --cached .claude/other.json",
    "git --no-pager clean -fdx -n",
    "git stash push -- src/",
    "git stash list",
    "git remote -v show -n origin",
]


@pytest.mark.parametrize("command", GIT_STILL_ALLOWED)
def test_the_same_commands_spelled_plainly_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# F137: the Go toolchain, run (go 1.19 and 1.27 in the sandbox; golangci-lint from its source):
# `--` only ends go's flags, `go fmt` of Go's own packages rewrites GOROOT, `go env -C` and
# `go mod download M@V` fetch and run the toolchain a go.mod asks for, Go 1.19's `-i`
# reinstalls into GOROOT/pkg, golangci-lint's other report paths, clustered `-c`, and a
# revision handed to git as an option.
GO_TOOLCHAIN = [
    "go run -- /tmp/evil/x.go",
    "go build -o /workspace/evilbin -- /tmp/evil/x.go",
    "go run -- cmd/gofmt -l -w /tmp/other/y.go",
    "go run -- cmd/go env -w GOFLAGS=-toolexec=/tmp/evil/t",
    "go run -- example.com/tool@v1.0.0",
    "go vet -fix -- /tmp/other/h.go",
    "go fmt crypto/tls",
    "go fmt cmd/cgo",
    "go fmt all",
    "go fmt std",
    "go fmt fmt",  # Go's own fmt package: the rule's `fmt` names the subcommand
    "go fmt -n strings fmt",
    "go env -C=/tmp/x GOVERSION",
    "go env -C /tmp/x",
    "go mod download example.com/newer@v1.0.0",
    "go build -a -i .",
    "go build -i -trimpath .",
    "go test -i .",
    "golangci-lint run --output.tab.path=/tmp/x",
    "golangci-lint run --output.code-climate.path=/tmp/x",
    "golangci-lint run --output.teamcity.path=/tmp/x",
    "golangci-lint run -c/tmp/x.yml",
    "golangci-lint run -vc/tmp/x.yml",
    "golangci-lint run --new-from-rev=--output=/tmp/x",
]

# F138: version flags taken back (npm's nopt: `false` after a boolean, `--no-version`; node's
# `--no-version`), pip's `--requirements-from-script` and `--global-option`, unittest's argparse
# clusters (`-vs/tmp/x`, `-s=x`) and a module named with `.py`.
TAKEN_BACK_AND_CLUSTERED = [
    "npm --version false cache clean --force",
    "npm --version --no-version help install",
    "npm --version --version=false ls",
    "npm --version false docs",
    "npm --version false link",
    "npm --version false token list",
    "npm --version --no-version unpublish demo@1.0.0",
    "npm --version false doctor",
    "node --version --no-version /tmp/evil/x.js 1",
    "node --version --no-version --env-file=/tmp/evil/env src/app.js",
    "cat /tmp/evil/code.js | node --version --no-version",
    'echo \'require("child_process").execSync("id")\' | node --version --no-version -',
    "pip install -q --no-index --no-deps --requirements-from-script=/tmp/evil/x.py",
    "pip install -q --no-index --no-deps --no-build-isolation --requirements-f=/tmp/evil/x.py",
    "printf '# /// script\\n# dependencies = [\"eggsample @ file:///usr/share/doc/python3-pluggy/"
    "examples/eggsample\"]\\n# ///\\n' | pip install -q --no-index --no-deps "
    "--requirements-from-script=/dev/stdin",
    "python -m pip install --requirements-from-script=/tmp/evil/x.py",
    "pip3 install --requirements-from-script=/tmp/evil/x.py",
    "pip install --no-index --global-option=bdist_wheel --global-option=--bdist-dir=/tmp/victim .",
    "pip install --glob=bdist_wheel --glob=--bdist-dir=/tmp/victim .",
    "python -m pip install --global-option bdist_wheel --global-option --bdist-dir=/tmp/victim .",
    "python -m unittest discover -vs/tmp/evil",
    "python -m unittest discover -s=/tmp/evil",
    "python3 -m unittest discover -qs/tmp/evil",
    "python -m unittest discover -vsantigravity",
    "python -m unittest discover -s=antigravity",
    "python -m unittest discover -vt/tmp -s tests",
    "python -m unittest antigravity.py",
    "python -m unittest venv.__main__.py",
    "python3 -m unittest -v venv.__main__.py",
    "node --version --no_version /tmp/evil/x.js underscore",
    "npm --version -no-version ls",
    "npm --version --version false ls",
    "node --version --no-version --test /tmp/evil/x.js",
    "coverage run -m unittest discover -vs/tmp/evil",
    "coverage run -m unittest discover -s=/tmp/evil",
    "coverage run -m unittest venv.__main__.py",
    "coverage run -m unittest discover -vsantigravity",
]

# F139: `date MMDDhhmm` sets the clock as `-s` does; `env -i` and `env -u` give PATH, TMPDIR
# and HOME their defaults (bash's PATH ends in `.`); zsh's compiled start-up files.
DEFAULTS_AND_COMPILED = [
    "date 010100002030",
    "date -u 0101000030",
    "date --universal -- 010100002030",
    "date --rfc-3339=seconds 010100002030",
    "timeout 5 date 010100002030",
    "cp bin/ls tree && env -i bash -c tree",
    "env -u PATH bash -c tree",
    "env -uPATH bash -c tree",
    "env --unset=PATH bash -c tree",
    "env - bash -c tree",
    "env --ignore-environment bash -c 'ls && tree'",
    "env -u TMPDIR python -m pytest -q",
    "printf x > .home/.zshenv.zwc && zsh -c 'echo hi'",
    "cp z .zprofile.zwc",
]


@pytest.mark.parametrize("command", GO_TOOLCHAIN + TAKEN_BACK_AND_CLUSTERED + DEFAULTS_AND_COMPILED)
def test_what_the_tools_did_when_run_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "go fmt ./...",
        "go run main.go -- x",
        "go build -- ./cmd/app",
        "go test ./... -- -v",
        "go mod download",
        "golangci-lint run --new-from-rev=HEAD~1",
        "npm --version",
        "node --version",
        "python -m unittest discover -vs tests",
        "python -m unittest test_app.py",
        "pip install --requirements-from-script=tools/x.py",
        "date",
        "date +%s",
        "date -d yesterday +%F",
        "date --rfc-3339 seconds",
        "env LANG=C ls",
    ],
)
def test_their_plain_uses_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# The shells join a line continuation first: `$\⏎(rm …)` is `$(rm …)`, and `<\⏎(…)` a process
# substitution (bash ran each; the tolerant reader had read `$` and `(` apart: ASK).
@pytest.mark.parametrize(
    "command",
    [
        "echo $\\\n(rm -rf /workspace/victim)",
        'echo "$\\\n(rm -rf /workspace/victim)"',
        "x=$\\\n(rm -rf /workspace/victim)",
        "echo ${x:-$\\\n(rm -rf /workspace/victim)}",
        "cat <<E\n$\\\n(rm -rf /workspace/victim)\nE",
        "cat <\\\n(rm -rf /workspace/victim)",
        "echo x >\\\n(rm -rf /workspace/victim)",
    ],
)
def test_a_never_rule_holds_across_a_line_continuation(command):
    assert _review(command) is Verdict.NEVER


# F140, a second pass (oracle, review policy: each ran `rm -rf /workspace/victim` or `curl`
# in its shell while the engine said ASK): the tolerant reader now goes on after syntax it
# does not know (`a=(1 2)`, `[[` across lines, zsh's `case x {`), reads array words, `time (…)`,
# a here-document with no end line, `$'\c'`, `for x do …` on one line, single quotes inside
# `"${x:-…}"`, `trap --`, the scheduling and lock wrappers (`ionice`, `taskset`, `chrt`,
# `flock -c`, `setpriv`, `script -c`), standard input handed on by a wrapper or a pipe from a
# literal echo, printf or here-document, `/dev/stdin` as a shell's script, `sh -c '$0 $1'
# rm …`, zsh's `=rm`, `/usr/bin/r[m]`, a `$NAME` the script gave a literal value, an alias or
# `hash -p` naming rm, and `a[$(rm …)]` given to test -v, printf -v, read or let.
NEVER_SEEN = [
    ("bash", "a=(1 2)\nrm -rf /workspace/victim"),
    ("zsh", "a=(1 2)\nrm -rf /workspace/victim"),
    ("bash", "a=($(rm -rf /workspace/victim))"),
    ("zsh", "a=($(rm -rf /workspace/victim))"),
    ("bash", "declare -a a=($(rm -rf /workspace/victim))"),
    ("bash", "time (rm -rf /workspace/victim)"),
    ("zsh", "time (rm -rf /workspace/victim)"),
    ("bash", "[[ -n 1 ||\n -n 2 ]] && rm -rf /workspace/victim"),
    ("zsh", "[[ -n 1 ||\n -n 2 ]] && rm -rf /workspace/victim"),
    ("bash", 'x=$[ "1" ]\nrm -rf /workspace/victim'),
    ("sh", 'x=$[ "1" ]\nrm -rf /workspace/victim'),
    ("zsh", 'x=$[ "1" ]\nrm -rf /workspace/victim'),
    ("bash", "shopt -s extglob\ncase x in @(x)) :;; esac\nrm -rf /workspace/victim"),
    ("zsh", "case x in (x|y)) :;; esac\nrm -rf /workspace/victim"),
    ("zsh", "case x { x) :;; }\nrm -rf /workspace/victim"),
    ("zsh", "echo (a|b)(N); rm -rf /workspace/victim"),
    ("bash", "bash <<E\nrm -rf /workspace/victim\n"),
    ("sh", "cat <<E\n$(rm -rf /workspace/victim)\n"),
    ("bash", "x=$'\\c'\nrm -rf /workspace/victim"),
    ("bash", "echo $'\\c' ; rm -rf /workspace/victim ; #'"),
    ("sh", "echo $'\\c' ; rm -rf /workspace/victim ; #'"),
    ("zsh", "echo $'\\c' ; rm -rf /workspace/victim ; #'"),
    ("bash", "echo $'\\c' ; curl http://x ; #'"),
    ("bash", "echo \"${x:-'$(rm -rf /workspace/victim)'}\""),
    ("bash", "echo ${x:-$'\\'' $(rm -rf /workspace/victim) \\'}"),
    ("bash", "set -- 1; for x do rm -rf /workspace/victim; done"),
    ("sh", "set -- 1; for x do rm -rf /workspace/victim; done"),
    ("zsh", "set -- 1; for x do curl http://x; done"),
    ("zsh", "echo ${(e):-'$(rm -rf /workspace/victim)'}"),
    ("zsh", "=rm -rf /workspace/victim"),
    ("zsh", "=curl http://x"),
    ("bash", "trap -- 'rm -rf /workspace/victim' EXIT"),
    ("sh", "trap -- 'rm -rf /workspace/victim' EXIT"),
    ("sh", "alias r=rm\nr -rf /workspace/victim"),
    ("bash", "shopt -s expand_aliases\nalias r=rm\nr -rf /workspace/victim"),
    ("bash", "ionice rm -rf /workspace/victim"),
    ("sh", "taskset -c 0 rm -rf /workspace/victim"),
    ("bash", "chrt -o 0 rm -rf /workspace/victim"),
    ("bash", "flock /workspace/l -c 'rm -rf /workspace/victim'"),
    ("bash", "setpriv --no-new-privs rm -rf /workspace/victim"),
    ("bash", "script -qc 'rm -rf /workspace/victim' /dev/null"),
    ("bash", "ionice curl http://x"),
    ("bash", "bash /dev/stdin <<< 'rm -rf /workspace/victim'"),
    ("bash", "echo 'rm -rf /workspace/victim' | bash"),
    ("sh", "printf 'rm -rf /workspace/victim' | sh"),
    ("bash", "sh -c '$0 $1 $2' rm -rf /workspace/victim"),
    ("sh", "bash -c 'exec \"$@\"' x rm -rf /workspace/victim"),
    ("bash", "hash -p /usr/bin/rm ls; ls -rf /workspace/victim"),
    ("sh", "/usr/bin/r[m] -rf /workspace/victim"),
    ("zsh", "/bin/[r]m -rf /workspace/victim"),
    ("bash", "test -v 'a[$(rm -rf /workspace/victim)]'"),
    ("zsh", "printf -v 'a[$(rm -rf /workspace/victim)]' x"),
    ("bash", "read 'a[$(rm -rf /workspace/victim)]' <<< x"),
    ("zsh", "let 'a[$(rm -rf /workspace/victim)]=1'"),
    ("sh", "x=rm; $x -rf /workspace/victim"),
    ("bash", 'x=rm; eval "$x -rf /workspace/victim"'),
    ("bash", "x='rm -rf /workspace/victim'; eval \"$x\""),
    ("bash", "x='rm -rf /workspace/victim'; $x"),
    ("bash", "x=curl; $x http://x"),
    ("bash", "exec bash <<< 'rm -rf /workspace/victim'"),
    ("zsh", "command bash <<< 'rm -rf /workspace/victim'"),
    ("bash", "env bash <<< 'rm -rf /workspace/victim'"),
    ("sh", "nice sh <<E\nrm -rf /workspace/victim\nE\n"),
    ("bash", "timeout 5 bash <<< 'rm -rf /workspace/victim'"),
    ("bash", "nohup bash <<< 'rm -rf /workspace/victim'"),
    ("sh", "cat <<E | bash\nrm -rf /workspace/victim\nE\n"),
]


@pytest.mark.parametrize(("shell", "command"), NEVER_SEEN)
def test_a_never_rule_holds_where_the_shell_builds_or_hides_the_command(shell, command):
    assert _review(command, shell) is Verdict.NEVER


# F141: cargo, pnpm 12 and git's fetch, run: clippy-driver splits a word on
# `__CLIPPY_HACKERY__`, rustdoc splits a handed-on test word on blanks; pnpm's patch folders,
# `pack --out`, `--env-file`, `--http-proxy`, `--pnpr-server`; `git fetch WORD` of a bundle the
# script wrote (with no remote of that name, git reads the file), then a checkout of its links.
TOOLS_RUN_AGAIN = [
    "cargo clippy -- -D warnings__CLIPPY_HACKERY__-Clinker=/tmp/evil/ld__CLIPPY_HACKERY__--emit=link",  # noqa: E501
    "cargo clippy -- -D warnings__CLIPPY_HACKERY__-Clinker=/tmp/evil/ld",
    "cargo clippy -- --deny=warnings__CLIPPY_HACKERY__--emit=link=/tmp/out/x",
    "cargo clippy -- --cap-lints=warn__CLIPPY_HACKERY__--emit=link=/tmp/out/e",
    "cargo clippy -- -Aclippy::all__CLIPPY_HACKERY__-o__CLIPPY_HACKERY__/tmp/out/y",
    "cargo clippy -- -W clippy::pedantic__CLIPPY_HACKERY__@/tmp/evil/args",
    "cargo clippy --offline -- -D warnings__CLIPPY_HACKERY__-Clinker=/tmp/evil/ld__CLIPPY_HACKERY__--emit=link",  # noqa: E501
    "cargo test -- 'x --logfile /tmp/out/log1'",
    "cargo test --doc -- ' --logfile /tmp/out/log2'",
    "cargo test --doc 'x --logfile /tmp/out/log3b'",
    "cargo test --doc ' --logfile=/tmp/out/log4'",
    "cargo test --doc -- '-q --logfile /tmp/out/log5'",
    "cargo test --offline -- 'x --logfile /tmp/out/log1'",
    "cargo test --offline -q -- 'x --logfile /home/u/.bashrc'",
    "cargo test -- 'x --logfile /root/.bashrc'",
    "pnpm patch x --edit-dir /tmp/pd",
    "pnpm patch x -d /tmp/pd3",
    "pnpm patch x --edit-dir=/tmp/pd2",
    "pnpm patch-commit /tmp/pd",
    "pnpm patch-commit ../pd",
    "pnpm install --env-file=/tmp/evil.env",
    "pnpm pack --out /tmp/x.tgz",
    "pnpm pack --out=/tmp/x.tgz",
    "pnpm install --http-proxy=http://10.9.9.9:3128",
    "pnpm install --pnpr-server=http://10.9.9.9:1",
]

# A bundle written with printf, fetched as `upstream` and checked out: `l` is a link to /etc.
FETCHED_BUNDLE = "printf '# v2 git bundle\\012\\064daab0cf7db1fbae2e4339ea02d75e6c2e2c3c35 HEAD\\012\\064daab0cf7db1fbae2e4339ea02d75e6c2e2c3c35 refs/heads/x\\012\\012PACK\\000\\000\\000\\002\\000\\000\\000\\003\\064x\\332\\323O-I\\006\\000\\003:\\001l\\255\\001x\\332\\063\\064\\062\\000\\002\\205\\034\\006\\223\\267\\301\\376\\313\\342y\\322L\\176\\044d\\355V\\274\\355\\250\\260\\230\\061\\007\\000\\205\\174\\012\\010\\222\\006x\\332e\\311\\073\\012\\200\\060\\014\\000\\320\\075\\247\\310\\356\\222\\330\\077\\210x\\225\\264\\264\\350P\\012\\045\\202\\307\\327\\335\\267>\\235\\265\\242\\213\\071\\031\\323\\202\\021Wb\\012\\266\\254\\205C5\\236\\032\\073\\216\\054.\\133\\042\\277F\\220\\133\\317\\061Qp\\223#\\357H\\270\\320\\007\\312\\350\\375R\\255\\377\\201\\007\\136-\\135\\031\\327 \\374\\173DL\\256\\050\\364W\\363\\327A\\073\\031\\133\\245\\213\\034\\355\\014' > upstream && git fetch -q upstream && git checkout -q FETCH_HEAD -- l && echo x > l/fluidbox-x"  # noqa: E501


@pytest.mark.parametrize("command", [*TOOLS_RUN_AGAIN, FETCHED_BUNDLE])
def test_what_cargo_pnpm_and_git_fetch_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


# Links made by `ln` (a rule for `ln *`): a hard link of a climbing link, a climbing link made
# inside a folder reached through a link, `ln -r`'s computed climbing text (F141).
LINKS_AGAIN = [
    "mkdir -p a/b/c && ln -s ../../../etc/hostname a/b/c/h && ln a/b/c/h h2 && cat < h2",
    "mkdir -p a/b/c x && ln -s ../../../etc/hostname a/b/c/h && ln a/b/c/h x/ && cat < x/h",
    "mkdir -p a d && ln -s /workspace/d a/l && ln -s ../../etc/hostname a/l/h && cat < a/l/h",
    "mkdir -p a/b d && ln -s /workspace/d a/b/l && ln -s -t a/b/l ../../../etc/hostname && cat < d/hostname",  # noqa: E501
]


@pytest.mark.parametrize("command", LINKS_AGAIN)
def test_links_made_with_ln_that_lead_out_need_a_rule_that_names_them(command):
    arguments = {"command": command}
    evaluation = links_policy().evaluate("run_command", arguments, kinds()["run_command"])
    assert evaluation.verdict is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "cargo test -- --nocapture",
        "cargo clippy -- -D warnings",
        "pnpm install",
        "pnpm pack",
        "git fetch origin",
        "echo x > notes.txt && git fetch origin",
    ],
)
def test_the_plain_spellings_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# F142: the JavaScript tools, run a third time: eslint's `--print-config=F` and prettier's
# `--file-info=F` load the configuration beside F; vitest passes `--experimental.*` into its
# configuration (a module imported in every worker, a folder filled and deleted); `jest
# --clearCache` deletes its cache; `--api.host` with no value or `0` listens everywhere;
# playwright's UI opens the browser; `vitest init` installs packages and browsers.
JAVASCRIPT_TOOLS = [
    "playwright test --ui-host localhost",  # F121 had it allowed: the UI still opens a browser
    "npx eslint --print-config=/tmp/evil/x.js",
    "eslint --print-config=../other/x.js",
    "npx prettier --file-info=/tmp/evil/x.js",
    "prettier --file-info=../other/x.js",
    "npx vitest run --experimental.openTelemetry.enabled --experimental.openTelemetry.sdkPath=/tmp/evil/otel.mjs",  # noqa: E501
    "npx vitest run --experimental.openTelemetry.sdkPath /tmp/evil/otel.mjs --experimental.openTelemetry.enabled",  # noqa: E501
    "npx vitest run --experimental.openTelemetry.enabled --experimental.openTelemetry.browserSdkPath=/tmp/evil/otel.mjs",  # noqa: E501
    "npx vitest run --experimental.fsModuleCache --experimental.fsModuleCachePath /tmp/fsmc",
    "npx vitest run --experimental.fsModuleCachePath=/tmp/fsmc --clearCache",
    "npx jest --clearCache",
    "jest --clear-cache",
    "npm test -- --clearCache",
    "npx vitest --watch --standalone --api.host",
    "npx vitest watch --api.host",
    "npx vitest watch --api.host=",
    "npx vitest watch --api.host 0",
    "npx vitest watch --browser.api.host",
    "pnpm vitest watch --api.host",
    "npm test -- --watch --api.host",
    "npx playwright test --ui-port 0",
    "npx playwright test --ui-host 127.0.0.1",
    "npx playwright test --ui-host 0",
    "npm run e2e -- --ui-host 0.0.0.0",
    "npm run e2e -- --ui-port 8080",
    "npx vitest init browser",
    "vitest init browser < answers.txt",
]


@pytest.mark.parametrize("command", JAVASCRIPT_TOOLS)
def test_what_the_javascript_tools_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


# F143: the build tools, run a third time (make 4.3, cmake and ctest 3.25, gcc 12, clang 14):
# make, cmake and ctest expand `~` and `~user` themselves; make builds an archive's member
# where it is named, and reads any word with `=` as an assignment, its name expanded first;
# cmake's `-S=DIR`, `-t=install`; ctest's MemoryCheck dashboards submit; clang's
# `-working-directory`, `--sysroot`, CUDA's and AMD GPU's tools, HIP's pass plugin; gcc's LTO
# partition list.
BUILD_TOOLS = [
    "make -s '~daemon/../share/libdebuginfod-common/debuginfod'",
    "make -t '~daemon/../share/libdebuginfod-common/debuginfod'",
    "make -s '~/x'",
    "make -t '~/x'",
    "make 'x.a(/tmp/evil/e.o)'",
    "make x.a\\(/tmp/evil/e.o\\)",
    "make 'x.a(/usr/share/libdebuginfod-common/debuginfod)'",
    "make '$(shell rm -rf /workspace/src)x=1'",
    "make '$(shell touch /workspace/PWNED2) = 1'",
    "make ' x!=touch /workspace/PWNED3'",
    "make '\tx!=touch /workspace/PWNED4'",
    "make '$(eval SHELL:=/bin/sh)$(shell touch /workspace/PWNED-E)x=1'",
    "make '$(eval SHELL:=/bin/sh)x!=touch /workspace/PWNED-F'",
    "cmake --build build -- '$(eval SHELL:=/bin/sh)$(shell rm -rf /workspace/src)x=1'",
    "cmake --build build -- ' x!=touch /workspace/PWNED'",
    "cmake --build build -- 'x.a(/tmp/evil/e.o)'",
    "cmake --build build -- '~/x'",
    "cmake -S '~daemon/../share/cmake-3.25/Modules/FortranCInterface' -B /workspace/b",
    "cmake '~daemon/../share/cmake-3.25/Modules/FortranCInterface'",
    "cmake -S /workspace -B '~/build'",
    "cmake -S . '-B~/b2'",
    "cmake --build '~/b2'",
    "ctest --test-dir '~/t'",
    "cmake --build build -t=install",
    "cmake --build build '-t=all;install'",
    "ctest -D MemoryCheck",
    "ctest -D NightlyMemoryCheck",
    "ctest --dashboard NightlyMemoryCheck",
    "ctest -DMemoryCheck",
    "clang -working-directory /tmp/x -c y.c -o y.o",
    "clang -working-directory=/tmp/x y.c -o app",
    "clang -working-directory/tmp/x -c y.c -o y.o",
    "clang --sysroot=/tmp/sr m.c -o m",
    "clang --sysroot /tmp/sr m.c -o m",
    "clang --sysroot=/tmp/sr -fno-integrated-as -c m.c -o m.o",
    "clang -x cuda k.cu -c --cuda-path=/tmp/evil -nocudainc -nocudalib --cuda-gpu-arch=sm_50 -o k.o",  # noqa: E501
    "clang -x cuda k.cu -c --ptxas-path=/tmp/evil/ptxas -nocudainc -nocudalib --cuda-gpu-arch=sm_50 -o k.o",  # noqa: E501
    "clang -fopenmp -fopenmp-targets=amdgcn-amd-amdhsa --amdgpu-arch-tool=/tmp/evil/x -c m.c -o m.o",  # noqa: E501
    "clang -### -fopenmp -fopenmp-targets=amdgcn-amd-amdhsa --amdgpu-arch-tool=/tmp/evil/x -c m.c -o m.o",  # noqa: E501
    "clang -x hip --offload=spirv64 -nogpuinc -nogpulib --hipspv-pass-plugin=/tmp/evil/p.so -c k.hip -o k.o",  # noqa: E501
]


@pytest.mark.parametrize("command", BUILD_TOOLS)
def test_what_the_build_tools_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    ["make test", "make -j4 all", "cmake -S . -B build", "cmake --build build -- -j4"]
    + ["ctest --test-dir build", "clang -c a.c -o a.o", "cmake --build build --target test"],
)
def test_the_build_tools_plain_uses_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# F145: Ruby, run (ruby 3.1, rake 13, rspec 3.12, bundler 2.3): rspec's `--format` in
# OptionParser's spellings (`-bf X`, `--form X`: the debug gem's server), its patterns and
# folders as Ruby globs (`{..}` climbs), `.bundle/config` (BUNDLE_GEMFILE), `rake -N`
# (the user's `~/.rake/*.rake`).
RUBY = [
    "rspec -P '{..}/../tmp/evil/*_spec.rb'",
    "rspec -P '.*/../tmp/evil/*_spec.rb'",
    "rspec --pat '{..}/../tmp/evil/*_spec.rb'",
    "rspec -bP '{..}/x'",
    "mkdir -p '{..}/tmp/evil' && rspec '{..}/tmp/evil'",
    "rspec --default-path '{..}/tmp/evil'",
    "bundle exec rspec '{..}/tmp/evil'",
    "cd spec && rake -N",
    "rake --no-search",
    "mkdir -p .bundle && printf 'BUNDLE_GEMFILE: x' > .bundle/config",
    "rspec -bf Debug::OpenNonstop",
    "rspec --form Debug::Open",
    "bundle exec rspec --form Debug::OpenNonstop",
]

# F146: Django, poetry and coverage, run: makemessages' and compilemessages' locale and
# squashmigrations' name as paths, `test MODULE` imported, an option's value taken for the
# address (`runserver -v 1 0:8000`); poetry's build settings, `init --dependency` and `debug
# resolve` of a folder elsewhere; coverage's `-pm` and `--mod`, `--source=PKG.sub` imported.
PYTHON_PROJECT_TOOLS = [
    "python manage.py makemessages -l en_X/../../../../../../../tmp/mm/deep",
    "python manage.py makemessages --locale=en_X/../../../tmp/mm",
    "python manage.py compilemessages -l /tmp/evil",
    "python manage.py compilemessages --locale=/tmp/evil",
    "python manage.py squashmigrations --noinput app 0002 --squashed-name x/../../../tmp/sq",
    "python manage.py test antigravity",
    "python manage.py test venv.__main__",
    "python manage.py test app antigravity",
    "coverage run manage.py test antigravity",
    "python manage.py runserver -v 1 0:8000",
    "python manage.py runserver --verbosity 2 0.0.0.0:8001",
    "python manage.py startapp -v 1 evil /tmp/out1",
    'poetry build -f wheel --config-settings="--build-option=--bdist-dir /tmp/victimdir"',
    "poetry init -n --dependency /tmp/evilpkg",
    "poetry init -n --dependency=../evilpkg",
    "poetry debug resolve /tmp/evilpkg",
    "coverage run -pm http.server 8123",
    "coverage run -Lpm http.server",
    "coverage run --mod http.server 8124",
    "coverage run --branch -pm pytest -q -p no:cacheprovider /tmp/evil",
    "coverage run --source=antigravity.x t.py",
    "coverage run --source antigravity.x t.py",
]

# F147: Maven 3.8 and Gradle 4.4, run: Maven's `--D`, "inert" properties holding a path,
# `install` and `purge-local-repository` (the shared ~/.m2), `deploy`, `site:run`, `release`,
# `scm:`; Gradle's `--scan`, `--project-prop` paths, `publishToMavenLocal`.
JAVA = [
    "mvn site:run",
    "mvn -o site:run",
    "mvn site:run -Dport=9000",
    "mvn site:deploy",
    "mvn site:stage-deploy",
    "mvn release:prepare -B",
    "mvn release:perform",
    "mvn scm:update",
    "mvn deploy",
    "mvn clean deploy",
    "./mvnw deploy",
    "mvn -o install",
    "mvn -o dependency:purge-local-repository",
    "mvn -q --D=maven.ext.class.path=/tmp/evil/ext.jar -o validate",
    "mvn -q validate --D maven.ext.class.path=/tmp/evil/ext.jar -o",
    "gradle --scan hello",
    "mvn -o -q jar:jar -Drevision=x/../../../tmp/fbx-jar",
    "mvn package -Drevision=x/../../../tmp/evil",
    "mvn package -Dchangelist=/../../../tmp/evil",
    "mvn install -Dsha1=/../../../../x",
    "gradle --offline -q jar --project-prop version=x/../../../../tmp/fbx-g",
    "gradle jar --project-prop=version=x/../../../../tmp/fbx-g",
    "gradle jar -Pversion=x/../../../../tmp/fbx-g",
    "gradle jar -Pversion=x/../../../../root/fbx",
    "gradle jar -Pversion=x/../../../../usr/local/fbx",
    "gradle publishToMavenLocal",
]


@pytest.mark.parametrize("command", RUBY + PYTHON_PROJECT_TOOLS + JAVA)
def test_what_ruby_python_and_java_tools_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    ["rspec spec/models", "rspec -f progress", "rake test", "poetry build", "mvn -q test"]
    + ["mvn -DskipTests package", "gradle jar -Pversion=1", "python manage.py test app.tests"]
    + ["python manage.py makemessages -l de", "coverage run -p -m pytest tests"],
)
def test_their_everyday_uses_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


# F148: git's write side and the package managers' registries, run: `git stash -u -- :` (and
# `'*'`, `/workspace`) deleted every untracked file (a rule's text holds `:` and `*`, which had
# counted as naming them); `git switch --orphan` emptied the tree; pnpm's and yarn's `set`,
# registry commands with the user's token, browsers and editors, shims, runtimes, `yarn init`,
# `yarn run --require`, `yarn patch-commit` of an outside folder.
WRITE_SIDE = [
    "git stash push -u -- :",
    "git stash push -u -- '*'",
    "git stash push -u -- /workspace",
    "git stash -u -- :",
    "git stash push -a -- :",
    "git stash push -u -- /workspace/src/..",
    "git switch --orphan x",
    "git switch --orp x",
    "git checkout side -- '*'",
    "pnpm set script-shell /workspace/bin/ls",
    "pnpm set script-shell /tmp/evil/sh",
    "pnpm c set registry http://127.0.0.1:4874/",
    "pnpm unpublish x@1.0.0 --force",
    "pnpm deprecate x@1.0.0 bad",
    "pnpm dist-tag add x@1.0.0 evil",
    "pnpm owner add bob x",
    "pnpm star x",
    "pnpm profile set email evil@x",
    "pnpm logout",
    "pnpm token list",
    "yarn tag add x@1.0.0 evil",
    "yarn tag rm x latest",
    "yarn owner add bob x",
    "yarn logout",
    "pnpm bugs",
    "pnpm repo",
    "pnpm docs x",
    "pnpm edit x",
    "pnpm shim add bintool",
    "pnpm runtime set node 20",
    "pnpm rt set node 20",
    "pnpm pack-app -t linux-x64 index.js",
    "pnpm with 9.0.0 --version",
    "pnpm install --npmrc-auth-file=/tmp/evil/npmrc",
    "yarn init -i 3.6.0",
    "yarn init -2",
    "yarn run --require /tmp/evil/x.js bintool",
    "yarn run --require=/tmp/evil/x.js bintool",
    "yarn workspaces foreach -A run --require /tmp/evil/x.js bintool",
    "yarn workspace demo run --require /tmp/evil/x.js bintool",
    "yarn init evil",
    "yarn init vite",
    "yarn patch-commit -s /tmp/evil/pp/user",
    "yarn patch-commit /tmp/evil/pp/user",
    "pnpm stage approve 0b3c0e4a-1111-2222-3333-444455556666",
]


@pytest.mark.parametrize("command", WRITE_SIDE)
def test_what_git_and_the_package_managers_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


# F148, a last pass over today's readings (oracle): the moved folder and the fetched bundle
# behind a wrapper or in `sh -c`, and a repository written as `up.git` fetched as `up`; and
# a positional parameter's value is data, not code (`sh -c 'echo "$1"' _ '$(rm …)'` is no
# NEVER: the shell only prints it).
_MOVED = "mkdir -p /workspace/a/b/c && cd /workspace/a/b/c && "


@pytest.mark.parametrize(
    "command",
    [
        _MOVED + "env mv /workspace/a/b /workspace/b2 && echo x > ../../../etc/fluidbox-x",
        _MOVED + "timeout 5 mv /workspace/a/b /workspace/b2 && echo x > ../../../etc/fluidbox-x",
        _MOVED + "command mv /workspace/a/b /workspace/b2 && cat < ../../../etc/hostname",
        _MOVED + "sh -c 'mv /workspace/a/b /workspace/b2' && echo x > ../../../etc/fluidbox-x",
        "printf x > up && env git fetch -q up && git checkout -q FETCH_HEAD",
        "printf x > up && timeout 9 git fetch -q up && git checkout -q FETCH_HEAD",
        "mkdir -p up.git/refs && printf x > up.git/HEAD && git fetch -q up && git checkout -q FETCH_HEAD",  # noqa: E501
    ],
)
def test_a_wrapper_does_not_hide_a_moved_folder_or_a_fetched_file(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'echo \"$1\"' _ '$(rm -rf /workspace/victim)'",
        "bash -c 'echo $1' _ 'a;rm -rf /workspace/victim'",
    ],
)
def test_a_positional_parameter_s_value_is_data(command):
    assert _review(command) is Verdict.ASK


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("go fmt *", "go fmt fmt", Verdict.ASK),
        ("go fmt fmt", "go fmt fmt", Verdict.ALWAYS),
        ("go *", "go fmt fmt", Verdict.ASK),
        ("go fmt strings", "go fmt strings", Verdict.ALWAYS),
        ("go fmt *", "go fmt ./...", Verdict.ALWAYS),
    ],
)
def test_an_operand_is_named_by_the_rule_only_beyond_its_own_words(rule, command, expected):
    """A requirement that names an operand was met by the rule's own words for the program
    and the subcommand (F153, left open there): the rule must hold the word as often as the
    command does."""
    policy = compile_policy(
        [
            {"pattern": f"run_command:{rule}", "action": "ALWAYS"},
            {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
        ]
    )
    arguments = {"command": command}
    assert policy.evaluate("run_command", arguments, kinds()["run_command"]).verdict is expected
