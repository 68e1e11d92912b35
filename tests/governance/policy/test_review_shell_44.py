"""Shapes from a shell-rules review (after F178): the database clients fed their commands by
the script, SQL that has the server act, gpg with no command, python's perf maps (F179).

From the manuals: psql with neither `-c` nor `-f`, mysql without `-e` and sqlite3 with no SQL
after the database run the commands on their standard input, so `psql db < x.sql` and `cat
x.sql | psql db` run x.sql's `\\!` as `psql -f x.sql` does; a here-document's or an echo's
commands are read as `-c`'s. PostgreSQL's COPY … TO/FROM PROGRAM runs a program on the server
and COPY … TO/FROM 'file', pg_read_file(), lo_import()/lo_export() use the server's files;
ALTER SYSTEM sets archive_command and the like; a function in C or plpython3u runs code there.
MySQL's SELECT … INTO OUTFILE/DUMPFILE, LOAD DATA, LOAD_FILE() and INSTALL PLUGIN do the same.
The server may be this machine. Python 3.12's `-X perf` writes /tmp/perf-PID.map (3.13's
`-X perf_jit` /tmp/jit-PID.dump too).

Seen here with gpg 2.2.40 in a throwaway home: `gpg ../c.gpg`, given no command, decrypted to
../c; `--use-embedded-filename -d` wrote the name the message carried (its folders dropped)
in the working directory.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("psql *", "psql db < x.sql"),
    ("psql *", "psql -d db -U u < ./x.sql"),
    ("psql *", "cat x.sql | psql db"),
    ("psql *", "cat x.sql | psql -f -"),
    ("psql *", "echo '\\! id' | psql db"),
    ("psql *", "printf '\\\\o /tmp/x\\nselect 1;\\n' | psql db"),
    ("psql *", "env psql db < x.sql"),
    ("psql *", "timeout 5 psql db < x.sql"),
    ("psql *", "psql db <<'EOF'\n\\! id\nEOF"),
    # the input a shell's script inherits (`sh -c` under a redirection or a pipe)
    ("psql *", "sh -c 'psql db' < x.sql"),
    ("psql *", "cat x.sql | bash -c 'psql db'"),
    ("psql *", "timeout 5 sh -c 'psql db' < x.sql"),
    ("psql *", "echo '\\! id' | sh -c 'psql db'"),
    ("psql *", "sh -c 'sh -c \"psql db\"' < x.sql"),
    ("psql *", "psql db <<'EOF'\nCOPY t FROM PROGRAM 'id';\nEOF"),
    ("psql *", "psql -c \"COPY t TO PROGRAM 'id'\""),
    ("psql *", "psql -c \"copy (select 1) to program 'sh -c id'\""),
    ("psql *", "psql -c \"COPY t TO '/tmp/x'\""),
    ("psql *", "psql -c \"copy t from E'/etc/passwd'\""),
    ("psql *", "psql -c \"select pg_read_file('/etc/passwd')\""),
    ("psql *", "psql -c \"select pg_read_binary_file('/etc/shadow')\""),
    ("psql *", "psql -c 'select pg_ls_dir($$/root$$)'"),
    ("psql *", "psql -c \"select lo_export(123, '/tmp/x')\""),
    ("psql *", "psql -c \"select lo_import('/etc/passwd')\""),
    ("psql *", "psql -c \"ALTER SYSTEM SET archive_command = 'id'\""),
    ("psql *", "psql -c \"create function f() returns int language c as 'x.so'\""),
    ("psql *", "psql -c 'create function f() returns int language plpython3u as $$1$$'"),
    ("mysql *", "mysql db < x.sql"),
    ("mysql *", "cat x.sql | mysql db"),
    ("mysql *", "echo 'system id' | mysql db"),
    ("mysql *", "mysql db <<'EOF'\n\\! id\nEOF"),
    ("mysql *", "mysql -e \"select * from t into outfile '/tmp/x'\""),
    ("mysql *", "mysql -e \"select 1 into dumpfile '/tmp/x'\""),
    ("mysql *", "mysql -e \"load data infile '/etc/passwd' into table t\""),
    ("mysql *", "mysql -e \"LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t\""),
    ("mysql *", "mysql -e \"select load_file('/etc/passwd')\""),
    ("mysql *", "mysql -e \"install plugin x soname 'x.so'\""),
    ("mysql *", "mysql -e \"create function f returns string soname 'x.so'\""),
    ("sqlite3 *", "sqlite3 db.sqlite < x.sql"),
    ("sqlite3 *", "cat x.sql | sqlite3 db.sqlite"),
    ("sqlite3 *", "echo '.shell id' | sqlite3 db.sqlite"),
    ("sqlite3 *", "printf '.output /tmp/x\\nselect 1;' | sqlite3 db.sqlite"),
    ("sqlite3 *", "sqlite3 db.sqlite <<'EOF'\n.system id\nEOF"),
    ("sqlite3 *", "sqlite3 db.sqlite <<'EOF'\nselect load_extension('/tmp/x.so');\nEOF"),
    ("sqlite3 *", "sqlite3 db.sqlite <<'EOF'\nvacuum\ninto '/tmp/x';\nEOF"),
    ("sqlite3 *", "sqlite3 /tmp/x.db <<'EOF'\ncreate table t(a);\nEOF"),
    ("gpg *", "gpg /tmp/x.gpg"),
    ("gpg *", "gpg -v --batch /tmp/x.gpg"),
    ("gpg *", "gpg --passphrase p ../x.asc"),
    ("gpg *", "gpg --use-embedded-filename -d x.gpg"),
    ("gpg *", "gpg --use-embedded -d x.gpg"),
    ("python *", "python -X perf a.py"),
    ("python *", "python -Xperf_jit a.py"),
    ("python *", "python3 -X perf -m pytest"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F179: each runs commands the script's file or pipe holds, has the database server run a
    # program or use its files, or writes outside the working directory or a name a message
    # chose, which the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("psql *", "psql db"),
    ("psql *", "psql -c 'select 1' < x.sql"),
    ("psql *", "psql -l < x.sql"),
    ("psql *", "psql --version < x.sql"),
    ("psql *", "echo 'select 1' | psql db"),
    ("psql *", "psql db <<'EOF'\nselect count(*) from t;\n\\dt\nEOF"),
    ("psql *", "psql -c 'copy t to stdout'"),
    ("psql *", "psql -c 'COPY t FROM STDIN' < data.csv > out.txt"),
    ("psql *", "psql -c 'create function f() returns int language sql as $$select 1$$'"),
    ("psql *", "psql -c 'select 1' | cat"),
    ("psql *", "psql db < /dev/null"),
    ("psql *", "echo 'select 1' | sh -c 'psql db'"),
    ("psql *", "sh -c 'psql -c \"select 1\"' < x.sql"),
    ("psql *", "sh -c 'psql db < /dev/null' < x.sql"),
    ("mysql *", "mysql -e 'select 1'"),
    ("mysql *", "echo 'select 1' | mysql db"),
    ("mysql *", "mysql -e 'select 1' < x.sql"),
    ("mysql *", "mysql --version < x.sql"),
    ("sqlite3 *", "sqlite3 db.sqlite 'select 1' < x.sql"),
    ("sqlite3 *", "sqlite3 db.sqlite <<'EOF'\ncreate table t(a);\nEOF"),
    ("sqlite3 *", "sqlite3 -version < x.sql"),
    ("gpg *", "gpg x.gpg"),
    ("gpg *", "gpg -d /tmp/x.gpg"),
    ("gpg *", "gpg --list-packets /tmp/x.gpg"),
    ("gpg *", "gpg --list-pack /tmp/x.gpg"),
    ("gpg *", "gpg --verify /tmp/x.sig"),
    ("gpg *", "gpg -k"),
    ("gpg *", "gpg --version"),
    ("gpg *", "gpg --show-keys /tmp/key.asc"),
    ("gpg --use-embedded-filename *", "gpg --use-embedded-filename -d x.gpg"),
    ("python *", "python -X dev a.py"),
    ("python *", "python a.py -X perf"),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
