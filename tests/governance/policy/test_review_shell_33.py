"""Shapes from a shell-rules review (after F167): programs a narrow rule names (`patch *`, `zip *`,
`unzip *`, `scp *`) that write, delete or run outside what the rule names.

Each shape below was run in the bubblewrap sandbox (tests/shell_oracle/sandbox.py; bash,
GNU patch 2.7.6, Info-ZIP zip 3.0 / unzip 6.0, OpenSSH 9.2 scp), and the engine said ALWAYS
under the rule named:
- patch: `patch /tmp/t fix.diff` rewrote /tmp/t; `--out=/tmp/o` (getopt's abbreviation of
  `--output`) wrote /tmp/o; `-r /tmp/rej` wrote the rejects there; `-b -B /tmp/` wrote the
  backup /tmp/a; `-d /tmp/d` patched /tmp/d/a.
- zip: `zip -q /tmp/out.zip notes.txt` wrote the archive in /tmp; `-m` then deleted the
  source; `-T -TTsh` (the unzip command glued to `-TT`) ran sh on the archive; `-b /tmp`
  put its temporary file there; `-lf /tmp/zlog` wrote /tmp/zlog.log.
- unzip: `unzip -: -o e.zip` with an entry `../../tmp/esc` wrote /tmp/esc.
- scp: `scp notes.txt /tmp/scpcopy` (two local paths) ran `cp -- notes.txt /tmp/scpcopy`.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

PATCH_WRITES_ELSEWHERE = [
    # seen: each wrote outside the workspace
    "patch /tmp/t fix.diff",
    "patch /etc/passwd fix.diff",
    "patch --out=/tmp/o a fix.diff",
    "patch -r /tmp/rej a fix.diff",
    "patch --reject-file=/tmp/rej a fix.diff",
    "patch -b -B /tmp/ a fix.diff",
    "patch -b --prefix=/tmp/ a fix.diff",
    "patch -d /tmp/d -i /workspace/fix.diff",
    "patch --directory=/tmp -p1 < fix.diff",
]


@pytest.mark.parametrize("script", PATCH_WRITES_ELSEWHERE)
def test_patch_writes_where_its_operand_and_options_say(script):
    # the file operand is patched in place; -o (any abbreviation), -r, -B, -d name where
    # patch writes: `patch *` does not name /tmp or /etc (write_file:* is NEVER)
    assert _verdict(script, "patch *") is not Verdict.ALWAYS


def test_patch_in_the_workspace_stays_allowed():
    assert _verdict("patch -p1 < fix.diff", "patch *") is Verdict.ALWAYS
    assert _verdict("patch -p1 -i fix.diff", "patch *") is Verdict.ALWAYS


ZIP_ACTS = [
    "zip -q /tmp/out.zip notes.txt",  # seen: the archive written in /tmp
    "zip -g /etc/x.zip a",
    "zip -q -m /tmp/o2.zip n2",  # seen: written there, and n2 deleted
    "zip -m out.zip .git/config",  # moves git's configuration into the archive (deleted)
    "zip -q out.zip notes.txt -T -TTsh",  # seen: sh ran on the archive
    "zip -q -b /tmp out.zip notes.txt",  # seen: its temporary file in /tmp
    "zip -q -lf /tmp/zlog out.zip README.md",  # seen: /tmp/zlog.log
    "zip -O /tmp/o.zip out.zip a",
]


@pytest.mark.parametrize("script", ZIP_ACTS)
def test_zip_writes_deletes_or_runs_outside_what_the_rule_names(script):
    assert _verdict(script, "zip *") is not Verdict.ALWAYS


def test_unzip_with_dotdot_allowed_writes_outside():
    # seen: `-:` keeps an entry's `../`: `../../tmp/esc` written in /tmp
    assert _verdict("unzip -: -o e.zip", "unzip *") is not Verdict.ALWAYS
    assert _verdict("unzip -o e.zip", "unzip *") is Verdict.ALWAYS


def test_scp_between_local_paths_copies_outside():
    # seen: `scp notes.txt /tmp/scpcopy` ran `cp -- notes.txt /tmp/scpcopy`
    assert _verdict("scp notes.txt /tmp/scpcopy", "scp *") is not Verdict.ALWAYS
