"""A second grammar of scripts for the oracle: structure, folders and variables.

The first grammar (generator.py) draws flat lists of commands with tricky words. This
one draws what an agent's longer scripts are made of and what the flat one never
builds: compound commands (`if`, `while`, `until`, `for`, `case`, `{ …; }`, `( … )`,
functions, zsh's short forms), the working directory moved by `cd`, `pushd` and
`popd` inside them, folders made, moved and linked (`cp -s`) on the way, and
variables assigned, exported, read back and expanded in operands and redirection
targets. The programs are the benign policy's (`touch`, `mkdir`, `cp`, `mv`, `tee`
are allowed inside /workspace), so a disagreement is a write the script lands
outside /workspace, a program no rule names, or a read of a file outside it.

Drawn by hypothesis (`structured_cases`) for the suite and by a seeded Random
(`seeded_structured_cases`) for bench/shell_oracle_fuzz.py `--grammar structured`.
"""

from hypothesis import strategies as st

from tests.shell_oracle.generator import Choices, DrawnChoices, SeededChoices

# Folders a script moves to, relative and absolute, inside and outside the workspace.
FOLDERS = (
    "src",
    "tests",
    "victim",
    "victim/inner",
    "a",
    "a/b",
    "..",
    "../..",
    "/",
    "/etc",
    "/tmp",
    "/workspace",
    "/workspace/src",
    "-",
    "~",
    '"$d"',
    "$d",
    '"$OLDPWD"',
    "link",
    "link/..",
)
# Values a variable takes: a folder, a file, a word, a command's output.
VALUES = (
    "/etc",
    "/workspace",
    "/workspace/src",
    "src",
    "..",
    "/tmp",
    "a/b",
    "notes.txt",
    "/etc/fluidbox-x",
    '"$PWD"',
    '"$(pwd)"',
    "$HOME",
    "~",
    "x",
    '"a b"',
    "''",
)
VARIABLES = ("d", "d", "f", "PWD", "OLDPWD", "HOME", "CDPATH", "IFS")
# Files a command writes: plain names (which land wherever the shell then is),
# climbing names, names under a variable, absolute ones.
WRITTEN = (
    "out.txt",
    "a/out.txt",
    "../out.txt",
    "../../etc/fluidbox-x",
    "/etc/fluidbox-x",
    "/workspace/out.txt",
    '"$d/out.txt"',
    "$d/fluidbox-x",
    '"$f"',
    "${d}x",
    "link/x",
    "link/../x",
    "~/out.txt",
)
READ = ("notes.txt", "/etc/hostname", '"$f"', "$d/notes.txt", "../notes.txt", "README.md")
CONDITIONS = (
    "true",
    "false",
    "! false",
    "test -d src",
    "[ -e notes.txt ]",
    '[ -n "$d" ]',
    "[ -d /etc ]",
    "grep -q alpha notes.txt",
    "cd victim",
    "mkdir a",
    "test -f out.txt",
)
# What `ln -s` links to, and the names it makes (the links policy admits `ln`).
LINKED = ("/etc", "/tmp", "..", "../..", "/workspace/src", "src", "victim", "a/b", "/etc/hostname")
LINKS = ("link", "a/link", "src/link", "link/x", "out.txt", "a")
PATTERNS = ("/etc", "/*", "*", "src|tests", "x", '"$d"', "[/]*")


def _folder(c: Choices) -> str:
    return c.pick(FOLDERS)


def _simple(c: Choices, policy: str) -> str:
    """One command: a move, an assignment, or a program reading or writing files."""
    kind = c.number(0, 15)
    if kind <= 2:
        return f"cd {_folder(c)}" + c.pick(("", "", " || exit", " 2>/dev/null", " && ls"))
    if kind <= 4:
        prefix = c.pick(("", "", "", "export ", "local ", "readonly ", "declare "))
        return f"{prefix}{c.pick(VARIABLES)}={c.pick(VALUES)}"
    if kind == 5 and policy == "builtins":
        return c.pick((f"pushd {_folder(c)}", "popd", "pushd -0", "dirs", "popd +1"))
    if kind == 5 and policy == "links":
        return f"ln -s{c.pick(('', 'f', 'n', 'fn'))} {c.pick(LINKED)} {c.pick(LINKS)}"
    if kind == 5:
        return c.pick(("pwd", f"read -r d <<< {c.pick(VALUES)}", f"set -- {c.pick(VALUES)}"))
    if kind <= 7:
        return c.pick(
            (
                f"mkdir -p {c.pick(('a/b', 'a', 'src/x', '$d', 'link/x'))}",
                f"mv {c.pick(('a', 'src', 'victim', 'notes.txt', 'link'))} "
                f"{c.pick(('b', 'a/b', '..', '$d', 'src/'))}",
                f"cp -s {c.pick(('/etc', '/tmp', '..', '/workspace/victim'))} link",
                f"cp -rs {c.pick(('/etc', '..', '/workspace'))} link",
                f"cp {c.pick(READ)} {c.pick(WRITTEN)}",
            )
        )
    if kind <= 11:
        target = c.pick(WRITTEN)
        return c.pick(
            (
                f"echo x > {target}",
                f"echo x >> {target}",
                f"touch {target}",
                f"printf %s x | tee {target}",
                f"ls > {target}",
                f"cat {c.pick(READ)} > {target}",
                f"sed -n 1p {c.pick(READ)} >{target}",
            )
        )
    if kind <= 13:
        return c.pick(
            (
                f"cat {c.pick(READ)}",
                f"ls {c.pick(FOLDERS)}",
                f"wc -l < {c.pick(READ)}",
                f"grep -n alpha {c.pick(READ)}",
                "git status",
                f"find {c.pick(('.', '$d', 'src'))} -maxdepth 1",
            )
        )
    if kind == 14:
        return c.pick(("rm -rf victim", "rm -f out.txt", "true", ":", "f", "g x"))
    return c.pick(("return", "break", "continue", "exit 0", "shift", "set -e", "set -f"))


def _body(c: Choices, policy: str, depth: int) -> str:
    parts = [_statement(c, policy, depth + 1) for _ in range(c.number(1, 3))]
    return "; ".join(parts)


def _statement(c: Choices, policy: str, depth: int) -> str:
    # Compound commands are drawn rarely: the engine reads none of them exactly (they are
    # ASK unless a NEVER rule's command is in them), so only their NEVER side is judged.
    if depth >= 2 or c.number(0, 5):
        return _simple(c, policy)
    body = _body(c, policy, depth)
    condition = c.pick(CONDITIONS)
    kind = c.number(0, 10)
    if kind == 0:
        other = _body(c, policy, depth)
        return f"if {condition}; then {body}; else {other}; fi"
    if kind == 1:
        return f"if {condition}; then {body}; fi"
    if kind == 2:
        return f"while {condition}; do {body}; break; done"
    if kind == 3:
        return f"until {condition}; do {body}; break; done"
    if kind == 4:
        words = f"{c.pick(VALUES)} {c.pick(VALUES)}"
        return f"for {c.pick(('d', 'f', 'x'))} in {words}; do {body}; done"
    if kind == 5:
        other = _body(c, policy, depth)
        return f"case {c.pick(VALUES)} in {c.pick(PATTERNS)}) {body};; *) {other};; esac"
    if kind == 6:
        return f"{{ {body}; }}"
    if kind == 7:
        return f"( {body} )"
    if kind == 8:
        name = c.pick(("f", "g", "cd", "ls", "touch", "test"))
        return f"{name}() {{ {body}; }}"
    if kind == 9:
        return f"{condition} && {{ {body}; }} || {_simple(c, policy)}"
    return f"{_simple(c, policy)} | {c.pick(('cat', 'wc -l', 'xargs ls', 'tee out.txt'))}"


def build_structured_script(c: Choices, policy: str = "benign") -> str:
    """One to six statements, for the policy of tests/shell_corpus/policies.py named
    `policy`: "builtins" adds the directory stack (pushd, popd), "links" adds `ln -s`."""
    statements = [_statement(c, policy, 0) for _ in range(c.number(1, 6))]
    joiners = ("; ", "\n", " && ", " || ")
    script = statements[0]
    for statement in statements[1:]:
        script += c.pick(joiners) + statement
    return script


@st.composite
def _drawn(draw, policy: str) -> str:
    return build_structured_script(DrawnChoices(draw), policy)


def structured_cases(
    shells: tuple[str, ...] = ("bash", "sh", "zsh"), policy: str = "benign"
) -> st.SearchStrategy[tuple[str, str]]:
    """(script, shell) pairs for the oracle."""
    return st.tuples(_drawn(policy), st.sampled_from(shells))


def seeded_structured_cases(
    seed: int, count: int, shells: tuple[str, ...] = ("bash", "sh", "zsh"), policy: str = "benign"
):
    """`count` (script, shell) pairs from this grammar, reproducible from `seed`."""
    choices = SeededChoices(seed)
    for _ in range(count):
        yield build_structured_script(choices, policy), choices.pick(shells)
