"""Shapes from a shell-rules review (after F167): programs a narrow rule names
(`openssl *`, `vim *`) that write or run code outside what the rule names.

Each shape below was run in the bubblewrap sandbox (tests/shell_oracle/sandbox.py; bash,
OpenSSL 3.0, vim 9.0), and the engine said ALWAYS under the rule named:
- openssl: `rand --out /tmp/o1`, `rand -out=/tmp/o2`, `rand -writerand /tmp/o3` wrote /tmp;
  `x509 -engine /workspace/e.so` and `list -provider-path /workspace -provider x` loaded the
  library (its constructor ran).
- vim: `vim -es notes.txt < s.vim` and `vim -s s.vim notes.txt` ran `:!touch PWNED` from
  the script; `-w /tmp/vw` and `-V1/tmp/vv` wrote /tmp.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

OPENSSL_ACTS = [
    "openssl rand --out /tmp/o1 4",  # seen
    "openssl rand -out=/tmp/o2 4",  # seen
    "openssl rand -writerand /tmp/o3 4",  # seen
    "openssl req -new -keyout /tmp/k -out r.csr",
    "openssl s_client -connect h:443 -sess_out /tmp/s",
    "openssl s_client -connect h:443 -keylogfile /tmp/k",
    "openssl x509 -engine /workspace/e.so -in /dev/null",  # seen: the library loaded
    "openssl list -provider-path /workspace -provider x",  # seen: x.so loaded
    "openssl engine dynamic -pre SO_PATH:/tmp/e.so -pre LOAD",
    "openssl req -config /tmp/c -new",  # a config loads engines and providers
]


@pytest.mark.parametrize("script", OPENSSL_ACTS)
def test_openssl_writes_or_loads_code_outside_what_the_rule_names(script):
    assert _verdict(script, "openssl *") is not Verdict.ALWAYS


def test_openssl_output_in_the_workspace_stays_allowed():
    assert _verdict("openssl rand -hex 16", "openssl *") is Verdict.ALWAYS
    assert _verdict("openssl genrsa -out k.pem 2048", "openssl *") is Verdict.ALWAYS


VIM_ACTS = [
    "vim -es notes.txt < s.vim",  # seen: `:!touch PWNED` ran from stdin
    "vim -e -s a < script.vim",
    "ex -s a < script",
    "vim -s s.vim notes.txt",  # seen: the normal-mode script's `:!` ran
    "vi -s script.vim a",
    "vim -w /tmp/vw -s s.vim notes.txt",  # seen: /tmp/vw written
    "vim -W /tmp/x a",
    "vim -V1/tmp/vv notes.txt",  # seen: /tmp/vv written
    "vim --startuptime /tmp/x a",
    "vim -i /tmp/viminfo a",
    "vim --servername x --remote-expr 'system(\"id\")'",
]


@pytest.mark.parametrize("script", VIM_ACTS)
def test_vim_runs_scripts_or_writes_files_the_rule_does_not_name(script):
    # `-c`, `+`, `-S`, `--cmd` already need a rule that names them; `-s` and ex mode's
    # standard input are scripts too. The rule names the program as the script spells it.
    assert _verdict(script, script.split()[0] + " *") is not Verdict.ALWAYS
