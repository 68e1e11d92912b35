"""Shapes from a shell-rules review (after F176): the toolchains' options no table read, under a
rule naming only the program (F177).

From the manuals (not run): node 22 writes its profiles, reports, snapshots, warnings, V8 log
and trace events where `--cpu-prof-dir`, `--diagnostic-dir`, `--redirect-warnings`,
`--report-directory`, `--logfile`... say, a test reporter's output where
`--test-reporter-destination` says; it loads a test reporter or global setup module, an
OpenSSL configuration's engines, and NODE_OPTIONS from an env or configuration file. java (JDK
21) runs `-XX:OnError=CMD`, loads `-javaagent:`/`-agentpath:`, reads options from `@FILE` and
`-XX:VMOptionsFile=`, and writes its heap dumps, error files, logs (`-Xlog:…:FILE`), archives
and flight recordings where told. ruby's and perl's `-I DIR` load libraries from DIR, ruby's
`-C DIR` runs that folder's script, perl's `-d` runs its debugger. cargo publishes, changes
owners, yanks, stores or deletes the registry token, uninstalls from ~/.cargo/bin. go's `bug`
opens the browser, `telemetry on` uploads, `mod vendor -o` fills where told, `clean -modcache`
empties the user's caches, `doc -http` runs pkgsite, and `go tool` runs Go's own tools as `go
run cmd/NAME` does (F123): pprof's and trace's servers and browsers, test2json's binary, pack's
and fix's writes, dist's installs.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("node *", "node --cpu-prof --cpu-prof-dir=/tmp a.js"),
    ("node *", "node --cpu-prof --cpu-prof-name /tmp/x.cpuprofile a.js"),
    ("node *", "node --heap-prof --heap-prof-dir=/tmp a.js"),
    ("node *", "node --diagnostic-dir=/tmp a.js"),
    ("node *", "node --diagnostic_dir=/tmp a.js"),
    ("node *", "node --redirect-warnings=/tmp/x a.js"),
    ("node *", "node --report-directory=/tmp --report-on-signal a.js"),
    ("node *", "node --report-dir /tmp --report-uncaught-exception a.js"),
    ("node *", "node --report-filename=/tmp/x --report-uncaught-exception a.js"),
    ("node *", "node --prof --logfile=/tmp/x a.js"),
    ("node *", "node --trace-events-enabled --trace-event-file-pattern=/tmp/x a.js"),
    ("node *", "node --test --test-reporter-destination=/tmp/x"),
    ("node *", "node --snapshot-blob /tmp/x.blob --build-snapshot a.js"),
    ("node *", "node --experimental-webstorage --localstorage-file=/tmp/x a.js"),
    ("node *", "node --experimental-sea-config /tmp/x.json"),
    ("node *", "node --test --test-reporter=/tmp/r.mjs"),
    ("node *", "node --test --test-reporter ./r.mjs"),
    ("node *", "node --test --test-global-setup=/tmp/x.js"),
    ("node *", "node --openssl-config=/tmp/x.cnf a.js"),
    ("node *", "node --experimental-config-file=/tmp/x.json a.js"),
    ("node *", "node --env-file=/tmp/.env a.js"),
    ("node *", "node --env-file-if-exists /tmp/.env a.js"),
    ("java *", "java -XX:OnError=id X"),
    ("java *", "java -XX:OnOutOfMemoryError=id X"),
    ("java *", "java -javaagent:/tmp/a.jar X"),
    ("java *", "java -agentpath:/tmp/x.so -jar app.jar"),
    ("java *", "java -agentlib:jdwp=transport=dt_socket,server=y,address=*:5005 X"),
    ("java *", "java @/tmp/args X"),
    ("java *", "java -XX:VMOptionsFile=/tmp/f X"),
    ("java *", "java -XX:HeapDumpPath=/tmp/x -XX:+HeapDumpOnOutOfMemoryError X"),
    ("java *", "java -XX:ErrorFile=/tmp/x X"),
    ("java *", "java -Xlog:gc:file=/tmp/x X"),
    ("java *", "java -Xlog:gc*:/tmp/x X"),
    ("java *", "java -Xloggc:/tmp/x X"),
    ("java *", "java -XX:StartFlightRecording=filename=/tmp/x.jfr X"),
    ("java *", "java -XX:ArchiveClassesAtExit=/tmp/x.jsa -cp app.jar X"),
    ("java *", "java -Xbootclasspath/a:/tmp X"),
    ("ruby *", "ruby -I/tmp a.rb"),
    ("ruby *", "ruby -I /tmp a.rb"),
    ("ruby *", "ruby -C /tmp a.rb"),
    ("perl *", "perl -I/tmp a.pl"),
    ("perl *", "perl -d a.pl"),
    ("perl *", "perl -d:NYTProf a.pl"),
    ("cargo *", "cargo publish"),
    ("cargo *", "cargo publish --allow-dirty"),
    ("cargo *", "cargo owner --add x y"),
    ("cargo *", "cargo yank --version 1.0.0 x"),
    ("cargo *", "cargo login abc"),
    ("cargo *", "cargo logout"),
    ("cargo *", "cargo uninstall ripgrep"),
    ("go *", "go bug"),
    ("go *", "go telemetry on"),
    ("go *", "go telemetry local"),
    ("go *", "go mod vendor -o /tmp/v"),
    ("go *", "go clean -modcache"),
    ("go *", "go clean -cache"),
    ("go *", "go clean -i ./..."),
    ("go *", "go doc -http"),
    ("go *", "go tool pprof -http=:8080 cpu.prof"),
    ("go *", "go tool pprof -web cpu.prof"),
    ("go *", "go tool trace trace.out"),
    ("go *", "go tool trace -http=:1 trace.out"),
    ("go *", "go tool cover -html=c.out"),
    ("go *", "go tool test2json -t /tmp/x.test"),
    ("go *", "go tool test2json -p x ./x.test -test.v"),
    ("go *", "go tool pack c /tmp/x.a x.o"),
    ("go *", "go tool fix /tmp/x.go"),
    ("go *", "go tool dist install"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F177: each runs code or a command, writes or empties files outside the working
    # directory, or sends, which the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("node *", "node a.js"),
    ("node *", "node --test"),
    ("node *", "node --test --test-reporter=spec"),
    ("node *", "node --test --test-reporter tap"),
    ("node *", "node --max-old-space-size=4096 a.js"),
    ("node *", "node --enable-source-maps --trace-warnings a.js"),
    ("node *", "node a.js --env-file=/tmp/x"),
    ("node --env-file *", "node --env-file .env a.js"),
    ("java *", "java -version"),
    ("java *", "java -jar app.jar"),
    ("java *", "java -cp app.jar com.example.Main"),
    ("java *", "java -Xmx2g -XX:+UseG1GC -Dfoo=bar -jar app.jar"),
    ("java *", "java -Xlog:gc X"),
    ("java *", "java -Xlog:gc:stdout X"),
    ("java *", "java -jar app.jar -XX:OnError=x"),
    ("ruby *", "ruby a.rb"),
    ("ruby *", "ruby -w a.rb"),
    ("perl *", "perl a.pl"),
    ("perl *", "perl -w -n a.pl"),
    ("cargo *", "cargo build"),
    ("cargo *", "cargo test"),
    ("cargo *", "cargo package --list"),
    ("cargo publish *", "cargo publish --allow-dirty"),
    ("go *", "go build ./..."),
    ("go *", "go telemetry"),
    ("go *", "go clean -testcache"),
    ("go *", "go clean"),
    ("go *", "go doc fmt.Println"),
    ("go *", "go mod vendor"),
    ("go *", "go tool pprof -top cpu.prof"),
    ("go *", "go tool trace -pprof=net trace.out"),
    ("go *", "go tool cover -func=c.out"),
    ("go *", "go tool nm ./x"),
    ("go *", "go tool dist list"),
    ("go *", "go tool fix -diff x.go"),
    ("go vet *", "go vet ./..."),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
