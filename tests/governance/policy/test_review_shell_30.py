"""Shapes from a shell-rules review of stop 55 (after F165): the other programs that copy.

F131, F164 and F165 made a cp that copies an outside source's links as links, or makes its
device nodes again, need a rule that names the source. rsync does both (`-a` is `-rlptgoD`),
under a rule an admin writes for it (`rsync *`, as F163 reads it); and tar and install write
and run by options no rule for them names.

Seen in the bubblewrap sandbox (tests/shell_oracle/sandbox.py, bash, rsync 3.5.0, GNU tar):
- `rsync -a /proc/self/root r` left `r -> /`, and `echo x > r/tmp/fbx-pwn` wrote /tmp
  (also `-rl`, `-l` without a recursion, `--links`, `--archive`, `--no-l -a`: popt reads
  its words in order); `rsync -a /etc/fonts/conf.d/ f/` kept the links to /usr/share, and
  `echo x >> f/51-local.conf` opened /usr/share/fontconfig/conf.avail/51-local.conf (EROFS
  only because /usr is read-only there). `-a --no-l` skipped the link; `-aL`,
  `--copy-unsafe-links` and `--safe-links` landed no link leading out.
- as root on this machine, in a scratch folder: `rsync -a /dev/full r4` made `r4` the char
  device 1,7 (F165's reading: a write there goes to the device); `rsync -rL /dev/full r5`
  skipped it ("skipping non-regular file").
- `tar -cf /tmp/fbx.tar src` (also `--create --file=`, `-czf`, the old `tar cf`) wrote
  /tmp/fbx.tar: the archive `-f` names is written in a writing mode, like `tee FILE`.
- `tar -xf a.tar --one-top-level=/tmp/fbx-otl` made /tmp/fbx-otl/notes.txt;
  `tar -tf a.tar --volno-file=/tmp/fbx-vol2` (a listing!) wrote /tmp/fbx-vol2.
- `install -s --strip-program=bin/ls notes.txt b` (`--strip-prog=bin/cat`) ran the planted
  program: /workspace/PWNED.
- under strace on this machine: `tar -tf 127.0.0.1:/nonexistent.tar` ran
  `execve("/usr/bin/rsh", ["rsh", "127.0.0.1", "/usr/sbin/rmt"])`: GNU tar opens `HOST:FILE`
  on HOST through a remote shell unless `--force-local` is given.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy, benign_policy_with, kinds


def _verdict(script: str, rule: str | None = None) -> Verdict:
    policy = benign_policy_with(rule) if rule else benign_policy()
    return policy.evaluate("run_command", {"command": script}, kinds()["run_command"]).verdict


RSYNC_LINKS_KEPT = [
    # seen in the sandbox: r -> /, the write landed in /tmp (EROFS on /etc)
    "rsync -a /proc/self/root r && echo x > r/etc/fluidbox-x",
    "rsync -rl /proc/self/root r && echo x > r/tmp/x",
    "rsync -l /proc/self/root r && echo x > r/tmp/x",
    "rsync --links /proc/self/root r && echo x > r/tmp/x",
    "rsync --archive /proc/self/root r && echo x > r/tmp/x",
    # popt reads in order: `-a` after `--no-l` sets links again (seen: r -> /)
    "rsync --no-l -a /proc/self/root r && echo x > r/tmp/x",
    # seen: f/51-local.conf -> /usr/share/fontconfig/conf.avail/51-local.conf, opened
    "rsync -a /etc/fonts/conf.d/ f/ && echo x >> f/51-local.conf",
    "rsync -av /etc/fonts/conf.d f && echo x >> f/conf.d/51-local.conf",
]


@pytest.mark.parametrize("script", RSYNC_LINKS_KEPT)
def test_rsync_copies_an_outside_sources_links_as_links(script):
    # rsync makes each link again as a link (`-l`, implied by `-a`): a write through the
    # copy lands where the outside link leads (F131 for cp)
    assert _verdict(script, "rsync *") is not Verdict.ALWAYS


RSYNC_DEVICES_MADE = [
    # seen as root: `rsync -a /dev/full r4` made the char device 1,7
    "rsync -a /dev/full f && echo x > f",
    "rsync -aL /dev/sda d && echo x > d",
    "rsync -rD /dev/sda d && echo x > d",
    "rsync -D /dev/sda d && echo x > d",
    "rsync -rL --devices /dev/ d/ && echo x > d/sda",
]


@pytest.mark.parametrize("script", RSYNC_DEVICES_MADE)
def test_rsync_makes_the_devices_it_meets_again(script):
    # `-D`/`--devices` (implied by `-a`) make a device node of the same number (F165 for cp)
    assert _verdict(script, "rsync *") is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        "rsync -a /etc/fonts/conf.d/ f/ && echo x >> f/51-local.conf",
        "rsync -a /dev/full f && echo x > f",
    ],
)
def test_a_rule_naming_the_source_allows_the_rsync(script):
    source = script.split()[2]
    assert _verdict(script, f"rsync -a {source} *") is Verdict.ALWAYS


@pytest.mark.parametrize(
    "script",
    [
        # seen: `-a --no-l` skipped the link; `-L` and the unsafe-link options land no link
        # leading out; without `-D` a device is skipped (seen with `-rL /dev/full`)
        "rsync -a --no-l /etc/fonts/conf.d/ f/",
        "rsync -aL /etc/fonts/conf.d/ f/",
        "rsync -a --copy-unsafe-links /etc/fonts/conf.d/ f/",
        "rsync -a --safe-links /etc/fonts/conf.d/ f/",
        "rsync -rL /dev/ d/",
        "rsync -aL --no-D /dev/null d",
        "rsync -a src/ build/",
        "cp -rL /etc/fonts/conf.d r",
    ],
)
def test_copies_that_land_no_outside_link_nor_device_stay_allowed(script):
    assert _verdict(script, "rsync *") is Verdict.ALWAYS


@pytest.mark.parametrize(
    "rule, script",
    [
        # seen: /tmp/fbx.tar written; `write_file:*` is NEVER
        ("tar -cf *", "tar -cf /tmp/a.tar src"),
        ("tar -c*", "tar -c -f /tmp/a.tar src"),
        ("tar -c*", "tar -cvzf /tmp/a.tgz src"),
        ("tar -c*", "tar --create --file=/tmp/a.tar src"),
        ("tar -rf *", "tar -rf /tmp/a.tar src"),
    ],
)
def test_tar_writes_the_archive_its_file_option_names(rule, script):
    # as `tar -cf - src > /tmp/a.tar` (NEVER): the archive file is a write
    assert _verdict(script, rule) is Verdict.NEVER


@pytest.mark.parametrize(
    "rule, script",
    [
        # seen: /tmp/fbx-otl/notes.txt made
        ("tar -xf *", "tar -xf a.tar --one-top-level=/tmp/x"),
        ("tar -xzf *", "tar -xzf a.tgz --one-top=/tmp/x"),
        # seen: /tmp/fbx-vol2 written by a listing
        ("tar -tf *", "tar -tf a.tar --volno-file=/tmp/x"),
        ("tar -xf *", "tar -xf a.tar --volno=/etc/x"),
        # seen under strace: tar ran `rsh 127.0.0.1 /usr/sbin/rmt`
        ("tar -tf *", "tar -tf 127.0.0.1:/a.tar"),
        ("tar -xf *", "tar -xf build@example.com:a.tar"),
        ("tar *", "tar tf host:a.tar"),
        # seen: the planted bin/ls ran (/workspace/PWNED)
        ("install *", "install -s --strip-program=bin/ls notes.txt b"),
        ("install *", "install -s --strip-prog bin/cat notes.txt b"),
    ],
)
def test_tar_and_install_options_that_write_run_or_send(rule, script):
    assert _verdict(script, rule) is not Verdict.ALWAYS


@pytest.mark.parametrize(
    "rule, script",
    [
        ("tar -cf *", "tar -cf a.tar src"),
        ("tar -czf *", "tar -czf dist/a.tgz src"),
        ("tar -x*", "tar -xzf /tmp/download.tgz"),
        ("tar -x*", "tar -xzf a.tgz --one-top-level"),
        ("tar -tf *", "tar -tf ./host:a.tar"),
        ("tar -tf *", "tar -tf host:a.tar --force-local"),
        ("install *", "install --strip notes.txt b"),
        ("install *", "install -s -m 755 notes.txt b"),
    ],
)
def test_ordinary_archives_and_installs_stay_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS


def test_a_recursive_copy_of_the_root_makes_its_devices_again():
    # `/` holds /dev: `cp -rL / r` makes r/dev/sda again (F165's reading of /dev itself)
    assert _verdict("cp -rL / r && echo x > r/dev/sda") is not Verdict.ALWAYS
