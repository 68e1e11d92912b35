"""How steady this machine's CPU is: the same pure-Python loop timed again and again.

Nothing else runs in the loop (no I/O, no allocation to speak of), so on a steady machine
every pass costs the same CPU time. On a virtual machine whose host runs other work, the
CPU time of one pass moves with the host's load (`time.process_time` counts the time the
virtual CPU ran the loop, which the host can make slower); a spread that wide makes one
benchmark run say more about the host than about the code. Run it before and after a bench.

    .venv/bin/python bench/cpu_steadiness.py [--passes 30] [--pause 0.3]
"""

import argparse
import statistics
import time


def one_pass(iterations: int) -> float:
    """CPU milliseconds for a fixed loop."""
    started = time.process_time()
    total = 0
    for number in range(iterations):
        total += number
    return 1000 * (time.process_time() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=30)
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between passes")
    parser.add_argument("--iterations", type=int, default=2_000_000)
    args = parser.parse_args()
    costs = []
    for _ in range(args.passes):
        costs.append(one_pass(args.iterations))
        time.sleep(args.pause)
    costs.sort()
    fastest, median, slowest = costs[0], statistics.median(costs), costs[-1]
    print(f"{args.passes} passes of the same loop, CPU ms: {', '.join(f'{c:.0f}' for c in costs)}")
    print(
        f"fastest {fastest:.0f}, median {median:.0f}, slowest {slowest:.0f}: "
        f"the slowest pass cost {slowest / fastest:.2f} x the fastest"
    )


if __name__ == "__main__":
    main()
