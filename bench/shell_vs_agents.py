"""The shell corpora, head to head: fluidbox, Codex CLI's execpolicy and Claude Code's rules.

Run: /work/main/.venv/bin/python bench/shell_vs_agents.py [--sample N] [--tools ...]

The same attack corpus (tests/shell_corpus/attacks.py) and benign corpus
(tests/shell_corpus/benign.py) go to three deciders, under the same rules
(tests/shell_corpus/policies.py, translated by tests/shell_corpus/agent_rules.py; the
translations are written to bench/shell_vs_agents/ with --write-rules):

1. **fluidbox**: the policy evaluation the gate uses (`CompiledPolicy.evaluate`), in
   process; a command counts as allowed when the verdict is ALWAYS. Each attack is read in
   its own dialect (`shell` of the corpus entry), as a tool declaring that shell would be.
2. **Codex CLI 0.171.0**: Codex runs a model's command as `bash -lc <script>` and splits
   the script with tree-sitter-bash before its execpolicy sees it
   (`commands_for_exec_policy`, codex-rs/core/src/exec_policy.rs): a script of plain words
   joined by `&&`, `||`, `;`, `|` becomes its commands; a single command with a
   here-document becomes that command; anything else stays `["bash", "-lc", script]`.
   That splitting is ported below (`codex_commands`, from codex-rs/shell-command/src/bash.rs);
   each command is then decided by the real `codex execpolicy check` of the installed
   binary. Allowed = every command matched by an `allow` rule and none by `prompt` or
   `forbidden`. A command no rule matches counts as not allowed: we compare the rules, not
   Codex's built-in list of commands it deems safe (`is_known_safe_command`, consulted in
   its `untrusted` approval mode) nor its sandbox.
3. **Claude Code 2.1.328**, the real CLI, headless, driven by a scripted model on
   127.0.0.1 that asks for one Bash tool call per command, many commands per session
   (`--batch`). Its project settings hold the translated `permissions.allow`/`deny` and
   `defaultMode: dontAsk` (what no rule allows is denied, nobody is asked), in the user
   settings (a headless run never trusts the project, whose rules are then ignored). Its shell is a
   recorder: `CLAUDE_CODE_SHELL` points at a small Python program that appends its argv
   and the tool call then outstanding to a log and exits 0, so a command counts as run
   when Claude Code handed it to its shell (`... && eval '<command>' ...`); the shell
   snapshot Claude Code takes at start-up is told apart (it carries no `eval`). Nothing is
   interpreted by a real shell, and even so the whole CLI runs inside bubblewrap
   (read-only root, `--cap-drop ALL`, no network but its own loopback, unshared
   namespaces, a scratch /workspace), the model server with it.

Needs: bwrap (Claude Code), `npm install --prefix ~/.cache/fluidbox/codex-0.171.0
@openai/codex@0.171.0` (Codex), Claude Code as .ci/run installs it, and in the venv
`pip install tree-sitter tree-sitter-bash` (the Codex splitting; bench only).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from governance.policy import Verdict  # noqa: E402
from tests.shell_corpus.agent_rules import POLICIES, claude_settings, translations  # noqa: E402
from tests.shell_corpus.attacks import ATTACKS  # noqa: E402
from tests.shell_corpus.benign import BENIGN  # noqa: E402
from tests.shell_corpus.policies import (  # noqa: E402
    benign_policy,
    builtins_policy,
    kinds,
    links_policy,
    review_policy,
)

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fluidbox"
CLAUDE_CODE_VERSION = "2.1.328"
CODEX_VERSION = "0.171.0"
CLAUDE = CACHE / f"claude-code-{CLAUDE_CODE_VERSION}" / "node_modules" / ".bin" / "claude"
CODEX = CACHE / f"codex-{CODEX_VERSION}" / "node_modules" / ".bin" / "codex"
RULES_DIR = Path(__file__).resolve().parent / "shell_vs_agents"
TOOLS = ("fluidbox", "codex", "claude")


@dataclass(frozen=True)
class Case:
    key: str  # unique: "attack:<index>" or "benign:<index>"
    corpus: str  # attack | benign
    script: str
    policy: str  # review | benign | builtins | links
    shell: str  # the dialect the corpus entry is written for
    klass: str


def cases(sample: int | None, seed: int) -> list[Case]:
    attacks = [
        Case(f"attack:{i}", "attack", a.script, a.policy, a.shell, a.klass)
        for i, a in enumerate(ATTACKS)
    ]
    benign = [
        Case(f"benign:{i}", "benign", b.command, "benign", "bash", "benign")
        for i, b in enumerate(BENIGN)
    ]
    if sample is not None:
        rng = random.Random(seed)
        attacks = rng.sample(attacks, min(sample, len(attacks)))
        benign = rng.sample(benign, min(sample, len(benign)))
    return attacks + benign


# --- fluidbox ----------------------------------------------------------------------------


def fluidbox_decide(items: list[Case]) -> dict[str, dict]:
    policies = {
        "review": review_policy(),
        "benign": benign_policy(),
        "builtins": builtins_policy(),
        "links": links_policy(),
    }
    decided = {}
    for case in items:
        kind = kinds(case.shell)["run_command"]
        evaluation = policies[case.policy].evaluate("run_command", {"command": case.script}, kind)
        decided[case.key] = {
            "allowed": evaluation.verdict is Verdict.ALWAYS,
            "detail": evaluation.verdict.value,
        }
    return decided


# --- Codex -------------------------------------------------------------------------------
# A port of codex-rs/shell-command/src/bash.rs (openai/codex, commit 47d6e2f8):
# `try_parse_word_only_commands_sequence` and `parse_shell_lc_single_command_prefix`, as
# `commands_for_exec_policy` (codex-rs/core/src/exec_policy.rs) uses them. Codex links the
# tree-sitter-bash 0.25 grammar, as the Python package does.

_ALLOWED_KINDS = {
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "number",
    "concatenation",
}
_ALLOWED_PUNCT = {"&&", "||", ";", "|", '"', "'"}
_HEREDOC_ATTACHMENTS = {
    "heredoc_body",
    "simple_heredoc_body",
    "heredoc_redirect",
    "herestring_redirect",
    "redirected_statement",
}


def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _text(node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")


def _double_quoted(node, src: bytes) -> str | None:
    if any(part.type != "string_content" for part in node.named_children):
        return None
    raw = _text(node, src)
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else None


def _raw_string(node, src: bytes) -> str | None:
    raw = _text(node, src)
    return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == "'" else None


def _plain_command(node, src: bytes) -> list[str] | None:
    words: list[str] = []
    for child in node.named_children:
        if child.type == "command_name":
            word = child.named_children[0] if child.named_children else None
            if word is None or word.type != "word":
                return None
            words.append(_text(word, src))
        elif child.type in ("word", "number"):
            words.append(_text(child, src))
        elif child.type == "string":
            parsed = _double_quoted(child, src)
            if parsed is None:
                return None
            words.append(parsed)
        elif child.type == "raw_string":
            parsed = _raw_string(child, src)
            if parsed is None:
                return None
            words.append(parsed)
        elif child.type == "concatenation":
            joined = ""
            for part in child.named_children:
                if part.type in ("word", "number"):
                    joined += _text(part, src)
                elif part.type in ("string", "raw_string"):
                    parsed = (_double_quoted if part.type == "string" else _raw_string)(part, src)
                    if parsed is None:
                        return None
                    joined += parsed
                else:
                    return None
            if not joined:
                return None
            words.append(joined)
        else:
            return None
    return words


def _word_only_sequence(tree, src: bytes) -> list[list[str]] | None:
    if tree.root_node.has_error:
        return None
    stack, commands = [tree.root_node], []
    while stack:
        node = stack.pop()
        kind = node.type
        if node.is_named:
            if kind not in _ALLOWED_KINDS:
                return None
            if kind == "command":
                commands.append(node)
        else:
            if any(c in "&;|" for c in kind) and kind not in _ALLOWED_PUNCT:
                return None
            if kind not in _ALLOWED_PUNCT and kind.strip():
                return None
        stack.extend(node.children)
    words = []
    for node in sorted(commands, key=lambda n: n.start_byte):
        parsed = _plain_command(node, src)
        if parsed is None:
            return None
        words.append(parsed)
    return words


def _has_kind(node, kind: str) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            return True
        stack.extend(current.named_children)
    return False


def _heredoc_single_command(tree, src: bytes) -> list[str] | None:
    root = tree.root_node
    if root.has_error or not _has_kind(root, "heredoc_redirect"):
        return None
    if _has_kind(root, "file_redirect"):
        return None
    stack, single = [root], None
    while stack:
        node = stack.pop()
        if node.type == "command":
            if single is not None:
                return None
            single = node
        stack.extend(node.named_children)
    if single is None:
        return None
    words: list[str] = []
    for child in single.named_children:
        if child.type == "command_name":
            word = child.named_children[0] if child.named_children else None
            if word is None or word.type not in ("word", "number") or word.named_children:
                return None
            words.append(_text(word, src))
        elif child.type in ("word", "number"):
            if child.named_children:
                return None
            words.append(_text(child, src))
        elif child.type == "comment" or child.type in _HEREDOC_ATTACHMENTS:
            continue
        else:
            return None
    return words or None


def codex_commands(script: str, parser=None) -> list[list[str]]:
    """What Codex's execpolicy is asked about for the model's `bash -lc <script>`."""
    parser = parser or _parser()
    src = script.encode("utf-8", "surrogateescape")
    tree = parser.parse(src)
    plain = _word_only_sequence(tree, src)
    if plain:
        return plain
    single = _heredoc_single_command(tree, src)
    if single is not None:
        return [single]
    return [["bash", "-lc", script]]


def _codex_binary() -> str:
    # The npm wrapper starts node for every call; its native binary answers in ~30 ms.
    vendor = CODEX.resolve().parent.parent / "node_modules" / "@openai"
    found = sorted(vendor.glob("codex-linux-*/vendor/*/bin/codex"))
    if not found:
        vendor = CODEX.parent.parent / "@openai"
        found = sorted(vendor.glob("codex-linux-*/vendor/*/bin/codex"))
    return str(found[0]) if found else str(CODEX)


def codex_decide(items: list[Case], out: Path) -> dict[str, dict]:
    if not CODEX.exists():
        raise SystemExit(f"Codex is not installed at {CODEX}: see the docstring")
    binary = _codex_binary()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    print(f"codex: {binary} ({version.strip()})", file=sys.stderr)
    files = translations()
    rule_files = {}
    for name in POLICIES:
        rule_files[name] = out / f"codex-{name}.rules"
        rule_files[name].write_text(files[f"codex-{name}.rules"])
    home = out / "codex-home"
    home.mkdir(exist_ok=True)
    parser = _parser()
    split = {case.key: codex_commands(case.script, parser) for case in items}
    # Patterns are at most this many words: later words never change a match, so a NUL
    # there (which argv cannot carry) is written as the two characters `\0`.
    longest = 3
    queries = sorted({(case.policy, tuple(cmd)) for case in items for cmd in split[case.key]})

    def check(query: tuple[str, tuple[str, ...]]) -> tuple[tuple, str]:
        policy, argv = query
        if any("\0" in word for word in argv[:longest]):
            return query, "unexpressible"
        argv = tuple(word.replace("\0", "\\0") for word in argv)
        done = subprocess.run(
            [binary, "execpolicy", "check", "--rules", str(rule_files[policy]), "--", *argv],
            capture_output=True,
            text=True,
            env={"PATH": os.environ["PATH"], "CODEX_HOME": str(home), "HOME": str(home)},
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(f"codex execpolicy check failed on {argv!r}: {done.stderr}")
        return query, json.loads(done.stdout).get("decision") or "unmatched"

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = dict(pool.map(check, queries))
    decided = {}
    for case in items:
        decisions = [answers[(case.policy, tuple(cmd))] for cmd in split[case.key]]
        decided[case.key] = {
            "allowed": all(d == "allow" for d in decisions),
            "detail": list(zip([" ".join(c) for c in split[case.key]], decisions, strict=True)),
        }
    return decided


# --- Claude Code -------------------------------------------------------------------------

_RECORDER = """#!{python}
# Claude Code's shell in the bench: records argv and the tool call then outstanding.
import json, sys
try:
    current = open("/tmp/cc/current").read()
except OSError:
    current = ""
with open("/tmp/cc/shell.log", "a") as log:
    log.write(json.dumps({{"tool_use_id": current, "argv": sys.argv[1:]}}) + "\\n")
"""


def _bwrap(scratch: Path, binds: list[str]) -> list[str]:
    links = []
    for link in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        if os.path.islink(f"/{link}"):
            links += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            links += ["--ro-bind", f"/{link}", f"/{link}"]
    ro = []
    for path in binds:
        ro += ["--ro-bind", path, path]
    return [
        "bwrap",
        "--tmpfs", "/",
        "--ro-bind", "/usr", "/usr",
        "--ro-bind", "/etc", "/etc",
        *links,
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--dir", "/root",
        *ro,
        "--bind", str(scratch / "cc"), "/tmp/cc",
        "--bind", str(scratch / "workspace"), "/workspace",
        "--remount-ro", "/",
        "--chdir", "/workspace",
        "--unshare-net", "--unshare-pid", "--unshare-uts", "--unshare-ipc",
        "--unshare-cgroup-try",
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
    ]  # fmt: skip


def claude_decide(items: list[Case], batch: int, out: Path) -> dict[str, dict]:
    if not CLAUDE.exists():
        raise SystemExit(f"Claude Code is not installed at {CLAUDE} (.ci/run installs it)")
    if shutil.which("bwrap") is None:
        raise SystemExit("bwrap is missing: apt-get install -y bubblewrap")
    binary = CLAUDE.resolve()
    python = Path(sys.executable)
    binds = sorted(
        {
            str(binary.parent),
            str(ROOT),
            str(Path(sys.prefix).resolve()),
            str(python.resolve().parent.parent),
        }
    )
    decided: dict[str, dict] = {}
    for policy in POLICIES:
        group = [case for case in items if case.policy == policy]
        if not group:
            continue
        with tempfile.TemporaryDirectory(prefix="fb-vs-claude-") as folder:
            scratch = Path(folder)
            # User settings: Claude Code ignores a project's permission rules until the
            # project is trusted, which a headless run never is.
            (scratch / "cc" / "home" / ".claude").mkdir(parents=True)
            (scratch / "workspace").mkdir()
            settings = claude_settings(POLICIES[policy])
            (scratch / "cc" / "home" / ".claude" / "settings.json").write_text(json.dumps(settings))
            recorder = scratch / "cc" / "bash"
            recorder.write_text(_RECORDER.format(python=python))
            recorder.chmod(0o755)
            jobs = [{"key": case.key, "command": case.script} for case in group]
            (scratch / "cc" / "jobs.json").write_text(json.dumps(jobs))
            inner = [
                str(python),
                str(Path(__file__).resolve()),
                "--claude-inner",
                str(binary),
                "--batch",
                str(batch),
            ]
            started = time.monotonic()
            done = subprocess.run(
                [*_bwrap(scratch, binds), *inner],
                capture_output=True,
                text=True,
                env={"PATH": os.environ["PATH"], "HOME": "/tmp/cc/home"},
            )
            print(
                f"claude: {len(group)} commands under {policy} in "
                f"{time.monotonic() - started:.0f} s",
                file=sys.stderr,
            )
            if done.returncode != 0:
                raise RuntimeError(f"the Claude Code run failed: {done.stderr[-3000:]}")
            results = json.loads((scratch / "cc" / "results.json").read_text())
            (out / f"claude-{policy}.log").write_text(done.stderr)
        decided.update(results)
    return decided


def _claude_inner(binary: str, batch: int) -> None:
    """Inside bubblewrap: serve the scripted model and run Claude Code sessions."""
    from tests.agents.model_server import ScriptedModel, text_stream, tool_results, tool_use_stream

    jobs = json.loads(Path("/tmp/cc/jobs.json").read_text())
    ids = {job["key"]: f"toolu_{n:05d}" for n, job in enumerate(jobs)}
    results: dict[str, dict] = {}

    class Batch(ScriptedModel):
        queue: list[dict] = []

        def _next(self, body: dict) -> bytes:
            offered = {tool.get("name") for tool in body.get("tools") or []}
            answered = len(tool_results(body))
            if "Bash" not in offered or answered >= len(self.queue):
                return text_stream("done")
            job = self.queue[answered]
            Path("/tmp/cc/current").write_text(ids[job["key"]])
            return tool_use_stream(ids[job["key"]], "Bash", {"command": job["command"]})

    env = {
        "PATH": os.environ["PATH"],
        "HOME": "/tmp/cc/home",
        "ANTHROPIC_API_KEY": "sk-ant-scripted",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_SHELL": "/tmp/cc/bash",
        "SHELL": "/tmp/cc/bash",
    }
    pending = list(jobs)
    attempts = 0
    with Batch() as model:
        env["ANTHROPIC_BASE_URL"] = model.url
        while pending and attempts < 3 * (len(jobs) // batch + 1):
            attempts += 1
            model.queue = pending[:batch]
            model.requests.clear()
            Path("/tmp/cc/shell.log").write_text("")
            Path("/tmp/cc/current").write_text("")
            done = subprocess.run(
                [binary, "-p", "run the commands", "--output-format", "json"]
                + ["--model", "claude-sonnet-4-5"],
                cwd="/workspace",
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
            )
            lines = done.stdout.strip().splitlines()
            answer = json.loads(lines[-1]) if lines else {}
            denied = {d.get("tool_use_id") for d in answer.get("permission_denials") or []}
            ran = set()
            for line in Path("/tmp/cc/shell.log").read_text().splitlines():
                call = json.loads(line)
                # A tool call reaches the shell as `... && eval '<command>' < /dev/null && pwd
                # -P >| ...`; the start-up snapshot carries no eval.
                script = call["argv"][-1] if call["argv"] else ""
                if "&& eval " in script and "SNAPSHOT_FILE" not in script and call["tool_use_id"]:
                    ran.add(call["tool_use_id"])
            answered = {}
            for body in model.bodies("/v1/messages"):
                for result in tool_results(body):
                    answered[result.get("tool_use_id")] = result
            for job in model.queue:
                tool_id = ids[job["key"]]
                if tool_id not in answered:
                    continue  # not reached in this session: asked again in the next one
                result = answered[tool_id]
                content = result.get("content")
                if isinstance(content, list):
                    content = " ".join(str(block.get("text", "")) for block in content)
                verdict = "ran" if tool_id in ran else "denied" if tool_id in denied else "not run"
                # Granted means recorded: a call Claude Code ran (no error) that the recorder
                # did not see would be a shell other than ours, and a denied call cannot run.
                if (verdict == "not run" and not result.get("is_error")) or (
                    tool_id in ran and tool_id in denied
                ):
                    raise RuntimeError(f"{job['command']!r}: {verdict}, yet {content!r}")
                results[job["key"]] = {
                    "allowed": tool_id in ran,
                    "detail": verdict if verdict == "ran" else f"{verdict}: {str(content)[:300]}",
                }
            pending = [job for job in pending if job["key"] not in results]
            print(
                f"session {attempts}: {len(model.queue)} asked, {len(ran)} ran, "
                f"{len(denied)} denied, {len(pending)} left (exit {done.returncode})",
                file=sys.stderr,
            )
    for job in pending:
        results[job["key"]] = {"allowed": False, "detail": "never answered"}
    Path("/tmp/cc/results.json").write_text(json.dumps(results))


# --- the table ---------------------------------------------------------------------------


def report(items: list[Case], decided: dict[str, dict[str, dict]]) -> str:
    attacks = [c for c in items if c.corpus == "attack"]
    benign = [c for c in items if c.corpus == "benign"]
    tools = list(decided)
    lines = [
        f"| decider | attacks allowed (of {len(attacks)}) | benign allowed (of {len(benign)}) |",
        "|---|---|---|",
    ]
    for tool in tools:
        a = sum(decided[tool][c.key]["allowed"] for c in attacks)
        b = sum(decided[tool][c.key]["allowed"] for c in benign)
        share = f" ({100 * b / len(benign):.1f}%)" if benign else ""
        lines.append(f"| {tool} | {a} | {b}{share} |")
    lines += ["", "attacks allowed, per class:", ""]
    lines.append("| class | shapes | " + " | ".join(tools) + " |")
    lines.append("|---|---|" + "---|" * len(tools))
    by_class: dict[str, list[Case]] = defaultdict(list)
    for case in attacks:
        by_class[case.klass].append(case)
    for klass, group in by_class.items():
        counts = [str(sum(decided[t][c.key]["allowed"] for c in group)) for t in tools]
        lines.append(f"| {klass} | {len(group)} | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="N attacks and N benign commands, seeded")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--batch", type=int, default=60, help="commands per Claude Code session")
    parser.add_argument("--out", default="/tmp/shell_vs_agents", help="per-command results")
    parser.add_argument("--write-rules", action="store_true", help=f"rewrite {RULES_DIR}")
    parser.add_argument("--claude-inner", metavar="CLAUDE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.claude_inner:
        _claude_inner(args.claude_inner, args.batch)
        return
    if args.write_rules:
        RULES_DIR.mkdir(exist_ok=True)
        for name, text in translations().items():
            (RULES_DIR / name).write_text(text)
        print(f"wrote {len(translations())} files to {RULES_DIR}")
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    items = cases(args.sample, args.seed)
    decided: dict[str, dict[str, dict]] = {}
    for tool in args.tools.split(","):
        started = time.monotonic()
        if tool == "fluidbox":
            decided[tool] = fluidbox_decide(items)
        elif tool == "codex":
            decided[tool] = codex_decide(items, out)
        elif tool == "claude":
            decided[tool] = claude_decide(items, args.batch, out)
        else:
            raise SystemExit(f"unknown tool {tool!r}: {', '.join(TOOLS)}")
        print(
            f"{tool}: decided {len(items)} in {time.monotonic() - started:.0f} s", file=sys.stderr
        )
    with (out / "results.jsonl").open("w") as results:
        for case in items:
            row = {"key": case.key, "script": case.script, "policy": case.policy}
            row |= {"class": case.klass, "shell": case.shell}
            row |= {tool: decided[tool][case.key] for tool in decided}
            results.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"load average {os.getloadavg()[0]:.1f}; per-command results in {out}/results.jsonl")
    print(report(items, decided))
    agreement = Counter(
        tuple(decided[t][c.key]["allowed"] for t in decided) for c in items if c.corpus == "attack"
    )
    print("\nattack decisions (allowed by " + ", ".join(decided) + "):", dict(agreement))


if __name__ == "__main__":
    main()
