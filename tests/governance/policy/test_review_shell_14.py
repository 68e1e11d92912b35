"""Shapes from the thirteenth shell-rules review's run of the toolchains (FINDINGS F123).

Each was run in a bubblewrap sandbox with the tool itself (go 1.19, cargo and clippy 1.95,
ruby 3.1 with rake 13.0 and rspec-core 3.12, ctest 3.25) and ran the Go toolchain's own
programs with any arguments, rewrote another go.mod, wrote or linked where rustc was told,
ran Ruby from the command line or from /tmp, or tried to upload the test logs, while the
engine said ALWAYS. Ruby's OptionParser takes a long option in any case and each word of
it cut short (`--e-p` is `--execute-print`); clippy-driver reads rustc's command line after
`cargo clippy --`. Read by the engine alone here: none of these tools is installed where the
oracle runs.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_2 import verdict

NOT_ALLOWED = [
    # go: a package of Go's own tree is its program, run with any arguments
    "go run cmd/go env -w GOFLAGS=-toolexec=/workspace/evil",
    "go run cmd/gofmt -w /tmp/x.go",
    "go run cmd/go run /tmp/evil/x.go",
    "go run cmd/pprof -http=127.0.0.1:8089 cpu.prof",
    "go test cmd/go",
    "go build std",
    # go mod: another go.mod
    "go mod tidy -modfile=/tmp/other/go.mod",
    "go mod tidy -modfile /tmp/other/go.mod",
    "go mod download -modfile=/tmp/other/go.mod",
    # cargo clippy -- ARGS: rustc's command line
    "cargo clippy --offline -- --emit=dep-info=/tmp/x.d",
    "cargo clippy --offline -- -o /tmp/xo",
    "cargo clippy --offline -- --emit=link=/tmp/linked",
    "cargo clippy --offline -- --print=cfg=/tmp/cfg.txt",
    "cargo clippy --offline -- --codegen linker=/workspace/evil",
    "cargo clippy --offline -- @args.txt",
    "cargo clippy -- -D warnings -Clinker=/workspace/evil",
    # rake and rspec: OptionParser's spellings
    'rake --Execute \'File.write("/tmp/x", "x")\'',
    "rake --EXECUTE 'puts 1'",
    "rake --e-p 'puts 1'",
    "rake --exec-c 'puts 1'",
    "rake --Execute-Print='puts 1'",
    "rake --Require /tmp/evil/x.rb",
    "rake --Rakefile /tmp/evil/proj/Rakefile",
    "rake --DIRECTORY /tmp/evil/proj",
    "rake --SYSTEM",
    "rake --Sys",
    "rake -l /tmp/evil",
    "rspec --Require=/tmp/evil/x.rb",
    "rspec --Options=/tmp/evil/opts",
    "rspec --Out=/tmp/out.txt",
    "rspec --Default-Path=/tmp/evil/specs",
    "rspec --de-p=/tmp/evil/specs",
    # rspec: spec files by pattern, the deprecation log, a formatter's library
    "rspec -P '/tmp/evil/*_spec.rb'",
    "rspec --pattern '../../tmp/evil/*_spec.rb'",
    "bundle exec rspec -P '/tmp/evil/*_spec.rb'",
    "rspec --dep-o=/tmp/deprec.txt",
    "rspec --d-o=/tmp/deprec.txt",
    "bundle exec rspec --deprecation-out=/tmp/deprec.txt",
    "rspec -f Debug::Open",
    "rspec --format=Debug::Start",
    "rspec -fDebug::Open",
    # ctest's dashboards: the logs uploaded, the project's VCS update run
    "ctest -D Experimental",
    "ctest -D ExperimentalSubmit",
    "ctest -DNightlySubmit",
    "ctest --dashboard Continuous",
    "ctest -T Submit",
    "ctest -M Experimental -T Test -T Submit",
    "ctest -T Update",
    "ctest -D NightlyUpdate",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_what_the_real_tools_did_outside_needs_a_rule_that_names_it(command):
    assert verdict(command) is not Verdict.ALWAYS


ALLOWED = [
    "go run .",
    "go run ./cmd/tool",
    "go run main.go",
    "go build ./...",
    "go test -run TestX ./pkg/...",
    "go vet ./...",
    "go run golang.org/x/tools/cmd/stringer -type=Kind",
    "go mod tidy",
    "cargo clippy",
    "cargo clippy -- -D warnings",
    "cargo clippy --all-targets -- -W clippy::pedantic -A clippy::module_name_repetitions",
    "cargo clippy -- -Dwarnings",
    "cargo clippy -- --deny=warnings --cap-lints warn",
    "rake",
    "rake --trace test",
    "rake -j 4 test",
    "rspec spec/models",
    "rspec -f d",
    "rspec --format documentation",
    "rspec -fd",
    "rspec -P 'spec/**/*_spec.rb'",
    "bundle exec rspec spec/x_spec.rb",
    "ctest --output-on-failure",
    "ctest -R unit -j4",
    "ctest -T Test",
]


@pytest.mark.parametrize("command", ALLOWED)
def test_what_agents_run_stays_allowed(command):
    assert verdict(command) is Verdict.ALWAYS
