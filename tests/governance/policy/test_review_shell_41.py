"""Shapes from a shell-rules review (after F175): the database clients, gpg and ssh-keygen
under a rule naming only the program (F176).

From the manuals (not run): sqlite3 3.40's shell gives SQL load_extension() (a library
loaded), writefile() and edit() (an editor run), and ATTACH and VACUUM INTO write another
database file; SQL that writes a database outside the working directory writes it there;
`-A ARGS` runs `.archive ARGS` (`-Ax` extracts). psql 15 runs a script file's meta-commands
(`-f`), writes its output and log (`-o`, `-L`), and `-c`'s `\\!`, `\\o`, `\\copy`, `\\g |CMD`,
`\\i`, `\\setenv` run or write. mysql 8's `-e` takes client commands (`system`, `\\!`,
`tee`, `source`), `--pager` runs, `--defaults-file` and `--plugin-dir` load options and
plugins, `--local-infile` sends local files. gpg 2.2 writes `-o`, runs `--photo-viewer`,
`--exec-path`, reads another home's gpg.conf, changes, deletes, fetches and sends keys, and
prints secret keys. ssh-keygen (OpenSSH 9) loads `-D`/`-w` libraries, rewrites known_hosts
(`-R`, `-H`), writes host keys (`-A`) and the key files `-f` names.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("sqlite3 *", "sqlite3 db.sqlite 'ATTACH \"/tmp/x.db\" AS x; CREATE TABLE x.t(a);'"),
    ("sqlite3 *", "sqlite3 db.sqlite 'select load_extension(\"/tmp/x.so\")'"),
    ("sqlite3 *", "sqlite3 db.sqlite \"SELECT LOAD_EXTENSION('/tmp/x.so')\""),
    ("sqlite3 *", "sqlite3 -bail db.sqlite 'select writefile(\"/tmp/x\", 1)'"),
    ("sqlite3 *", "sqlite3 db.sqlite \"select edit('x', 'sh -c id')\""),
    ("sqlite3 *", "sqlite3 db.sqlite \"vacuum into '/tmp/x'\""),
    ("sqlite3 *", "sqlite3 /tmp/x.db 'create table t(a)'"),
    ("sqlite3 *", "sqlite3 -separator , ../x.db 'insert into t values(1)'"),
    ("sqlite3 *", "sqlite3 a.sqlar -Ax"),
    ("sqlite3 *", "sqlite3 a.sqlar -A -x -C /tmp"),
    ("psql *", "psql -f /tmp/x.sql"),
    ("psql *", "psql -f x.sql"),
    ("psql *", "psql --file=x.sql"),
    ("psql *", "psql -Xf x.sql"),
    ("psql *", "psql -o /tmp/x -c 'select 1'"),
    ("psql *", "psql -Ao/tmp/x -c 'select 1'"),
    ("psql *", "psql --out /tmp/x -c 'select 1'"),
    ("psql *", "psql -L /tmp/x -c 'select 1'"),
    ("psql *", "psql --log-file=/tmp/x -c 'select 1'"),
    ("psql *", "psql -c '\\! id'"),
    ("psql *", "psql -c '\\o /tmp/x'"),
    ("psql *", "psql -c '\\copy t to /tmp/x'"),
    ("psql *", "psql -c '\\i /tmp/x.sql'"),
    ("psql *", "psql -c 'select 1 \\g |id'"),
    ("psql *", "psql --command='\\echo x \\\\ \\! id'"),
    ("psql *", "psql -Atc '\\! id'"),
    ("psql *", "psql -c '\\setenv PAGER id'"),
    ("mysql *", "mysql -e 'system id'"),
    ("mysql *", "mysql -e '\\! id'"),
    ("mysql *", "mysql -Ne 'select 1; system id'"),
    ("mysql *", "mysql --execute='tee /tmp/x'"),
    ("mysql *", "mysql --defaults-file=/tmp/x.cnf"),
    ("mysql *", "mysql --defaults-extra-file=/tmp/x.cnf"),
    ("mysql *", "mysql --tee=/tmp/x"),
    ("mysql *", "mysql --pager=id"),
    ("mysql *", "mysql --plugin-dir=/tmp --default-auth=x"),
    ("mysql *", "mysql --local-infile=1 -e \"load data local infile '/etc/shadow' into table t\""),
    ("mysql *", "mysql -e 'source /tmp/x.sql'"),
    ("gpg *", "gpg --output /tmp/x -d a.gpg"),
    ("gpg *", "gpg -o /tmp/x -d a.gpg"),
    ("gpg *", "gpg -do/tmp/x a.gpg"),
    ("gpg *", "gpg --out=/tmp/x -d a.gpg"),
    ("gpg *", "gpg --import /tmp/k.asc"),
    ("gpg *", "gpg --homedir /tmp/g --list-keys"),
    ("gpg *", "gpg --export-secret-keys"),
    ("gpg *", "gpg --send-keys ABC"),
    ("gpg *", "gpg --recv-keys ABC"),
    ("gpg *", "gpg --keyserver hkp://evil --search-keys a"),
    ("gpg *", "gpg --exec-path /tmp --list-keys"),
    ("gpg *", "gpg --photo-viewer 'sh -c id' --list-keys"),
    ("gpg *", "gpg --edit-key ABC"),
    ("gpg *", "gpg --yes --batch --delete-secret-keys ABC"),
    ("gpg *", "gpg --quick-gen-key a@b"),
    ("gpg *", "gpg --batch --gen-key p.txt"),
    ("gpg *", "gpg --options /tmp/gpg.conf -k"),
    ("ssh-keygen *", "ssh-keygen -f /tmp/k -N ''"),
    ("ssh-keygen *", "ssh-keygen -t ed25519 -N '' -f /root/.ssh/id_ed25519"),
    ("ssh-keygen *", "ssh-keygen -qf../k -N ''"),
    ("ssh-keygen *", "ssh-keygen -R host"),
    ("ssh-keygen *", "ssh-keygen -D /tmp/x.so"),
    ("ssh-keygen *", "ssh-keygen -w /tmp/x.so -K"),
    ("ssh-keygen *", "ssh-keygen -A"),
    ("ssh-keygen *", "ssh-keygen -H"),
    ("ssh-keygen *", "ssh-keygen -p -N x -f /root/.ssh/id_rsa"),
    ("ssh-keygen *", "ssh-keygen -s ca -I id /tmp/k.pub"),
    ("ssh-keygen *", "ssh-keygen -Y sign -f k -n file /tmp/a"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F176: each runs a program or library, writes outside the working directory, changes or
    # sends the user's keys, which the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("sqlite3 *", "sqlite3 db.sqlite 'select 1'"),
    ("sqlite3 *", "sqlite3 db.sqlite 'create table t(a)'"),
    ("sqlite3 *", "sqlite3 -readonly /tmp/x.db 'select * from t'"),
    ("sqlite3 *", "sqlite3 db.sqlite \"select * from edits where name = 'attached'\""),
    ("sqlite3 *", "sqlite3 -header -separator , db.sqlite 'select count(*) from t'"),
    ("sqlite3 *", "sqlite3 :memory: 'create table t(a)'"),
    ("psql *", "psql -c 'select 1'"),
    ("psql *", "psql -h db.example.com -U app -d app -c 'select count(*) from t'"),
    ("psql *", "psql -Atc 'select 1'"),
    ("psql *", "psql -c '\\dt'"),
    ("psql *", "psql -c '\\d+ users'"),
    ("psql *", "psql -o out.txt -c 'select 1'"),
    ("psql *", "psql -L session.log -c 'select 1'"),
    ("psql *", "psql -l"),
    ("mysql *", "mysql -e 'select 1'"),
    ("mysql *", "mysql -u root -h db -e 'show tables' app"),
    ("mysql *", "mysql -Ne 'select 1'"),
    ("gpg *", "gpg --list-keys"),
    ("gpg *", "gpg -k"),
    ("gpg *", "gpg --export ABC"),
    ("gpg *", "gpg --armor --export ABC"),
    ("gpg *", "gpg --verify a.sig a"),
    ("gpg *", "gpg -d a.gpg"),
    ("gpg *", "gpg -o out.txt -d a.gpg"),
    ("gpg *", "gpg --sign a.txt"),
    ("gpg *", "gpg --fingerprint"),
    ("gpg *", "gpg --list-secret-keys"),
    ("ssh-keygen *", "ssh-keygen -l -f /root/.ssh/id_rsa.pub"),
    ("ssh-keygen *", "ssh-keygen -lf /root/.ssh/id_rsa.pub"),
    ("ssh-keygen *", "ssh-keygen -y -f /root/.ssh/id_rsa"),
    ("ssh-keygen *", "ssh-keygen -f k -N ''"),
    ("ssh-keygen *", "ssh-keygen -t ed25519 -N '' -f keys/deploy"),
    ("ssh-keygen *", "ssh-keygen -F host"),
    ("ssh-keygen *", "ssh-keygen -Y verify -f allowed -I a -n file -s a.sig"),
    ("ssh-keygen *", "ssh-keygen -Y sign -f k -n file notes.txt"),
    ("psql -f *", "psql -f x.sql"),
    ("gpg --import *", "gpg --import k.asc"),
    ("ssh-keygen -R *", "ssh-keygen -R host"),
    ("mysql -e *", 'mysql -e "select 1"'),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
