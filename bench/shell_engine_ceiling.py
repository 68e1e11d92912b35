"""The shell engine's ceiling: CPU time and memory of one evaluation of adversarial 64 KiB commands.

Run: /work/main/.venv/bin/python bench/shell_engine_ceiling.py [--rounds N]

Every input is exactly 64 KiB (the largest subject the engine accepts) and built to make
one part of the reading work hardest: many segments, many words, many wrappers, deep
nesting, long quotes, here-documents, substitutions, a huge single word. Each is
evaluated under the review's policy (tests/shell_corpus/policies.py). Printed per input:
the best and worst CPU time over the rounds (`time.process_time`, so other processes on
the machine count less), the peak memory the evaluation allocated (tracemalloc), and the
verdict. The engine's promise: every evaluation within 20 ms CPU and 50 MiB, whatever
the input; past its step budget it answers ASK.
"""

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.shell_corpus.policies import kinds, review_policy  # noqa: E402

SIZE = 64 * 1024


def fill(unit: str, tail: str = "") -> str:
    return (unit * (SIZE // len(unit) + 1))[: SIZE - len(tail)] + tail


INPUTS = {
    "8,000 segments `ls -la; `": fill("ls -la; ", "rm -rf /"),
    "distinct segments `ls aN; `": fill("".join(f"ls a{i}; " for i in range(12000))),
    "32,000 words": fill("a "),
    "pipes `ls|`": fill("ls|"),
    "newlines": fill("ls\n"),
    "`env ` x 16,000 (wrappers)": fill("env ", "ls -la"),
    "`timeout 5 ` chain": fill("timeout 5 ", "ls"),
    "`sudo ` chain": fill("sudo ", "ls"),
    "`sh -c ` nested quoting": fill("sh -c 'sh -c \"ls\"'; "),
    "find -exec segments": fill("find . -exec ls {} ; "),
    "quotes `'a'\"b\"`": fill("'a'\"b\""),
    "one 64 KiB word": "ls " + "a" * (SIZE - 3),
    "one 64 KiB quoted word": "echo '" + "a" * (SIZE - 8) + "'",
    "`(` x 32,000 (nesting)": "(" * (SIZE // 2) + ")" * (SIZE // 2),
    "`$(` x 21,000 (nesting)": "$(" * (SIZE // 3) + ")" * (SIZE - 2 * (SIZE // 3)),
    "backticks": fill("`ls` "),
    "`${a:-${b:-x}}`": fill("${a:-${b:-x}} "),
    "`$((1+` arithmetic": "echo $((" + fill("1+")[: SIZE - 12] + "1))",
    "`case` clauses": "case x in " + fill("a) ls;; ")[: SIZE - 16] + " esac",
    "`[[` operands": "[[ " + fill("-n $x ")[: SIZE - 6] + " ]]",
    "zsh glob qualifiers `*(e:a:…)`": "ls *(" + fill("e:a:")[: SIZE - 6] + ")",
    "glued `x(` x 32,000": "ls " + fill("x(")[: SIZE - 3],
    "here-document body": "cat <<E\n" + fill("$(ls)\n")[: SIZE - 12] + "\nE",
    "`echo $x; ` outside the subset": fill("echo $x; "),
    "comments": fill("# c\n"),
    "NFKC-folded fullwidth": ("ｌｓ；" * SIZE)[: SIZE // 3],
    "control bytes": fill("ls\x01; "),
    # Inside the subset's 1,024 words: each command is matched as open (every continuation).
    "250 distinct globs `ls a…aN*;`": fill("".join(f"ls {'a' * 256}{i}* ; " for i in range(250))),
    "a 64 KiB start before a glob": "ls " + "a" * (SIZE - 6) + " *",
    "170 distinct `x | xargs ls a…aN`": fill(
        "".join(f"x | xargs ls {'a' * 380}{i}; " for i in range(170))
    ),
}


def measure(script: str, rounds: int) -> tuple[float, float, float, float, str]:
    policy, shell = review_policy(), kinds()["run_command"]
    evaluate = lambda: policy.evaluate("run_command", {"command": script}, shell)  # noqa: E731
    evaluation = evaluate()
    timings = []
    for _ in range(rounds):
        start = time.process_time()
        evaluate()
        timings.append(time.process_time() - start)
    tracemalloc.start()
    evaluate()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return min(timings), statistics.median(timings), max(timings), peak, evaluation.verdict.value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    rounds = parser.parse_args().rounds
    load = os.getloadavg()[0]
    print(
        f"Python {sys.version.split()[0]}; {len(INPUTS)} inputs of 64 KiB; {rounds} rounds each;"
        f" load average {load:.1f} on {os.cpu_count()} cores"
    )
    print(f"  {'input':34} {'best':>8} {'median':>8} {'worst':>8} {'peak':>9}  verdict")
    worst_median = worst_time = worst_memory = 0.0
    for name, script in INPUTS.items():
        assert len(script.encode("utf-8")) <= SIZE, name
        best, median, worst, peak, verdict = measure(script, rounds)
        worst_median, worst_time = max(worst_median, median), max(worst_time, worst)
        worst_memory = max(worst_memory, peak)
        print(
            f"  {name:34} {best * 1000:6.1f}ms {median * 1000:6.1f}ms {worst * 1000:6.1f}ms "
            f"{peak / 2**20:6.1f}MiB  {verdict}"
        )
    print(
        f"\nSlowest input's median: {worst_median * 1000:.1f} ms CPU; slowest single round:"
        f" {worst_time * 1000:.1f} ms; most memory: {worst_memory / 2**20:.1f} MiB"
        " (ceiling: 20 ms, 50 MiB)"
    )


if __name__ == "__main__":
    main()
