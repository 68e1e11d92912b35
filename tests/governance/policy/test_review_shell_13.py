"""Shapes from the thirteenth shell-rules review's run of the package managers and Django
(FINDINGS F122).

Each was run in a bubblewrap sandbox with the tool itself (pnpm 12.25 and 10.34, yarn 4.18
and 1.22, Django 5.2, pip 26.3, uv 0.13, tox 4.67) and ran a program the command named,
wrote or linked outside the workspace, listened on every interface or printed a registry
token, while the engine said ALWAYS: pnpm runs a word that is none of its commands and no
script as `pnpm exec`; pnpm reads `--prefix` as `--dir`; argparse takes any unambiguous
start of a long option (`--outp`) and a short one's value glued (`-o/tmp/x`). Read by the
engine alone here: none of these tools is installed where the oracle runs.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

NOT_ALLOWED = [
    # pnpm runs any program: a word that is none of its commands falls back to `pnpm exec`
    "pnpm node -e \"require('fs').writeFileSync('/tmp/pnpm-node','x')\"",
    "pnpm perl -e 'open F,\">/tmp/pnpm-perl\"'",
    "pnpm -r bash -c 'touch /tmp/pnpm-r-bash'",
    "pnpm python3 -m http.server 8000",
    "pnpm --filter web node -e 1",
    "pnpm --unknown-option x node -e 1",
    "pnpm ./scripts/evil.sh",
    # pnpm: --prefix is --dir; the lockfile's folder; a deployment's folder
    "pnpm --prefix /tmp/other test",
    "pnpm --prefix=/tmp/other test",
    "pnpm install --lockfile-dir=/tmp/lf --offline",
    "pnpm install --lockfile-dir=.. --offline",
    "pnpm deploy /tmp/out",
    "pnpm --filter web deploy --legacy /tmp/out2",
    # dependencies by link:, portal:, exec:, patch: from outside
    "pnpm add link:/tmp/lnk --offline",
    "yarn add linkpkg@link:/tmp/linkpkg",
    "yarn add portalpkg@portal:/tmp/portalpkg",
    "yarn add gen@exec:/tmp/gen/gen.js",
    "yarn add gen@exec:./gen.js",
    "yarn add 'x@patch:x@npm%3A1.0.0#/tmp/x.patch'",
    # registry tokens printed, the user's configuration rewritten
    "yarn config get npmAuthToken --no-redacted",
    "yarn config --no-redacted",
    "yarn config list",
    "yarn config get _authToken",
    "pnpm config list",
    "pnpm config get //registry.npmjs.org/:_authToken",
    "yarn config unset -H npmAuthToken",
    "yarn config delete registry",
    "pnpm config delete registry",
    # node's inspector on every interface
    "yarn run --inspect=0.0.0.0:9229 tool",
    "yarn run --inspect-brk 0.0.0.0:9229 tool",
    # Django's servers on every interface; argparse's spellings; modules by name
    "python manage.py runserver 0.0.0.0:8000 --noreload",
    "python manage.py runserver 0:8000",
    "python manage.py runserver 192.168.1.5:8000",
    "python manage.py testserver --noinput --addrport 0.0.0.0:8001 empty.json",
    "python manage.py dumpdata --outp /tmp/dd.json auth",
    "python manage.py dumpdata --o /tmp/dd.json auth",
    "python manage.py dumpdata -o/tmp/dd.json auth",
    "python manage.py test --pythonpat=/tmp/e evilmod",
    "printf 'import os\\nc\\n' | python manage.py test --pd app",
    "python manage.py test --top-level-directory=/tmp/e",
    "python manage.py test --sett=antigravity",
    "python manage.py diffsettings --default this",
    # requirement lists and dependency groups from outside, in the `=` spelling
    "pip install --no-index --group=/tmp/other/pyproject.toml:dev",
    "python -m pip install --gr=/tmp/other/pyproject.toml:dev",
    "uv pip install --offline --requirements=/tmp/r.txt",
    "uv add --requirements=/tmp/r.txt",
    "uv pip install --constraints=/tmp/c.txt x",
    "uv pip install --overrides=/tmp/o.txt x",
    # tox: its configuration into a file; man and a link in the user's files
    "tox config -o /tmp/tox-config-out -e py",
    "tox c --output-file /tmp/x",
    "tox man",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_did_outside_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "pnpm install",
    "pnpm test",
    "pnpm build",
    "pnpm lint",
    "pnpm -r --parallel dev",
    "pnpm --loglevel warn build",
    "pnpm --filter web build",
    "pnpm run build",
    "pnpm tsc --noEmit",
    "pnpm vitest run",
    "pnpm eslint .",
    "pnpm add -D vitest",
    "pnpm rm lodash",
    "pnpm git status",
    "yarn add lodash",
    "yarn add ./packages/x",
    "yarn run build",
    "yarn run --inspect tool",
    "python manage.py runserver",
    "python manage.py runserver 8000",
    "python manage.py runserver 127.0.0.1:8000",
    "python manage.py test",
    "python manage.py test --parallel 2",
    "python manage.py diffsettings",
    "python manage.py check --deploy",
    "pip install --group dev",
    "uv pip install --requirements=requirements.txt",
    "tox config -e py",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
