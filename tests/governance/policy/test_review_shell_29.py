"""Shapes from a shell-rules review of stop 55 (after F164): `cp -rL` makes device nodes.

F131 made a recursive copy of a source outside the workspace need a rule that names it (cp
makes its links again as links), and F164 let a copy through only when its last link flag
follows every link (`-L`, `--dereference`): "regular files land, nothing leads out". But a
recursive cp (`-r`, `-R`, `-a`) also makes every special file it meets again, a device node
as a new device node of the same major and minor number, whatever the link flags say; only
`--copy-contents` makes it read the device and write a plain file instead. `-L` only follows
the links to what they lead to, which may itself be a device.

Seen on this machine, as root (as agents in containers often run), in a scratch folder:
`cp -rL /dev/full f` (also `-RL`, `-r --dereference`, `-a -L`) left `f` a character device
1,7, and `echo x > f` failed with "No space left on device": the shell's write went to
/dev/full, not to a file in the workspace. With /dev/sda, the same `echo` overwrites the
disk; with /dev/mem, memory. `cp -rL --copy-contents /dev/null g` left a plain file.
Not run in the bubblewrap sandbox: an unprivileged user namespace cannot make device nodes.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import shell_verdict as _verdict

DEVICE_NODES_COPIED = [
    # seen on this machine with /dev/full (ENOSPC from the shell's write)
    "cp -rL /dev/full f && echo x > f",
    "cp -RL /dev/sda d && printf x > d",
    "cp -r --dereference /dev/sda d && echo x > d",
    "cp -a -L /dev/sda d && echo x > d",
    # the same reading: a folder of devices, a device reached through /proc
    "cp -rL /dev d && echo x > d/sda",
    "mkdir k && cp -rL /dev/sda k && echo x > k/sda",
    "cp -rL /proc/self/root/dev/sda d && echo x > d",
    "cp -rL /dev/sda d && tee d < notes.txt",
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", DEVICE_NODES_COPIED)
def test_a_recursive_copy_makes_the_devices_it_meets_again(script, shell):
    # `-L` follows every link, but the file it lands on is a device node, made again in
    # the workspace: a write there goes to the device
    assert _verdict("benign", script, shell) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        # --copy-contents reads the device into a plain file (seen: `g` a regular file)
        "cp -rL --copy-contents /dev/null g && echo x > g",
        # without a recursion cp reads the device into a plain file
        "cp -L /dev/null n && echo x > n",
        # an outside folder copied following every link stays allowed (F164)
        "cp -rL /etc/fonts/conf.d r && echo x >> r/51-local.conf",
    ],
)
def test_copies_that_land_plain_files_stay_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS
