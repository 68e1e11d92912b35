"""Shapes from the tenth shell-rules review (FINDINGS F96-F99): what a program loads from the
settings on its command line, read by the engine alone.

tests/shell_corpus/attacks.py ("loaded from settings") proves the first two in the oracle's
sandbox: `pytest -W error::lib2to3.__main__.X` imported lib2to3's command line tool as pytest
started, which read pytest's argv as its own and wrote to the `--output-dir` it found there
(F96); an npm test script's `npm run` read `--script_shell=` and `--SCRIPT-SHELL=`, passed on
as npm_config_script_shell, as its script-shell and ran the program named (F97). gcc's
`-gsplit-dwarf` runs objcopy on the object it wrote, from the same search as its assembler
and linker: a compiler pass, so it stays allowed (F98). gettext joins LANGUAGE into the path
of the message catalogs it opens, `..` and all (F99). What agents run stays ALWAYS.
"""

import pytest

from governance.policy import Verdict, compile_policy
from tests.governance.policy.test_review_shell_2 import verdict
from tests.shell_corpus.policies import _document, kinds


def verdict_under(rules: list[tuple[str, str]], command: str) -> Verdict:
    policy = compile_policy(_document("review-8", rules))
    return policy.evaluate("run_command", {"command": command}, kinds()["run_command"]).verdict


REFUSED = [
    # F96: a warning category is imported from its module (pytest's -W, --pythonwarnings)
    "pytest -n -W error::lib2to3.__main__.X --output-dir=/etc/fluidbox-x tests",
    "python -m pytest -n -W error::lib2to3.__main__.X --output-dir=/root/x tests",
    "pytest -W error::antigravity.X tests",
    "pytest -Werror::test.__main__.X tests",
    "pytest -qWerror::antigravity.X tests",
    "python3 -m pytest --pythonwarnings=error::antigravity.X tests",
    "python -m pytest --pythonwarnings error::antigravity.X tests",
    "pytest -W 'ignore:msg: venv.__main__.X' tests",
    "coverage run -m pytest -W error::antigravity.X tests",
    # F97: npm's settings, however spelled, reach the npm its scripts start
    "npm test --script_shell=/workspace/bin/ls",
    "npm test --SCRIPT-SHELL=/workspace/bin/ls",
    "npm run build --Script_Shell=sh",
    "npm install --node_gyp=/tmp/x",
    "npm install --node_options=--require=/tmp/x.js",
    "npm ci --userConfig=/tmp/npmrc",
    "npm install --python=/tmp/x",
    "npm test --foo=../../tmp/x",
    "npm install --tmp=/tmp/x",
    "npm test --cafile=/etc/x",
    # F99: gettext opens the catalogs under every LANGUAGE name, `..` and all
    "LANGUAGE=../../../../workspace/x ls",
    "LANGUAGE=/tmp/x cat notes.txt",
    "env LANGUAGE=fr:../../../../tmp/x ls",
]


@pytest.mark.parametrize("command", REFUSED)
def test_what_a_program_loads_from_its_settings_is_not_allowed(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "pytest -W error tests",
    "pytest -W ignore::DeprecationWarning tests",
    "pytest -W 'ignore:some message:UserWarning' -q",
    "pytest -W ignore::pytest.PytestUnraisableExceptionWarning tests",
    "python -m pytest -W error::_pytest.warning_types.PytestUnknownMarkWarning -q",
    "pytest -n 4 -W error tests",
    "pytest -k W tests",
    "npm test",
    "npm install --save-dev typescript",
    "npm install --legacy-peer-deps --no-audit --no-fund",
    "npm ci --omit=dev --loglevel=warn",
    # (with `--outputFile=…` it is jest's writing option, handed on: F110, test_review_shell_9)
    "npm test -- --coverage",
    "npm run build -- --outDir=dist",
    # F98: objcopy runs as a pass of gcc's
    "gcc -g -gsplit-dwarf -c -x c /dev/null -o /workspace/a.o",
    "gcc -O2 -g -gsplit-dwarf -o /workspace/build/app src/main.c",
    "LANGUAGE=fr:en ls",
    "LANG=C.UTF-8 LANGUAGE=en_US:en ls",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_the_settings_agents_use_stay_allowed(command):
    assert verdict(command) is Verdict.ALWAYS


def test_a_rule_that_names_the_warning_option_allows_it():
    rules = [("run_command:pytest -W *", "ALWAYS")]

    assert verdict_under(rules, "pytest -W error::django.utils.RemovedInDjango50Warning") is (
        Verdict.ALWAYS
    )
    assert verdict_under([("run_command:pytest *", "ALWAYS")], "pytest -W error::a.B") is not (
        Verdict.ALWAYS
    )


def test_python_imports_a_warning_category_before_its_script():
    rules = [("run_command:python *", "ALWAYS")]

    assert verdict_under(rules, "python -W error::lib2to3.__main__.X x.py /etc/x") is not (
        Verdict.ALWAYS
    )
    assert verdict_under(rules, "python -bWerror::antigravity.X x.py") is not Verdict.ALWAYS
    assert verdict_under(rules, "python -W ignore::DeprecationWarning x.py") is Verdict.ALWAYS
    assert verdict_under(rules, "python x.py -W error::a.B") is Verdict.ALWAYS  # the script's
