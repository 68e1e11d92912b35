"""Shapes from a shell-rules review (after F177): what F175, F176 and F177 left open, under a
rule naming only the program (F178).

From the manuals (not run): cargo's `new`, `init` and `vendor` write the folder they are given;
`cargo rustc -- ARGS` and `cargo rustdoc -- ARGS` hand ARGS to rustc and rustdoc, whose `-o`
and `--out-dir` write where they say; `cargo add --path DIR` makes the build depend on DIR's
crate (its build.rs runs on the next build). go's `work use DIR`, `work init DIR` and `mod edit
-replace M=DIR` make later builds use the code in DIR. gpg writes its output beside an input
(`-c /tmp/a` writes /tmp/a.gpg, `--encrypt-files`, `--decrypt-files`) unless `-o` says where.
ssh-keygen with no `-f` generates a key into ~/.ssh/id_*; `-M generate` writes its operand.
docker's `plugin create NAME DIR` makes a plugin from DIR's rootfs, `plugin set` changes its
mounts and devices, `context export NAME FILE` writes FILE; podman's `system connection add`
makes a new place commands are sent. python's `-X pycache_prefix=DIR` writes its bytecode in
DIR; jar's `c`/`u` write the archive `f` names, `x` with `-C DIR` writes in DIR.
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

REACHING = [
    ("cargo *", "cargo new /tmp/x"),
    ("cargo *", "cargo new --lib /tmp/x"),
    ("cargo *", "cargo new --bin /tmp/x"),
    ("cargo *", "cargo new --name x ../x"),
    ("cargo *", "cargo init /tmp/x"),
    ("cargo *", "cargo --color never new /tmp/x"),
    ("cargo *", "cargo +nightly rustc -- -o /tmp/x"),
    ("cargo *", "cargo init --vcs none ~/x"),
    ("cargo *", "cargo vendor /tmp/v"),
    ("cargo *", "cargo vendor --versioned-dirs /tmp/v"),
    ("cargo *", "cargo rustc -- -o /tmp/x"),
    ("cargo *", "cargo rustc --release -- -o/tmp/x"),
    ("cargo *", "cargo rustc -- --out-dir=/tmp/x"),
    ("cargo *", "cargo rustc -- --emit=link=/tmp/x"),
    ("cargo *", "cargo rustc -- -C linker=/tmp/ld"),
    ("cargo *", "cargo rustdoc -- -o /tmp/x"),
    ("cargo *", "cargo rustdoc -- --output /tmp/x"),
    ("cargo *", "cargo add --path /tmp/x"),
    ("cargo *", "cargo add x --path=../x"),
    ("cargo *", "cargo add --git https://example.com/x.git"),
    ("go *", "go work use /tmp/x"),
    ("go *", "go work use -r ../x"),
    ("go *", "go work init /tmp/x"),
    ("go *", "go work edit -use=/tmp/x"),
    ("go *", "go work edit -replace m=/tmp/x"),
    ("go *", "go mod edit -replace m=/tmp/x"),
    ("go *", "go mod edit -replace=m@v1=../x"),
    ("go *", "go mod edit -replace m=./x /tmp/go.mod"),
    ("go *", "go work edit -go=1.22 ../go.work"),
    ("gpg *", "gpg -c /tmp/a"),
    ("gpg *", "gpg --symmetric /tmp/a"),
    ("gpg *", "gpg --sym /tmp/a"),
    ("gpg *", "gpg --store /tmp/a"),
    ("gpg *", "gpg -e -r x /tmp/a"),
    ("gpg *", "gpg -s /tmp/a"),
    ("gpg *", "gpg --clearsign /tmp/a"),
    ("gpg *", "gpg --detach-sign /tmp/a"),
    ("gpg *", "gpg -ab /tmp/a"),
    ("gpg *", "gpg --encrypt-files -r x /tmp/a"),
    ("gpg *", "gpg --decrypt-files /tmp/a.gpg"),
    ("gpg *", "gpg -c -o /tmp/x a"),
    ("ssh-keygen *", "ssh-keygen"),
    ("ssh-keygen *", "ssh-keygen -t ed25519 -N ''"),
    ("ssh-keygen *", "ssh-keygen -q -t rsa -b 4096"),
    ("ssh-keygen *", "ssh-keygen -p"),
    ("ssh-keygen *", "ssh-keygen -c -C x"),
    ("ssh-keygen *", "ssh-keygen -M generate /tmp/moduli"),
    ("ssh-keygen *", "ssh-keygen -M generate -O bits=2048 /tmp/moduli"),
    ("docker *", "docker plugin create x /tmp/plugin"),
    ("docker *", "docker plugin set x DEBUG=1"),
    ("docker plugin *", "docker plugin create x ../plugin"),
    ("docker *", "docker context export c /tmp/c.dockercontext"),
    ("docker context *", "docker context export c /tmp/c.dockercontext"),
    ("podman *", "podman system connection add x ssh://root@host"),
    ("podman *", "podman system connection default x"),
    ("python *", "python -X pycache_prefix=/tmp/x a.py"),
    ("python *", "python -Xpycache_prefix=/tmp/x -m pytest"),
    ("python *", "python -IX pycache_prefix=/tmp/x a.py"),
    ("jar *", "jar cf /tmp/x.jar a.class"),
    ("jar *", "jar -cf /tmp/x.jar a.class"),
    ("jar *", "jar cvfm /tmp/x.jar m.txt a.class"),
    ("jar *", "jar uf /tmp/x.jar a.class"),
    ("jar *", "jar --create --file /tmp/x.jar a.class"),
    ("jar *", "jar -c --file=/tmp/x.jar a.class"),
    ("jar *", "jar --update --file /tmp/x.jar a.class"),
    ("jar *", "jar xf a.jar -C /tmp"),
    ("jar *", "jar -x -f a.jar --dir /tmp"),
]


@pytest.mark.parametrize(("rule", "script"), REACHING)
def test_what_reaches_beyond_the_workspace_needs_a_rule_naming_it(rule, script):
    # F178: each writes outside the working directory, makes later builds use code outside
    # it, or changes where commands are sent, which the rule does not name
    assert _verdict(script, rule) is not Verdict.ALWAYS


HELD = [
    ("cargo *", "cargo new x"),
    ("cargo *", "cargo new --lib x"),
    ("cargo *", "cargo init"),
    ("cargo *", "cargo init ."),
    ("cargo *", "cargo vendor"),
    ("cargo *", "cargo vendor third_party"),
    ("cargo *", "cargo vendor --sync ../other/Cargo.toml"),
    ("cargo *", "cargo rustc --release"),
    ("cargo *", "cargo rustc -- -D warnings"),
    ("cargo *", "cargo rustc -- --emit=asm"),
    ("cargo *", "cargo rustdoc -- --document-private-items"),
    ("cargo *", "cargo add serde"),
    ("cargo *", "cargo add serde --features derive"),
    ("cargo *", "cargo add --path crates/x"),
    ("cargo add --path *", "cargo add --path ../x"),
    ("go *", "go work init"),
    ("go *", "go work init ./a ./b"),
    ("go *", "go work use ./x"),
    ("go *", "go work sync"),
    ("go *", "go mod edit -go=1.22"),
    ("go *", "go mod edit -require=m@v1.2.3"),
    ("go *", "go mod edit -replace m=./x"),
    ("go *", "go mod edit -json"),
    ("gpg *", "gpg --verify a.sig a"),
    ("gpg *", "gpg -d /tmp/a.gpg"),
    ("gpg *", "gpg -c a"),
    ("gpg *", "gpg -c -o a.gpg /tmp/a"),
    ("gpg *", "gpg --list-keys"),
    ("gpg *", "gpg -e -r x -o a.gpg /tmp/a"),
    ("gpg *", "gpg --encrypt -r x -o a.gpg /tmp/a"),
    ("gpg *", "gpg --decrypt /tmp/a.gpg"),
    ("gpg *", "gpg -c --batch --passphrase-file /tmp/p -o a.gpg a"),
    ("gpg *", "gpg -c --batch --passphrase-file /tmp/p a"),
    ("ssh-keygen *", "ssh-keygen -t ed25519 -f ./k -N ''"),
    ("ssh-keygen *", "ssh-keygen -l -f /etc/ssh/ssh_host_ed25519_key.pub"),
    ("ssh-keygen *", "ssh-keygen -y -f k"),
    ("ssh-keygen *", "ssh-keygen -F github.com"),
    ("ssh-keygen *", "ssh-keygen -M generate moduli"),
    ("ssh-keygen *", "ssh-keygen -M screen -f candidates moduli"),
    ("docker plugin *", "docker plugin create x ./plugin"),
    ("go *", "go mod edit -print ../go.mod"),
    ("docker *", "docker plugin ls"),
    ("docker *", "docker plugin inspect x"),
    ("docker *", "docker context ls"),
    ("docker *", "docker context export c ./c.dockercontext"),
    ("docker *", "docker context inspect c"),
    ("docker *", "docker context export c"),
    ("docker *", "docker context export c -"),
    ("podman *", "podman system connection list"),
    ("podman *", "podman system df"),
    ("python *", "python -X dev a.py"),
    ("python *", "python a.py -X pycache_prefix=/tmp/x"),
    ("python *", "python -X pycache_prefix=.cache a.py"),
    ("python *", "python -X importtime -m pytest"),
    ("jar *", "jar tf /tmp/x.jar"),
    ("jar *", "jar cf x.jar -C build ."),
    ("jar *", "jar xf a.jar"),
    ("jar *", "jar --create --file x.jar a.class"),
    ("jar *", "jar --list --file /tmp/x.jar"),
]


@pytest.mark.parametrize(("rule", "script"), HELD)
def test_what_stays_in_the_workspace_or_is_named_stays_allowed(rule, script):
    assert _verdict(script, rule) is Verdict.ALWAYS
