"""Shapes from the thirteenth shell-rules review's run of the real tools (FINDINGS F121).

Each was run in a bubblewrap sandbox with the tool itself (jest 30.5, vitest 4.1, ESLint
10.16, prettier 3.10, @playwright/test 1.65, coverage 7.18, pytest 9.2, pylint 4.1, black
26.10, tox 4.67, uv 0.13, ruff 0.17): it wrote outside the workspace, ran code from /tmp,
listened on every interface or printed a stored credential, while the engine said ALWAYS.
Most were spellings the engine did not read as the tool's parser does: yargs', mri's and
commander's clusters and glued values (`jest -ic F`, `-cF`, `--c F`), a configuration given
as JSON, prettier's own glob alternatives, an option that takes the next word (`black
--cache-dir --check F`). Read by the engine alone here: none of these tools is installed
where the oracle runs.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

NOT_ALLOWED = [
    # jest: a configuration as JSON, and -c's other spellings
    'jest --config \'{"testEnvironment": "/tmp/evil/env.js", "rootDir": "/workspace"}\' t',
    'jest -c \'{"globalSetup": "/tmp/evil/setup.js", "rootDir": "/workspace"}\' t',
    "jest -ic /tmp/evil/jest.config.js t",
    "jest -bc /tmp/evil/jest.config.js",
    "jest -c/tmp/evil/jest.config.js t",
    "jest --c /tmp/evil/jest.config.js t",
    "npx jest -ic /tmp/evil/jest.config.js t",
    "npm test -- -ic /tmp/evil/jest.config.js",
    # vitest: -c's spellings; reports and attachments; a VCS provider; what listens
    "vitest run -uc /tmp/evil/vitest.config.mjs t",
    "vitest run --c /tmp/evil/vitest.config.mjs t",
    "vitest bench --run --outputJson /tmp/bench.json t",
    "vitest list --json=/tmp/list.json t",
    "vitest list --json /tmp/list.json",
    "vitest run --attachmentsDir /tmp/att t",
    "vitest run --changed --experimental.vcsProvider /tmp/evil/vcs.mjs",
    "vitest run --no-file-parallelism --inspect=0.0.0.0:9229 t",
    "vitest run --inspectBrk 0.0.0.0:9229 t",
    "vitest --watch --standalone --api.host 0.0.0.0",
    "vitest --watch --api.allowExec --api.allowWrite",
    # ESLint and prettier: the name standard input is read as; prettier's own globs
    "echo 'var x=1' | eslint --stdin --stdin-filename /tmp/evil/x.js",
    "eslint --stdin --stdin-filename /tmp/evil/x.js < src/a.js",
    "prettier --stdin-filepath /tmp/evil/x.js < src/a.js",
    "prettier --stdin-filepath=/tmp/evil2/x.js < src/a.js",
    "prettier --check '{src,/tmp/evil}/*.js'",
    "prettier --check '{src,../tmp/evil}/*.js'",
    "prettier -l '{src,/tmp/evil}/x.js'",
    "prettier --check '@(src|/tmp/evil)/*.js'",
    # playwright: a tsconfig whose paths resolve imports, reporters, files, a UI that listens
    "playwright test --tsconfig /tmp/evil/tsconfig.json e2e",
    "playwright test --add-reporter /tmp/evil/rep.js e2e",
    "playwright test --last-failed-file /tmp/lastrun.json e2e",
    "playwright test -c/tmp/evil/pw.config.js",
    "playwright test -xc /tmp/evil/pw.config.js",
    "playwright test --ui-host 0.0.0.0 --ui-port 8080",
    "npx playwright test --tsconfig /tmp/evil/tsconfig.json",
    # coverage hands its runner the words; pytest --pyargs; pylint's glued -f
    "coverage run -m unittest discover -s /tmp/evil -p 'test_*.py'",
    "coverage run -m pytest -q /tmp/evil",
    "pytest --pyargs test.test_json.test_float -q",
    "python -m pytest --pyargs test.test_json.test_float -q",
    "pylint -fjson:/tmp/pylint.json src",
    "pylint -fthis.X src",
    # black: --cache-dir takes the next word, so --check is no dry run there
    "python -m black --cache-dir --check /tmp/x.py",
    "black --cache-dir --diff /tmp/x.py",
    "python -m black --check --cache-dir /tmp/bc src",
    # tox's one-letter aliases of exec and quickstart
    "echo 'print(1)' | tox e -e py -- python3 -",
    "tox e -e py -- python3 -m http.server",
    "tox q /tmp/newproj",
    # uv: another project's build, a script's lock after a global option, ruff downloaded,
    # the user's credentials
    "uv build /tmp/evil",
    "uv --color never lock --script /tmp/evil/x.py",
    "uv --color never remove --script /tmp/evil/x.py requests",
    "uv export --script /tmp/evil/x.py",
    "uv tree --script /tmp/evil/x.py",
    "uv sync --script /tmp/evil/x.py",
    "uv format",
    "uv format -- /tmp/x.py",
    "uv auth token example.com",
    "uv auth login --token t example.com",
    "uv auth logout example.com",
    # ruff check rewrites its operands when the project's configuration says `fix = true`
    "ruff check --select I,F401 /tmp/x.py",
    "ruff check ../other/x.py",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_did_outside_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "jest -i",
    "jest -ci",
    "jest -t 'login works'",
    "jest -c jest.config.js",
    'jest --config \'{"testMatch": ["**/*.spec.js"]}\'',
    "npm test -- -i",
    "vitest run -u",
    "vitest run --inspect",
    "vitest --inspect=9229",
    "vitest --inspect=127.0.0.1:9229",
    "vitest list --json",
    "prettier --check 'src/**/*.{js,ts}'",
    "prettier --check .",
    "ruff check .",
    "ruff check",
    "ruff check --select E501 src tests",
    "ruff check --output-format=github src",
    "python -m black --check src",
    "python -m black -q --check src",
    "isort --profile black --check-only src",
    "coverage run -m pytest tests",
    "coverage run -m unittest discover -s tests",
    "pylint -fjson src",
    "tox -e py311",
    "uv build",
    "uv build packages/lib",
    "uv auth dir",
    "playwright test -x",
    "eslint --stdin --stdin-filename src/a.js",
    "prettier --stdin-filepath src/a.js",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
