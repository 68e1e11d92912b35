"""Shapes from the third shell-rules review (FINDINGS F23-F37), read by the engine alone.

Each attack shape here is proven in the oracle's sandbox by tests/shell_corpus/attacks.py
(bash); the few spellings not run there (git's other signing subcommands, sdiff, diff3,
Maven's `--define`, pip's `--src` spellings) are checked against the engine only, from the
programs' manuals. The commands agents run with the same programs stay ALWAYS.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

REFUSED = [
    # F23: git plumbing that writes where it is told
    "git --no-pager interpret-trailers --in-place --trailer 'a: b' /etc/hostname",
    "git --no-pager interpret-trailers --in-pl --trailer 'a: b' /etc/hostname",
    "git --no-pager read-tree --index-output=/etc/x HEAD",
    "git --no-pager read-tree --index-out /etc/x HEAD",
    # F24: signing runs gpg
    "git commit -q -S --allow-empty -m x",
    "git commit -q --gpg-sign --allow-empty -m x",
    "git commit -q --gpg-sign=KEY -m x",
    "git commit -q -aS -m x",
    "git commit -q -SKEY -m x",
    "git tag -s v9 -m x",
    "git tag --sign v9 -m x",
    "git tag -u fixture v9 -m x",
    "git tag --local-user=fixture v9 -m x",
    "git --no-pager merge -S HEAD",
    "git --no-pager cherry-pick -S HEAD",
    "git --no-pager revert -S HEAD",
    "git --no-pager rebase -S main",
    "git --no-pager pull -S",
    "git --no-pager am -S p.mbox",
    "git --no-pager commit-tree -S -m x HEAD",
    # F25: diff's pager, sdiff's and diff3's diff program
    "diff -l README.md notes.txt",
    "diff --paginate README.md notes.txt",
    "diff --pag README.md notes.txt",
    "diff -ul README.md notes.txt",
    "sdiff --diff-program=/workspace/bin/ls a b",
    "sdiff -o /etc/x a b",
    "diff3 --diff-program=/workspace/bin/ls a b c",
    # F26: cmake's and ctest's version and help files
    "cmake --version /etc/x",
    "cmake -version /etc/x",
    "cmake --help-full /etc/x",
    "cmake --help-command-list /etc/x",
    "cmake --help-command add_executable /etc/x",
    "ctest --version /etc/x",
    "ctest --help-full /etc/x",
    # F27: Maven's log file and system properties
    "mvn -q -l /etc/x -v",
    "mvn -q -l/etc/x -v",
    "mvn -q --log-file /etc/x -v",
    "mvn -q --log-file=/etc/x -v",
    "mvn -q --log /etc/x -v",
    "mvn -q -Dmaven.repo.local=/etc/x -o validate",
    "mvn -q -Duser.home=/etc -o validate",
    "mvn -q -D user.home=/etc -o validate",
    "mvn -q --define=user.home=/etc -o validate",
    "mvn -q --def user.home=/etc -o validate",
    "mvn -DskipTests -Djava.io.tmpdir=/etc package",
    # F28: gcc's coverage notes file
    "gcc -c -x c /dev/null -o a.o -fprofile-note=/etc/x -ftest-coverage",
    # F30: git config's read actions count only before its operands
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' get",
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' list",
    "git --no-pager config --file .git/config core.fsmonitor 'touch /workspace/PWNED' -l",
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' --get",
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' -- --list",
    "git --no-pager config --show-origin core.fsmonitor x",
    # F31: make's goals are written where they are
    "make -s /usr/share/libdebuginfod-common/debuginfod",
    "make -t /etc/x",
    "make ../etc/x",
    "make -j4 /etc/x",
    "cd /etc && make x",
    # F32: git repack's expired objects' pack
    "git --no-pager repack -q --cruft --cruft-expiration=now -d --expire-to=/etc/x",
    "git --no-pager repack -a -d --filter=blob:none --filter-to=/etc/x",
    # F33: ctest's test folder
    "ctest --test-dir /etc",
    "ctest --test-dir=/etc --output-on-failure",
    # F34: compileall with nothing named compiles sys.path
    "python -m compileall -q -f",
    "python -m compileall -f -l -q",
    "python -m compileall -q -j 0",
    # F35: unittest's start and top folders outside the working directory
    "python -m unittest discover -s /usr/share/doc/python3-py/examples -p 'gen*.py'",
    "python -m unittest discover /usr/share/doc/python3-py/examples",
    "python -m unittest discover -s ../usr/share/doc -p '*.py'",
    "python -m unittest discover --start=/etc",
    "python -m unittest discover -s/etc",
    "python3 -m unittest discover -t /etc -s tests",
    # F36, F37: start-up files in the home folder
    "printf '#env\\nLESSOPEN=|touch /workspace/PWNED %%s\\n' > /workspace/.home/.lesskey",
    "echo x > /workspace/.home/.config/lesskey",
    "cp notes.txt /workspace/.home/.less",
    "echo 'import os' > /workspace/.home/.local/lib/python3.11/site-packages/x.pth",
    "echo 'import os' > .venv/lib/python3.11/site-packages/evil.pth",
    # F102: a venv's .pth files import modules from it (distutils-precedence.pth)
    "echo x > /workspace/.venv/lib/python3.11/site-packages/x.py",
    "tee /workspace/.home/.mavenrc < notes.txt",
    "echo '<settings/>' > /workspace/.home/.m2/settings.xml",
    "echo x > /workspace/.home/.local/lib/python3.11/site-packages/yaml.py",
    "cp notes.txt /workspace/.home/.local/lib/python3.12/site-packages/pip/__init__.py",
    # F29: pip's other spellings of --log and --src, its cache
    "pip install --log-file /etc/x -r requirements.txt",
    "pip install --local-log /etc/x -r requirements.txt",
    "pip install --log-f /etc/x -r requirements.txt",
    "pip list --log-file /etc/x",
    "python -m pip install --local-log /etc/x -r requirements.txt",
    "pip install --source-dir /etc/x -e git+https://example.com/x.git#egg=x",
    "pip install --cache-dir /etc/x -r requirements.txt",
]


@pytest.mark.parametrize("command", REFUSED)
def test_the_benign_policy_does_not_allow_it(command):
    assert verdict(command) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "command",
    ["cmake --version /etc/x", "cmake --help-full /etc/x", "ctest --version /etc/x"]
    + ["mvn -q -l /etc/x -v", "ctest --test-dir /etc", "make -s /etc/x"],
)
def test_a_file_or_folder_they_write_outside_the_workspace_is_a_write_there(command):
    assert verdict(command) is Verdict.NEVER


# Not findings (the programs are not installed where the oracle runs): options their
# manuals say run a program or write where they are told, now in the tables too.
FROM_MANUALS = [
    "yarn exec rm -rf /workspace/victim",
    "yarn node -e 'require(\"child_process\")'",
    "pnpm exec rm -rf /workspace/victim",
    "tox exec -- rm -rf /workspace/victim",
    "uv tool run ruff",
    "uvx ruff",
    "uv pip install --target /etc/x requests",
    "fd -l",
    "fd --list-details -e py",
    "rg --hostname-bin /workspace/bin/ls x",
    "ruff check --cache-dir /etc/x",
    "ruff check --output-file /etc/x",
    "ruff check --add-noqa .",
    "mypy --cache-dir /etc/x .",
    "mypy --junit-xml /etc/x src",
    "mypy --python-executable /workspace/bin/ls src",
    "flake8 --output-file=/etc/x",
    "pylint --output=/etc/x src",
    "pylint --init-hook='import os' src",
    "pylint --load-plugins evil src",
    "tsc --outDir /etc/x",
    "npx tsc --outDir /etc/x",
    "tsc --generateTrace /etc/x",
    "jest --outputFile=/etc/x",
    "npx vitest run --outputFile=/etc/x",
    "rspec --out /etc/x",
    "coverage html -d /etc/x",
    "coverage xml -o /etc/x",
]


@pytest.mark.parametrize("command", FROM_MANUALS)
def test_acting_options_from_the_manuals_are_not_allowed(command):
    assert verdict(command) is not Verdict.ALWAYS


STILL_ALLOWED = [
    "git --no-pager interpret-trailers --trailer 'a: b' notes.txt",
    "git --no-pager read-tree HEAD",
    "git commit -m 'Fix the parser'",
    "git commit -am 'Update dependencies'",
    "git commit -mSave",
    "git commit -s -m 'Signed-off-by only'",
    "git tag",
    "git tag -a v1.2.0 -m 'Release 1.2.0'",
    "git tag --list 'v*'",
    "git --no-pager log -S parse --oneline",
    "diff -u old.txt new.txt",
    "diff -r src/ backup/src/",
    "diff -Ilabel old.txt new.txt",
    "diff -L old -L new old.txt new.txt",
    "cmake --version",
    "ctest --version",
    "cmake --version version.txt",
    "cmake --help-command add_executable",
    "mvn -q test",
    "mvn -DskipTests package",
    "mvn -q -Dtest=ParserTest test",
    "mvn -pl core -am test",
    "mvn -q -l build.log test",
    "gcc -c -x c /dev/null -o a.o -ftest-coverage",
    "pip install -r requirements.txt",
    "less README.md",
    "echo x > /workspace/styles/main.less",
    "echo x > /workspace/depth",
    "echo x > /workspace/src/local/lib.py",
    "fd -e py",
    "fd -t f test src",
    "fd -tl",
    'rg -n "TODO|FIXME" src',
    "ruff check .",
    "ruff format --check .",
    "mypy src --ignore-missing-imports",
    "flake8 src tests",
    "pylint src/app --disable=C0114",
    "npx tsc --noEmit",
    "npx tsc -p tsconfig.build.json",
    "npx jest --coverage",
    "npx vitest run src/lib",
    "yarn test",
    "pnpm run build",
    "uv sync",
    "uv run pytest",
    "uv pip install -r requirements.txt",
    "coverage report -m",
    "rspec spec/models/user_spec.rb",
    "python -m unittest",
    "python -m unittest discover -s tests -p 'test_*.py'",
    "python -m unittest tests.test_parser -k parse",
    "python -m unittest -v tests/test_parser.py",
    "python -m compileall -q src",
    "python -m compileall -q -j 0 src",
    "git --no-pager repack -a -d",
    "ctest --test-dir build --output-on-failure",
    "ctest",
    "make",
    "make test",
    "make -j4 build",
    "make -j 4 build",
    "make -n install",
    "make -s build/app",
    "git config --get remote.origin.url",
    "git config --get core.editor",
    "git --no-pager config -l",
    "git --no-pager config --list --show-origin",
    "git --no-pager config --file .gitmodules --get-regexp path",
    "git --no-pager config get user.name",
    "pip list --outdated",
]


@pytest.mark.parametrize("command", STILL_ALLOWED)
def test_what_agents_run_with_these_programs_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
