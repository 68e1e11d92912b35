"""The sandbox holds what it runs, and the trace sees everything the oracle relies on."""

import socket
from pathlib import Path

import pytest

from tests.shell_oracle.sandbox import Job, run_jobs, run_script
from tests.shell_oracle.strace_log import CString, Fd, read_calls

pytestmark = pytest.mark.usefixtures("sandbox")


def test_a_write_outside_the_workspace_is_refused_yet_seen():
    probe = Path("/etc/fluidbox-oracle-probe")

    observation = run_script(f"echo pwned > {probe}; echo done")

    assert not probe.exists()
    assert [(w.path, w.by, w.ok) for w in observation.writes] == [(str(probe), None, False)]
    assert "Read-only file system" in observation.stderr
    assert observation.stdout == "done\n"


def test_home_and_the_root_are_read_only():
    observation = run_script("echo x > /root/.bashrc; mkdir /evil; touch /home/x")

    assert {(w.path, w.ok) for w in observation.writes} == {
        ("/root/.bashrc", False),
        ("/evil", False),
        ("/home/x", False),
    }


def test_there_is_no_network_but_the_attempt_is_recorded():
    observation = run_script("exec 3<>/dev/tcp/1.1.1.1/53 && echo connected")

    assert "connected" not in observation.stdout
    [connection] = observation.sockets
    assert (connection.call, connection.family, connection.by) == ("connect", "AF_INET", None)
    assert connection.error == "ENETUNREACH"


def test_secrets_and_capabilities_stay_outside():
    observation = run_script("cat /etc/shadow; grep CapEff /proc/self/status; hostname pwned")

    assert "root:" not in observation.stdout
    assert "CapEff:\t0000000000000000" in observation.stdout
    assert socket.gethostname() != "pwned"


def test_the_workspace_is_restored_before_every_job():
    first, second = run_jobs([Job("rm -rf /workspace/victim"), Job("ls /workspace/victim")])

    assert "/workspace/victim" in first.written()
    assert second.stdout == "inner\nkeep.txt\n"


def test_programs_children_reads_and_redirections_are_told_apart():
    observation = run_script(
        "find /workspace/src -name '*.py' -exec wc -c {} \\; > /workspace/out; "
        'cat < /workspace/notes.txt; echo "$(< /workspace/README.md)"'
    )

    assert observation.commands() == ["find /workspace/src -name *.py -exec wc -c {} ;", "cat"]
    assert [(c.parent[0], c.command) for c in observation.children] == [
        ("find", "wc -c /workspace/src/app.py")
    ]
    assert [r.path for r in observation.shell_reads] == [
        "/workspace/notes.txt",
        "/workspace/README.md",
    ]
    assert ("/workspace/out", None) in [(w.path, w.by) for w in observation.writes]
    assert "/workspace/src/app.py" in [r.path for r in observation.program_reads]


def test_wrappers_and_nested_shells_are_seen_through():
    observation = run_script("timeout 5 nice ls /workspace; sh -c 'cd /workspace/src && ls'")

    assert observation.commands() == ["ls /workspace", "ls"]
    assert observation.runs[0].via[0][0] == "timeout"
    assert observation.children == []


def test_a_program_found_outside_path_is_named_by_its_file():
    observation = run_script(
        "cp /usr/bin/true /workspace/bin/ls; for PATH in /workspace/bin; do ls; done; "
        "(exec -a /bin/ls /workspace/bin/ls -la)"
    )

    assert observation.commands() == [
        "cp /usr/bin/true /workspace/bin/ls",
        "/workspace/bin/ls",
        "/workspace/bin/ls -la",
    ]


def test_relative_paths_resolve_in_each_process_s_own_folder():
    observation = run_script(
        "cd /workspace/src && mkdir sub && (cd sub && mkdir ../x && echo > y) && rmdir x"
    )

    assert [(w.path, w.action) for w in observation.writes] == [
        ("/workspace/src/sub", "mkdir"),
        ("/workspace/src/x", "mkdir"),
        ("/workspace/src/sub/y", "open"),
        ("/workspace/src/x", "rmdir"),
    ]


def test_an_open_is_seen_where_it_really_landed():
    # `..` after a link climbs from where the link leads, and /dev/fd/N, /proc/self/fd/N and
    # /dev/stdout name files opened before: read as words, each looks like /workspace or a
    # device, which the rules allow.
    observation = run_script(
        "mkdir /tmp/a && ln -s /tmp/a src/l && echo > src/l/../up; exec 3>/tmp/three; "
        "echo > /dev/fd/3; echo > /proc/self/fd/3; exec >/tmp/out; echo > /dev/stdout"
    )

    opened = [w.path for w in observation.writes if w.action == "open"]
    assert opened == [
        *("/workspace/src/up", "/tmp/up"),  # the word, and where it led
        "/tmp/three",
        *("/dev/fd/3", "/tmp/three"),
        "/tmp/three",  # /proc/self/fd/3: the process's own, but the file it names is not
        "/tmp/out",
        "/tmp/out",  # /dev/stdout: not a file, but the one it names is
    ]


def test_a_write_refused_or_made_past_a_link_is_seen_where_the_kernel_walked():
    # a/l leads to the folder d, one level up from a: `a/l/../..` is `/`. A refused open has
    # no descriptor to say where it was, and mkdir -p walks with chdir: both are walked
    # through the links the script made.
    observation = run_script(
        "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d && "
        "echo x > a/l/../../etc/fluidbox-x; mkdir -p a/l/../../tmp/made"
    )

    written = observation.written()
    assert "/etc/fluidbox-x" in written
    assert "/tmp/made" in written


def test_a_program_s_own_helpers_are_not_its_children():
    observation = run_script(
        "git fetch -q /workspace; egrep -c alpha notes.txt; git fetch -q http://127.0.0.1:9/x"
    )

    assert observation.children == []
    assert [(s.call, s.by[0]) for s in observation.sockets] == [
        ("connect", "/usr/lib/git-core/git-remote-http")
    ]


def test_background_work_is_waited_for():
    observation = run_script("(sleep 0.3; touch /workspace/late) &")

    assert "/workspace/late" in observation.written()
    assert not observation.timed_out


def test_work_that_left_the_job_s_session_is_waited_for_before_the_next_job():
    """`setsid` puts a process in a session of its own. It used to outlive its job and
    change /workspace while the next job was set up (on a busy machine the driver then died
    restoring the workspace, and the next job was never observed)."""
    escaped, after = run_jobs(
        [Job("setsid sh -c 'sleep 1; touch /workspace/late' &"), Job("sleep 2; ls /workspace")]
    )

    assert "/workspace/late" in escaped.written()
    assert not escaped.timed_out
    assert after.complete and "late" not in after.stdout.split()


def test_a_job_that_kills_everything_does_not_take_the_next_jobs_with_it():
    observations = run_jobs([Job("kill -9 -1; sleep 5"), Job("echo after")])

    assert observations[-1].stdout == "after\n"
    assert len(observations) == 2


def test_a_script_that_never_ends_is_cut_at_its_timeout():
    [observation] = run_jobs([Job("sleep 30", timeout=1.0)])

    assert observation.timed_out


def test_a_nul_byte_reaches_the_shell_on_standard_input():
    [observation] = run_jobs([Job("ls /workspace/src\0; touch /workspace/PWNED\n", stdin=True)])

    assert observation.commands() == ["ls /workspace/src", "touch /workspace/PWNED"]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
def test_each_shell_starts_without_reading_anything_of_the_script(shell):
    observation = run_script("true", shell)

    assert observation.shell_reads == []
    assert observation.writes == []
    assert observation.exit_status == 0


def test_the_trace_reader_keeps_bytes_and_finds_the_real_result():
    lines = [
        '7 execve("/usr/bin/echo", ["echo", ") = 0 (x)", "\\xff\\x01"], 0x1 /* 3 vars */'
        " <unfinished ...>\n",
        '8 openat(AT_FDCWD</work\\76dir>, "a,b", O_RDONLY) = -1 ENOENT (No such file)\n',
        "7 <... execve resumed>) = 0\n",
        "9 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 12 in strace's PID NS */\n",
    ]

    openat, execve, clone = read_calls(lines)

    assert execve.ok and execve.args[1][1] == CString(") = 0 (x)")
    assert execve.args[1][2].text == b"\xff\x01".decode("utf-8", "surrogateescape")
    assert openat.args[0] == Fd("AT_FDCWD", "/work>dir") and openat.errno == "ENOENT"
    assert clone.child_pid == 12
