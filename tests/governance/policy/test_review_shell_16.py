"""Shapes from the fourteenth shell-rules review's run of the text tools, the Python tools and
the Rust, C and build tools (FINDINGS F127-F130).

Each was run in a bubblewrap sandbox with the tool itself (GNU sed 4.9, gawk 5.2, less 590,
xxd 2022, coreutils 9.1; mypy 2.4, black 26.10, ruff 0.17, isort, pylint 4.1, uv 0.13,
coverage 7.18; rustc/cargo 1.95 and a nightly, cmake/ctest 3.25 with make and ninja) and
wrote outside the workspace, ran a program or a shared object the command did not name,
connected or listened, or printed a credential, while the engine said ALWAYS under the
benign policy. What the tools read that the engine did not: sed's bracket expressions
(`s/[/]*/x/w F`), gawk's getopt spellings and `/inet/` names, less's case-folded long
names, xxd's `--len` (one dash to it), uniq's obsolete `+N`, discover's start as a module,
the configuration black and ruff load beside a file, response files expanded before any
option is read, cmake's `;` lists and ctest's `-T all`.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

NOT_ALLOWED = [
    # F127 sed: the delimiter inside a bracket expression is itself; the flag after it acts
    'sed "s/[/]*/x;a /w /tmp/pwn1" README.md',
    'sed -n "s/[/]*/x;a ;touch \\/tmp\\/pwn2;#/e" README.md',
    'sed "s,[,]*,x;a ,w /tmp/evil/sed_comma" README.md',
    'sed -n --expression="s/[[:alpha:]/]*/x;a /w /tmp/evil/sed_class" README.md',
    'sed -e p -e "s/[^/]*/x;a /w /tmp/evil/sed_neg" README.md',
    'sed "/[/]/w /tmp/x" README.md',
    "sed 's/[[.a.]]/x/' README.md",
    # F127 awk: getopt's abbreviations and clusters, every -e, /inet names and ARGV
    'awk --assig x=1 "BEGIN{system(\\"touch /tmp/pwn3\\")}"',
    'awk --field-sep , "BEGIN{system(\\"touch /tmp/pwn4\\")}"',
    'awk -bv x=1 "BEGIN{system(\\"touch /tmp/pwn5\\")}"',
    'awk -bF , "BEGIN{system(\\"touch /tmp/pwn6\\")}"',
    'awk -W source "BEGIN{system(\\"touch /tmp/pwn6\\")}"',
    'awk -e \'BEGIN{}\' -e "BEGIN{system(\\"touch /tmp/pwn6\\")}"',
    'awk -Lv "BEGIN{system(\\"touch /tmp/evil/lv1\\")}"',
    'awk -bLv "BEGIN{system(\\"touch /tmp/evil/lv3\\")}"',
    'awk -LF "BEGIN{system(\\"touch /tmp/evil/lf2\\")}" README.md',
    'awk "BEGIN{v=\\"AR\\" \\"GV\\"; SYMTAB[v][1]=\\"/in\\" \\"et/tcp/8097/0/0\\"} 1" README.md',
    "awk 1 /inet/tcp/0/10.1.2.3/80",
    "awk 1 /inet4/udp/0/10.9.9.9/53",
    "awk 1 /inet/tcp/8098/0/0",
    'awk "BEGIN{ARGV[1]=\\"/inet/tcp/8099/0/0\\"; ARGC=2} {print}"',
    # F127 less folds its long names; xxd reads `--len` as `-len`; uniq's `+N`
    "less --Lesskey-src=/tmp/evil/k README.md",
    "less --LESSKEY-SRC=/tmp/evil/k README.md",
    "cat README.md | less --Log-file=/tmp/evil/log3",
    "cat README.md | less --LOG-fi=/tmp/evil/log4",
    "xxd --len 3 README.md /tmp/evil/x1",
    "xxd --seek 0 README.md /tmp/evil/x2",
    "xxd -r --s 0 README.md /tmp/evil/x5",
    "xxd -R always README.md /tmp/x",
    "xxd -skip 0 README.md /tmp/evil/x6",
    "uniq +1 README.md /tmp/evil/u1",
    "uniq -c +0 README.md /tmp/evil/u2",
    # F128 uv: the build backend's settings, a credential helper, ty, newer Pythons, a path
    'uv build --wheel --no-build-isolation "--config-setting=--build-option=--bdist-dir /tmp/v"',
    "uv build --config-setting=--build-option=--bdist-dir=/tmp/bd2",
    "uv sync --config-settings=--build-option=--bdist-dir=/tmp/bd2",
    "uv pip install --config-settings=--build-option=--bdist-dir=/tmp/bd2 .",
    'echo \'{"uri":"https://example.com/simple/x"}\' | uv auth helper --protocol bazel get',
    "uv check",
    "uv check --fix",
    "uv python upgrade",
    "uv python find /tmp/evil/python",
    "uv python list /tmp/evil/python",
    # F128 unittest's discover start imported; black's and ruff's configuration beside
    "python -m unittest discover -s antigravity",
    "python -m unittest discover venv __main__.py",
    'python -m unittest discover -s venv -p "__main__.py"',
    "python -m unittest discover --start antigravity",
    "black --config /tmp/evil3/b.toml",
    "black --stdin-filename /tmp/evil/x.py - < src/app.py",
    "black --check /tmp/evil/x.py",
    "ruff check --no-fix /tmp/evil2/x.py",
    "ruff format --check /tmp/evil2/x.py",
    "ruff check --stdin-filename /tmp/evil2/x.py -",
    "python -m black --check /tmp/evil/x.py",
    "python -m ruff format --check /tmp/evil2/x.py",
    # F128 mypy's hidden cache map; pylint's clusters; coverage annotate; isort --diff
    "mypy --no-sqlite-cache --cache-map src/app.py /tmp/x.meta.json /tmp/x.data.json -- src/app.py",
    "pylint -Efjson:/tmp/pyl2 src",
    "pylint -Ef json:/tmp/pyl2 src",
    "pylint -sn -Efjson:/tmp/pyl2 src",
    "pylint -Ef this.X src",
    "coverage annotate",
    "isort --diff /tmp/x.py",
    "isort --df /tmp/x.py",
    # F129 response files: rustc's, and a lint level's value clippy-driver expands
    "rustc --version --verbose @/tmp/evil/args",
    "rustc --version @args.txt",
    "cargo clippy -- -D @/tmp/evil/args",
    "cargo clippy -- --cap-lints @/tmp/evil/args2",
    "cargo clippy -- -W @args.txt",
    # F129 cmake's target lists and `./install`; ctest's every step
    "cmake --build build --target 'all;install'",
    "cmake --build build -t 'install;all'",
    "cmake --build build --target=all\\;install",
    "cmake --build build --target ./install",
    "cmake --build build -- ./install",
    "ctest -T all",
    "ctest -T All",
    "ctest --test-action all",
    "ctest -M Experimental -T all",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "sed 's/[0-9]*//g' README.md",
    "sed 's/[[:space:]]*$//' README.md",
    "sed -n '/^[a-z]/p' README.md",
    "sed 's/[]]/x/g' README.md",
    "sed 's,[/],-,g' README.md",
    "awk '{print $1}' README.md",
    "awk -F: '{print $1}' README.md",
    "awk --field-separator=: '{print $1}' README.md",
    "awk -v n=3 'NR==n' README.md",
    "awk 'END {print NR}' README.md",
    "awk -W version",
    "less -N README.md",
    "less --LINE-NUMBERS README.md",
    "xxd -l 64 assets/logo.png",
    "xxd --len 64 assets/logo.png",
    "xxd -s 10 README.md",
    "awk -Lv '{print}' README.md",
    "uniq -c sorted.txt",
    "uniq +1 sorted.txt",
    "python -m unittest discover -s tests",
    "python -m unittest discover tests",
    "python -m unittest discover -v -s tests -p 'test_*.py'",
    "black --check .",
    "black --check -l 100 src",
    "ruff check --select E,F src",
    "ruff format --check .",
    "python -m black --check .",
    "isort --check-only --diff .",
    "uv python find 3.12",
    "uv python list",
    "uv sync",
    "pylint -E src",
    "pylint -sn src",
    "coverage report -m",
    "rustc --version",
    "cargo clippy -- -D warnings",
    "cargo clippy --all-targets -- -D warnings -W clippy::pedantic",
    "cmake --build build --target all",
    "ctest -T Test",
    "ctest --output-on-failure",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
