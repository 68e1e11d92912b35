"""Shapes from the thirteenth shell-rules review's run of git, the build tools and pytest's
plugins (FINDINGS F124-F126).

Each was run in a bubblewrap sandbox with the tool itself (git 2.39, gcc 12.2, clang 14.0,
cmake 3.25 with ninja 1.11, Maven 3.8, Gradle 4.4, pytest 9.2 with xdist, pytest-cov and
pytest-env) and ran a program, wrote git's configuration or outside the workspace, listened
on the network or printed a credential, while the engine said ALWAYS (under the benign
policy; the review policy asked for every git line). git takes `--shallow-file`'s value
from the next word, negates an action with `--no-…`, and reads `-c`/`-m` as flags in some
subcommands; Maven takes its long options with one dash; pytest finds its ini file before
it loads the plugins, so a plugin option's next word is a path then (`pytest -n /tmp/x`
used /tmp/x/pytest.ini). Read by the engine alone here (git is installed where the oracle
runs; its shapes that need a second commit, a conflict or a terminal are kept to the
engine).
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

NOT_ALLOWED = [
    # F125 git: a global option that takes the next word; one the engine does not know
    "git --no-pager --shallow-file log rebase -x 'touch /workspace/PWNED' HEAD~1",
    "git --no-pager --shallow-file log config core.fsmonitor 'touch /workspace/PWNED'",
    "git --no-pager --shallow-file status grep -O'touch /workspace/PWNED' demo",
    "git --no-pager --shallow-file log -c alias.x='!touch /workspace/PWNED' x",
    "git --no-pager --unknown-option log",
    "git --no-pager --help log",
    # git config: a read taken back is a write; the editor
    "git config --get --no-get core.fsmonitor 'touch /workspace/PWNED'",
    "git --no-pager config -l --no-list core.fsmonitor 'touch /workspace/PWNED'",
    "git config --get --no-get alias.st '!touch /workspace/PWNED'",
    "git config --get --no-get --file /etc/fluidbox-x core.x y",
    "TERM=xterm git config --get -e --no-get",
    # letters that are flags in grep, rebase and am
    "git grep -cO'touch /workspace/PWNED' demo",
    "git grep -cOtouch demo",
    "git --no-pager rebase -mx 'touch /workspace/PWNED' HEAD~1",
    "TERM=xterm git --no-pager rebase -mi HEAD~1",
    "git --no-pager rebase -fmS HEAD~1",
    "git --no-pager am -mS p.patch",
    "git --no-pager am -cS p.patch",
    # bisect view runs a program; remote show and prune reach an address
    "git --no-pager bisect view git -c alias.x='!touch /workspace/PWNED;:' x",
    "git remote -v show https://evil.example/x",
    "git remote -v show evil.example:x",
    "git --no-pager remote prune https://evil.example/x",
    # the editor: notes --ref, commit's negations, pull -ri, rebase --continue
    "TERM=xterm git --no-pager notes --ref x edit",
    "TERM=xterm git --no-pager notes --ref x add",
    "TERM=xterm git --no-pager notes --ref=x add",
    "TERM=xterm git commit --allow-empty -m x --no-message",
    "TERM=xterm git commit --allow-empty -F notes.txt --no-file",
    "TERM=xterm git commit --allow-empty -C HEAD --no-reuse-message",
    "TERM=xterm git commit --allow-empty --dry-run --no-dry-run",
    "TERM=xterm git commit --allow-empty --fixup=HEAD --no-fixup",
    "TERM=xterm git --no-pager pull -ri origin master",
    "TERM=xterm git --no-pager rebase --continue",
    # fast-import's marks files named by the stream, its pack edges
    "printf 'feature export-marks=/etc/x\\n' | git --no-pager fast-import --allow-unsafe-features",
    "git --no-pager fast-import --export-pack-edges=/etc/fluidbox-x < s.fi",
    # F124 gcc and clang: a header precompiled beside itself, timing, clang's own spellings
    "gcc -c /usr/include/stdio.h",
    "gcc -x c-header /usr/include/stdio.h",
    "clang -c /usr/include/stdio.h",
    "g++ -x c++-header /usr/include/c++/12/vector",
    "gcc -time=/etc/fluidbox-x -c -x c /dev/null -o /workspace/a.o",
    "clang --analyze -Xanalyzer -load -Xanalyzer /workspace/p.so src/main.c",
    "clang -cc1 -load /workspace/p.so -fsyntax-only src/main.c",
    "clang -ccc-install-dir /workspace/fake src/main.c",
    "clang --driver-mode=cl /c src/main.c /Fo/etc/fluidbox-cl.obj",
    "clang --serialize-diagnostics /etc/fluidbox-s1 -c src/main.c -o /workspace/m.o",
    "clang -serialize-diagnostics /etc/fluidbox-s2 -c src/main.c -o /workspace/m.o",
    "clang -gen-cdb-fragment-path /etc/fluidbox-cdb -c src/main.c -o /workspace/m.o",
    "clang -ccc-arcmt-migrate /etc/fluidbox-arc -c src/x.m -o /workspace/x.o",
    # cmake --build -- ninja's tools; Maven's one-dash long options; gradle's properties
    "cmake --build build -- -t browse",
    "cmake --build build -- -t browse -a 0.0.0.0 -p 9000 demo",
    "cmake --build build -- -tclean",
    "mvn -q -log-file /etc/fluidbox-lf -v",
    "mvn -q -log-file=/etc/fluidbox-lf2 -v",
    "mvn -q -define user.home=/etc -o validate",
    "mvn -q -define=maven.repo.local=/etc/fluidbox-repo -o validate",
    "mvn -q -global-settings /tmp/evil/settings.xml -o validate",
    "mvn -q -global-toolchains /tmp/evil/toolchains.xml -o validate",
    "gradle -q --offline --no-daemon properties",
    "gradle prop",
    "./gradlew :app:properties",
    # F126 pytest: a plugin option's next word is a path to pytest; xdist, pytest-env, -cov
    "pytest -n /tmp/evil tests",
    "pytest --numprocesses /tmp/evil tests",
    "python -m pytest --timeout /tmp/evil tests",
    "coverage run -m pytest -n /tmp/evil tests",
    "pytest -q --cov-config /etc tests",
    "pytest --envfile=/tmp/evil/env -n 1 tests",
    "pytest -n 1 --px id=p//popen//python=/tmp/evil/py.sh tests",
    "pytest --cov-config=/tmp/evil/rc tests",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_did_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "git status",
    "git --no-pager log --oneline -5",
    "git grep -c foo",
    "git grep -cn foo",
    "git grep -n -e foo",
    "git commit -m x",
    "git commit -am x",
    "git config --get user.name",
    "git remote -v",
    "git remote -v show origin",
    "git stash list",
    "gcc -c src/main.c",
    "gcc -c src/x.h",
    "gcc -E src/x.h",
    "gcc -o app src/main.c",
    "clang -c src/main.c -o build/main.o",
    "cmake --build build -- -j4",
    "cmake --build build -- -t targets",
    "mvn -q -DskipTests package",
    "mvn -version",
    "mvn -pl core test",
    "gradle test",
    "gradle projects",
    "gradle tasks --all",
    "pytest -n 4 tests",
    "pytest -n auto",
    "pytest --timeout 30 tests",
    "pytest --dist loadfile -n 2",
    "tox -- -n 4",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
