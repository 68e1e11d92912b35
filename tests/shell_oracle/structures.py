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
    "./src/",
    "victim/inner/../..",
    "//etc",
    "src/../..",
    "$HOME",
    ".home",
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
    "x",
    "src/../x",
    "victim/../../x",
    ".home/.bashrc",
    ".git/config",
    "/tmp/x",
    "-",
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


def _inside(options: tuple[str, ...]) -> tuple[str, ...]:
    """The options that name places in the workspace, written plainly."""
    outside = ("/etc", "/tmp", "..", "$", "~", "//", "-", "link", ".home", ".git")
    return tuple(o for o in options if not any(mark in o for mark in outside)) or options


class _Places:
    """Where a script's words point. Half the scripts are careful: nine places in ten
    they name are plainly inside the workspace, so that longer scripts reach ALWAYS and
    a folder moved early decides where a later plain name lands."""

    def __init__(self, c: Choices):
        self.c = c
        self.careful = c.number(0, 1) == 1

    def pick(self, options: tuple[str, ...]) -> str:
        if self.careful and self.c.number(0, 9):
            return self.c.pick(_inside(options))
        return self.c.pick(options)


def _simple(c: Choices, policy: str, places: _Places) -> str:
    """One command: a move, an assignment, or a program reading or writing files."""
    kind = c.number(0, 15)
    if kind <= 2:
        return f"cd {places.pick(FOLDERS)}" + c.pick(("", "", " || exit", " 2>/dev/null", " && ls"))
    if kind <= 4:
        prefix = c.pick(("", "", "", "export ", "local ", "readonly ", "declare "))
        return f"{prefix}{c.pick(VARIABLES)}={places.pick(VALUES)}"
    if kind == 5 and policy == "builtins":
        return c.pick((f"pushd {places.pick(FOLDERS)}", "popd", "pushd -0", "dirs", "popd +1"))
    if kind == 5 and policy == "links":
        return f"ln -s{c.pick(('', 'f', 'n', 'fn'))} {places.pick(LINKED)} {places.pick(LINKS)}"
    if kind == 5:
        value = places.pick(VALUES)
        return c.pick(("pwd", f"read -r d <<< {value}", f"set -- {value}"))
    if kind <= 7:
        return c.pick(
            (
                f"mkdir -p {places.pick(('a/b', 'a', 'src/x', '$d', 'link/x'))}",
                f"mv {places.pick(('a', 'src', 'victim', 'notes.txt', 'link', '../a', '../../a'))} "
                f"{places.pick(('b', 'a/b', '..', '$d', 'src/'))}",
                f"cp -s {places.pick(('/etc', '/tmp', '..', '/workspace/victim'))} link",
                f"cp -rs {places.pick(('/etc', '..', '/workspace'))} link",
                f"cp {places.pick(READ)} {places.pick(WRITTEN)}",
            )
        )
    if kind <= 11:
        target = places.pick(WRITTEN)
        return c.pick(
            (
                f"echo x > {target}",
                f"echo x >> {target}",
                f"touch {target}",
                f"printf %s x | tee {target}",
                f"ls > {target}",
                f"cat {places.pick(READ)} > {target}",
                f"sed -n 1p {places.pick(READ)} >{target}",
                f"sort -o {target} {places.pick(READ)}",
                f"git log --oneline > {target} 2>&1",
                f"head -1 {places.pick(READ)} &> {target}",
                f"cp -r src {target}",
                f"mv -t {places.pick(FOLDERS)} {c.pick(('notes.txt', 'a', 'out.txt'))}",
                f"echo {target} | xargs touch",
                f"mkdir -p {target}",
            )
        )
    if kind <= 13:
        return c.pick(
            (
                f"cat {places.pick(READ)}",
                f"ls {places.pick(FOLDERS)}",
                f"wc -l < {places.pick(READ)}",
                f"grep -n alpha {places.pick(READ)}",
                "git status",
                f"find {places.pick(('.', '$d', 'src'))} -maxdepth 1",
            )
        )
    if kind == 14:
        return c.pick(("rm -rf victim", "rm -f out.txt", "true", ":", "f", "g x"))
    return c.pick(("return", "break", "continue", "exit 0", "shift", "set -e", "set -f"))


def _body(c: Choices, policy: str, places: _Places, depth: int) -> str:
    parts = [_statement(c, policy, places, depth + 1) for _ in range(c.number(1, 3))]
    return "; ".join(parts)


def _statement(c: Choices, policy: str, places: _Places, depth: int) -> str:
    # Compound commands are drawn rarely: the engine reads none of them exactly (they are
    # ASK unless a NEVER rule's command is in them), so only their NEVER side is judged.
    if depth >= 2 or c.number(0, 5 if not places.careful else 11):
        return _simple(c, policy, places)
    body = _body(c, policy, places, depth)
    condition = c.pick(CONDITIONS)
    kind = c.number(0, 10)
    if kind == 0:
        other = _body(c, policy, places, depth)
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
        other = _body(c, policy, places, depth)
        return f"case {c.pick(VALUES)} in {c.pick(PATTERNS)}) {body};; *) {other};; esac"
    if kind == 6:
        return f"{{ {body}; }}"
    if kind == 7:
        return f"( {body} )"
    if kind == 8:
        name = c.pick(("f", "g", "cd", "ls", "touch", "test"))
        return f"{name}() {{ {body}; }}"
    if kind == 9:
        return f"{condition} && {{ {body}; }} || {_simple(c, policy, places)}"
    return f"{_simple(c, policy, places)} | {c.pick(('cat', 'wc -l', 'xargs ls', 'tee out.txt'))}"


def build_structured_script(c: Choices, policy: str = "benign") -> str:
    """One to six statements, for the policy of tests/shell_corpus/policies.py named
    `policy`: "builtins" adds the directory stack (pushd, popd), "links" adds `ln -s`."""
    places = _Places(c)
    statements = [_statement(c, policy, places, 0) for _ in range(c.number(1, 6))]
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
