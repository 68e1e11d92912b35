"""Shapes from the seventeenth shell-rules review (FINDINGS F150).

F149 let what a pipeline writes after its test runner through when the writer only writes
its input (`pytest | tee out.txt`), judging the writer's words alone: an `echo` between
them, a here-document or a `<` in the writer, a grep reading files through an option, made
the written file the script's own code, which the runner imported; so did a filter's option
that puts the script's text on every line (`nl -s CODE`). And pytest given `/dev/null`
keeps its cache in /dev. xxd's options end at `---` and at its input file, and less reads
more options inside one option's word (after a prompt's `$`, a number, a blank), one of which
may load a lesskey file whose LESSOPEN runs a command.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

_CODE = "import os; os.system('chmod 000 /workspace/notes.txt')"


# Each ran the code in the sandbox (the seventeenth review's oracle runs) and was ALWAYS.
FED_CODE = [
    ("review", f'python -m pytest -q | echo "{_CODE}" | grep o > tests/conftest.py'),
    ("benign", f'python -m pytest -q | echo "{_CODE}" | tee tests/conftest.py'),
    ("builtins", f'pytest -q | printf "{_CODE}\\n" | head -n 5 > tests/conftest.py'),
    ("benign", "python -m pytest -q | cat notes.txt | tee tests/conftest.py"),
    ("benign", "pytest -q | sed 's/x/y/' | tee tests/conftest.py"),
    ("benign", "python -m pytest -q | date | tee tests/conftest.py"),
    ("benign", f"python -m pytest -q | cat <<'EOF' > tests/conftest.py\n{_CODE}\nEOF\n"),
    ("review", f"python -m pytest -q | grep o <<'EOF' > tests/conftest.py\n{_CODE}\nEOF\n"),
    ("benign", "python -m pytest -q | cat < src/app.py > tests/conftest.py"),
    ("review", "python -m pytest -q | grep --regexp=. src/app.py > tests/conftest.py"),
    ("review", "python -m pytest -q | grep -e. src/app.py > tests/conftest.py"),
    ("review", "python -m pytest -q | grep -rh import > tests/conftest.py"),
    # a filter's option that adds the script's text to every line, or reads files
    ("benign", f'python -m pytest --trace-config | nl -nln "-s\n{_CODE}\n#" > tests/test_zz.py'),
    ("benign", f'python -m pytest -q | nl "--number-separator={_CODE}" | tee tests/test_zz.py'),
    ("benign", "python -m pytest -q | sort --files0-from=names.txt > tests/conftest.py"),
    ("benign", "python -m pytest -q | head src/app.py > tests/conftest.py"),
    # the runner is a nested script, whose other commands print the code (the review of F150)
    ("review", f'sh -c "echo \\"{_CODE}\\"; python -m pytest -q" > conftest.py'),
    ("review", f'bash -c "echo \\"{_CODE}\\" && python -m pytest -q" >> tests/conftest.py'),
    ("review", f'time sh -c "echo \\"{_CODE}\\"; python -m pytest -q" > conftest.py'),
    ("review", f'sh -c "echo \\"{_CODE}\\"; python -m pytest -q" | cat - > tests/conftest.py'),
    ("benign", f'env sh -c "echo \\"{_CODE}\\"; python -m pytest -q" | tee tests/conftest.py'),
    ("benign", f"sh -c \"cat <<'EOF'\n{_CODE}\nEOF\npython -m pytest -q\" > conftest.py"),
    # the substitution's `cat` stays in its command's and-or list, behind `&` too
    (
        "benign",
        "python -m pytest -q && git commit --allow-empty -m \"$(cat <<'EOF'\nmsg\nEOF\n)\" "
        f'& echo "{_CODE}" > conftest.py',
    ),
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize(("policy", "script"), FED_CODE)
def test_a_pipeline_that_feeds_a_runner_s_file_other_text_is_not_allowed(policy, script, shell):
    assert _verdict(policy, script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "python -m pytest -q 2>&1 | tee pytest.log",
        "python -m pytest -q 2>&1 | tee out.txt",
        "python -m pytest -q | head -50 > summary.txt",
        "python -m pytest -q | grep -v PASSED > summary.txt",
        "python -m pytest -q | grep FAIL | head -5 > summary.txt",
        "coverage run -m pytest | cat - > report.txt",
        "python -m pytest -q | tail -n +5 > summary.txt",
        "python -m pytest -q | sort -u | uniq -c > summary.txt",
        "cargo test 2>&1 | tail -20 > out.txt",
    ],
)
def test_what_a_pipeline_writes_of_its_runner_s_own_output_stays_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "python -m pytest /dev/null",
        "python -m pytest -q tests /dev/null",
        "python -m pytest -q /dev/stdin",
        "python -m pytest /dev/stdout",
    ],
)
def test_pytest_given_a_device_writes_its_cache_beside_it(script):
    # /dev/.pytest_cache (or /.pytest_cache): a write outside the workspace.
    assert _verdict("review", script) is Verdict.NEVER


def test_pytest_in_the_workspace_stays_allowed():
    assert _verdict("review", "python -m pytest -q /workspace/tests") is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("script", "verdict"),
    [
        # xxd's options end at `---` (read as `--`) and at its input file
        ("printf x > ./-c && xxd --- -c /tmp/evil/x1", Verdict.NEVER),
        ("mkdir ./-d && xxd README.md -d/../../tmp/evil/x3", Verdict.NEVER),
        ("xxd - /tmp/x", Verdict.NEVER),
        # less reads more options after a prompt's `$`, a long option's number, a blank
        ("less '--prompt=x$--lesskey-src=/tmp/evil/k' README.md", Verdict.ASK),
        ("less '-Px$-k/tmp/evil/kb' README.md", Verdict.ASK),
        ("less --window=5k/tmp/evil/kb README.md", Verdict.ASK),
        ("less '--quiet k/tmp/evil/kb' README.md", Verdict.ASK),
        # a number option's value ends at any other character, even the first
        ("less --window=--lesskey-src=k README.md", Verdict.ASK),
        ("less --shift=.5--lesskey-src=k README.md", Verdict.ASK),
        ("less --tabs=,--lesskey-src=k README.md", Verdict.ASK),
        ("less --SH=.--lesskey-src=k README.md", Verdict.ASK),
        ("less --tabs=,k/tmp/kb README.md", Verdict.ASK),
        # the substitution's `cat` does not end a background job's list before it
        (
            "sleep 1 && mv a/b c && echo \"$(cat <<'EOF'\nmoved\nEOF\n)\" & "
            "mkdir -p a/b && cd a/b && sleep 2 && touch ../../tmp/x",
            Verdict.ASK,
        ),
    ],
)
def test_options_read_where_the_tools_read_them(script, verdict):
    assert _verdict("benign", script) is verdict


@pytest.mark.parametrize(
    "script",
    [
        "xxd README.md out.hex",
        "xxd -c 16 README.md out.hex",
        "less --window=5 README.md",
        "less --prompt=x README.md",
        "less -N README.md",
        "less --tabs=4,8 --shift=.5 --window=5 README.md",
        "python -m pytest -q > out.txt",
    ],
)
def test_xxd_and_less_as_used_stay_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS
