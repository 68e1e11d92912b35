"""What the per-process memories hold after an attacker's drafts, and what they cost a call.

Run: FLUIDBOX_DEVELOPMENT=1 /work/main/.venv/bin/python bench/cache_memory.py
(FLUIDBOX_ROOT=/path/to/checkout measures another checkout's code with this script.)

1. Memory still held (tracemalloc) after 20 distinct 10,000-rule drafts were compiled and
   evaluated once each, as a replay, a failing save or a dry run does.
2. Memory still held after linting 3 drafts of 2,000 tool-less 900-character patterns.
3. The cost of a remembered shell evaluation (the memory's key), and of collecting a call's
   argument secrets (the gate does it once per call) for a short command, a command with an
   inline secret, and a 64 KiB file content.
"""

import gc
import os
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, os.environ.get("FLUIDBOX_ROOT", str(Path(__file__).resolve().parents[1])))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")

import django  # noqa: E402

django.setup()

from governance.policy import MatchArgument, PolicyDocument, compile_policy, lint  # noqa: E402
from governance.policy.document import parse_rule  # noqa: E402
from ledger.redaction import argument_secrets  # noqa: E402

SHELL = MatchArgument("command", "shell")


def held_after(work) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    work()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held / 2**20


def drafts_evaluated() -> None:
    for n in range(20):
        rules = [
            {"pattern": f"run_command:tool{n}x{i} --flag*", "action": "ALWAYS"}
            for i in range(10_000)
        ]
        policy = compile_policy(rules)
        policy.evaluate("run_command", {"command": "ls -la"}, SHELL)
        policy.evaluate_key("read_file:/workspace/a")


def drafts_linted() -> None:
    known = {"run_command": SHELL, "read_file": MatchArgument("path", "path")}
    for _ in range(3):
        tag = uuid.uuid4().hex[:8]
        rules = tuple(
            parse_rule({"pattern": f"r*{tag}{i}" + "ab" * 450, "action": "ALWAYS"})
            for i in range(2000)
        )
        lint(PolicyDocument("draft", rules), known)


def per_call(label: str, call, rounds: int) -> None:
    call()
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            call()
        best = min(best, (time.perf_counter() - started) / rounds)
    print(f"  {label:<52} {best * 1e6:8.2f} µs")


def main() -> None:
    print(f"code under test: {sys.path[0]}")
    print(f"held after 20 evaluated 10,000-rule drafts: {held_after(drafts_evaluated):8.1f} MiB")
    print(f"held after linting 3 x 2,000 long patterns: {held_after(drafts_linted):8.1f} MiB")
    print("per call (best of 5):")
    policy = compile_policy(
        [
            {"pattern": "run_command:git *", "action": "ALWAYS"},
            {"pattern": "run_command:ls *", "action": "ALWAYS"},
        ]
    )
    remembered = {"command": "git status && ls -la"}
    per_call(
        "remembered shell evaluation",
        lambda: policy.evaluate("run_command", remembered, SHELL),
        50_000,
    )
    per_call(
        "argument secrets of {'command': 'git status'}",
        lambda: argument_secrets({"command": "git status"}),
        50_000,
    )
    inline = {"command": "curl -H 'Authorization: Bearer abcdef123456' https://x && echo ok"}
    per_call(
        "argument secrets of a command with an inline secret",
        lambda: argument_secrets(inline),
        20_000,
    )
    content = {"path": "/workspace/a.txt", "content": "lorem ipsum dolor sit amet " * 2427}
    per_call("argument secrets of a 64 KiB file content", lambda: argument_secrets(content), 500)


if __name__ == "__main__":
    main()
