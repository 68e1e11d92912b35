"""Loopback ports for the servers tests start, never one another pytest worker may hand out.

A port the kernel picks (`bind(("127.0.0.1", 0))`, then closed) can be picked again by the
other xdist worker before this one's server binds it: the server then fails to start while
the test talks to the other worker's server (a CI run once refreshed a connection's tools
from a server set to answer 500). So each worker takes ports from its own block, one after
another from a random place in it (a child process a test starts may take ports from the
same block), skipping any port something already listens on or holds.

The blocks stay inside the kernel's ephemeral range (32768–60999 on Linux), as the kernel's
own picks were: tests that send a request to a public address on a test server's port
expect it refused offline, and this machine's gateway accepts connections to ports below
that range (it refuses them inside it).
"""

import itertools
import os
import random
import socket

FIRST_PORT = 40000
BLOCK_SIZE = 2000


def _worker_number() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # "gw0", "gw1", …; unset: no xdist
    digits = worker.removeprefix("gw")
    return int(digits) if digits.isdigit() else 0


def _block_start() -> int:
    # Bench scripts and other processes outside pytest take the block after the workers'.
    worker = _worker_number() if "PYTEST_XDIST_WORKER" in os.environ else 5
    return FIRST_PORT + (worker % 6) * BLOCK_SIZE


_first_offset = random.randrange(BLOCK_SIZE)
_next_offsets = ((_first_offset + step) % BLOCK_SIZE for step in itertools.count())


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on, from this process's own block."""
    start = _block_start()
    for _ in range(BLOCK_SIZE):
        port = start + next(_next_offsets)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {start}–{start + BLOCK_SIZE - 1}")
