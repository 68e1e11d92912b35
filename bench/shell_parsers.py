"""Which parser recognises the shell subset most exactly? Measured by the oracle.

Run: /work/main/.venv/bin/python bench/shell_parsers.py [--generated 1500] [--seed 3]
Needs, besides the oracle's bwrap/strace/dash: `pip install tree-sitter tree-sitter-bash
bashlex shfmt-py` in the venv (the bench only: the engine does not use them).

Four recognizers of the same subset (the grammar in governance/policy/shell_subset.py):
the engine's own (`shell_subset.recognize`), and the same subset rules laid over the
syntax tree of tree-sitter-bash, of shfmt (mvdan/sh, `shfmt --to-json`, one process per
script: there is no in-process binding) and of bashlex. Each either refuses a script or
reads it as simple commands (argv after quote removal) with redirections of fds 0-2.

Every script any of them accepts runs in bash and in dash in the sandbox. A **misread**
is an accepted script with which a real shell did something the reading does not
foresee: executed a program with an argv the reading has no command for, or opened a
file (a redirection) it has no redirection for. A **false refusal** is a refused script
that another recognizer accepted and read right in both shells. Scripts: the attack
corpus (bash and sh), the benign corpus, and a seeded sample of the oracle's grammar.
"""

import argparse
import json
import posixpath
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from governance.policy.shell_subset import OutsideSubset, recognize  # noqa: E402
from tests.shell_corpus.attacks import ATTACKS  # noqa: E402
from tests.shell_corpus.benign import BENIGN  # noqa: E402
from tests.shell_oracle.generator import seeded_cases  # noqa: E402
from tests.shell_oracle.replay import NOT_FILES  # noqa: E402
from tests.shell_oracle.sandbox import Job, run_jobs, unavailable_reason  # noqa: E402

Reading = list[tuple[tuple[str, ...], list[tuple[int, str, str]]]]  # (argv, [(fd, op, target)])
ROOT = Path(__file__).resolve().parents[1]
SHFMT = ROOT / ".venv" / "bin" / "shfmt"
_SPECIAL_TARGET = ("/dev/tcp/", "/dev/udp/", "/dev/fd/")
# Unquoted characters the subset refuses in a word (its expansions, globs and braces).
_FORBIDDEN = set("$`*?[{}!")
_CONTROL = {chr(c) for c in range(32) if chr(c) not in "\t\n"} | {"\x7f"}
_DASH_BUILTINS = (
    ". : [ alias bg break cd chdir command continue echo eval exec exit export false fc fg "
    "getopts hash jobs kill local printf pwd read readonly return set shift test times trap "
    "true type ulimit umask unalias unset wait"
)
BUILTINS = {
    "bash": set(
        subprocess.run(["bash", "-c", "compgen -b"], capture_output=True, text=True).stdout.split()
    ),
    "sh": set(_DASH_BUILTINS.split()),
}


class Refused(Exception):
    pass


def _check_unquoted(text: str, at_start: bool) -> None:
    if _FORBIDDEN & set(text) or (at_start and text[:1] in ("~", "=", "^", "#")):
        raise Refused(text)


def _target(target: str) -> str:
    """The subset's rule for a redirection target, the same over every parser."""
    if not target or posixpath.normpath("/" + target.lstrip("/")).startswith(_SPECIAL_TARGET):
        raise Refused("special target")
    return target


def _unescape_unquoted(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _unescape_double(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in '"\\$`':
            out.append(text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# -- the engine's recognizer ----------------------------------------------------------------
def read_engine(script: str) -> Reading:
    try:
        commands = recognize(script)
    except OutsideSubset as error:
        raise Refused(str(error)) from None
    return [(tuple(c.argv), [(r.fd, r.operator, r.target) for r in c.redirects]) for c in commands]


# -- tree-sitter-bash -------------------------------------------------------------------------
def _tree_sitter():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def read_tree_sitter(script: str, parser) -> Reading:
    if _CONTROL & set(script):
        raise Refused("control character")
    tree = parser.parse(script.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        raise Refused("syntax error")
    reading: Reading = []

    def word(node, at_start: bool = True) -> str:
        kind, text = node.type, node.text.decode("utf-8", "surrogateescape")
        if kind in ("word", "number"):
            _check_unquoted(text, at_start)
            return _unescape_unquoted(text)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "string":
            parts = [c for c in node.children if c.type not in ('"',)]
            if any(c.type != "string_content" for c in parts):
                raise Refused("expansion in double quotes")
            return _unescape_double(text[1:-1])
        if kind == "concatenation":
            return "".join(word(c, i == 0) for i, c in enumerate(node.children))
        raise Refused(kind)

    def command(node, redirects) -> None:
        argv: list[str] = []
        for child in node.children:
            if child.type == "command_name":
                argv.append(word(child.children[0]))
            elif child.type == "variable_assignment":
                if argv:
                    raise Refused("assignment after the name")
                value = child.children[-1] if child.child_count > 2 else None
                if value is not None:
                    word(value)
            elif child.type == "file_redirect":
                redirects.append(redirect(child))
            else:
                argv.append(word(child))
        reading.append((tuple(argv), redirects))

    def redirect(node) -> tuple[int, str, str]:
        fd, op, target = None, None, None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = int(child.text)
            elif child.type in ("<", ">", ">>", ">&"):
                op = child.type
            else:
                target = word(child)
        if op is None or target is None or (fd is not None and fd > 2):
            raise Refused("redirection")
        if op == ">&" and target not in ("1", "2"):
            raise Refused("duplication")
        if op != ">&":
            _target(target)
        return (fd if fd is not None else (0 if op == "<" else 1), op, target)

    def statement(node) -> None:
        kind = node.type
        if kind == "command":
            command(node, [])
        elif kind == "redirected_statement":
            body, redirects = node.children[0], [redirect(c) for c in node.children[1:]]
            if body.type != "command":
                raise Refused("redirected " + body.type)
            before = len(reading)
            statement(body)
            reading[before] = (reading[before][0], reading[before][1] + redirects)
        elif kind in ("list", "pipeline", "program"):
            for child in node.children:
                if child.type in ("&&", "||", "|", ";", "&", "comment", "\n"):
                    continue
                statement(child)
        elif kind == "comment":
            return
        else:
            raise Refused(kind)

    statement(tree.root_node)
    return reading


# -- shfmt (mvdan/sh) ---------------------------------------------------------------------------
def read_shfmt(script: str, dialect: str = "bash") -> Reading:
    if _CONTROL & set(script):
        raise Refused("control character")
    done = subprocess.run(
        [str(SHFMT), "--to-json", "-ln", dialect],
        input=script.encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise Refused("syntax error")
    reading: Reading = []

    def word(node: dict) -> str:
        out = []
        for index, part in enumerate(node.get("Parts", [])):
            kind = part["Type"]
            if kind == "Lit":
                _check_unquoted(part["Value"], at_start=index == 0)
                out.append(_unescape_unquoted(part["Value"]))
            elif kind == "SglQuoted" and not part.get("Dollar"):
                out.append(part["Value"])
            elif kind == "DblQuoted" and not part.get("Dollar"):
                inner = part.get("Parts", [])
                if any(p["Type"] != "Lit" for p in inner):
                    raise Refused("expansion in double quotes")
                out.append("".join(_unescape_double(p["Value"]) for p in inner))
            else:
                raise Refused(kind)
        return "".join(out)

    def statement(stmt: dict) -> None:
        if stmt.get("Negated") or stmt.get("Coprocess"):
            raise Refused("negated or coprocess")
        cmd = stmt.get("Cmd")
        redirects = []
        for r in stmt.get("Redirs", []):
            op = r["Op"]
            fd = int(r["N"]["Value"]) if r.get("N") else (0 if op == "<" else 1)
            if op not in ("<", ">", ">>", ">&") or fd > 2:
                raise Refused("redirection " + op)
            target = word(r["Word"])
            if op == ">&" and target not in ("1", "2"):
                raise Refused("duplication")
            if op != ">&":
                _target(target)
            redirects.append((fd, op, target))
        if cmd is None:
            raise Refused("a command without a program")
        if cmd["Type"] == "CallExpr":
            for assign in cmd.get("Assigns", []):
                if assign.get("Append") or assign.get("Array") or assign.get("Index"):
                    raise Refused("assignment")
                if assign.get("Value"):
                    word(assign["Value"])
            args = cmd.get("Args", [])
            if not args:
                raise Refused("a command without a program")
            argv = tuple(word(a) for a in args)
            reading.append((argv, redirects))
        elif cmd["Type"] == "BinaryCmd" and cmd["Op"] in ("&&", "||", "|") and not redirects:
            statement(cmd["X"])
            statement(cmd["Y"])
        else:
            raise Refused(cmd["Type"])

    for stmt in json.loads(done.stdout).get("Stmts", []):
        statement(stmt)
    return reading


# -- bashlex ---------------------------------------------------------------------------------------
def read_bashlex(script: str) -> Reading:
    import bashlex

    if _CONTROL & set(script):
        raise Refused("control character")
    try:
        trees = bashlex.parse(script)
    except Exception as error:  # bashlex raises its own errors and plain ones alike
        raise Refused(f"bashlex: {error}") from None
    reading: Reading = []

    def raw(node) -> str:
        return script[node.pos[0] : node.pos[1]]

    def check_word(node) -> str:
        if getattr(node, "parts", None):
            raise Refused("expansion")
        text = raw(node)
        unquoted, quote = [], None
        for char in text:
            if quote is None and char in "'\"":
                quote = char
            elif quote == char:
                quote = None
            elif quote is None:
                unquoted.append(char)
            elif quote == '"' and char in "$`":
                raise Refused("expansion in double quotes")
        _check_unquoted("".join(unquoted), at_start=text[:1] not in "'\"")
        return node.word

    def visit(node) -> None:
        kind = node.kind
        if kind == "command":
            argv, redirects = [], []
            for part in node.parts:
                if part.kind == "word":
                    argv.append(check_word(part))
                elif part.kind == "assignment":
                    if argv or getattr(part, "parts", None):
                        raise Refused("assignment")
                elif part.kind == "redirect":
                    op = part.type
                    fd = part.input if isinstance(part.input, int) else (0 if op == "<" else 1)
                    if op not in ("<", ">", ">>", ">&") or fd > 2:
                        raise Refused("redirection " + op)
                    output = part.output
                    target = str(output) if isinstance(output, int) else check_word(output)
                    if op == ">&" and target not in ("1", "2"):
                        raise Refused("duplication")
                    if op != ">&":
                        _target(target)
                    redirects.append((fd, op, target))
                else:
                    raise Refused(part.kind)
            if not argv:
                raise Refused("a command without a program")
            reading.append((tuple(argv), redirects))
        elif kind in ("list", "pipeline"):
            for part in node.parts:
                if part.kind in ("operator", "pipe"):
                    if getattr(part, "op", getattr(part, "pipe", "")) not in (
                        ";", "&", "&&", "||", "|", "\n",
                    ):  # fmt: skip
                        raise Refused("operator")
                    continue
                visit(part)
        else:
            raise Refused(kind)

    for tree in trees:
        visit(tree)
    return reading


# -- the evaluation -----------------------------------------------------------------------------
# Builtins that only print, test or move: any other (exec, eval, alias, source, trap,
# `test -v`, `printf -v`, read, declare, ...) runs code by what it means, not by how the
# script is parsed, and so does a shell started as a program (`bash x.sh`, `sh -c`,
# `BASH_ENV=`): the engine judges those by its builtins and dialect rules, whichever parser.
_INERT_BUILTINS = {"echo", "cd", "pwd", "true", "false", ":", "printf", "test", "["}
_SHELLS = {"bash", "sh", "dash", "zsh", "rbash"}


def runs_code_by_meaning(reading: Reading, shell: str) -> bool:
    for argv, _ in reading:
        if not argv:
            continue
        if argv[0] in BUILTINS[shell] and (argv[0] not in _INERT_BUILTINS or "-v" in argv[1:]):
            return True
        if any(posixpath.basename(word) in _SHELLS for word in argv[:3]):
            return True
    return False


def _predicted(reading: Reading, shell: str) -> tuple[set, set, set]:
    """What a shell may do by this reading: argvs executed, files written, files read."""
    runs, writes, reads = set(), set(), set()
    for argv, redirects in reading:
        words = list(argv)
        while words and words[0] in ("exec", "command", "builtin") and len(words) > 1:
            words = words[1:]
        if words and words[0] not in BUILTINS[shell]:
            runs.add(tuple(words))
        for _fd, op, target in redirects:
            if op in (">", ">>"):
                writes.add(target)
            elif op == "<":
                reads.add(target)
    return runs, writes, reads


def _foreseen(path: str, targets: set) -> bool:
    if path in NOT_FILES:
        return True
    for target in targets:
        if target.startswith("/"):
            if posixpath.normpath(target) == path:
                return True
        else:  # relative: the script may have changed folder first
            relative = posixpath.normpath(target)
            if path == posixpath.join("/workspace", relative) or path.endswith("/" + relative):
                return True
    return False


def misread(reading: Reading, observation, shell: str) -> str | None:
    """What the real shell did that the reading does not foresee, or None."""
    runs, writes, reads = _predicted(reading, shell)
    for run in observation.runs:
        top = run.via[0] if run.via else run.argv
        if tuple(top) not in runs:
            return f"ran {list(top)}"
    for event in observation.writes:
        mine = event.by is None and event.error not in ("EEXIST", "EISDIR")
        if mine and not _foreseen(event.path, writes):
            return f"wrote {event.path}"
    for event in observation.shell_reads:
        if not _foreseen(event.path, reads):
            return f"read {event.path}"
    if any(s.by is None for s in observation.sockets):
        return "opened a socket"
    return None


def _scripts(generated: int, seed: int) -> list[tuple[str, str]]:
    attacks = [(a.script, a.shell) for a in ATTACKS if a.shell in ("bash", "sh") and not a.stdin]
    benign = [(b.command, "bash") for b in BENIGN]
    sample = [(s, sh) for s, sh in seeded_cases(seed, generated) if "\0" not in s]
    return list(dict.fromkeys(attacks + benign + sample))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--details", type=Path, help="write every misread and refusal here")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason is not None:
        print(f"the sandbox cannot run here: {reason}", file=sys.stderr)
        return 2
    ts_parser = _tree_sitter()
    recognizers = {
        "engine (shell_subset)": read_engine,
        "tree-sitter-bash": lambda s: read_tree_sitter(s, ts_parser),
        "shfmt (mvdan/sh)": read_shfmt,
        "bashlex": read_bashlex,
    }
    scripts = _scripts(args.generated, args.seed)
    readings: dict[str, list] = {}
    seconds: dict[str, float] = {}
    for name, read in recognizers.items():
        results, started = [], time.perf_counter()
        for script, _ in scripts:
            try:
                results.append(read(script))
            except Refused:
                results.append(None)
            except Exception as error:  # a parser crashing on an input refuses it
                results.append(None)
                print(f"  {name} crashed on {script!r}: {error!r}", file=sys.stderr)
        seconds[name] = time.perf_counter() - started
        readings[name] = results
    accepted_by_any = [
        i for i in range(len(scripts)) if any(r[i] is not None for r in readings.values())
    ]
    jobs = [Job(scripts[i][0], shell, 5.0) for i in accepted_by_any for shell in ("bash", "sh")]
    print(f"{len(scripts)} scripts, {len(accepted_by_any)} accepted by at least one: "
          f"{len(jobs)} sandbox runs", file=sys.stderr, flush=True)  # fmt: skip
    observations = run_jobs(jobs)
    observed = {i: observations[2 * k : 2 * k + 2] for k, i in enumerate(accepted_by_any)}
    right = Counter()  # script index -> recognizers that read it right in both shells
    verdicts: dict[str, dict[int, str | None]] = {}
    for name, results in readings.items():
        verdicts[name] = {}
        for i in accepted_by_any:
            if results[i] is None:
                continue
            problems = [
                misread(results[i], o, sh)
                for o, sh in zip(observed[i], ("bash", "sh"), strict=False)
            ]
            problem = next((p for p in problems if p), None)
            verdicts[name][i] = problem
            if problem is None:
                right[i] += 1
    print(
        "| recognizer | accepted | misreads (syntax) | misreads (code run by meaning) "
        "| false refusals | µs per script |"
    )
    print("|---|---|---|---|---|---|")
    details = {}
    for name, results in readings.items():
        accepted = sum(r is not None for r in results)
        misreads = {i: p for i, p in verdicts[name].items() if p}
        builtin = {i for i in misreads if runs_code_by_meaning(results[i], "bash")}
        refused_right = [i for i in accepted_by_any if results[i] is None and right[i]]
        micro = seconds[name] / len(scripts) * 1e6
        print(
            f"| {name} | {accepted} | {len(misreads) - len(builtin)} | {len(builtin)} "
            f"| {len(refused_right)} | {micro:.0f} |"
        )
        details[name] = {
            "misreads": [
                {"script": scripts[i][0], "shell": scripts[i][1], "problem": p,
                 "acting_builtin": i in builtin}
                for i, p in misreads.items()
            ],
            "false_refusals": [scripts[i][0] for i in refused_right],
        }  # fmt: skip
    for name, found in details.items():
        syntax = [m for m in found["misreads"] if not m["acting_builtin"]]
        for case in syntax[:6]:
            print(f"  {name} misread {case['script']!r}: the shell {case['problem']}")
    if args.details:
        args.details.write_text(json.dumps(details, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
