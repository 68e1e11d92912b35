"""Here-documents through the oracle, in bash, dash and zsh.

The subset reads a here-document (`cat > notes.txt <<'EOF'`) and the commit message of
`git commit -m "$(cat <<'EOF' ... EOF\n)"` exactly; everything else about them is outside
it. Scripts drawn from a fixed seed mix bodies with the lines shells disagree on or that
would run code (a marker with blanks, `EOF)`, `$(...)`, backticks, backslashes), markers
spelled every way, lines after the marker and missing end lines. Those the engine allows
run in the sandbox: they must do only what the rules allow, and every program the shell
runs must get the words the engine read.
"""

import random
from collections import Counter

import pytest

from governance.policy.shell_subset import recognize
from tests.shell_corpus.policies import benign_policy
from tests.shell_oracle.oracle import Oracle

pytestmark = pytest.mark.usefixtures("sandbox")
EXAMPLES = 900
PAYLOAD = "rm -rf /workspace/victim"  # rm is NEVER under the benign rules
BODY_LINES = [
    "Fix the parser",
    "",
    "(parens) and it's quoted 'here'",
    "#not a comment",
    "EOFX",
    "XEOF",
    " EOF",
    "EOF ",
    "\tEOF",
    "EOF)",
    ")",
    "(",
    f"$({PAYLOAD})",
    f"`{PAYLOAD}`",
    "a \\",
    "\\",
    PAYLOAD,
    '"',
    "'",
    "E",
    "EOF;",
    "Co-Authored-By: Claude <noreply@anthropic.com>",
]
MARKERS = ["'EOF'", "EOF", '"EOF"', "\\EOF", "-EOF", "'EOF'x", "'E'"]
ENDS = ["{m}", "{m} ", "{m})", "\t{m}", ""]


CAREFUL_LINES = [line for line in BODY_LINES if not set(line) & set('$`\\"E')]


def _heredoc_script(draw: random.Random) -> str:
    """Half the scripts are careful (a quoted marker, plain lines, the exact end line), so
    that many reach ALWAYS; the others draw every part from the tricky lists."""
    careful = draw.random() < 0.5
    marker = draw.choice(["'EOF'", "'E'", "EOF"] if careful else MARKERS)
    word = marker.strip("'\"\\-").removesuffix("'x")
    lines = draw.choices(CAREFUL_LINES if careful else BODY_LINES, k=draw.randint(0, 4))
    body = "".join(line + "\n" for line in lines)
    end = "{m}" if careful else draw.choice(ENDS)
    end = end.format(m=word)
    after = draw.choice(["", f"\n{PAYLOAD}", "\nls", f"\n{word}\nls"])
    form = draw.randrange(4)
    if form == 0:
        return f"cat > /workspace/out.txt <<{marker}\n{body}{end}{after}"
    if form == 1:
        return f"grep -c x <<{marker} ; ls\n{body}{end}{after}"
    if form == 2:
        return f"cat <<{marker} | grep -v x\n{body}{end}{after}"
    program = draw.choice(["git commit -m", "grep -e"])
    return f'{program} "$(cat <<{marker}\n{body}{end}\n)" notes.txt{after}'


def _programs(script: str) -> Counter:
    """The argv of every external program the engine read in the script."""
    return Counter(
        tuple(command.argv)
        for command in recognize(script)
        if command.argv[0] in ("cat", "grep", "git", "ls")
    )


def test_here_documents_the_engine_allows_run_as_it_read_them(capsys):
    draw = random.Random(1)
    shells = ["bash", "sh", "zsh"]
    scripts = list(dict.fromkeys((_heredoc_script(draw), shells[i % 3]) for i in range(EXAMPLES)))

    judgements = Oracle(benign_policy()).judge(scripts, timeout=5.0)

    allowed = [j for j in judgements if j.allowed]
    with capsys.disabled():
        print(f"\nhere-documents: {len(scripts)} scripts, {len(allowed)} allowed and run")
    assert {j.shell for j in allowed} == {"bash", "sh", "zsh"}
    assert sum("$(cat <<" in j.script for j in allowed) >= 20, "substitutions reach ALWAYS"
    disagreements = [j.report() for j in judgements if j.disagreements]
    assert not disagreements, "\n\n".join(disagreements)
    misread = []
    for judgement in allowed:
        ran = Counter(
            run.argv
            for run in judgement.observation.runs
            if run.argv and run.argv[0] in ("cat", "grep", "git", "ls")
        )
        if ran != _programs(judgement.script):
            misread.append(f"{judgement.report()}\n  read: {_programs(judgement.script)}")
    assert not misread, "\n\n".join(misread)
