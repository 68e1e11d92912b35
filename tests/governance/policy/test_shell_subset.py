"""The closed subset: what the engine reads exactly, and everything it refuses to read."""

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.policy.shell_subset import MAX_TOKENS, OutsideSubset, Redirect, recognize


def argvs(script: str) -> list[list[str]]:
    return [command.argv for command in recognize(script)]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("ls;rm -rf /", [["ls"], ["rm", "-rf", "/"]]),
        ("a && b || c | d & e", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("echo 'a; rm -rf /'", [["echo", "a; rm -rf /"]]),
        ("echo '$(rm -rf /)'", [["echo", "$(rm -rf /)"]]),
        ('echo "a b"  c', [["echo", "a b", "c"]]),
        ('echo "say \\"hi\\" \\\\ \\n"', [["echo", 'say "hi" \\ \\n']]),
        ("echo \\$\\(rm\\)", [["echo", "$(rm)"]]),
        ("'r''m' -rf /", [["rm", "-rf", "/"]]),
        ("ls # rm -rf /\nrm -rf /tmp", [["ls"], ["rm", "-rf", "/tmp"]]),
        ("echo a#b", [["echo", "a#b"]]),
        ("ls \\\n  -la", [["ls", "-la"]]),
        ("ls &&\n\n  echo ok", [["ls"], ["echo", "ok"]]),
        ("git diff HEAD~1 HEAD^", [["git", "diff", "HEAD~1", "HEAD^"]]),
        ("[ ! -f x ] && echo y", [["[", "!", "-f", "x", "]"], ["echo", "y"]]),
        ("find . -exec ls {} \\;", [["find", ".", "-exec", "ls", "{}", ";"]]),
        ("echo ''", [["echo", ""]]),
        ("ls ｆｏｏ", [["ls", "ｆｏｏ"]]),
        ("\n  \n", []),
    ],
)
def test_it_reads_a_script_inside_the_subset_exactly(script, expected):
    assert argvs(script) == expected


def test_assignments_and_redirections_are_read_apart_from_the_argv():
    (command,) = recognize("LANG=C A='x y' ls -la > /workspace/o 2>&1 < in.txt 2>>err")

    assert command.argv == ["ls", "-la"]
    assert command.assignments == [("LANG", "C"), ("A", "x y")]
    assert command.redirects == [
        Redirect(1, ">", "/workspace/o"),
        Redirect(2, ">&", "1"),
        Redirect(0, "<", "in.txt"),
        Redirect(2, ">>", "err"),
    ]


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("echo $HOME", "'$'"),
        ('echo "$(rm -rf /)"', "`$`"),
        ("echo `id`", "'`'"),
        ("echo \"${x:-'$(rm -rf /)'}\"", "`$`"),
        ("(rm -rf /)", "subshells"),
        ("{ rm -rf /; }", "'{'"),
        ("f() { ls; }", "subshells"),
        ("if true; then ls; fi", "reserved word 'if'"),
        ("for x do rm -rf /; done", "reserved word 'for'"),
        ("while :; do ls; done", "reserved word 'while'"),
        ("time -p ls", "command name '-p'"),
        ("time X=1 ls", "assignment after `time`"),
        ("time", "`time` without a command"),
        ("time for x in a; do ls; done", "reserved word 'for'"),
        ("ls && time", "`time` without a command"),
        ("[[ -f x ]]", "'['"),
        ("*.py", "'*'"),
        ("l? -la", "'?'"),
        ("echo x > *.txt", "'*'"),
        ("X=*.py ls", "'*'"),
        ("ls [ab]*", "'['"),
        ("ls [ab]", "'['"),
        ("echo {a,b}", "'{'"),
        ("ls ~/x", "'~'"),
        ("A=~/x ls", "'~'"),
        ("A=b:~/x ls", "'~'"),
        ("echo a=~/x", "'~'"),
        ("=ls", "'='"),
        ("echo ^x", "'^'"),
        ("!ls", "'!'"),
        ("ls !x", "'!'"),
        ("cat <<< x", "<< without a target"),
        ("cat <<-EOF\n\tx\n\tEOF", "marker '-EOF'"),
        ('cat <<"EOF"\nx\nEOF', "marker"),
        ("cat <<E\\OF\nx\nEOF", "marker"),
        ("cat <<EOF\n$(rm -rf /)\nEOF", "unquoted here-document"),
        ("cat <<EOF\n`id`\nEOF", "unquoted here-document"),
        ("cat <<EOF\na\\\nb\nEOF", "unquoted here-document"),
        ("cat <<'EOF'\nrm -rf /", "without its end line 'EOF'"),
        ("cat <<'EOF'\nx\nEOF \nrm -rf /", "with blanks around it"),
        ("cat <<'EOF'\nx\n\tEOF\nrm -rf /", "with blanks around it"),
        ("cat <<'EOF' |\nx\nEOF\nsh", "ends with '|'"),
        ("cat <<'EOF' && \\\nls\nx\nEOF", "line continuation"),
        ("cat <<'EOF' 'a\nb'\nx\nEOF", "quoted newline"),
        ("cat <<'A' <<'B'\nx\nA\ny\nB", "two here-documents"),
        ("cat <<'EOF' < f\nx\nEOF", "`<` on one command"),
        ("cat 3<<'EOF'\nx\nEOF", "redirection '3<<'"),
        ("cat <<'EOF'", "without its lines"),
        ("<<'EOF'\nx\nEOF", "without a program"),
        ("echo 'rm -rf /' | sh <<'EOF'\nls\nEOF", "a pipe feeds"),
        ("echo x |\ncat <<'EOF'\nls\nEOF", "a pipe feeds"),
        ("git commit -m \"$(cat <<'EOF'\nEOF)\nrm -rf /\nEOF\n)\"", "starting with the end marker"),
        ("git commit -m \"$(cat <<'EOF'\n$HOME\nEOF\n)\"", "substituted here-document"),
        ('git commit -m "$(cat <<EOF\nx\nEOF\n)"', "`$`"),
        ("git commit -m \"$(cat <<'EOF'\nx\nEOF)\"", "substitution other than"),
        ("git commit -m \"$(cat -n <<'EOF'\nx\nEOF\n)\"", "`$`"),
        ("git commit -m \"x $(cat <<'EOF'\nx\nEOF\n)\"", "`$`"),
        ("M=\"$(cat <<'EOF'\nx\nEOF\n)\" git commit", "`$`"),
        ("echo x | git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\"", "a pipe feeds"),
        ("ls &> f", "'&>'"),
        ("ls >| f", "'>|'"),
        ("ls <> f", "'<>'"),
        ("ls 3> f", "descriptor 3"),
        ("ls 10> f", "descriptor 10"),
        ("cat /etc/shadow >&3", "descriptor 1 or 2"),
        ("ls >& f", "descriptor 1 or 2"),
        ("ls 2>&1x", "descriptor 1 or 2"),
        ("ls > /dev/tcp/127.0.0.1/80", "special file"),
        ("ls > //dev/./udp/h/1", "special file"),
        ("cat < /dev/fd/3", "special file"),
        ("ls |& cat", "'|&'"),
        ("ls &| cat", "'&|'"),
        ("ls ;; cat", "';;'"),
        ("ls &&", "incomplete"),
        ("ls ||", "incomplete"),
        ("ls |", "incomplete"),
        ("ls && \n", "incomplete"),
        ("ls 'x", "unterminated"),
        ('ls "x', "unterminated"),
        ("; ls", "without a command"),
        ("ls ; ; ls", "without a command"),
        ("> /etc/passwd", "without a program"),
        ("A=1", "without a program"),
        ("ls >", "without a target"),
        ("ls > ''", "empty redirection target"),
        ("A+=1 ls", "`+=`"),
        ('"" ls', "command name ''"),
        ("-x ls", "command name '-x'"),
        ("%1", "command name '%1'"),
        ("'A=1' ls", "command name 'A=1'"),
        ("ls\\\n-la", "line continuation"),
        ('echo "a\\\nb"', "unterminated"),
        ("cat <1-10> out", "numeric glob"),
        ("ls -la\0; rm -rf /", "U+0000"),
        ("ls\r\nrm -rf /", "U+000D"),
        ("ls \x1b[8m", "U+001B"),
        ("ls \x7f", "U+007F"),
    ],
)
def test_anything_outside_the_subset_is_refused_with_the_reason(script, reason):
    with pytest.raises(OutsideSubset, match=None) as refused:
        recognize(script)
    assert reason in str(refused.value)


def test_a_here_document_is_the_command_s_standard_input():
    commands = recognize("cat > notes.txt <<'EOF'\n$(not run) `nor this`\n  EOFX\n\nEOF\nls")
    assert [c.argv for c in commands] == [["cat"], ["ls"]]
    assert commands[0].heredoc == "$(not run) `nor this`\n  EOFX\n\n"
    assert commands[0].redirects == [Redirect(1, ">", "notes.txt")]
    (unquoted,) = recognize("cat <<EOF\nplain (text) 'here'\nEOF")
    assert unquoted.heredoc == "plain (text) 'here'\n"
    # The body starts after the line's newline, whatever follows the marker on the line.
    piped = recognize("cat <<'EOF' | sh ; echo done # a comment\nrm -rf /\nEOF\nls")
    assert [(c.argv, c.heredoc, c.then) for c in piped] == [
        (["cat"], "rm -rf /\n", "|"),
        (["sh"], None, ";"),
        (["echo", "done"], None, ""),
        (["ls"], None, ""),
    ]


def test_a_commit_message_in_a_substituted_here_document_is_read_through_its_cat():
    script = (
        "git add -A && git commit -m \"$(cat <<'EOF'\nFix the parser (it's F150)\n\n"
        'Co-Authored-By: Claude <noreply@anthropic.com>\n\nEOF\n)" && git log -1'
    )
    message = "Fix the parser (it's F150)\n\nCo-Authored-By: Claude <noreply@anthropic.com>"
    assert [(c.argv, c.heredoc, c.then) for c in recognize(script)] == [
        (["git", "add", "-A"], None, "&&"),
        (["cat"], message + "\n\n", "&&"),  # it runs before its command, in its list
        (["git", "commit", "-m", message], None, "&&"),
        (["git", "log", "-1"], None, ""),
    ]


def test_a_script_over_the_token_ceiling_is_refused():
    with pytest.raises(OutsideSubset, match=f"more than {MAX_TOKENS}"):
        recognize("ls; " * MAX_TOKENS)


WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.lists(WORD, min_size=1, max_size=5), min_size=1, max_size=4))
def test_any_argv_quoted_with_single_quotes_reads_back_exactly(commands):
    """Single quotes are the one quoting every shell reads the same: a round trip."""
    commands = [[w for w in argv if "\r" not in w] or ["x"] for argv in commands]
    script = " ; ".join(
        " ".join(["ls" if i == 0 else shlex.quote(w) for i, w in enumerate(argv)])
        for argv in commands
    )
    if any(ord(c) < 0x20 and c not in "\t\n" or c == "\x7f" for c in script):
        with pytest.raises(OutsideSubset, match="control character"):
            recognize(script)
        return
    assert argvs(script) == [["ls", *argv[1:]] for argv in commands]


@settings(max_examples=800, deadline=None, database=None, derandomize=True)
@given(st.text(alphabet="ab $`()'\"\\;&|<>{}*?[]~!#=^\n\t-21", max_size=30))
def test_what_it_reads_from_any_text_it_accepts_reads_back_the_same_when_requoted(script):
    try:
        commands = recognize(script)
    except OutsideSubset:
        return
    requoted = "\n".join(" ".join(shlex.quote(w) for w in command.argv) for command in commands)
    assert argvs(requoted) == [command.argv for command in commands]


def test_a_glob_in_an_argument_is_read_with_the_text_before_it():
    (command,) = recognize("wc -l 'a b'/*.py -c")
    assert command.argv == ["wc", "-l", "a b/*.py", "-c"]
    assert command.glob_at == (2, "a b/")
    (quoted,) = recognize("ls '*'.md \\?x \"?\"")
    assert quoted.glob_at is None


def test_time_before_a_plain_command_is_read_as_that_command_behind_it():
    assert argvs("time npm test | tail -5") == [["time", "npm", "test"], ["tail", "-5"]]
    assert argvs("true && time ls") == [["true"], ["time", "ls"]]
