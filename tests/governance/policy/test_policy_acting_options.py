"""Options that act: `find *` does not cover `find -delete`; a rule that names the option does."""

import pytest

from governance.policy import MatchArgument, Verdict, compile_policy

SHELL = MatchArgument("command", "shell")


def decide(rules: list[str], command: str):
    policy = compile_policy(
        [{"pattern": f"run_command:{r}", "action": "ALWAYS"} for r in rules]
        + [
            {"pattern": "write_file:/workspace/*", "action": "ALWAYS"},
            {"pattern": "write_file:*", "action": "NEVER"},
        ]
    )
    return policy.evaluate("run_command", {"command": command}, SHELL)


@pytest.mark.parametrize(
    ("rule", "command", "option"),
    [
        ("find *", "find /workspace -delete", "-delete"),
        ("find *", "find . -name x -exec ls {} ;", "-exec"),
        ("find *", "find . -fprintf /workspace/out %p", "-fprintf"),
        ("git log *", "git log --output=/workspace/x", "--output"),
        ("git log *", "git log --out=/workspace/x", "--output"),  # getopt_long abbreviation
        ("git log *", "git log --output /workspace/x", "--output"),
        ("git *", "git -c core.pager=less status", "-c"),
        ("git *", "git -C /tmp/elsewhere status", "-C"),
        ("git *", "git config core.fsmonitor /workspace/x", "core.fsmonitor"),
        ("git *", "git branch -D main", "-D"),
        ("python -m pytest *", "python -m pytest --basetemp=/home", "--basetemp"),
        ("python -m pytest *", "python -m pytest -p evil_plugin", "-p"),
        ("pytest *", "pytest --junitxml=/workspace/r.xml", "--junitxml"),
        ("pytest *", "pytest -o cache_dir=/etc", "-o"),
        ("python *", "python -c 'print(1)'", "-c"),
        ("python *", "python -m http.server", "-m"),
        ("tar *", "tar -xzf a.tgz", "-x"),
        ("tar *", "tar xzf a.tgz", "-x"),  # the old option syntax
        ("tar *", "tar -tf a.tar --to-command=sh", "--to-command"),
        ("sed *", "sed -i s/a/b/ f", "-i"),
        ("sed *", "sed -ni s/a/b/p f", "-i"),  # combined short flags
        ("sed *", "sed 's/a/b/w /workspace/o' f", "s/a/b/w /workspace/o"),
        ("sed *", "sed '1e id' f", "1e id"),
        ("awk *", "awk 'BEGIN { system(\"id\") }'", 'BEGIN { system("id") }'),
        ("sort *", "sort -o /workspace/o f", "-o"),
        ("sort *", "sort --compress-program=gzip f", "--compress-program"),
        ("make *", "make CC=/workspace/evil all", "CC="),
        ("make *", "make -f /workspace/other.mk", "-f"),
        ("rsync *", "rsync -e 'sh -c x' a /workspace/b", "-e"),
        ("ssh *", "ssh -o ProxyCommand=x host", "-o"),
        ("less *", "less '+!id' f", "+!id"),
        ("rg *", "rg --pre cat x", "--pre"),
        ("npm *", "npm config set registry x", "set"),
        ("npm *", "npm install -g left-pad", "-g"),
        ("go test *", "go test -exec /workspace/x ./...", "-exec"),
        ("cargo *", "cargo --config build.rustc-wrapper=x build", "--config"),
        ("gcc *", "gcc -wrapper /workspace/x -c a.c", "-wrapper"),
        ("curl *", "curl -o /workspace/x http://example.com", "-o"),
        ("sqlite3 *", "sqlite3 /workspace/db '.shell id'", ".shell"),
        ("vim *", "vim '+!id' /workspace/f", "+!id"),
        ("vi *", "vi -c '!id' /workspace/f", "-c"),
    ],
)
def test_an_acting_option_needs_a_rule_that_names_it(rule, command, option):
    evaluation = decide([rule], command)

    assert evaluation.verdict is Verdict.ASK
    reason = " ".join(s.reason or "" for s in evaluation.segments)
    assert f"does not name {option}" in reason, reason


@pytest.mark.parametrize(
    ("rules", "command"),
    [
        (["find * -delete", "find *"], "find /workspace/build -delete"),
        (["find * -exec *", "ls *"], "find . -name x -exec ls {} ;"),
        (["git log --output=/workspace/*"], "git log --output=/workspace/log.txt"),
        (["tar -xzf *"], "tar -xzf a.tgz"),
        (["sed -i *"], "sed -i s/a/b/ /workspace/f"),
        (["python -m pytest *"], "python -m pytest -x -q"),
        (["git config user.name *"], "git config user.name Ada"),
        (["git *"], "git config --get user.name"),
        (["sed *"], "sed --sandbox 's/a/b/w /workspace/o' f"),
    ],
)
def test_a_rule_that_names_the_option_allows_it(rules, command):
    assert decide(rules, command).verdict is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("find *", "find . -name '*.py' -type f"),
        ("git log *", "git log --oneline -5 --stat"),
        ("git *", "git log -c"),  # git's own -c comes before the subcommand
        ("git *", "git commit -m message"),
        ("git *", "git switch -c topic"),
        ("sed *", "sed -n '1,20p' f"),
        ("sed *", "sed 's/a/b/g;/x/d' f"),
        ("awk *", "awk -F, '{ print $1 }' f"),
        ("tar *", "tar -tzf a.tgz"),
        ("pytest *", "pytest -k test_c -x"),
        ("python *", "python script.py -c -m"),  # a script's own arguments
        ("sort *", "sort -t, -k2 -n f"),
        ("make *", "make -j4 test"),
    ],
)
def test_plain_options_stay_allowed(rule, command):
    assert decide([rule], command).verdict is Verdict.ALWAYS


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("tee /etc/passwd", "/etc/passwd"),
        ("tee -a /workspace/ok /etc/cron.d/x", "/etc/cron.d/x"),
        ("cp /workspace/a /etc/passwd", "/etc/passwd"),
        ("cp -t /etc /workspace/a", "/etc"),
        ("mv /workspace/a /root/.bashrc", "/root/.bashrc"),
        ("dd if=/workspace/a of=/etc/passwd", "/etc/passwd"),
        ("chmod -x /usr/bin/ls", "/usr/bin/ls"),
        ("uniq /workspace/a /etc/passwd", "/etc/passwd"),
        ("gcc -o /etc/x a.c", "/etc/x"),
        ("python -m compileall /usr/lib/python3", "/usr/lib/python3"),
        ("unzip /workspace/a.zip -d /etc", "/etc"),
        ("gzip -k /etc/hosts", "/etc/hosts"),
        ("openssl genrsa -out /etc/key.pem", "/etc/key.pem"),
    ],
)
def test_the_files_a_program_writes_from_its_operands_are_writes(command, written):
    program = command.split()[0]
    evaluation = decide([f"{program} *"], command)

    assert evaluation.verdict is Verdict.NEVER
    assert f"write_file:{written}" in {s.subject for s in evaluation.segments}


def test_xargs_runs_a_program_whose_rule_admits_any_words_read_from_its_input():
    # `xargs wc -l` runs `wc -l`, then `wc -l` with any words its input holds.
    assert decide(["xargs *", "wc *"], "xargs wc -l").verdict is Verdict.ALWAYS
    assert decide(["xargs *", "wc", "wc *"], "xargs wc").verdict is Verdict.ALWAYS
    assert decide(["xargs *", "wc -l"], "xargs wc -l").verdict is Verdict.ASK  # no more words
    assert decide(["xargs *", "wc -l", "wc -l src/*"], "xargs wc -l").verdict is Verdict.ASK
    assert decide(["xargs wc *", "wc *"], "xargs wc -l").verdict is Verdict.ALWAYS


def test_xargs_input_never_reaches_a_program_that_acts_or_runs_others_unless_named():
    # Input words could be `-exec`, `--output=…`: the rule must name the program, and one
    # with acting options stays ASK even then.
    assert decide(["xargs *", "git *"], "xargs git log").verdict is Verdict.ASK
    assert decide(["xargs *", "find *"], "xargs find").verdict is Verdict.ASK
    assert decide(["xargs *", "sh *"], "xargs sh -c ls").verdict is Verdict.ASK
    assert decide(["xargs *", "env *", "ls *"], "xargs env ls").verdict is Verdict.ASK
    assert decide(["xargs *", "cd *"], "xargs cd").verdict is Verdict.ASK
    assert decide(["xargs *", "*"], "xargs ./wc").verdict is Verdict.ASK
    assert decide(["xargs git *", "git *"], "xargs git log").verdict is Verdict.ASK
    never_rm = compile_policy(
        [
            {"pattern": "run_command:rm *", "action": "NEVER"},
            {"pattern": "run_command:xargs *", "action": "ALWAYS"},
        ]
    )
    evaluation = never_rm.evaluate("run_command", {"command": "xargs rm -rf"}, SHELL)
    assert evaluation.verdict is Verdict.NEVER


@pytest.mark.parametrize(
    "command",
    [
        "xargs -I X wc X",
        "xargs -i wc",
        "xargs -0IX wc X",
        "xargs --replace wc",
        "xargs --process-slot-var=PATH wc",
        "xargs --process-slot-var PATH wc",
    ],
)
def test_xargs_splicing_its_input_into_a_word_or_a_variable_needs_a_rule_naming_the_program(
    command,
):
    assert decide(["xargs *", "wc *"], command).verdict is Verdict.ASK
    assert decide(["xargs * wc*", "wc", "wc *"], command).verdict is Verdict.ALWAYS


def test_a_java_build_writes_the_jvms_performance_data_in_tmp():
    evaluation = decide(["mvn *"], "mvn -q test")

    assert evaluation.verdict is Verdict.NEVER
    assert "write_file:/tmp/hsperfdata_<user>" in {s.subject for s in evaluation.segments}


def test_a_wrapper_does_not_hide_an_acting_option():
    assert decide(["find *", "timeout *"], "timeout 5 find . -delete").verdict is Verdict.ASK
    assert decide(["sudo *", "find *"], "sudo find . -delete").verdict is Verdict.ASK
    assert decide(["find * -delete"], "timeout 5 find . -delete").verdict is Verdict.ALWAYS


def test_every_program_a_table_knows_is_read_in_full_never_by_the_fast_path():
    from governance.policy import acting_options as tables
    from governance.policy.shell_builtins import SPECIAL_BUILTINS
    from governance.policy.shell_commands import _is_plain
    from governance.policy.shell_wrappers import WRAPPERS

    known = (
        {key.split()[0] for key in tables.ACTING}
        | set(tables.WRITES)
        | set(tables.OUTPUT_OPTIONS)
        | set(tables.ALIASES)
        | tables.WRITES_WHERE_IT_RUNS
        | tables.STARTS_A_JVM
        | set(WRAPPERS)
        | SPECIAL_BUILTINS
    )

    assert sorted(p for p in known if _is_plain(p)) == []
