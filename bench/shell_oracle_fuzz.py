"""The differential oracle's long run: 10^5 generated scripts against real bash and dash.

Run: /work/main/.venv/bin/python bench/shell_oracle_fuzz.py [--count 100000] [--seed 1]
     [--policy review|benign|builtins|links] [--grammar flat|structured] [--workers 2]
     [--corpora] [--out disagreements.jsonl]

The scripts come from a grammar, drawn by its seeded twin (the same grammar at the speed
of `random`; the suite's tests draw from the hypothesis strategies): `flat`, the one of
tests/shell_oracle/generator.py (lists of commands with tricky words, in bash and dash),
or `structured`, the one of tests/shell_oracle/structures.py (compound commands, folders
moved, made and linked, variables, in bash, dash and zsh; meant for the benign, builtins
and links policies, whose programs it uses). Each is evaluated by the engine; only those
the engine says ALWAYS (de-duplicated) run in the bubblewrap sandbox under strace, in
batches. Prints how many were ALWAYS, the disagreements by kind and shell, and times.
With `--corpora` the attack corpus and the benign corpus go through the oracle too.
Needs bwrap, strace, dash and zsh (see .ci/run).
"""

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.shell_corpus import policies  # noqa: E402
from tests.shell_corpus.policies import benign_policy, review_policy  # noqa: E402
from tests.shell_oracle.generator import seeded_cases  # noqa: E402
from tests.shell_oracle.oracle import Oracle  # noqa: E402
from tests.shell_oracle.sandbox import Job, run_jobs, unavailable_reason  # noqa: E402
from tests.shell_oracle.structures import seeded_structured_cases  # noqa: E402

CHUNK = 2000


def _run(oracle: Oracle, cases: list[tuple[str, str]], workers: int, out, label: str):
    """Judge `cases` (already ALWAYS) in chunks; returns the disagreements counter."""
    kinds: Counter[tuple[str, str]] = Counter()
    scripts_disagreeing = 0
    started = time.perf_counter()
    for start in range(0, len(cases), CHUNK):
        chunk = cases[start : start + CHUNK]
        jobs = [Job(s, shell, 5.0, stdin="\0" in s) for s, shell in chunk]
        for (script, shell), observation in zip(
            chunk, run_jobs(jobs, workers=workers), strict=True
        ):
            found = oracle.unallowed(observation)
            if not found:
                continue
            scripts_disagreeing += 1
            for disagreement in found:
                kinds[(disagreement.kind.value, shell)] += 1
            if out is not None:
                record = {
                    "label": label,
                    "script": script,
                    "shell": shell,
                    "observed": observation.summary(),
                    "disagreements": [str(d) for d in found],
                }
                out.write(json.dumps(record) + "\n")
        done = min(start + CHUNK, len(cases))
        rate = done / (time.perf_counter() - started)
        print(f"  {label}: {done}/{len(cases)} run ({rate:.1f}/s)", file=sys.stderr, flush=True)
    return kinds, scripts_disagreeing, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--policy", choices=("review", "benign", "builtins", "links"), default="review"
    )
    parser.add_argument("--grammar", choices=("flat", "structured"), default="flat")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--corpora", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason is not None:
        print(f"the sandbox cannot run here: {reason}", file=sys.stderr)
        return 2
    oracle = Oracle(getattr(policies, f"{args.policy}_policy")())
    out = args.out.open("w", encoding="utf-8") if args.out else None

    started = time.perf_counter()
    if args.grammar == "flat":
        cases = list(seeded_cases(args.seed, args.count))
    else:
        cases = list(seeded_structured_cases(args.seed, args.count, policy=args.policy))
    generated = time.perf_counter() - started
    started = time.perf_counter()
    verdicts: Counter[str] = Counter()
    allowed: list[tuple[str, str]] = []
    for script, shell in cases:
        verdict = oracle.evaluate(script, shell).verdict.value
        verdicts[verdict] += 1
        if verdict == "ALWAYS":
            allowed.append((script, shell))
    evaluated = time.perf_counter() - started
    unique = list(dict.fromkeys(allowed))
    kinds, disagreeing, ran = _run(oracle, unique, args.workers, out, "generated")

    print(
        f"generated scripts: {len(cases)} ({args.grammar} grammar, seed {args.seed}, "
        f"{generated:.1f} s)"
    )
    print(f"shells: {dict(Counter(shell for _, shell in cases))}")
    print(
        f"engine verdicts ({args.policy} policy): {dict(verdicts)} "
        f"in {evaluated:.1f} s ({evaluated / len(cases) * 1e6:.0f} µs per script)"
    )
    print(f"ALWAYS: {len(allowed)} ({len(unique)} distinct), run in the sandbox in {ran:.0f} s")
    print(f"scripts with a disagreement: {disagreeing}")
    print(f"disagreements by kind and shell: {dict(kinds) or 0}")

    if args.corpora:
        from tests.shell_corpus.attacks import ATTACKS
        from tests.shell_corpus.benign import BENIGN

        for label, policy, corpus in (
            ("attacks/review", review_policy(), [a for a in ATTACKS if a.policy == "review"]),
            ("attacks/benign", benign_policy(), [a for a in ATTACKS if a.policy == "benign"]),
        ):
            judge = Oracle(policy)
            always = [(a.script, a.shell) for a in corpus if judge.evaluate(a.script, a.shell)
                      .verdict.value == "ALWAYS"]  # fmt: skip
            found, _, _ = _run(judge, always, args.workers, out, label)
            print(f"{label}: {len(corpus)} attacks, {len(always)} ALWAYS, disagreements "
                  f"{dict(found) or 0}")  # fmt: skip
        judge = Oracle(benign_policy())
        commands = [(entry.command, "bash") for entry in BENIGN]
        always = [c for c in commands if judge.evaluate(*c).verdict.value == "ALWAYS"]
        found, _, _ = _run(judge, always, args.workers, out, "benign")
        print(f"benign: {len(commands)} commands, {len(always)} ALWAYS, disagreements "
              f"{dict(found) or 0}")  # fmt: skip
    if out is not None:
        out.close()
    return 1 if disagreeing else 0


if __name__ == "__main__":
    sys.exit(main())
