"""Shapes from a shell-rules review of stop 55 (after F163): `cp -H` with a recursive copy
still copies the links *inside* the folder as links.

F131 made a source outside the workspace that cp copies as a link (`-P`, `-d`, `-a`, `-r`)
need a rule that names it: `cp -r /proc/self/root r && echo x > r/etc/x` wrote /etc/x. The
mend let `-L` and `-H` through as "cp follows links". `-L` follows every link; `-H` follows
only the links named on the command line: with `-r`/`-R`/`-a`, every link found inside the
copied folder is still made again as a link, with the same text. A folder outside the
workspace holding absolute links (`/etc/fonts/conf.d/*.conf -> /usr/share/fontconfig/…`,
`/etc/alternatives/*`, `/etc/ssl/certs/*`) then leaves links to anywhere in the workspace,
and an allowed write through one lands outside.

Oracle (bubblewrap sandbox; bash, dash and zsh; GNU cp): `cp -rH /etc/fonts/conf.d r && echo
x >> r/51-local.conf` — engine: ALWAYS (`cp *`, `echo *`, `write_file:/workspace/*`).
Observed: `r/51-local.conf -> /usr/share/fontconfig/conf.avail/51-local.conf` made by cp, and
the shell's append opened that file (EROFS only because the sandbox's /usr is read-only: a
`write_file:*` NEVER place). `cp -aH …` also ran fchownat on the /usr/share targets; `cp -r
-H /etc/fonts r && touch r/conf.d/51-local.conf` the same through `touch`. Without `-H`
(`cp -r /etc/fonts/conf.d r`) the engine already asks.

A second look found the order: cp keeps the last of `-a`, `-d`, `-P`, `-H` and `-L` given
(`--archive`, `--no-dereference`, `--dereference` alike). Checked on this machine with GNU cp
copying /etc/fonts/conf.d into a scratch folder: `-rL -P`, `-L -a`, `-rLd`, `-LrH` and
`-r --dereference --no-dereference` left links; `-rL`, `-a -L` and `-rHL` followed them.
The mend had read any `-L` as following every link.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

NESTED_LINKS_COPIED_AS_LINKS = [
    # oracle-confirmed, bash, sh and zsh
    "cp -rH /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -aH /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -r -H /etc/fonts r && touch r/conf.d/51-local.conf",
    # the same reading: -H with any recursive spelling
    "cp -RH /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -H -r /etc r && echo x >> r/fonts/conf.d/51-local.conf",
    "cp --recursive -H /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -H --archive /etc/alternatives r && echo x >> r/awk",
    "cp -rH /proc/self/root/etc/fonts r && echo x >> r/conf.d/51-local.conf",
]

# a later -a, -d, -P or -H undoes an earlier -L (each seen on this machine, listed above)
LATER_FLAG_KEEPS_LINKS = [
    "cp -rL -P /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -L -a /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -rLd /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -LrH /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp -r --dereference --no-dereference /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    "cp --deref --archive /etc/fonts/conf.d r && echo x >> r/51-local.conf",
]


@pytest.mark.parametrize("script", LATER_FLAG_KEEPS_LINKS)
def test_the_last_of_the_link_flags_decides_what_cp_copies(script):
    assert _verdict("benign", script) is not Verdict.ALWAYS


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", NESTED_LINKS_COPIED_AS_LINKS)
def test_a_recursive_copy_with_h_keeps_the_links_inside_the_folder(script, shell):
    # as `cp -r /etc/fonts/conf.d r` (no -H) does: the outside source needs a rule naming it
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        # -L follows every link: regular files land, nothing leads out
        "cp -rL /etc/fonts/conf.d r && echo x >> r/51-local.conf",
        # the last flag is -L (seen on this machine: every link followed)
        "cp -a -L /etc/fonts/conf.d r && echo x >> r/51-local.conf",
        "cp -rHL /etc/fonts/conf.d r && echo x >> r/51-local.conf",
        # -H without recursion: the one operand is followed, there is nothing inside
        "cp -H /etc/localtime lt && echo x >> lt",
        # a copy inside the workspace stays allowed
        "cp -rH src build && echo x >> build/app.py",
    ],
)
def test_copies_that_follow_every_link_stay_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS
