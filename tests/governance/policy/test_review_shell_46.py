"""Shapes from a shell-rules review (after F180): DuckDB's command-line shell under a rule naming
only the program (F181).

From DuckDB 1.4's manual (not run): its shell descends from sqlite3's, so `-cmd`, `-init` and `-f`
run a script, and the dot-commands `.shell`, `.system` and `.output` run programs and write files,
given as an operand, by `-c` or on its standard input; with no SQL on its command line it runs
the commands of its standard input. Its SQL writes a file (COPY … TO), a folder (EXPORT
DATABASE), opens or creates another database file (ATTACH), downloads an extension (INSTALL)
and loads a library (LOAD; any library after `-unsigned`). SQL that writes a database outside
the working directory writes it there.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("duckdb *", "duckdb db.duckdb \"copy t to '/tmp/x.csv'\""),
    ("duckdb *", "duckdb -c \"COPY (select 1) TO '/tmp/x.parquet'\""),
    ("duckdb *", "duckdb db.duckdb -c \"export database '/tmp/x'\""),
    ("duckdb *", "duckdb -c \"attach '/tmp/x.db' as x\""),
    ("duckdb *", "duckdb -c 'install httpfs'"),
    ("duckdb *", "duckdb -c \"load '/tmp/x.duckdb_extension'\""),
    ("duckdb *", "duckdb -s \"LOAD '/tmp/x.duckdb_extension'\""),
    ("duckdb *", "duckdb -unsigned -c 'select 1'"),
    ("duckdb *", "duckdb -c '.shell id'"),
    ("duckdb *", "duckdb db.duckdb '.output /tmp/x'"),
    ("duckdb *", "duckdb -init /tmp/x.sql db.duckdb"),
    ("duckdb *", "duckdb -f x.sql"),
    ("duckdb *", "duckdb -cmd '.shell id' db.duckdb"),
    ("duckdb *", "duckdb /tmp/x.duckdb -c 'create table t(a int)'"),
    ("duckdb *", "duckdb db.duckdb < x.sql"),
    ("duckdb *", "cat x.sql | duckdb db.duckdb"),
    ("duckdb *", "echo '.shell id' | duckdb db.duckdb"),
    ("duckdb *", "duckdb db.duckdb <<'EOF'\ncopy t to '/tmp/x';\nEOF"),
    ("duckdb *", "duckdb db.duckdb <<'EOF'\n.system id\nEOF"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F181: each runs a program or a script, writes outside the working directory, or loads
    # a library, which the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("duckdb *", "duckdb -c 'select 1'"),
    ("duckdb *", "duckdb db.duckdb -c \"select * from read_csv('data.csv')\""),
    ("duckdb *", "duckdb db.duckdb 'create table t(a int)'"),
    ("duckdb *", "duckdb -csv -c 'select 1' < x.sql"),
    ("duckdb *", "echo 'select 42' | duckdb db.duckdb"),
    ("duckdb *", "duckdb db.duckdb <<'EOF'\ncreate table t(a int);\nselect * from t;\nEOF"),
    ("duckdb *", "duckdb -version < x.sql"),
    ("duckdb *", "duckdb -c \"copy t from 'data.csv'\""),
    ("duckdb *", "duckdb -c \"select * from t where x = 'download'\""),
    ("duckdb -c *install*", "duckdb -c 'install httpfs'"),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
