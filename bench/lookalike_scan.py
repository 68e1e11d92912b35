"""How long the hidden-character scan takes on the largest subject the engine reads (64 KiB).

Run: .venv/bin/python bench/lookalike_scan.py

`first_invisible` runs on every shell command and path the gate matches (a flagged character
makes the call ASK); `escape_invisible` runs when a call is shown. Cases: plain ASCII, text
in one other script, text mixing two scripts in separate words (no look-alike), and the
attacker's cases: a look-alike in every word, long combining runs, invisible characters.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from governance.policy.invisible import escape_invisible, first_invisible  # noqa: E402

SIZE = 64 * 1024
CASES = {
    "ASCII shell": "ls -la /workspace; ",
    "one script (Cyrillic words)": "привет мир ",
    "two scripts, separate words": "echo привет ",
    "Japanese (kanji and kana)": "日本語のテキストです。",
    "a look-alike in every word": "gіt ",
    "combining runs": "a" + "\u0301" * 8 + " ",
    "zero-width spaces": "ls\u200b ",
}


def fill(unit: str) -> str:
    return (unit * (SIZE // len(unit.encode()) + 1)).encode()[:SIZE].decode("utf-8", "ignore")


def timed_ms(function, text: str, rounds: int = 15) -> tuple[float, float]:
    """(fastest, median) of `rounds` runs: on a shared machine the fastest is the cost,
    the median shows what other load adds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function(text)
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def main() -> None:
    print("milliseconds, fastest / median of 15 runs")
    print(f"{'case (64 KiB)':32} {'first_invisible':>18} {'escape_invisible':>18}")
    for name, unit in CASES.items():
        text = fill(unit)
        first = timed_ms(first_invisible, text)
        escape = timed_ms(escape_invisible, text)
        print(f"{name:32} {first[0]:8.2f} / {first[1]:7.2f} {escape[0]:8.2f} / {escape[1]:7.2f}")


if __name__ == "__main__":
    main()
