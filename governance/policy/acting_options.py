"""Options that act: what makes `find *` more than a listing.

`ACTING` maps a program (or `program subcommand`) to the options with which it
executes another program, writes or deletes files, or changes configuration, and
what each does. A command using one is ALWAYS only when the ALWAYS rule that
matched it names the option literally in its pattern (`run_command:find * -delete`
names `-delete`; `find *` does not cover `find . -delete`). Spellings: `--long`
(GNU-style: `--long=v`, `--long v` and unambiguous abbreviations such as `--out`
all count), `-x` (a short letter, also inside `-abx`; letters after one that takes
a value are that value), `-word` (one token, as find and go spell them), `+` (any
argument starting with `+`), `NAME=` (an operand assigning a variable, as make
reads them) and `` (the subcommand itself acts). Sources: the programs' manuals
and GTFOBins (https://gtfobins.github.io). `WRITES` lists programs whose operands
are files they write (`tee`, `cp`, `dd of=`...): those become `write_file` probes.
sed and awk programs are checked too: a script using `e`, `w`, `r`..., or an awk
program with `system`, `|`, `>`, `getline`, needs a rule that names the script.
"""

import json
import posixpath
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import takewhile

from governance.policy.config_paths import (
    config_names_continuing,
    config_path_names,
    is_config_name,
    pattern_names_path,
)
from governance.policy.getopt_words import GetoptWords, read_getopt
from governance.policy.paths import normalise_path
from governance.policy.shell_links import link_targets

RUNS, WRITES_FILES, DELETES, CONFIGURES, SENDS = (
    "runs a program",
    "writes files",
    "deletes files",
    "changes configuration",
    "sends data",
)
_GIT_SUBCOMMANDS = (
    "add commit status checkout switch restore reset stash merge cherry-pick revert rev-parse "
    "ls-files blame remote describe shortlog merge-base cat-file ls-tree reflog worktree mv rm "
    "clean am notes show-ref for-each-ref count-objects fsck gc prune version "
    "submodule bisect sparse-checkout rev-list name-rev cherry diff-tree diff-index diff-files "
    "show-branch var check-ignore check-attr check-mailmap check-ref-format verify-commit "
    "verify-tag patch-id stripspace get-tar-commit-id verify-pack merge-tree "
    "hash-object update-index update-ref symbolic-ref write-tree "
    "pack-refs replace rerere annotate log show diff whatchanged range-diff"
)
_VERIFIES = "runs gpg to verify a signature"  # any signed commit or tag: one can be made
_LOG_DIFF = {"--output": WRITES_FILES, "--ext-diff": RUNS, "--show-signature": _VERIFIES}
_FETCH = {"--upload-pack": RUNS, "--config": CONFIGURES}
_SIGNS = "runs gpg to sign with the user's key"
_ONTO_PATH = "installs programs onto the PATH"
_REVEALS = "reveals credentials"
_HAND_MADE_ENTRY = "makes a git entry by hand (a link to anywhere among them)"
_USERS_FILES = "deletes or fills the caches and tools it keeps for the user, outside the workspace"
_SYSTEM_SITE = "installs into the system Python, which every Python program imports from"
_GPG_SIGN = {"-S": _SIGNS, "--gpg-sign": _SIGNS}
_GIT_SIGNING = "commit merge cherry-pick revert am commit-tree"  # and rebase, pull: below
# dotnet's commands that run MSBuild on a project (and read MSBuild's switches).
_DOTNET_MSBUILD = ("build", "test", "run", "pack", "publish", "msbuild", "restore", "clean")
_RESPONSE_FILE = "reads more options from a file"
_LISTENS = "listens on the network and serves whoever connects"
_FORWARDS = "listens on the host and forwards what connects to a container or the cluster"

ACTING: dict[str, dict[str, str]] = {
    "find": {
        **dict.fromkeys(("-exec", "-execdir", "-ok", "-okdir"), RUNS),
        "-delete": DELETES,
        **dict.fromkeys(("-fprint", "-fprint0", "-fprintf", "-fls"), WRITES_FILES),
    },
    # `-l`/`--list-details` is `--exec-batch ls -l` (fd's manual)
    "fd": dict.fromkeys(("-x", "--exec", "-X", "--exec-batch", "-l", "--list-details"), RUNS),
    "git": {
        "-c": CONFIGURES,
        "--config-env": CONFIGURES,
        "--exec-path": RUNS,
        "-C": "reads another repository's configuration and hooks",
        "--git-dir": "reads another repository's configuration and hooks",
        "--work-tree": WRITES_FILES,
        "--super-prefix": CONFIGURES,
        # The folder it runs in is the repository: a `config` there is no `.git/config`.
        "--bare": "reads the configuration of the folder it runs in",
    },
    "git format-patch": {"-o": WRITES_FILES, "--output-directory": WRITES_FILES},
    "git grep": {"-O": RUNS, "--open-files-in-pager": RUNS},
    "git fetch": _FETCH,
    "git pull": {**_FETCH, "--exec": RUNS, **_GPG_SIGN},
    "git ls-remote": {**_FETCH, "--exec": RUNS},  # `--upload-pack`'s hidden alias (F130)
    "git clone": {**_FETCH, "-u": RUNS, "--template": RUNS, "-c": CONFIGURES}
    | {"--separate-git-dir": WRITES_FILES}  # the repository goes there, as init's
    | {"--bundle-uri": "fetches a bundle from the address it names"},  # (F130)
    "git push": {"--receive-pack": RUNS, "--exec": RUNS},
    "git archive": {"--exec": RUNS, "-o": WRITES_FILES, "--output": WRITES_FILES},
    "git rebase": {"-x": RUNS, "--exec": RUNS, **_GPG_SIGN},
    # It runs a diff tool: `-x CMD`, `-t vimdiff`, or one it guesses (vimdiff when no tool is set).
    "git difftool": {"": RUNS, "-x": RUNS, "--extcmd": RUNS},
    "git init": {"--template": RUNS, "--separate-git-dir": WRITES_FILES},
    "git branch": {
        **dict.fromkeys(("-d", "-D", "--delete", "-m", "-M", "--move"), DELETES),
        **dict.fromkeys(("-c", "-C", "--copy", "-f", "--force"), WRITES_FILES),
        **dict.fromkeys(("-u", "--set-upstream-to", "--unset-upstream"), CONFIGURES),
        "--edit-description": RUNS,
    },
    "git tag": {
        "-d": DELETES,
        "--delete": DELETES,
        **dict.fromkeys(("-s", "--sign", "-u", "--local-user"), _SIGNS),
    },
    # Subcommands with no acting option of their own: known, so `git commit -m` is not read
    # against every other subcommand's options (what an unknown subcommand or alias is).
    **{f"git {sub}": {} for sub in _GIT_SUBCOMMANDS.split()},
    # They sign what they make with `-S`: gpg (or gpg.program) runs, with the user's key.
    **{f"git {sub}": _GPG_SIGN for sub in _GIT_SIGNING.split()},
    # `--in-place` rewrites the files named, wherever they are (a temporary file beside each).
    "git interpret-trailers": {"--in-place": WRITES_FILES},
    "git read-tree": {"--index-output": WRITES_FILES},  # writes the index to the file named
    # `--expire-to=/etc/x`: the pruned objects' pack goes there (`--filter-to`: git 2.41)
    "git repack": {"--expire-to": WRITES_FILES, "--filter-to": WRITES_FILES},
    # patches outside the working tree; `--build-fake-ancestor=FILE`: a temporary index
    # written at the path given (F115)
    "git apply": {"--unsafe-paths": WRITES_FILES, "--build-fake-ancestor": WRITES_FILES},
    "git help": {"": "runs man to show a manual"},  # so does `git CMD --help`: see _scan
    "git worktree add": {"": WRITES_FILES},
    # a linked worktree moved to, or deleted from, wherever it is (F115)
    **{f"git worktree {sub}": {"": WRITES_FILES} for sub in ("move", "remove")},
    # A remote added or pointed elsewhere is where a later `git push origin` sends the code.
    **{
        f"git remote {sub}": {"": CONFIGURES}
        for sub in ("add", "set-url", "rename", "remove", "rm", "set-head", "set-branches")
    },
    "git bundle create": {"": WRITES_FILES},
    "git checkout-index": {"--prefix": WRITES_FILES},
    **{f"git {sub}": {"--export-marks": WRITES_FILES} for sub in ("fast-export", "fast-import")},
    "git submodule foreach": {"": RUNS},
    # where the submodule's later fetches come from and its pushes go (F130)
    **{f"git submodule {sub}": {"": CONFIGURES} for sub in ("set-url", "sync")},
    "git worktree repair": {"": WRITES_FILES},  # `PATH/.git` rewritten (F130)
    # an index entry or a tree made by hand: mode 120000 is a link to anywhere, which the next
    # checkout or restore of that path makes (F131)
    "git update-index": dict.fromkeys(("--cacheinfo", "--index-info"), _HAND_MADE_ENTRY),
    "git mktree": {"": _HAND_MADE_ENTRY},
    "git am": {"": "writes the files the patches name"},  # (F130)
    "git bisect run": {"": RUNS},
    "git filter-branch": {"": RUNS},
    "git send-email": {"": SENDS},
    "git credential": {"": _REVEALS},
    "git daemon": {"": SENDS},
    "git instaweb": {"": RUNS},
    "git config": {"": CONFIGURES},  # unless it only reads: see _git_config
    "pytest": {
        "--basetemp": "deletes and recreates the directory",
        # the installed packages it names: their tests run, their caches are written (F121)
        "--pyargs": "runs the tests of installed packages",
        "-p": RUNS,
        "@": _RESPONSE_FILE,  # pytest 8.2+: `pytest @args.txt` (F111)
        "--rootdir": CONFIGURES,
        "--confcutdir": CONFIGURES,
        "-c": CONFIGURES,
        "--config-file": CONFIGURES,
        "-o": CONFIGURES,
        "--override-ini": CONFIGURES,
        **dict.fromkeys(
            ("--junitxml", "--junit-xml", "--result-log", "--resultlog", "--log-file")
            + ("--report-log", "--debug", "--html", "--json-report-file", "--cov-report")
            + ("--alluredir",),
            WRITES_FILES,
        ),
        "--pastebin": SENDS,
        # any text file its pattern matches runs as Python examples: a `.log` being written
        # beside it (`pytest --doctest-glob=t.log & echo '>>> CODE' > t.log`) (F156)
        "--doctest-glob": "runs the examples in the files its pattern matches",
        # pytest-xdist's `--tx popen//python=PROG` starts PROG as each worker's Python (`ssh=`
        # runs ssh); pytest-benchmark's reports (from their manuals: neither is installed here).
        "--tx": RUNS,
        # (F126, run) xdist's `--px` is `--tx`'s sibling; pytest-env's `--envfile` sets the
        # environment (PYTHONPATH, DJANGO_SETTINGS_MODULE) from a file; pytest-cov's settings
        "--px": RUNS,
        "--envfile": CONFIGURES,
        "--cov-config": CONFIGURES,
        "--rsyncdir": SENDS,
        **dict.fromkeys(("--benchmark-json", "--benchmark-storage"), WRITES_FILES),
        "--benchmark-histogram": WRITES_FILES,
        # pytest-benchmark's timer is imported from the module it names as options are read;
        # its CSV and cProfile dumps go where they are told (F117)
        "--benchmark-timer": RUNS,
        **dict.fromkeys(("--benchmark-csv", "--benchmark-cprofile-dump"), WRITES_FILES),
        "--pdbcls": RUNS,
        # The debugger runs the Python its stdin holds (`--trace`: at every test's start).
        "--trace": RUNS,
        "--pdb": RUNS,
    },
    "python": {"-c": RUNS, "-m": RUNS},
    "node": dict.fromkeys(
        ("-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader")
        + ("--experimental-loader", "--inspect", "--inspect-brk")
        # `node --version --no-version x.js` runs x.js: the version taken back (F138)
        + ("--no-version", "--no_version"),
        RUNS,
    ),
    "perl": {"-e": RUNS, "-E": RUNS, "-M": RUNS, "-i": WRITES_FILES},
    "ruby": {"-e": RUNS, "-r": RUNS, "-i": WRITES_FILES},
    "php": {"-r": RUNS},
    "tar": {
        **dict.fromkeys(
            ("-x", "--extract", "--get", "-c", "--create", "-r", "--append"), WRITES_FILES
        ),
        **dict.fromkeys(("-u", "--update", "-A", "--catenate", "--concatenate"), WRITES_FILES),
        **dict.fromkeys(("--delete", "--remove-files", "--recursive-unlink"), DELETES),
        **dict.fromkeys(("-U", "--unlink-first", "--overwrite", "-P", "--absolute-names"), DELETES),
        **dict.fromkeys(("-C", "--directory", "-g", "--listed-incremental"), WRITES_FILES),
        **dict.fromkeys(("--to-command", "-I", "--use-compress-program"), RUNS),
        **dict.fromkeys(("--checkpoint-action", "-F", "--info-script"), RUNS),
        **dict.fromkeys(("--new-volume-script", "--rsh-command", "--rmt-command"), RUNS),
        "--index-file": WRITES_FILES,
        # GNU tar writes the volume number to `--volno-file=FILE` in every mode (`-t` too),
        # and `-x --one-top-level=DIR` extracts into DIR, anywhere (seen in the sandbox).
        **dict.fromkeys(("--volno-file", "--one-top-level"), WRITES_FILES),
    },
    # `install -s --strip-program=PROG` runs PROG on each installed file (a planted `bin/ls`
    # ran in the sandbox).
    "install": {"--strip-program": RUNS},
    "sed": {"-i": WRITES_FILES, "--in-place": WRITES_FILES, "-f": RUNS, "--file": RUNS},
    # mawk's and gawk's `-W OPTION` (`-W exec FILE`, `-W source=TEXT`) and gawk's `-e TEXT`
    # take the program from elsewhere than the first operand: they are not read.
    "awk": dict.fromkeys(("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"), RUNS)
    | dict.fromkeys(("-W", "-e", "--source"), RUNS)
    # gawk's debugger takes its commands from stdin or `--debug=FILE`; its `eval` runs awk.
    | dict.fromkeys(("-D", "--debug"), RUNS)
    | dict.fromkeys(
        ("-o", "--pretty-print", "-p", "--profile", "-d", "--dump-variables"), WRITES_FILES
    ),
    "rsync": {
        **dict.fromkeys(("-e", "--rsh", "--rsync-path", "--config", "--daemon"), RUNS),
        **dict.fromkeys(("--delete", "--delete-before", "--delete-during", "--del"), DELETES),
        **dict.fromkeys(("--delete-delay", "--delete-after", "--delete-excluded"), DELETES),
        "--remove-source-files": DELETES,
        **dict.fromkeys(("--log-file", "--write-batch", "--only-write-batch"), WRITES_FILES),
        **dict.fromkeys(("--backup-dir", "-T", "--temp-dir", "--partial-dir"), WRITES_FILES),
    },
    "ssh": {
        **dict.fromkeys(("-o", "-F", "-J", "-S"), RUNS),
        **dict.fromkeys(("-L", "-R", "-D", "-W", "-w"), SENDS),
        "-E": WRITES_FILES,
    },
    "scp": dict.fromkeys(("-S", "-o", "-F", "-J"), RUNS),
    "sftp": dict.fromkeys(("-S", "-o", "-F", "-J", "-b", "-D"), RUNS),
    "less": {
        "+": RUNS,
        **dict.fromkeys(("-o", "--log-file", "-O", "--LOG-FILE"), WRITES_FILES),
        **dict.fromkeys(("-k", "--lesskey-file", "--lesskey-src"), RUNS),
        # less 643's lesskey text on the command line: its `#env` sets LESSOPEN=|CMD
        "--lesskey-content": RUNS,
    },
    "man": dict.fromkeys(("-P", "--pager", "-H", "--html", "-C", "--config-file"), RUNS),
    # ripgrep 14 runs the program named; `-z` runs gzip, xz, zstd... on compressed files
    "rg": {"--pre": RUNS, "--hostname-bin": RUNS, "-z": RUNS, "--search-zip": RUNS},
    # GNU diff's `-l` pipes its output through pr; sdiff and diff3 run the diff they are given.
    "diff": {"-l": RUNS, "--paginate": RUNS},
    "sdiff": {"--diff-program": RUNS, "-o": WRITES_FILES, "--output": WRITES_FILES},
    "diff3": {"--diff-program": RUNS},
    # `date -s` sets the system clock (as root: every certificate, token and log after it).
    "date": dict.fromkeys(("-s", "--set"), "sets the system clock"),
    "sort": {
        **dict.fromkeys(("-o", "--output", "-T", "--temporary-directory"), WRITES_FILES),
        "--compress-program": RUNS,
    },
    "make": {
        **dict.fromkeys(("-f", "--file", "--makefile", "--eval", "-E"), RUNS),
        **dict.fromkeys(("-C", "--directory", "-I", "--include-dir", "NAME="), RUNS),
    },
    "npm": {
        **dict.fromkeys(("--script-shell", "--node-options", "--shell", "--git"), RUNS),
        **dict.fromkeys(("--editor", "--browser", "--viewer", "--init-module"), RUNS),
        "--node-gyp": RUNS,  # the program npm runs to build a package's binding.gyp
        **dict.fromkeys(("--prefix", "-g", "--global", "--location", "--cache"), WRITES_FILES),
        **dict.fromkeys(("--userconfig", "--globalconfig", "--registry"), CONFIGURES),
        **dict.fromkeys(("--proxy", "--https-proxy"), CONFIGURES),  # every request goes there
        **dict.fromkeys(("-C", "--logs-dir", "--pack-destination"), WRITES_FILES),  # -C: --prefix
    },
    **{f"npm {sub}": {"": RUNS} for sub in ("exec", "x", "explore")},
    **{f"npm config {sub}": {"": CONFIGURES} for sub in ("set", "delete", "edit", "rm")},
    "npm set": {"": CONFIGURES},
    "npm publish": {"": SENDS},
    "yarn": {"--use-yarnrc": CONFIGURES}
    # From their manuals (yarn and pnpm are not installed where the oracle runs): another
    # folder's project (`--cwd`, `-C`, `--dir`), the folders they fill, the global install.
    | {"--cwd": RUNS, "--registry": CONFIGURES}
    | dict.fromkeys(("--modules-folder", "--cache-folder", "--global-folder"), WRITES_FILES)
    | dict.fromkeys(("--link-folder", "--prefix"), WRITES_FILES)
    # the packed archive, another cache, a lock file where they are told; a proxy (F117)
    | dict.fromkeys(("--filename", "--preferred-cache-folder", "--mutex"), WRITES_FILES)
    | {"--proxy": SENDS, "--https-proxy": SENDS},
    "yarn pack": dict.fromkeys(("-o", "--out"), WRITES_FILES),
    **{f"yarn {sub}": {"": RUNS} for sub in ("create", "set", "policies")},  # downloaded code
    **{f"{tool} {sub}": {"": SENDS} for tool in ("yarn", "pnpm") for sub in ("publish", "npm")},
    "yarn global": {"": _ONTO_PATH},
    "yarn link": {"": WRITES_FILES},  # a link in the user's link folder
    "pnpm create": {"": RUNS},
    **{f"pnpm {sub}": {"": WRITES_FILES} for sub in ("setup", "env", "self-update", "link")},
    "yarn dlx": {"": RUNS},
    # `vitest init browser`: installs packages and browsers (apt-get among them) (F142)
    "vitest init": {"": RUNS},
    # They run the command that follows, as `npm exec` does (not installed here: manuals).
    **{key: {"": RUNS} for key in ("yarn exec", "yarn node", "pnpm exec", "tox exec")},
    "uv tool run": {"": RUNS},  # uvx: a package's program, installed first
    "yarn config set": {"": CONFIGURES},
    # the user's configuration files rewritten; the registry tokens in them printed (F122)
    **{key: {"": CONFIGURES} for key in ("yarn config unset", "yarn config delete")},
    "pnpm config delete": {"": CONFIGURES},
    **{key: {"": _REVEALS} for key in ("yarn config get", "yarn config list")},
    **{key: {"": _REVEALS} for key in ("pnpm config get", "pnpm config list")},
    "yarn config": {"--no-redacted": _REVEALS},
    "pnpm deploy": {"": WRITES_FILES},  # the deployment's folder; its scripts run there
    "pnpm dlx": {"": RUNS},
    "pnpm config set": {"": CONFIGURES},
    # (F148, sandbox: pnpm 10 and 12, yarn 1 and 4) `pnpm set`/`c set` are `config set`; the
    # registry's records changed with the user's token; a browser or an editor opened; a
    # program put on the user's PATH; a node or another pnpm downloaded and run; a yarn
    # release, a package or a template fetched and run by `yarn init`; an outside folder taken
    # into the project as a patch
    **{key: {"": CONFIGURES} for key in ("pnpm set", "pnpm c set")},
    **{
        f"{tool} {sub}": {"": SENDS}
        for tool in ("pnpm", "yarn")
        for sub in ("unpublish", "deprecate", "dist-tag", "owner", "star", "unstar", "profile")
        + ("logout", "token", "tag", "access", "team", "stage")
    },
    **{f"pnpm {sub}": {"": RUNS} for sub in ("bugs", "repo", "docs", "home", "issues", "edit")},
    **{f"pnpm {sub}": {"": RUNS} for sub in ("shim", "runtime", "rt", "pack-app", "with")},
    "yarn init": {"": RUNS},
    "yarn patch-commit": {"": WRITES_FILES},
    "yarn run": dict.fromkeys(("--require", "-r"), RUNS),
    "pip": {
        **dict.fromkeys(("-t", "--target", "--prefix", "--root", "--src", "--log"), WRITES_FILES),
        "--report": WRITES_FILES,
        # `--log`'s and `--src`'s other spellings, and the cache it fills
        **dict.fromkeys(("--log-file", "--local-log", "--cache-dir", "--source"), WRITES_FILES),
        **dict.fromkeys(("--source-dir", "--source-directory"), WRITES_FILES),
        "--install-option": WRITES_FILES,  # `--install-option=--prefix=DIR` (pip < 23.1)
        # setup.py's own command line (pip < 26): `bdist_wheel --bdist-dir=/tmp/x` builds
        # there and deletes the folder (F138)
        "--global-option": WRITES_FILES,
        # The system Python's site-packages, which every Python program the rules allow imports
        # (yq, pytest...): pip refuses to write there (PEP 668) unless told to.
        "--break-system-packages": _SYSTEM_SITE,
        **dict.fromkeys(("-i", "--index-url", "--extra-index-url", "-f", "--find-links"), RUNS),
        **dict.fromkeys(("--trusted-host", "-C", "--config-settings", "--user"), CONFIGURES),
        "--proxy": SENDS,  # every request goes to the host it names (F117)
    },
    "pip config": {"": CONFIGURES},
    "uv pip": {"--target": WRITES_FILES, "--prefix": WRITES_FILES, "--cache-dir": WRITES_FILES}
    # `-i`, `-f`: the short spellings of `--index-url` and `--find-links` (F117)
    | dict.fromkeys(("-i", "-f"), RUNS)
    | {"--system": _SYSTEM_SITE, "--break-system-packages": _SYSTEM_SITE},
    # From uv's manual (not installed where the oracle runs): another folder's project, the
    # index its packages (and their build scripts) come from, a uv.toml or a .env elsewhere.
    "uv": dict.fromkeys(("--directory", "--project"), RUNS)
    | {"--cache-dir": WRITES_FILES}
    | dict.fromkeys(("--index-url", "--extra-index-url", "--index", "--default-index"), RUNS)
    | dict.fromkeys(("--find-links", "--config-file", "--env-file"), RUNS)
    # the build backend's settings: setuptools' `--build-option=--bdist-dir /tmp/x` builds
    # there and deletes the folder (H20-1), as pip's `--config-settings` can
    | dict.fromkeys(("-C", "--config-setting", "--config-settings"), CONFIGURES)
    | {"--config-settings-package": CONFIGURES},
    "uv publish": {"": SENDS},
    "uv tool install": {"": _ONTO_PATH},
    "uv python install": {"": _ONTO_PATH},
    # the shell's start-up files, to put uv's bin folder on the PATH (F116)
    **{
        key: {"": "writes the shell's start-up files"}
        for key in ("uv tool update-shell", "uv tool ensurepath", "uv python update-shell")
    },
    "uv self": {"": RUNS},  # downloads a uv and replaces itself
    "uv format": {"": RUNS},  # downloads ruff and runs it (F121)
    "uv auth token": {"": _REVEALS},
    "uv auth helper": {"": _REVEALS},  # a credential helper's answer: the stored token (H20-6)
    "uv check": {"": RUNS},  # downloads ty and runs it, as `uv format` does ruff (H20-7)
    "uv python upgrade": {"": _ONTO_PATH},  # `uv python install`'s newer patches (H20-11)
    **{f"uv auth {sub}": {"": CONFIGURES} for sub in ("login", "logout")},  # the user's store
    "black": {"--cache-dir": WRITES_FILES, "--config": CONFIGURES},  # (F121, H20-3)
    "uv build": dict.fromkeys(("-o", "--out-dir"), WRITES_FILES),
    **{
        f"uv {sub}": dict.fromkeys(("-o", "--output-file"), WRITES_FILES)
        for sub in ("export", "pip compile")
    },
    "cargo": {
        **dict.fromkeys(("--config", "-Z", "--manifest-path", "-C"), RUNS),
        **dict.fromkeys(("--target-dir", "--out-dir", "--artifact-dir"), WRITES_FILES),
    },
    "cargo install": {"": _ONTO_PATH},
    "cargo doc": {"--open": RUNS},  # the browser (doc.browser, $BROWSER, xdg-open)
    **{
        f"go {sub}": {
            **dict.fromkeys(("-exec", "-toolexec", "-overlay", "-modfile", "-vettool"), RUNS),
            "-compiler": RUNS,  # `-compiler gccgo`
            "-pkgdir": WRITES_FILES,  # where it installs the packages it builds
            **dict.fromkeys(("-o", "-outputdir", "-coverprofile", "-cpuprofile"), WRITES_FILES),
            **dict.fromkeys(
                ("-memprofile", "-blockprofile", "-mutexprofile", "-trace"), WRITES_FILES
            ),
            # the go command's own debug files (F117)
            **dict.fromkeys(
                ("-debug-trace", "-debug-actiongraph", "-debug-runtime-trace"), WRITES_FILES
            ),
        }
        for sub in ("build", "test", "run", "vet", "install", "generate", "list")
    },
    # `-C DIR`: DIR's go.mod may ask for a newer toolchain, which go downloads and runs (F137)
    "go env": {"-w": CONFIGURES, "-u": CONFIGURES, "-C": RUNS},
    "gofmt": {"-w": WRITES_FILES, "-cpuprofile": WRITES_FILES},
    "prettier": {"-w": WRITES_FILES, "--write": WRITES_FILES, "--cache-location": WRITES_FILES},
    "eslint": {"--fix": WRITES_FILES, "-o": WRITES_FILES, "--output-file": WRITES_FILES}
    | {"--cache-location": WRITES_FILES, "--rulesdir": RUNS}  # rules: JavaScript it loads
    | {"--init": RUNS}  # `npm init @eslint/config@latest`: a package downloaded and run
    # `npx @eslint/config-inspector@latest`, `@eslint/mcp`: downloaded and run (F117)
    | dict.fromkeys(("--inspect-config", "--mcp"), RUNS)
    | dict.fromkeys(("--cache-file", "--suppressions-location"), WRITES_FILES),
    "ruff": {"--fix": WRITES_FILES, "--fix-only": WRITES_FILES, "--config": CONFIGURES}
    | dict.fromkeys(("--cache-dir", "-o", "--output-file", "--add-noqa"), WRITES_FILES),
    # empties the cache folder the project's configuration names, wherever it is: a
    # `cache-dir` of /home/user in ruff.toml, written by an earlier call, empties it (F160)
    "ruff clean": {"": DELETES},
    # Linters', type checkers' and test runners' reports, caches and plugins (from their
    # manuals; none is installed where the oracle runs).
    "mypy": {
        "@": _RESPONSE_FILE,  # argparse's fromfile_prefix_chars
        **dict.fromkeys(
            ("--cache-dir", "--junit-xml", "--html-report", "--txt-report"), WRITES_FILES
        ),
        # its hidden statistics options write the file named (F117)
        **dict.fromkeys(("--timing-stats", "--line-checking-stats"), WRITES_FILES),
        "--cache-map": WRITES_FILES,  # hidden: SOURCE META DATA, the last two written (H20-4)
        **dict.fromkeys(
            ("--xml-report", "--linecount-report", "--linecoverage-report"), WRITES_FILES
        ),
        **dict.fromkeys(("--memory-xml-report", "--cobertura-xml-report"), WRITES_FILES),
        **dict.fromkeys(("--lineprecision-report", "--any-exprs-report"), WRITES_FILES),
        **dict.fromkeys(("--xslt-html-report", "--xslt-txt-report"), WRITES_FILES),
        **dict.fromkeys(("--python-executable", "--install-types"), RUNS),
        "--config-file": CONFIGURES,
    },
    "flake8": {
        "--output-file": WRITES_FILES,
        "--config": CONFIGURES,
        "--append-config": CONFIGURES,
    },
    "pylint": {
        "--output": WRITES_FILES,
        **dict.fromkeys(("--init-hook", "--load-plugins"), RUNS),
        # the score's formula is Python it evaluates; any extension module imported (F117)
        **dict.fromkeys(("--evaluation", "--unsafe-load-any-extension"), RUNS),
        "--rcfile": CONFIGURES,
    },
    "tsc": dict.fromkeys(
        ("--outDir", "--outFile", "--out", "--declarationDir", "--tsBuildInfoFile")
        + ("--generateTrace", "--generateCpuProfile"),
        WRITES_FILES,
    )
    | {"@": _RESPONSE_FILE},
    # Their caches and reports (jest's `--coverage` is no `--coverageDirectory`: see _long_spells).
    "jest": dict.fromkeys(("--outputFile", "--cacheDirectory", "--coverageDirectory"), WRITES_FILES)
    # deletes its cache folder, wherever the configuration puts it (F142)
    | dict.fromkeys(("--clearCache", "--clear-cache"), WRITES_FILES),
    "vitest": dict.fromkeys(("--outputFile", "--coverage.reportsDirectory"), WRITES_FILES)
    # the type checker it starts (a program's path or name), a coverage provider module (F117)
    | dict.fromkeys(("--typecheck.checker", "--coverage.customProviderModule"), RUNS)
    | dict.fromkeys(("--ui", "--open"), RUNS)  # the UI opens in the browser (xdg-open...)
    | {"--execArgv": RUNS}  # node's options for its workers (`--require=/tmp/x.js`) (F119)
    # a benchmark's and a list's report, test attachments; an API that runs and edits (F121)
    | dict.fromkeys(("--outputJson", "--attachmentsDir"), WRITES_FILES)
    | dict.fromkeys(("--api.allowExec", "--api.allowWrite"), RUNS)
    | dict.fromkeys(("--browser.api.allowExec", "--browser.api.allowWrite"), RUNS),
    "playwright": {"--output": WRITES_FILES}  # its artifacts' folder
    # the UI server opens the browser (xdg-open), on any host or port (F142)
    | dict.fromkeys(("--ui-host", "--ui-port"), RUNS)
    | {"--last-failed-file": WRITES_FILES},  # (F121)
    # mocha's reporter options (`-O output=/etc/x`: where xunit writes), and the options of
    # the node process it runs the specs in (`--node-option require=/tmp/x.js`) (F119)
    "mocha": dict.fromkeys(("-O", "--reporter-option", "--reporter-options"), WRITES_FILES)
    | dict.fromkeys(("--reporterOption", "--reporterOptions"), WRITES_FILES)
    | dict.fromkeys(("-n", "--node-option", "--nodeOption"), RUNS),
    "rspec": {"-o": WRITES_FILES, "--out": WRITES_FILES, "-r": RUNS, "--require": RUNS}
    | {"--deprecation-out": WRITES_FILES}  # created even with no deprecation to log (F123)
    # More options from a file (`--require` among them), a load path its requires search first.
    | dict.fromkeys(("-O", "--options", "-I"), RUNS),
    # From their manuals (none is installed where the oracle runs): rake's Ruby code, libraries,
    # Rakefiles and rakelib folders named on the command line, or the user's (`-g`).
    "rake": dict.fromkeys(("-e", "--execute", "-p", "--execute-print", "-E"), RUNS)
    | {"-l": RUNS}  # no short option of rake's: OptionParser completes it to `--libdir` (F123)
    | dict.fromkeys(("--execute-continue", "-r", "--require", "-I", "--libdir"), RUNS)
    | dict.fromkeys(("-f", "--rakefile", "-R", "--rakelibdir", "--rakelib", "-g"), RUNS)
    | {"--system": RUNS}
    # another folder's Rakefile; `NAME=VALUE` operands are the environment of the Ruby its
    # test and spec tasks start (`RUBYOPT=-r…`, `TEST=…`), as make's variables are (F116)
    | dict.fromkeys(("-C", "--directory", "NAME="), RUNS)
    # with no Rakefile searched for, rake loads the user's `~/.rake/*.rake` (F145)
    | dict.fromkeys(("-N", "--nosearch", "--no-search"), RUNS),
    # gradle's init scripts, another folder's build, its home and caches, the JVM it runs.
    **{
        tool: dict.fromkeys(("-I", "--init-script", "-p", "--project-dir", "-c"), RUNS)
        | dict.fromkeys(("-b", "--build-file"), RUNS)  # another build script (Gradle 7, 8)
        # `wrapper --gradle-distribution-url=URL`: the distribution the next ./gradlew runs (F116)
        | {"--gradle-distribution-url": CONFIGURES}
        | dict.fromkeys(("--settings-file", "--include-build", "-D", "--system-prop"), RUNS)
        | dict.fromkeys(("-g", "--gradle-user-home", "--project-cache-dir"), WRITES_FILES)
        for tool in ("gradle", "./gradlew", "gradlew")
    },
    "golangci-lint run": dict.fromkeys(("--out-format", "--cpu-profile-path"), WRITES_FILES)
    | dict.fromkeys(("--mem-profile-path", "--trace-path"), WRITES_FILES)
    | dict.fromkeys(("--output.text.path", "--output.json.path"), WRITES_FILES)
    | dict.fromkeys(("--output.checkstyle.path", "--output.junit-xml.path"), WRITES_FILES)
    | dict.fromkeys(("--output.sarif.path", "--output.html.path"), WRITES_FILES)
    # golangci-lint v2's other report formats (F137, from its source)
    | dict.fromkeys(("--output.tab.path", "--output.code-climate.path"), WRITES_FILES)
    | {"--output.teamcity.path": WRITES_FILES},
    # dotnet's outputs, logs, results; MSBuild's properties and loggers (`-p:OutDir=…`; every
    # spelling of MSBuild's switches, `/p:` too, is read by _msbuild_switches), the package
    # feeds a restore takes packages (and the MSBuild code in them) from.
    **{
        f"dotnet {sub}": dict.fromkeys(("-o", "--output", "--results-directory"), WRITES_FILES)
        | dict.fromkeys(("--diag", "-bl", "-binaryLogger", "--artifacts-path"), WRITES_FILES)
        | dict.fromkeys(("-p", "--property", "-logger", "--logger", "-l"), RUNS)
        | dict.fromkeys(("--source", "--configfile", "--packages"), CONFIGURES)
        for sub in _DOTNET_MSBUILD
    },
    "coverage": dict.fromkeys(("-d", "--directory", "-o", "--data-file"), WRITES_FILES)
    | {"--rcfile": CONFIGURES},  # its plugins: see _coverage_run for what `run` runs
    # `F,cover` beside every source the data file names, the standard library's too (H20-10)
    "coverage annotate": {"": WRITES_FILES},
    # mikefarah's yq spells it --inplace, the jq wrapper (Debian's yq) --in-place; mikefarah's
    # -s/--split-exp writes each result to a file its expression names (the wrapper's -s is
    # jq's --slurp, taken for the other here)
    "yq": dict.fromkeys(("-i", "--inplace", "--in-place", "-s", "--split-exp"), WRITES_FILES)
    | {"--split-exp-file": WRITES_FILES},
    "curl": {
        **dict.fromkeys(
            ("-o", "--output", "-O", "--remote-name", "--remote-name-all"), WRITES_FILES
        ),
        **dict.fromkeys(("-D", "--dump-header", "-c", "--cookie-jar", "--trace"), WRITES_FILES),
        **dict.fromkeys(("--trace-ascii", "--stderr", "--libcurl", "--output-dir"), WRITES_FILES),
        **dict.fromkeys(("--etag-save", "--hsts", "--alt-svc", "--create-dirs"), WRITES_FILES),
        **dict.fromkeys(("-K", "--config"), CONFIGURES),
        **dict.fromkeys(("-T", "--upload-file", "-d", "--data", "--data-binary"), SENDS),
        **dict.fromkeys(("-F", "--form", "--data-urlencode", "--json"), SENDS),
        # (F168, sandbox) `-d`'s other name and a variable from a file (8.3): a file's
        # content sent (headers and query parts from `@FILE`: `_curl_files_sent`); `--engine
        # PATH` loads PATH as an OpenSSL engine (its constructor ran); `--ssl-sessions F`
        # (8.12) writes F.
        **dict.fromkeys(("--data-ascii", "--variable"), SENDS),
        "--engine": RUNS,
        "--ssl-sessions": WRITES_FILES,
        # (F171, sandbox) the request goes to a local socket, not to the address the URL
        # names: `--unix-socket /var/run/docker.sock -X POST http://x/build?remote=URL` has
        # the docker daemon build (and run) what URL holds (seen: the POST on the socket)
        **dict.fromkeys(("--unix-socket", "--abstract-unix-socket"), SENDS),
    },
    "wget": {
        **dict.fromkeys(("-O", "--output-document", "-o", "--output-file"), WRITES_FILES),
        **dict.fromkeys(("-a", "--append-output", "-P", "--directory-prefix"), WRITES_FILES),
        **dict.fromkeys(("--post-file", "--body-file"), SENDS),
        **dict.fromkeys(("-e", "--execute", "--config"), CONFIGURES),
        # (F168, sandbox) the askpass program runs; cookies, WARC, HSTS and rejects files are
        # written where named; `-i FILE`'s lines are requested (`-B URL -i /etc/hostname`
        # sent `GET /vm`), a file's content sent.
        "--use-askpass": RUNS,
        **dict.fromkeys(("--save-cookies", "--warc-file", "--warc-tempdir"), WRITES_FILES),
        **dict.fromkeys(("--hsts-file", "--rejected-log"), WRITES_FILES),
        **dict.fromkeys(("-i", "--input-file", "--input-metalink"), SENDS),
    },
    # (F172, sandbox: docker 28) `--config DIR` is where the client finds its plugins:
    # `docker --config d build .` ran a planted d/cli-plugins/docker-buildx (every plugin
    # there runs to tell its metadata); `-H`/`--context` send the build context and the
    # commands to another daemon (as DOCKER_CONFIG=, DOCKER_HOST= are read). `-c` is left
    # out: `docker run -c N` is its CPU shares.
    "docker": {"--config": RUNS} | dict.fromkeys(("-H", "--host", "--context"), SENDS),
    "go": {},
    "pnpm": dict.fromkeys(("-C", "--dir", "-g", "--global", "--global-dir"), WRITES_FILES)
    | {"--pack-destination": WRITES_FILES}  # `pnpm pack`'s archive, as npm's (F117)
    # `--prefix` is `--dir` to pnpm; the lockfile's folder, where node_modules goes too (F122)
    | {"--prefix": WRITES_FILES, "--lockfile-dir": WRITES_FILES}
    | {"--registry": CONFIGURES}
    | dict.fromkeys(("--store-dir", "--virtual-store-dir", "--modules-dir"), WRITES_FILES)
    # Its settings are flags too (pnpm's manual): the shell scripts run in, node's options, the
    # npm it runs, a node it downloads and runs, folders it fills; `--config.KEY=V`: any of them.
    | dict.fromkeys(("--script-shell", "--node-options", "--npm-path"), RUNS)
    | {"--use-node-version": RUNS}
    | dict.fromkeys(("--global-bin-dir", "--state-dir", "--cache-dir"), WRITES_FILES)
    | dict.fromkeys(("--proxy", "--https-proxy"), CONFIGURES)
    # pnpm 12: the plain proxy's other name, a resolution server, settings from a file (F141)
    | dict.fromkeys(("--http-proxy", "--pnpr-server", "--env-file"), CONFIGURES)
    # the registry and token from another file (F148)
    | dict.fromkeys(("--npmrc-auth-file", "--userconfig"), CONFIGURES),
    # `pnpm patch x --edit-dir DIR` makes DIR; `patch-commit DIR` takes DIR into the project
    # and makes `DIR_tmp_N` beside it (F141, sandbox)
    "pnpm patch": dict.fromkeys(("-d", "--edit-dir"), WRITES_FILES),
    "pnpm patch-commit": {"": WRITES_FILES},
    "pnpm pack": {"--out": WRITES_FILES},
    # yarn's plugins run in every later yarn command (it lists them in .yarnrc.yml).
    "yarn plugin import": {"": RUNS},
    # `poetry add ../lib`: see _packages_elsewhere. `-C DIR`/`-P DIR`: another folder's project.
    "poetry": dict.fromkeys(("-C", "--directory", "-P", "--project"), RUNS),
    "poetry publish": {"": SENDS},
    "poetry self": {"": RUNS},  # plugins installed into poetry itself
    "poetry config": {"": CONFIGURES},
    "poetry shell": {"": RUNS},
    "poetry env use": {"": RUNS},  # the interpreter named
    # a package folder's build backend run to read its metadata (F146)
    "poetry init": dict.fromkeys(("--dependency", "--dev-dependency"), RUNS),
    "poetry debug resolve": {"": RUNS},
    # Outside the project (from their manuals, F120): the caches, environments, Pythons and
    # tools they keep for the user are deleted, filled or replaced; `poetry source add`
    # chooses where the project's packages come from, as `--registry` does.
    **{
        key: {"": _USERS_FILES}
        for key in ("poetry cache clear", "poetry env remove", "poetry python remove")
        + ("uv cache clean", "uv cache prune", "uv python uninstall", "uv tool uninstall")
        + ("yarn cache clean", "pnpm store prune", "pnpm store add", "pnpm cache delete")
    },
    **{key: {"": _ONTO_PATH} for key in ("uv tool upgrade", "poetry python install")},
    "poetry source add": {"": CONFIGURES},
    "uv python pin": {"--global": CONFIGURES},  # the user's `.python-version`, for every project
    **{
        f"poetry {sub}": {"-o": WRITES_FILES, "--output": WRITES_FILES}
        for sub in ("build", "export")
    },
    # the build backend's settings (setuptools' `--build-option=--bdist-dir DIR` builds in DIR
    # and deletes it) (F146)
    "poetry build": dict.fromkeys(("-o", "--output"), WRITES_FILES)
    | dict.fromkeys(("-c", "--config-settings", "--config-setting"), CONFIGURES),
    # tox 4's `devenv PATH` (`d`) and `quickstart PATH` write where they are told (F117)
    **{f"tox {sub}": {"": WRITES_FILES} for sub in ("devenv", "d", "quickstart", "q")},
    "tox e": {"": RUNS},  # `exec`'s alias (F121)
    # the configuration it prints, into a file; `man` runs man and links its page (F122)
    **{
        f"tox {sub}": dict.fromkeys(("-o", "--output-file"), WRITES_FILES)
        for sub in ("config", "c")
    },
    "tox man": {"": "runs man and writes a link to its page in the user's files"},
    # every go command's `-C DIR`: another folder's module, go.mod and go.sum rewritten (F117)
    **{f"go mod {sub}": {"-C": RUNS} for sub in ("tidy", "download", "vendor", "edit", "init")},
    # another go.mod (and its go.sum) read and rewritten (F123)
    **{
        f"go mod {sub}": {"-C": RUNS, "-modfile": WRITES_FILES}
        for sub in ("tidy", "download", "vendor", "edit", "graph", "verify", "why")
    },
    "tox": dict.fromkeys(("-c", "--conf", "--root", "--workdir", "--installpkg"), RUNS)
    # A development environment, the results, provisioning's metadata where they are told; the
    # interpreters under `--discover PATH` are run to learn what they are.
    | dict.fromkeys(("--devenv", "--result-json", "--no-provision"), WRITES_FILES)
    | {"--discover": RUNS}
    | {"--force-dep": RUNS}  # `--force-dep 'pkg @ URL'`: installed and built from the URL (F117)
    | {"-x": RUNS, "--override": RUNS},  # `-x testenv.commands=CMD`: the commands it runs
    **{
        f"docker {sub}": {
            **dict.fromkeys(("-v", "--volume", "--mount", "--privileged", "--cap-add"), RUNS),
            **dict.fromkeys(("--device", "--pid", "--ipc", "--network", "--net"), RUNS),
            **dict.fromkeys(("--security-opt", "--userns", "--uts"), RUNS),
            # (F172, docker's manual) another container's volumes (its binds of the host
            # among them), the host's cgroup namespace; the container's id written anywhere
            **dict.fromkeys(("--volumes-from", "--cgroupns"), RUNS),
            "--cidfile": WRITES_FILES,
            # (F173, docker's manual) a host file's lines handed to the container as its
            # environment (or labels); host ports (every interface unless one is named)
            # served by whatever runs in the container
            **dict.fromkeys(("--env-file", "--label-file"), SENDS),
            **dict.fromkeys(("-p", "--publish", "-P", "--publish-all"), _FORWARDS),
        }
        for sub in ("run", "create", "exec")
    },
    # (F172, docker's and buildx's manuals: no buildx where the oracle runs) what a build
    # writes where it is told (`--output type=local,dest=/tmp/x`, `-o /tmp/x`; so does
    # `docker save -o`, an unknown subcommand reading this table), pushes, or hands its RUN
    # steps (a host file, the SSH agent, the host's network, a privileged sandbox). A known
    # subcommand no longer reads run's options: `--network`, `--security-opt` are here too.
    "docker build": dict.fromkeys(("-o", "--output", "--iidfile", "--metadata-file"), WRITES_FILES)
    | {"--cache-to": WRITES_FILES, "--push": SENDS}
    | dict.fromkeys(("--secret", "--ssh", "--build-context"), SENDS)
    | dict.fromkeys(("--network", "--security-opt", "--allow"), RUNS),
    # (F172, sandbox: kubectl 1.32) a kubeconfig's `users[].user.exec.command` runs to get a
    # token (`kubectl get pods --kubeconfig k.yaml` ran a planted program; KUBECONFIG= is
    # read alike); `--server` sends the current context's token to the address it names;
    # its cache folder (kubectl's manual). kubectl takes its global options anywhere.
    "kubectl": {"--kubeconfig": RUNS, "--cache-dir": WRITES_FILES}
    | dict.fromkeys(("-s", "--server"), SENDS),
    # (F172, sandbox: terraform 1.x) `plan -out /tmp/p`, `-generate-config-out=/tmp/g.tf`
    # wrote /tmp; `-chdir=DIR` (`terraform`, below): another folder's configuration and the
    # providers it runs
    "terraform plan": dict.fromkeys(("-out", "-generate-config-out"), WRITES_FILES),
    # (F172, helm's manual: not installed where the oracle runs) the post-renderer is a
    # program run on the rendered manifests; `--output-dir` writes there; a kubeconfig (its
    # exec plugins run, as kubectl's); a plugin's install hooks run
    "helm": {"--post-renderer": RUNS, "--output-dir": WRITES_FILES, "--kubeconfig": RUNS},
    **{f"helm plugin {sub}": {"": RUNS} for sub in ("install", "update")},
    # (F172, gh's manual: not installed where the oracle runs) a pull request's files put in
    # the working tree whatever their names (a git checkout of a commit); the user's token;
    # an extension (code run as `gh NAME`); an alias (`--shell`), an editor, a git helper set
    **{f"gh {sub}": {"": _ONTO_PATH} for sub in ("extension install", "ext install")},
    "gh pr checkout": {"": WRITES_FILES},
    "gh auth token": {"": _REVEALS},
    **{f"gh {sub}": {"": CONFIGURES} for sub in ("alias set", "config set", "auth setup-git")},
    # (F172, the AWS CLI's manual) a profile's `credential_process` is a program every later
    # aws command runs; `configure get` prints the keys
    "aws configure set": {"": CONFIGURES},
    "aws configure get": {"": _REVEALS},
    # (F173, docker's, kubectl's and gh's manuals) copies between the host's files and a
    # container's or a pod's, either way (`docker cp c:/x /tmp/x`, `kubectl cp /etc/x pod:/x`);
    # a listener that forwards to the cluster with the user's token; a host file's lines
    # handed to the container as its environment; host ports served by the container; an
    # API request, a gist or a release asset made from local files
    **{f"{tool} cp": {"": WRITES_FILES} for tool in ("docker", "kubectl")},
    **{f"kubectl {sub}": {"": _FORWARDS} for sub in ("proxy", "port-forward")},
    "docker-compose": {},  # read by _docker_compose, as `docker compose`
    "gh api": {"--input": SENDS},
    **{
        f"gh {kind} {sub}": dict.fromkeys(("-F", "--body-file"), SENDS)
        for kind in ("issue", "pr")
        for sub in ("create", "comment", "edit")
    },
    **{
        f"gh release {sub}": dict.fromkeys(("-F", "--notes-file"), SENDS)
        for sub in ("create", "edit")
    },
    "docker compose": {},  # its options are compose's, not run's: read by _docker_compose
    **{f"gh gist {sub}": {"": SENDS} for sub in ("create", "new")},
    "gh gist edit": dict.fromkeys(("-a", "--add"), SENDS),
    "gh release upload": {"": SENDS},
    # (F174, the AWS CLI's manual) an s3 transfer with a local operand: a local source is
    # read and uploaded (`s3 cp /etc/passwd s3://b/x`), a local destination written (write
    # probes, see written_operands), `mv` deletes its local source; a `file://`/`fileb://`
    # parameter value is a local file read and sent (`s3api put-object --body F` alike):
    # _aws_local_files.
    # (F174, terraform's manual) state written where `-state`/`-state-out`/`-backup` say
    # (apply, refresh, import, taint, state mv/rm); providers run from `-plugin-dir`, copied
    # to the folder `providers mirror` names; `login` stores an API token in the user's home.
    "terraform": {"-chdir": RUNS, "-plugin-dir": RUNS}
    | dict.fromkeys(("-state", "-state-out", "-backup"), WRITES_FILES),
    "terraform providers mirror": {"": WRITES_FILES},
    # s3api's blob parameters take a local path with no `file://` (`put-object --body F`)
    **{f"aws s3api {sub}": {"--body": SENDS} for sub in ("put-object", "upload-part")},
    **{f"terraform {sub}": {"": CONFIGURES} for sub in ("login", "logout")},
    # (F174, pipx's manual: not installed where the oracle runs) a package downloaded and its
    # program run (`run`, as uvx and `npm exec`), or put on the user's PATH (`install`,
    # `inject`, `upgrade`...); pip run in one of its environments; the shell's rc files edited
    "pipx run": {"": RUNS},
    "pipx runpip": {"": RUNS},
    **{
        f"pipx {sub}": {"": _ONTO_PATH}
        for sub in ("install", "install-all", "inject", "upgrade", "upgrade-all", "upgrade-shared")
        + ("reinstall", "reinstall-all", "pin", "unpin")
    },
    **{f"pipx {sub}": {"": DELETES} for sub in ("uninstall", "uninstall-all", "uninject")},
    "pipx ensurepath": {"": CONFIGURES},
    # (F174) `pip download -d DIR`, `pip wheel -w DIR`: the packages land in DIR, anywhere
    "pip download": dict.fromkeys(("-d", "--dest", "--destination-dir", "--save-to"), WRITES_FILES),
    "pip wheel": dict.fromkeys(("-w", "--wheel-dir"), WRITES_FILES),
    # `-m` deletes each file it adds (seen: the source gone; `zip -m a.zip .git/config`); a
    # `-TT` glued to its command, or in a cluster, is read by _zip_unzip_command.
    "zip": {"-TT": RUNS, "--unzip-command": RUNS, "-m": DELETES, "--move": DELETES},
    # `-:` keeps an entry's `../` (seen: `../../tmp/esc` written in /tmp).
    "unzip": {"-:": WRITES_FILES},
    "cmake": {
        # `cmake -E rm -rf …`, `-E env CMD`, `-E copy …`: its command-line tools act.
        **dict.fromkeys(("-E", "-P", "-C", "--toolchain"), RUNS),
        **dict.fromkeys(("--system-information", "--graphviz", "--install"), WRITES_FILES),
        **dict.fromkeys(("--trace-redirect", "--profiling-output"), WRITES_FILES),
        # `-DCMAKE_C_COMPILER=PROG`, `-DCMAKE_PROJECT_INCLUDE=F`, `-DGIT_EXECUTABLE=PROG`: cache
        # entries choose the programs configuring runs (only a few inert ones: _CMAKE_INERT).
        "-D": RUNS,
        # Its internal modes read a CMake script as -P does, or re-run the generate step.
        **dict.fromkeys(("--check-build-system", "--check-stamp-file"), RUNS),
        **dict.fromkeys(("--check-stamp-list", "--regenerate-during-build"), RUNS),
    },
    # Maven's `-D` sets system properties of the JVM running the build: `user.home`,
    # `maven.repo.local`, `java.io.tmpdir` move where it writes (only a few inert ones are
    # let through: see _maven_properties); `--log-file`, abbreviated, is its log (OUTPUT_OPTIONS).
    "mvn": {"-D": CONFIGURES, "--define": CONFIGURES, "--log-file": WRITES_FILES}
    # Maven strips an option's dashes: `--D=name=value` is `-D` (F147)
    | {"--D": CONFIGURES}
    # Another folder's pom (its plugins run), settings naming `localRepository` and mirrors.
    | dict.fromkeys(("-f", "--file", "-s", "--settings", "-gs", "--global-settings"), RUNS)
    | dict.fromkeys(("-t", "--toolchains", "-gt", "--global-toolchains"), RUNS),
    "ctest": {
        **dict.fromkeys(("-S", "-SP", "-SR", "--script", "--script-new-process"), RUNS),
        **dict.fromkeys(("--build-and-test", "--test-command", "--extra-submit"), RUNS),
        **dict.fromkeys(("-O", "--output-log", "--output-junit"), WRITES_FILES),
        "--launch": RUNS,  # `ctest --launch -- CMD`: the build launcher runs CMD
        # `--overwrite MakeCommand=PROG`: the dashboard steps' commands (`-T Build`, Update...)
        "--overwrite": RUNS,
    },  # and its dashboards: see _ctest_dashboards
    "file": {
        "-C": WRITES_FILES,  # writes NAME.mgc where it runs
        "--compile": WRITES_FILES,
        # It looks inside compressed files by running gzip, uncompress, zstd, lz4, xz...
        **dict.fromkeys(("-z", "--uncompress", "-Z", "--uncompress-noreport"), RUNS),
    },
    "tree": {"-o": WRITES_FILES, "-R": WRITES_FILES},  # -R: 00Tree.html in every folder
    "dd": {},
    "gcc": {
        **dict.fromkeys(("-wrapper", "-B", "-fplugin", "-specs", "--specs", "-Xlinker"), RUNS),
        **dict.fromkeys(("-Wl", "-Xassembler", "-Xpreprocessor", "-fplugin-arg"), RUNS),
        **dict.fromkeys(("-Wa", "-Wp"), RUNS),  # `-Wa,-a=FILE`, `-Wp,-MD,FILE` write too
        # `-fcompare-debug=OPTS`: OPTS are more driver options, `-B` and `-wrapper` too (F115)
        "-fcompare-debug": RUNS,
        **dict.fromkeys(("-MF", "-save-temps", "-dumpdir", "-dumpbase", "-aux-info"), WRITES_FILES),
        "-fdump-": WRITES_FILES,  # `-fdump-tree-original=FILE`, any pass's dump
        "-fprofile-note": WRITES_FILES,  # `-fprofile-note=FILE`: the .gcno -ftest-coverage writes
        "-fmodule-mapper": RUNS,  # g++'s `-fmodule-mapper=|PROG`: the module mapper it starts
        "-T": WRITES_FILES,  # a linker script: its `OUTPUT(FILE)` is where the linker writes
        # clang's (the `clang` rule shares this table; from clang's manual, not installed where
        # the oracle runs): cc1's and LLVM's options load plugins, the linker it runs, files.
        **dict.fromkeys(("-Xclang", "-mllvm", "-fpass-plugin", "--ld-path", "-fuse-ld"), RUNS),
        **dict.fromkeys(("-MJ", "-ftime-trace", "-fcrash-diagnostics-dir"), WRITES_FILES),
        **dict.fromkeys(("-foptimization-record-file", "-fproc-stat-report"), WRITES_FILES),
        "-fmodules-cache-path": WRITES_FILES,
        "--config": "reads more options from a file",
        # clang finds its linker and assembler in the GCC installation named (its bin folder).
        **dict.fromkeys(("--gcc-toolchain", "--gcc-install-dir"), RUNS),
        "-fmodule-output": WRITES_FILES,  # `-fmodule-output=FILE`: the module's interface
        **dict.fromkeys(("-fopt-info", "-fopt-info-"), WRITES_FILES),  # `-fopt-info-all=FILE`
        "@": _RESPONSE_FILE,  # `gcc @args`: a response file
        # (F124, run in the sandbox) gcc's timing report appended to a file; clang's options
        # handed to its analyzer, its own frontend's command line, the folder its tools come
        # from, another driver's spellings (`--driver-mode=cl`: `/Fo`, `/clang:`); the files
        # and folders its diagnostics, compilation-database fragments and migrators write.
        "-time": WRITES_FILES,
        **dict.fromkeys(("-Xanalyzer", "-cc1", "-cc1as", "-ccc-", "--driver-mode"), RUNS),
        **dict.fromkeys(("--serialize-diagnostics", "-serialize-diagnostics"), WRITES_FILES),
        "-gen-cdb-fragment-path": WRITES_FILES,
        # (F143, run in the sandbox) clang's folder for relative outputs; a sysroot whose GCC
        # layout holds the ld and as it runs; CUDA's and AMD GPU's tools and HIP's pass
        # plugin; gcc's LTO partition list
        **dict.fromkeys(("-working-directory", "--sysroot", "--cuda-path", "--ptxas-path"), RUNS),
        **dict.fromkeys(("--amdgpu-arch-tool", "--nvptx-arch-tool", "--hipspv-pass-plugin"), RUNS),
        "-fltrans-output-list": WRITES_FILES,
    },
    "rustc": {"-C": RUNS, "--codegen": RUNS, "-Z": RUNS, "--out-dir": WRITES_FILES}
    # `rustc --version -v @F`: F's `-Zcodegen-backend=X.so` is loaded to print its version (N1)
    | {"@": _RESPONSE_FILE},
    "xxd": {},
    "unittest": {},  # `python -m unittest venv.__main__`: see _unittest_modules
    # They compile the files a list names (`-i -`: their input), writing next to each.
    "compileall": {"-i": WRITES_FILES},
    "py_compile -": {"": WRITES_FILES},
    "vim": dict.fromkeys(("-c", "+", "-S", "--cmd", "-u", "-y"), RUNS)
    # (F169, sandbox) `-s F` types F's keys in normal mode (its `:!touch PWNED` ran); in
    # ex mode (`-es`) it is the silent flag of a mode reading Ex commands from standard input
    # (see _vim_ex_mode). `--remote-expr`, `--remote-send`, `--remote…` have the vim a server
    # name reaches evaluate, type or open them (vim takes any word starting `--remote`).
    | {"-s": RUNS, "--remote": RUNS},
    # (F169, sandbox) a library it loads: `-engine /workspace/e.so`, `-provider-path DIR`
    # (its constructor ran), a configuration (it loads engines and providers), `engine dynamic
    # -pre SO_PATH:F -pre LOAD`; `-provider` and engine ids named by a path: _openssl_modules.
    # The files it writes are write probes (OUTPUT_OPTIONS).
    "openssl": dict.fromkeys(("-engine", "-ssl_client_engine", "-provider-path", "-config"), RUNS),
    "openssl engine": dict.fromkeys(("-pre", "-post"), RUNS),
    # (F171, sandbox) a server listening on every address: `s_server -WWW` served
    # /workspace/notes.txt to a client; `ocsp -port` answers (signs) for whoever connects
    "openssl s_server": {"": _LISTENS},
    "openssl ocsp": {"-port": _LISTENS},
    # (F171, sandbox) `--filter=CMD` runs CMD by $SHELL on each piece (seen: bash -c CMD)
    "split": {"--filter": RUNS},
    "mknod": {},  # its TYPE operand: _mknod_devices
    "sqlite3": {"-cmd": RUNS, "-init": RUNS, ".": "runs a dot-command (.shell, .output ...)"}
    # (F176, manual) `-A ARGS` runs `.archive ARGS`: `-Ax` writes the archive's files where
    # their names lead; its SQL's writing functions and statements: _sqlite_sql
    | {"-A": WRITES_FILES},
    # (F181, DuckDB 1.4's CLI arguments) sqlite3's shell by descent: `-cmd`, `-init` and `-f`
    # run a script, dot-commands (`.shell`, `.output`), `-unsigned` lets LOAD take any library;
    # its SQL that writes files or loads extensions: _duckdb_sql
    "duckdb": {"-cmd": RUNS, "-init": RUNS, "-f": RUNS, "-unsigned": RUNS}
    | {".": "runs a dot-command (.shell, .output ...)"},
    # (F176, psql 15's manual) a script file of SQL and meta-commands (`\\! CMD`, `\\o F`);
    # `-o`/`-L` are write probes; `-c`'s meta-commands: _psql_meta_commands
    "psql": {"-f": RUNS, "--file": RUNS},
    # (F176, MySQL 8's manual) a pager run for each result, an option file (its `pager`,
    # `plugin-dir`), client plugins loaded from a folder, a log written, local files sent
    # to the server by LOAD DATA LOCAL; `-e`'s client commands: _mysql_client_commands
    "mysql": {
        **dict.fromkeys(("--pager", "--defaults-file", "--defaults-extra-file"), RUNS),
        "--plugin-dir": RUNS,
        "--tee": WRITES_FILES,
        **dict.fromkeys(("--local-infile", "--load-data-local-dir"), SENDS),
    },
    # (F176, GnuPG 2.2's manual) programs it runs, another home (gpg.conf names them), the
    # user's keyrings changed or sent, keys fetched; `-o`/`--output` is a write probe
    "gpg": {
        **dict.fromkeys(("--photo-viewer", "--exec-path", "--agent-program"), RUNS),
        **dict.fromkeys(("--dirmngr-program", "--homedir", "--options"), RUNS),
        **dict.fromkeys(("--keyring", "--primary-keyring", "--trustdb-name"), CONFIGURES),
        **dict.fromkeys(("--import", "--fast-import", "--import-ownertrust"), CONFIGURES),
        **dict.fromkeys(("--edit-key", "--sign-key", "--lsign-key", "--passwd"), CONFIGURES),
        **dict.fromkeys(("--change-passphrase", "--update-trustdb", "--gen-key"), CONFIGURES),
        **dict.fromkeys(("--generate-key", "--full-gen-key", "--full-generate-key"), CONFIGURES),
        **dict.fromkeys(("--quick-gen-key", "--quick-generate-key", "--quick-add-key"), CONFIGURES),
        **dict.fromkeys(
            ("--quick-add-uid", "--quick-revoke-uid", "--quick-revoke-sig"), CONFIGURES
        ),
        **dict.fromkeys(
            ("--quick-sign-key", "--quick-lsign-key", "--quick-set-expire"), CONFIGURES
        ),
        **dict.fromkeys(("--quick-set-primary-uid", "--quick-set-ownertrust"), CONFIGURES),
        **dict.fromkeys(("--delete-keys", "--delete-secret-keys"), DELETES),
        "--delete-secret-and-public-key": DELETES,
        **dict.fromkeys(("--recv-keys", "--receive-keys", "--refresh-keys"), SENDS),
        **dict.fromkeys(("--fetch-keys", "--locate-external-keys", "--locate-keys"), SENDS),
        **dict.fromkeys(("--auto-key-retrieve", "--auto-key-locate"), SENDS),
        **dict.fromkeys(("--send-keys", "--keyserver", "--keyserver-options"), SENDS),
        **dict.fromkeys(("--export-secret-keys", "--export-secret-subkeys"), _REVEALS),
        # (F179, seen here with gpg 2.2.40) decrypting writes the file the message names, in
        # the working directory: any name, `conftest.py` or `.envrc` as well
        "--use-embedded-filename": WRITES_FILES,
    },
    # (F180, mongosh 2's --help and manual) JavaScript run after connecting, which may
    # require('child_process'); a `.js` operand too (_mongosh_scripts), and its standard input
    "mongosh": dict.fromkeys(("--eval", "-f", "--file"), RUNS),
    # (F180) no option of redis-cli's acts; the server's commands do: _redis_commands
    "redis-cli": {},
    # (F176, OpenSSH 9's manual) `-D`/`-w` load the PKCS#11 or FIDO library named; `-R` and
    # `-H` rewrite known_hosts, `-A` writes the host keys in /etc/ssh; the key files written:
    # _ssh_keygen_written
    "ssh-keygen": {"-D": RUNS, "-w": RUNS, "-R": WRITES_FILES, "-H": WRITES_FILES}
    | {"-A": WRITES_FILES},
}

# git runs the editor (core.editor, $VISUAL, $EDITOR: `editor`, vi) on a message, a patch or a
# todo list: with these options, and for a commit, an annotated tag or a note given no message
# (see _git_editor). `--patch`'s hunks take an `e` answer (read from stdin) that edits one.
_EDITS = "runs the editor on a message, a patch or a todo list"
_EDIT = {"-e": _EDITS, "--edit": _EDITS}
_PATCH = {"-p": _EDITS, "--patch": _EDITS}
_INTERACTIVE = {"-i": _EDITS, "--interactive": _EDITS}
_GIT_EDITING: dict[str, dict[str, str]] = {
    "git commit": {**_EDIT, **_PATCH, "-c": _EDITS, "--reedit-message": _EDITS}
    | {"--interactive": _EDITS},
    **{f"git {sub}": _EDIT for sub in ("tag", "pull", "cherry-pick", "revert")},
    "git merge": {**_EDIT, "--continue": _EDITS},  # it runs `git commit` on MERGE_MSG
    # `bisect view PROG …` runs PROG (F125)
    **{f"git bisect {sub}": {"": RUNS} for sub in ("view", "visualize")},
    # git's plumbing importer: marks files a stream names once unsafe features are on (F125);
    # and whatever its stream says, `option git export-pack-edges=FILE` (no unsafe feature
    # needed) opens FILE for appending wherever it is: its input is no word of the script
    "git fast-import": {
        "": "its input stream's `option git export-pack-edges=FILE` appends to FILE anywhere",
        "--allow-unsafe-features": WRITES_FILES,
    }
    | dict.fromkeys(("--export-pack-edges", "--export-marks"), WRITES_FILES),
    # what git reads for an object from now on: every later checkout, stash or merge lands
    # the replacement (an empty file's blob made a payload, F157)
    "git replace": {**_EDIT, "": "changes the content git gives an object from now on"},
    "git add": {**_EDIT, **_PATCH, **_INTERACTIVE},
    **{f"git {sub}": _PATCH for sub in ("checkout", "restore", "reset", "stash", "stash push")},
    # `git stash list -p` and `git stash show -p` print patches: no `--patch` of push's there.
    **{f"git stash {sub}": {} for sub in ("list", "show")},
    # `--continue` after a conflict: `git commit -e` on the message (F125)
    "git rebase": {**_INTERACTIVE, "--edit-todo": _EDITS, "--continue": _EDITS},
    "git am": _INTERACTIVE,
    "git notes edit": {"": _EDITS},
    "git config": _EDIT,  # `git config --get -e --no-get`: git's configuration, edited (F125)
    "git config edit": {"": _EDITS},
    **{f"git notes {sub}": {"-c": _EDITS, "--reedit-message": _EDITS} for sub in ("add", "append")},
}
# Verifying a signature runs gpg (so do `%G?`, `%GS`... in a format: see _git_signature_formats).
_GIT_VERIFYING: dict[str, dict[str, str]] = {
    **{f"git {sub}": {"": _VERIFIES} for sub in ("verify-commit", "verify-tag")},
    "git tag": {"-v": _VERIFIES, "--verify": _VERIFIES},
    **{f"git {sub}": {"--verify-signatures": _VERIFIES} for sub in ("merge", "pull")},
}
# The test binary reads go test's flags with a `test.` prefix (`-args -test.coverprofile=F`,
# from go's manual: go is not installed where the oracle runs); `-fuzzcachedir` is its cache.
ACTING["go test"] |= {
    f"-test.{option[1:]}": what
    for option, what in ACTING["go test"].items()
    if what == WRITES_FILES and option != "-o"
} | {"-test.gocoverdir": WRITES_FILES, "-fuzzcachedir": WRITES_FILES}
# the test log `-test.testlogfile=F` (the go command's own use), the fuzz cache by its other
# spelling (F117)
ACTING["go test"] |= dict.fromkeys(("-test.testlogfile", "-test.fuzzcachedir"), WRITES_FILES)
# Go 1.16-1.19 (Debian 12's) still act on the deprecated `-i`: the dependencies installed into
# GOROOT/pkg and GOPATH/pkg (F137)
for _sub in ("build", "test"):
    ACTING[f"go {_sub}"]["-i"] = WRITES_FILES
# `git switch --orphan x` empties the working tree: every tracked file deleted, the project's
# `.claude/settings.json` and hooks among them (F148)
ACTING["git switch"] = ACTING.get("git switch", {}) | {"--orphan": WRITES_FILES}
ACTING["dotnet build"] |= {"-s": CONFIGURES}  # `--source`
# vstest's settings (adapters and data collectors loaded from any path), adapters, and the
# test host's environment (`-e DOTNET_STARTUP_HOOKS=x.dll` runs x.dll in it).
ACTING["dotnet test"] |= dict.fromkeys(("-s", "--settings", "-a", "--test-adapter-path"), RUNS)
ACTING["dotnet test"] |= dict.fromkeys(("-e", "--environment"), RUNS)
# (F177, the manuals) node's diagnostics go where they are told (profiles, reports, heap
# snapshots, warnings, the V8 log, trace events, a test reporter's output, a startup snapshot,
# localStorage's file, a single-executable's blob); a test reporter or global setup module, an
# OpenSSL configuration (its engines and providers are libraries loaded), a configuration or
# env file (NODE_OPTIONS: `--require` anything) run code the rule does not name.
ACTING["node"] |= dict.fromkeys(
    ("--cpu-prof-dir", "--cpu-prof-name", "--heap-prof-dir", "--heap-prof-name")
    + ("--diagnostic-dir", "--redirect-warnings", "--report-directory", "--report-dir")
    + ("--report-filename", "--logfile", "--trace-event-file-pattern", "--snapshot-blob")
    + ("--test-reporter-destination", "--localstorage-file", "--experimental-sea-config"),
    WRITES_FILES,
) | dict.fromkeys(("--test-global-setup", "--openssl-config"), RUNS)
ACTING["node"] |= dict.fromkeys(
    ("--experimental-config-file", "--env-file", "--env-file-if-exists"), CONFIGURES
)
# (F177) ruby's and perl's `-I DIR` put DIR's libraries before the project's (`require`,
# `use` load them); ruby's `-C DIR` runs the script of that folder; perl's `-d` is its
# debugger (the Perl its stdin holds runs; `-d:MOD` loads Devel::MOD)
ACTING["ruby"] |= {"-I": RUNS, "-C": RUNS}
ACTING["perl"] |= {"-I": RUNS, "-d": RUNS}
# (F177, cargo's manual) a crate uploaded, its owners changed, a version yanked; the registry
# token stored or deleted; programs removed from ~/.cargo/bin
ACTING.update({f"cargo {sub}": {"": SENDS} for sub in ("publish", "owner", "yank")})
ACTING.update({f"cargo {sub}": {"": CONFIGURES} for sub in ("login", "logout")})
ACTING["cargo uninstall"] = {"": _USERS_FILES}
# (F177, go's manual) `go bug` opens the browser; `go telemetry on|local|off` writes the
# user's telemetry mode (`on` uploads reports); `go mod vendor -o DIR` fills DIR; `go clean
# -cache|-modcache|-fuzzcache` empties the user's caches; `go doc -http` downloads and runs
# pkgsite and opens the browser
ACTING["go bug"] = {"": RUNS}
ACTING["go telemetry"] = {}
ACTING.update({f"go telemetry {mode}": {"": CONFIGURES} for mode in ("local", "off")})
ACTING["go telemetry on"] = {"": SENDS}
ACTING["go mod vendor"] = ACTING["go mod vendor"] | {"-o": WRITES_FILES}
# (`go clean` takes the build flags; `-i` removes what `go install` put in GOBIN)
ACTING["go clean"] = ACTING["go build"] | {"-C": RUNS, "-i": WRITES_FILES}
ACTING["go clean"] |= dict.fromkeys(("-cache", "-modcache", "-fuzzcache"), _USERS_FILES)
ACTING["go doc"] = {"-http": RUNS, "-C": RUNS}
# (F177) java's options that run a command or load code (an agent, a native library, another
# VM options file), and the files its logs, dumps and recordings go to: see _java_options
ACTING["java"] = {}
for _tables in (_GIT_EDITING, _GIT_VERIFYING):
    ACTING.update({key: {**ACTING.get(key, {}), **table} for key, table in _tables.items()})

# git's revision and diff options: every subcommand built on them reads them (`git log`,
# `reflog`, `shortlog`, `blame`, `stash show`, `stash list`, `diff-tree`...), so every git
# subcommand's table has them.
ACTING.update({key: {**_LOG_DIFF, **table} for key, table in ACTING.items() if key[:4] == "git "})

# Short option letters that take a value: letters after them in `-abc` are that value.
VALUED_LETTERS = {
    "pytest": "kmcpoWrn",
    "git": "cCm",  # `git commit -mSave`: the message, no `-S`
    "diff": "CDFILSUWxX",
    "fd": "tedESjcxXo",
    "sort": "kotST",
    "date": "dfrI",  # `-Iseconds`: -I's glued format, no `-s`
    "tar": "fCbgHIKLNTVX",
    "ssh": "bcDEeFIiJLlmOopQRSWw",
    "curl": "oDcKTdFuHAeEXxrwYyzb",
    "wget": "OoaPeUtTw",
    "sed": "efl",
    "awk": "FvfiloadWe",
    "make": "fCIjlOWo",
    "python": "cmWXQ",
    "rsync": "eBTfM",
    "cargo": "ZCpj",
    "node": "erp",
    "perl": "eEMIix",
    "ruby": "erICEFi",
    "compileall": "rdspxijoe",
    "file": "efFmP",  # `file -fz`: the names are read from the file `z`
    "vim": "Vq",  # `-V1/tmp/scripts`, `-qerrors`: the rest of the word is the value
    # zip's one-letter valued options with no longer option starting with the letter (`-n`
    # has `-nw`, `-s` `-sf`...: the letters after them stay read, as options)
    "zip": "bOPZt",
    "unzip": "dP",
}

# Programs whose operands are files they write: "all", "last" (the destination; or
# the -t/--target-directory value), "after-first" (chmod MODE FILE...), "second" (uniq),
# "first" (mknod NAME TYPE...).
WRITES = {
    **dict.fromkeys(("tee", "touch", "mkdir", "rm", "rmdir", "unlink", "shred", "mkfifo"), "all"),
    **dict.fromkeys(("truncate", "mv"), "all"),
    **dict.fromkeys(("cp", "ln", "link", "install", "rsync"), "last"),
    # between local paths scp runs `cp` (seen: `cp -- notes.txt /tmp/scpcopy`), and a remote
    # source is copied to the local last operand alike; a remote one is not written here
    "scp": "last",
    **dict.fromkeys(("chmod", "chown", "chgrp"), "after-first"),
    **dict.fromkeys(("uniq", "xxd"), "second"),
    # (F171, sandbox) `split notes.txt /tmp/p` wrote /tmp/paa: its second operand is the
    # prefix of the pieces it writes; `mknod /tmp/f p` made the FIFO there (NAME TYPE...)
    "split": "second",
    "mknod": "first",
    # They write next to what they compress or decompress.
    **dict.fromkeys(("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd"), "all"),
    # python -m compileall DIR / py_compile FILE write __pycache__ next to what they compile.
    **dict.fromkeys(("compileall", "py_compile"), "all"),
}
# Programs that run the project's own files (tests, build scripts, configuration code).
# A script that writes files and then runs one of them is ASK: the write may be the code.
RUNS_PROJECT_CODE = frozenset(
    {"pytest", "python", "make", "npm", "yarn", "pnpm", "npx", "node", "cargo", "go", "tox"}
    | {"nox", "mvn", "gradle", "ruby", "rake", "bundle", "perl", "php", "deno", "bun", "cmake"}
    | {"ctest", "jest", "vitest", "mocha", "dotnet", "uv", "poetry", "pipenv", "hatch", "mypy"}
    | {"pylint", "eslint", "prettier", "webpack", "vite", "babel", "rollup", "coverage"}
    | {"sphinx-build", "mkdocs", "gradlew", "./gradlew", "ninja", "meson", "bazel", "just"}
    # `pip install .` builds the project: its setup.py, its build backend's hooks run.
    | {"pip"}
    # Spec files, test files, `[flake8:local-plugins]` paths, golangci-lint's custom plugins.
    | {"rspec", "playwright", "flake8", "golangci-lint"}
    # (F174, terraform's manual) an `external` data source's program runs at plan (console,
    # apply too), providers and provisioners alike: a *.tf written before it may be that code
    | {"terraform"}
)
# Programs that run no project code, but whose project configuration decides where they
# write: ruff's `cache-dir` moves its cache anywhere (ruff made /etc/rc after
# `printf 'cache-dir = "/etc/rc"' > ruff.toml`, F160; black's `[tool.black]` takes its
# command-line options, what it formats among them: held alike, not run). A script that
# writes such a file, or files it cannot name (a folder's, a glob's), and then runs one asks.
CONFIGURED_BY_PROJECT: dict[str, frozenset[str]] = {
    "ruff": frozenset({"ruff.toml", ".ruff.toml", "pyproject.toml"}),
    "black": frozenset({"pyproject.toml"}),
    # tsc with no input files compiles the project of the closest tsconfig.json (the current
    # folder's, then its parents'): its `outDir`, `outFile`, `declarationDir`,
    # `tsBuildInfoFile` are where it writes, anywhere (TypeScript's tsconfig reference).
    "tsc": frozenset({"tsconfig.json"}),
    # git in a folder with no `.git` takes the folder itself for a bare repository when it
    # holds HEAD, objects/ and refs/, and reads its `config` (`remote.x.uploadpack` ran on
    # `git fetch x` in the sandbox): only the files of the folder it runs in count (a `cd`
    # or `-C` before git is a concern of its own).
    "git": frozenset({"config", "head"}),
}
# Programs that read the configuration above only in the folder they run in.
CONFIGURED_WHERE_IT_RUNS = frozenset({"git"})


def may_configure(program: str, written: str, folders: Iterable[str | None] = ()) -> bool:
    """Whether a write of `written` (a path as the reading names it) may be a configuration
    file `program` reads from the project; `folders`: where the script may be running (None:
    the tool's working directory), for the programs that read it only there."""
    names = CONFIGURED_BY_PROJECT.get(program, frozenset())
    folder, _, last = written.rstrip("/").rpartition("/")
    last = last.lower()
    if program in CONFIGURED_WHERE_IT_RUNS and not any(
        normalise_path(folder or ".") == normalise_path(cwd or ".") for cwd in folders
    ):
        return False
    return last in names or last == "<files>" or any(c in last for c in "*?[")


# Programs that write where they run without naming the file (a download, an archive's
# files, a.out): after a `cd`, that directory must be writable by the rules.
WRITES_WHERE_IT_RUNS = RUNS_PROJECT_CODE | {"wget", "curl", "unzip", "tar", "gcc", "git", "split"}
WRITES_WHERE_IT_RUNS |= {"patch"}  # the files its diff names
# Written operands that create, remove or re-mode files without putting content in them.
WRITES_NO_CONTENT = frozenset(
    {"touch", "mkdir", "rm", "rmdir", "unlink", "shred", "mkfifo", "chown", "chgrp", "truncate"}
    | {"mknod"}
)
STARTS_A_JVM = frozenset(
    {"java", "javac", "jar", "jshell", "mvn", "mvnw", "gradle", "gradlew", "sbt", "scala"}
    | {"kotlin", "kotlinc", "ant", "lein", "clojure", "keytool"}
)
# Options whose value is a file the program writes (a compiler's -o): write probes.
OUTPUT_OPTIONS = {
    "gcc": ("-o",),
    "rustc": ("-o",),
    "unzip": ("-d",),
    # (F169, sandbox) `-writerand` wrote /tmp; keys, sessions, TLS secrets, messages,
    # certificates, OCSP requests and responses, a CA's serial file and its new certificates.
    # openssl reads `--out` as `-out` and `-out=F` (see _openssl_words).
    "openssl": ("-out", "-writerand", "-keyout", "-sess_out", "-keylogfile", "-msgfile")
    + ("-certsout", "-reqout", "-respout", "-CAserial", "-outdir"),
    "patch": ("-o", "--output", "-r", "--reject-file"),  # and more: see _patch_written
    "cmake": ("-B", "--build"),  # the build directory it configures, or builds in
    "mvn": ("-l", "--log-file"),  # its build log
    "ctest": ("--test-dir",),  # it writes Testing/ there
    # (F171, sandbox) `-o /tmp/f`, `--out /tmp/f`, `-co/tmp/f` wrote /tmp (argp: clusters,
    # abbreviations, options after operands: see written_operands)
    "iconv": ("-o", "--output"),
    # (F176) psql's query output and session log, gpg's output (see written_operands)
    "psql": ("-o", "--output", "-L", "--log-file"),
    "gpg": ("-o", "--output"),
    # (F180, redis-cli 7's --help) the server's dump, and its functions, copied to a file here
    "redis-cli": ("--rdb", "--functions-rdb"),
}
_WRITES_VALUED = {
    "compileall": "rdspxijoe",
    "cp": "tS",
    "mv": "tS",
    "ln": "tS",
    "install": "tSgmo",
    "mkdir": "m",
    "touch": "rdt",
    "truncate": "sr",
    "uniq": "fsw",
    "rsync": "eBTfM",
    "scp": "cDFiJloPSX",  # OpenSSH 9's getopt string
    "split": "abClnt",
    "mknod": "m",
}

ALIASES = {
    "python3": "python",
    "pypy": "python",
    "pypy3": "python",
    "py.test": "pytest",
    "pip3": "pip",
    "gawk": "awk",
    "mawk": "awk",
    "nawk": "awk",
    "gsed": "sed",
    "gtar": "tar",
    "bsdtar": "tar",
    "gmake": "make",
    "nodejs": "node",
    "fdfind": "fd",
    # (F172) docker's command line (`run -v /:/h`, `--privileged`...) under another name
    **dict.fromkeys(("podman", "nerdctl"), "docker"),
    **dict.fromkeys(("vi", "nvim", "ex", "view", "vimdiff", "rvim"), "vim"),
    **dict.fromkeys(("cc", "c++", "g++", "clang", "clang++", "gcc-12", "g++-12"), "gcc"),
}
_PYTHON = re.compile(r"python\d+(?:\.\d+)*")
# A make variable on the command line: any name without `:`, `#`, `=` or blanks (`.SHELLFLAGS`,
# `a-b`), then `=`, `:=`, `::=`, `:::=`, `+=`, `?=` or `!=`. `x:=$(shell …)` and `x!=CMD` run
# CMD as make reads its command line, with no makefile at all (F108).
# make reads any command-line word holding `=` as makefile text assigning a variable, the name
# expanded first (`$(shell CMD)x=1` runs CMD), blanks before it and all (F143)
_MAKE_ASSIGNMENT = re.compile(r"[^=]*?(?::{1,3}|[+?!])?=")
# Every `program [subcommand...]` prefix of a key: where the walk may descend.
_PATHS = frozenset(" ".join(k.split()[:n]) for k in ACTING for n in range(1, len(k.split()) + 1))
# Each program's `program subcommand...` keys, found once here rather than on every command.
_SUBCOMMANDS = {
    program: tuple(k for k in ACTING if k.startswith(program + " "))
    for program in {k.split()[0] for k in ACTING}
}


@dataclass(frozen=True)
class Acting:
    """One acting use in a command: the spellings that name it, and what it does."""

    names: tuple[str, ...]
    what: str


def canonical_program(base: str) -> str:
    if base.startswith("python") and _PYTHON.fullmatch(base):
        return "python"
    return ALIASES.get(base, base)


def acting_uses(base: str, args: list[str]) -> list[Acting]:
    """Every acting option, subcommand or script in `base args...` (base: a program name)."""
    program = canonical_program(base)
    if program not in _PATHS:
        return []
    if program == "gcc":
        args = _gcc_words(args)
    if program == "mvn":
        args = [_maven_long(token) for token in args]
    if program == "npm":
        args = _npm_words(args)
    found = list(_scan(program, args))
    if program == "python":
        found += _python_module(args) + _django_manage(args) + _warning_categories(program, args)
    elif program == "coverage":
        found += _coverage_run(args)
    elif program == "pylint":
        found += _pylint_reporters(args)
    elif program == "pytest":
        found += _warning_categories(program, args) + _pytest_django_settings(args)
    elif program == "unittest":
        found += _unittest_modules(args)
    elif program == "sed":
        found += _sed_scripts(args)
    elif program == "less":
        found += _less_chained_options(args)
    elif program == "vim":
        found += _vim_ex_mode(base, args)
    elif program == "awk":
        if args in (["-W", "version"], ["-Wversion"]):
            return []  # mawk's `--version`: it prints its version and runs nothing
        found += _awk_program(args)
    elif program == "gcc" and not any(a.startswith("-fopt-info") and "=" in a for a in args):
        # `-fopt-info…` without `=FILE` reports to stderr; only a FILE is written.
        found = [use for use in found if use.names[0] not in ("-fopt-info", "-fopt-info-")]
    elif program == "compileall" and not written_operands(program, args):
        # With no folder named it compiles every folder on sys.path (`-f`: rewriting each .pyc).
        found.append(Acting(("sys.path",), WRITES_FILES))
    elif program == "mvn":
        if all(name in _MAVEN_INERT for name in _maven_properties(args)):
            found = [use for use in found if use.names[0] not in ("-D", "--define", "--D")]
        found += _maven_plugin_coordinates(args)
    elif program in _INSTALLERS:
        found += _packages_elsewhere(program, args)
        # `--@scope:registry=URL`: that scope's packages, and the scripts they run, come from URL.
        scoped = [t for t in args if t.startswith("--@") and ":registry" in t]
        found += [Acting((t.split("=", 1)[0], "--registry"), CONFIGURES) for t in scoped]
    elif program == "go":
        found += _go_tool_flags(args) + _go_versioned_packages(args)
    elif program == "dotnet" and args[:1] and args[0] in _DOTNET_MSBUILD:
        found += _msbuild_switches(args[1:])
    elif program == "cmake":
        if all(name in _CMAKE_INERT for name in _cmake_entries(args)):
            found = [use for use in found if use.names[0] != "-D"]
        found += _cmake_install_target(args)
        if "--build" in args and "--" in args[args.index("--build") :]:
            # `cmake --build DIR -- ARGS`: ARGS are the build tool's (make's `--eval`, `-f`;
            # ninja's `-t TOOL`, `browse` a web server) (F124).
            tool_args = args[args.index("--", args.index("--build")) + 1 :]
            found += acting_uses("make", tool_args) + _ninja_tools(tool_args)
    elif program == "install":
        # `--strip` is the flag `-s`, no abbreviation of `--strip-program` (getopt's exact match)
        found = [use for use in found if use.names[1:] != ("--strip",)]
    elif program == "tar":
        if not any(
            t[:3] == "--o" and "=" in t and "one-top-level".startswith(t[2:].split("=")[0])
            for t in args
        ):
            # a bare `--one-top-level` extracts into a folder named after the archive, here
            found = [use for use in found if use.names[0] != "--one-top-level"]
        found += [
            Acting((name,), SENDS)  # a rule names the address itself
            for name in tar_archives(args)[1]
            if _tar_remote(name, args)
        ]
    elif program == "git":
        found = [_git_config(use, args) for use in found if use.names != ("config",)] + [
            _git_config(use, args) for use in found if use.names == ("config",)
        ]
        found = [use for use in found if use is not None] + _git_repository_elsewhere(args)
        found += _git_editor(args) + _git_signature_formats(args)
        found += _git_patches_applied(args) + _git_merge_strategies(args)
        found += _git_pathspec_patterns(args) + _git_trees_landed(args)
        found += _git_archive_placeholders(args)
    for reading in _MORE_READINGS.get(program, ()):
        found += reading(args)
    if program in _HANDS_ON:
        found += _runner_options(program, args)
    if program == "pnpm":
        settings = [t for t in args if t.startswith("--config.")]
        found += [Acting((t.split("=", 1)[0], "--config."), CONFIGURES) for t in settings]
    return list(dict.fromkeys(found))


_NO_CLUSTERS = frozenset(
    {"find", "go", "gcc", "sqlite3", "cmake", "ctest", "mvn", "dotnet", "openssl"} | {"java"}
)  # `-name` is one option there, never `-n -a -m -e`
_STOPS_AT_OPERAND = frozenset({"python", "node", "perl", "ruby", "php"})  # then: a script's args
_GLOBALS_FIRST = frozenset({"git"})  # `git -c x log`: git's own options come before `log`
# The letters that take a value in a cluster, where they differ from commit's `-c`, `-C`, `-m`:
# grep's `-c` (count), rebase's `-m` (merge), am's `-m` and `-c` are flags, and the letters
# after them options (`git grep -cO'CMD'` ran CMD as its pager) (F125).
_GIT_VALUED_LETTERS = {"grep": "ABCefm", "rebase": "CsXx", "am": "Cp"}


def _scan(program: str, args: list[str]) -> Iterator[Acting]:
    key, tables = program, [ACTING.get(program, {})]
    subcommands = _SUBCOMMANDS.get(program, ())
    valued = VALUED_LETTERS.get(program, "")
    descending = True
    if program == "tar" and args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # `tar xzf a.tgz`: the old option syntax
    help_next = False  # `git log --help` runs `git help log`, which runs man
    value_next = False
    loose = False
    for token in args:
        if help_next and token == "--help":
            yield Acting(("--help",), "runs man to show a manual")
        help_next = False
        if program == "git" and key == program and token.startswith("-") and not value_next:
            name = token.split("=", 1)[0]
            if name == "--help":  # `git --help log` is `git help log`: man (F125)
                yield Acting(("--help",), "runs man to show a manual")
            elif name not in _GIT_GLOBALS:
                yield Acting((name,), "is a git option the engine does not know")
        options = [(o, w) for table in tables for o, w in table.items()]
        if token.startswith("--") and len(token) > 2:
            name = token[2:].split("=", 1)[0]
            for option, what in options:
                if _long_spells(program, option, name) or option == "-" + name:
                    yield Acting((option, "--" + name), what)
        elif token.startswith("-") and len(token) > 1:
            head = token.split("=", 1)[0]
            whole = [
                (o, w) for o, w in options if not o.startswith("--") and _spells(program, o, head)
            ]
            yield from (Acting((o,), w) for o, w in whole)
            if not whole and program not in _NO_CLUSTERS:
                yield from _letters(token, options, valued)
        elif token.startswith(".") and token[1:2].isalpha() and any(o == "." for o, _ in options):
            yield Acting((token.split()[0],), dict(options)["."])
        elif token.startswith("+") and any(o == "+" for o, _ in options):
            yield Acting((token,), dict(options)["+"])
        elif token.startswith("@") and any(o == "@" for o, _ in options):
            yield Acting(("@",), dict(options)["@"])
        elif (assigned := _MAKE_ASSIGNMENT.match(token)) and any(o == "NAME=" for o, _ in options):
            yield Acting((assigned.group(0),), "sets a variable the program runs with")
        elif program in _STOPS_AT_OPERAND:
            return
        elif value_next:
            pass  # `git -C DIR`, `git --namespace NS`: a global option's value, not a subcommand
        elif loose and "" in ACTING.get(f"{program} {token}", {}):
            # After a word that is no subcommand (`pnpm --filter web exec …`: the option's
            # value), a subcommand that acts by itself is still found (F118).
            yield Acting((token,), ACTING[f"{program} {token}"][""])
        elif descending and f"{key} {token}" in _PATHS:
            if program == "git" and key == program:
                valued = _GIT_VALUED_LETTERS.get(token, valued)
            key = f"{key} {token}"
            help_next = program == "git"
            table = ACTING.get(key, {})
            tables = [table] if program in _GLOBALS_FIRST else [*tables, table]
            if "" in table:
                yield Acting((token,), table[""])
        elif descending:
            descending = False
            loose = key == program and bool(subcommands)
            if key == program and subcommands:
                # Not a subcommand we know (an option's value, an alias): any of them may follow.
                tables += [ACTING[k] for k in subcommands if "" not in ACTING[k]]
            if key == program and program == "git":
                # git runs `git-TOKEN` from its exec path or PATH, or an alias from its
                # configuration: plumbing that writes where it is told (`pack-objects /tmp/x`,
                # `init-db`), or runs what it is given (`remote-ext x 'sh -c …'`).
                yield Acting((token,), "is a git command the engine does not know")
        value_next = program == "git" and key == program and token in _GIT_GLOBAL_VALUED


_OPTION_PARSER = frozenset({"rake", "rspec"})  # Ruby's OptionParser reads their options
# Their long options are whole words (yargs', optionator's, cac's, tsc's parsers; gh's pflag,
# F175): `--cache` is no `--cache-location`, gh's `--notes` no `--notes-file`. tsc's are
# case-insensitive: `--outdir` is `--outDir`.
_WHOLE_LONG_OPTIONS = frozenset({"tsc", "eslint", "prettier", "jest", "vitest", "mocha", "gh"})


def _long_spells(program: str, option: str, name: str) -> bool:
    """Whether `--name` is the long option `option` (getopt_long: any unambiguous start)."""
    if not option.startswith("--"):
        return False
    if program == "tsc":
        return option[2:].lower() == name.lower()
    if program == "vim":
        # vim compares a word's start, in any case: `--CMD`, `--remote-expr` is `--remote…`
        return name.lower().startswith(option[2:].lower())
    if program == "less":
        # less folds every letter after the first (`--Log-f` is `--LOG-FILE`) (H19-4)
        return option[2:].lower().startswith(name.lower())
    if program in _OPTION_PARSER:
        # Ruby's OptionParser: any case, each word of the name cut short (`--e-p` is
        # `--execute-print`, `--Sys` `--system`) (F123)
        words = name.lower().split("-")
        pattern = "-".join(re.escape(word) + "[^-]*" for word in words)
        wanted = option[2:].lower()
        return wanted.startswith(name.lower()) or re.fullmatch(pattern, wanted) is not None
    if program in ("jest", "vitest"):
        # yargs and cac take the kebab-case spelling (`--output-file`), cac a nested value
        # by a dot (`--outputFile.json=F`) (F117)
        name = re.sub(r"-([a-z])", lambda letter: letter.group(1).upper(), name)
        return option[2:] == name or ("." not in option and name.startswith(option[2:] + "."))
    if program == "node":
        # node takes no shortened names, and a `_` for each `-` (F177)
        return option[2:] == name.replace("_", "-")
    if program == "gpg" and name in _GPG_EXACT:
        return option[2:] == name  # an exact name wins over the longer ones it starts
    return option[2:] == name if program in _WHOLE_LONG_OPTIONS else option[2:].startswith(name)


# gpg's options that start an acting one's name: `--export` is no `--export-secret-keys`
_GPG_EXACT = frozenset({"export", "sign", "import", "keyserver", "options"})


def _spells(program: str, option: str, head: str) -> bool:
    """Whether the word `head` (up to any `=`) is `option`, as one option of `program`."""
    if option == head:
        return True
    if program not in _NO_CLUSTERS:
        return False
    # `-B/dir`, `-Wl,-Map`, `-fdump-tree-all`: the option starts the word.
    return (
        (len(option) == 2 and head.startswith(option))
        or head.startswith(option + ",")
        or (option.endswith("-") and head.startswith(option))
        or (option in _JOINED_LONG and head.startswith(option))
    )


# Long options clang also takes with the value glued (`-working-directory/tmp/x`) (F143).
_JOINED_LONG = frozenset({"-working-directory"})


def _letters(token: str, options: list[tuple[str, str]], valued: str) -> Iterator[Acting]:
    letters = {o[1]: w for o, w in options if len(o) == 2 and o[0] == "-"}
    for letter in token[1:]:
        if letter in letters:
            yield Acting(("-" + letter,), letters[letter])
        if letter in valued:
            return


# gcc's driver reads `--output F` as `-o F`, `--for-linker X` as `-Xlinker X`, `--for-assembler X`
# as `-Xassembler X`, `--prefix D` as `-B D` (each also with `=`), and any other `--NAME` as
# `-fNAME` (`--dump-tree-all=F` is `-fdump-tree-all=F`, `--plugin=P` is `-fplugin=P`).
_GCC_LONG = {
    "output": "-o",
    "for-linker": "-Xlinker",
    "for-assembler": "-Xassembler",
    "prefix": "-B",
}
_GCC_GLUED = ("-MF", "-MJ")  # `-MFFILE` is `-MF FILE`


def _gcc_words(args: list[str]) -> list[str]:
    """gcc's arguments with its long spellings as the options they stand for (the `-f` reading
    is added beside the word: `--dumpdir D` is gcc's `-dumpdir D` too)."""
    words: list[str] = []
    for token in args:
        name, equals, value = token[2:].partition("=")
        if token.startswith("--") and name in _GCC_LONG:
            words += [_GCC_LONG[name], value] if equals else [_GCC_LONG[name]]
        elif token.startswith("--") and name:
            words += [token, "-f" + token[2:]]
        elif token.startswith(_GCC_GLUED) and len(token) > 3:
            words += [token[:3], token[3:]]
        else:
            words.append(token)
    return words


def _python_module(args: list[str]) -> list[Acting]:
    """`python -m MOD ARGS`: MOD's own acting options count too (`python -m pytest -p x`)."""
    module = _python_module_args(args)
    return acting_uses(*module) if module else []


_COVERAGE_RUNNERS = frozenset({"pytest", "unittest"})  # `coverage run -m pytest`: the tests
_COVERAGE_VALUED = frozenset(
    {"--rcfile", "--source", "--include", "--omit", "--context", "--concurrency", "--data-file"}
    | {"--debug", "--save-signal"}
)


def _coverage_run(args: list[str]) -> list[Acting]:
    """`coverage run [-m] TARGET ARGS` runs TARGET as `python [-m] TARGET ARGS` would: a module
    other than the test runners (`-m zipfile -e x.zip /etc`), or a script outside the folder."""
    if args[:1] == ["combine"]:
        return _coverage_combine(args[1:])
    if args[:1] != ["run"]:
        return []
    module, target, rest = _coverage_target(args)
    # `--source=antigravity.x`: coverage imports the package to find its unexecuted files
    sources = [
        source
        for value in _option_values(args, ("--source",))
        for source in value.split(",")
        if _acts_on_import(source)
    ]
    found = [Acting(("--source",), _IMPORTS_THE_STANDARD_LIBRARY) for _ in sources[:1]]
    if target is None:
        return found
    return found + _coverage_runs(module, target, rest)


def _coverage_runs(module: bool, target: str, rest: list[str]) -> list[Acting]:
    if module and target in _COVERAGE_RUNNERS:
        return acting_uses(target, rest)
    if module:
        return [Acting(("-m", "--module"), "runs a module that is not the project's tests")]
    if _leaves(target):
        return [Acting((target,), "runs a script outside the working directory")]
    return _django_manage([target, *rest])  # `coverage run manage.py shell`


def _spells_module(token: str) -> bool:
    """`-m`, a cluster holding it (`-pm`, `-Lpm`), `--module` or optparse's start of it
    (`--mod`) (F146)."""
    if token.startswith("--"):
        return len(token) > 3 and "--module".startswith(token)
    return token[1:].isalpha() and "m" in token[1:]


def _coverage_target(args: list[str]) -> tuple[bool, str | None, list[str]]:
    """What `coverage run [-m] TARGET ARGS` runs: (a module?, TARGET, ARGS)."""
    module, k = False, 1
    while k < len(args) and args[k].startswith("-") and args[k] != "-":
        module = module or _spells_module(args[k])
        k += 1 if "=" in args[k] or args[k] not in _COVERAGE_VALUED else 2
    if args[:1] != ["run"] or k >= len(args):
        return module, None, []
    return module, args[k], args[k + 1 :]


def _coverage_combine(args: list[str]) -> list[Acting]:
    """`coverage combine DIR` deletes the data files it merges from DIR (`--keep` keeps
    them): one outside the working directory is a deletion there (F119)."""
    if "--keep" in args:
        return []
    return [
        Acting((path,), "deletes the data files it combines from there")
        for path in _operands(args, _COVERAGE_VALUED)
        if _leaves(path)
    ]


# Django's `manage.py shell` (`-c CODE`, or its stdin), `dbshell` (the database's client) run
# code the command brings, not the project's; so does the debugger of `test --pdb`.
_DJANGO_RUNS = frozenset({"shell", "dbshell", "shell_plus", "runscript"})


def _django_manage(args: list[str]) -> list[Acting]:
    if not args or args[0].rsplit("/", 1)[-1] != "manage.py" or len(args) < 2:
        return []
    found = [Acting((args[1],), RUNS)] if args[1] in _DJANGO_RUNS else []
    return found + _django_elsewhere(args[1], args[2:])


# What a package manager or a test driver hands on to the project's own test runner: the words
# after `--` (npm, tox's `{posargs}`, cargo's libtest), npm's operands after the script's
# name, and every word after it for yarn and pnpm. Which runner reads them is the project's
# choice, so they are read as each usual one reads them: `npm test -- --outputFile=/etc/x` is
# jest's `--outputFile`, `tox -- --basetemp=/etc/x` pytest's, `cargo test -- --logfile F`
# libtest's; a path there that leaves the working directory is pytest's rootdir (F110).
_HANDS_ON = frozenset({"npm", "yarn", "pnpm", "tox", "cargo"})
_RUNNERS = ("pytest", "jest", "vitest")
# What npm's scripts also run (F119): their options that act whatever their value says
# (`--node-option`, `--mcp`); where their writing options write is judged by the paths below.
_SCRIPT_RUNNERS = ("mocha", "eslint", "playwright")
_CODE_RUNNERS = ("jest", "vitest", *_SCRIPT_RUNNERS)
_PACKAGE_MANAGERS = frozenset({"npm", "yarn", "pnpm"})
_HANDED_ON = "is handed to the project's test runner, which may write or run what it names"
_NPM_SCRIPTS = frozenset({"test", "t", "tst", "start", "stop", "restart"})
_RUNS_A_SCRIPT = frozenset({"run", "run-script", "rum", "urn"})
_COMMANDS_HANDING_ON = _NPM_SCRIPTS | _RUNS_A_SCRIPT | {"bench", "workspace"}
# yarn's and pnpm's own commands: any other first word names a script (or a dependency's bin;
# pnpm's, with no script of that name, any program: see shell_wrappers._pnpm).
PACKAGE_MANAGER_COMMANDS = frozenset(
    {"add", "install", "i", "remove", "rm", "upgrade", "up", "update", "why", "info", "list"}
    | {"ls", "outdated", "audit", "config", "init", "create", "dlx", "exec", "link", "unlink"}
    | {"pack", "publish", "cache", "global", "set", "plugin", "workspace", "workspaces", "bin"}
    | {"env", "store", "import", "rebuild", "prune", "fetch", "patch", "patch-commit", "node"}
    | {"licenses", "doctor", "setup", "self-update", "version", "versions", "login", "logout"}
    | {"whoami", "owner", "tag", "team", "policies", "constraints", "explain", "dedupe"}
    | {"search", "help", "stats", "deploy", "server", "root", "recursive", "check", "ci"}
)


def _handed_on(program: str, args: list[str]) -> list[str]:
    dashes = args.index("--") if "--" in args else len(args)
    after = args[dashes + 1 :]
    if program == "tox":
        return after
    operands = [k for k, token in enumerate(args[:dashes]) if not token.startswith("-")]
    # The command: the first operand that is not an option's value (`npm -w web test`,
    # `cargo --color never test`: a word after an option is taken for its value when the
    # command cannot be it).
    while len(operands) > 1 and args[operands[0]] not in _COMMANDS_HANDING_ON:
        before = args[operands[0] - 1] if operands[0] else ""
        if not before.startswith("-") or "=" in before:
            break
        operands = operands[1:]
    if program == "cargo":
        return after if operands and args[operands[0]] in ("test", "t", "bench") else []
    if not operands:
        return []
    first = args[operands[0]]
    if first == "workspace" and program == "yarn":  # `yarn workspace NAME SCRIPT ARGS`
        operands = operands[2:]
        if not operands:
            return []
        first = args[operands[0]]
    if first in _RUNS_A_SCRIPT:
        operands = operands[1:]  # the script's name
        if not operands:
            return []
    elif (program == "npm" and first not in _NPM_SCRIPTS) or first in PACKAGE_MANAGER_COMMANDS:
        return []
    rest = args[operands[0] + 1 : dashes]
    if program == "npm":  # npm keeps the options before `--` for itself
        rest = [token for token in rest if not token.startswith("-")]
    return rest + after


def _runner_options(program: str, args: list[str]) -> list[Acting]:
    words = _handed_on(program, args)
    if not words:
        return []
    if program == "cargo":  # libtest's own options: only `--logfile PATH` writes
        found = [Acting(("--logfile",), WRITES_FILES) for w in words if w.startswith("--logfile")]
    else:
        found = [use for runner in _RUNNERS for use in acting_uses(runner, words)]
    if program in _PACKAGE_MANAGERS:
        found += [
            use
            for runner in _SCRIPT_RUNNERS
            for use in acting_uses(runner, words)
            if use.what != WRITES_FILES
        ]
    paths = [w for w in words if not w.startswith("-") and "::" not in w]
    # and an option's or a setting's value: `--outDir=/etc/x`, `output=/etc/x` (F119)
    paths += [w.split("=", 1)[1] for w in words if "=" in w]
    return found + [Acting((path,), _HANDED_ON) for path in paths if _leaves(path)]


def handed_on_code_paths(program: str, args: list[str]) -> list[str]:
    """The code the words `npm test -- …` hands on name as each usual runner reads them
    (`--rootDir=/tmp/x`, `--require=/tmp/x.js`, `-c /tmp/eslint.config.js`) (F119)."""
    words = _handed_on(program, args) if program in _PACKAGE_MANAGERS else []
    return [path for runner in _CODE_RUNNERS for path in code_paths(runner, words)]


_NPM_PASSES_ON = "npm_config_{} in the environment of every script npm runs"


# npm's one-letter shorthands: a single-dash word made of them only is a cluster of them.
_NPM_LETTERS = frozenset("gCwSDOPEBlsqdvyhHfcaopmNLiW")


def _npm_words(args: list[str]) -> list[str]:
    """nopt reads a single-dash word that is no cluster of one-letter shorthands as a long
    name, cut short or not (`-prefix=/x` is `--prefix=/x`, `-userc=F` `--userconfig=F`); the
    words after `--` are the script's (F132)."""
    words = []
    for at, token in enumerate(args):
        if token == "--":
            return words + args[at:]
        name = token[1:].split("=", 1)[0]
        single = token[:1] == "-" and token[1:2] not in ("-", "")
        if single and len(name) > 1 and ("=" in token or not set(name) <= _NPM_LETTERS):
            token = "-" + token
        words.append(token)
    return words


_DATE_VALUED_LETTERS = "dfrs"
_DATE_VALUED_LONG = ("--date", "--file", "--reference", "--set", "--rfc-3339")


def _date_set_by_operand(args: list[str]) -> list[Acting]:
    """`date 010100002030` (MMDDhhmm[[CC]YY][.ss]) sets the clock as `-s` does: any operand
    but a `+FORMAT` (F139)."""
    found, k, options_end = [], 0, False
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--" and not options_end:
            options_end = True
        elif not options_end and token.startswith("--"):
            name = token.split("=", 1)[0]
            if "=" not in token and any(o.startswith(name) for o in _DATE_VALUED_LONG):
                k += 1
        elif not options_end and token.startswith("-") and token != "-":
            valued = [i for i, c in enumerate(token[1:], 1) if c in _DATE_VALUED_LETTERS]
            if valued and valued[0] == len(token) - 1:
                k += 1  # `-d STRING`, `-ud STRING`: the value is the next word
        elif not token.startswith("+"):
            found.append(Acting((token,), "sets the system clock"))
    return found


def _npm_version_taken_back(args: list[str]) -> list[Acting]:
    """`npm --version false cache clean --force`: nopt reads `false` after a boolean as its
    value, and `--no-version`, `-no-version` or `--version=false` turn it off too; npm then
    runs the rest as its command (F138)."""
    for k, token in enumerate(args):
        if token == "--":
            break
        name, equals, _ = token.lstrip("-").partition("=")
        following = args[k + 1] if k + 1 < len(args) else ""
        if not token.startswith("-") or name not in ("version", "v", "no-version"):
            continue
        if name == "no-version" or equals or following in ("false", "true"):
            # named by what takes it back: a rule for `npm --version *` names `--version`
            taken_back = token if name == "no-version" or equals else following
            return [Acting((taken_back,), "takes --version back: npm runs the rest")]
    return []


def _npm_global(args: list[str]) -> list[Acting]:
    """nopt toggles a boolean for each `no-` and negates a `true`/`false` after it, and
    `--local` is `--no-global`: `--no-no-global`, `--no-global=false`, `--local=false` are
    `--global` (F132)."""
    found = []
    for k, token in enumerate(args):
        if token == "--":
            break
        name, equals, value = token.lstrip("-").partition("=")
        if not token.startswith("--") or not name:
            continue
        negations = 0
        while name.startswith("no-"):
            name, negations = name[3:], negations + 1
        if name == "local":
            name, negations = "global", negations + 1
        if name != "global" or (negations == 0 and not equals):
            continue  # a plain `--global` is the table's
        following = args[k + 1] if k + 1 < len(args) else ""
        if not equals and following in ("true", "false"):
            value = following
        on = value != "false"
        if on != (negations % 2 == 1):
            found.append(Acting((token,), "installs globally, outside the project"))
    return found


def _npm_settings(args: list[str]) -> list[Acting]:
    """npm takes any `--KEY=VALUE` as a setting, known or not, and passes each to the scripts
    it runs as `npm_config_KEY`; an npm or node-gyp those scripts start reads it back as its
    own setting, with `_` for `-` and in any case (`--script_shell=/x` is the inner npm's
    `--script-shell`, `--python=/x` node-gyp's Python). A spelling of an acting setting, or a
    value naming a path outside the working directory, must be named by the rule."""
    found = []
    for token in args:
        if token == "--":
            break  # the script's own arguments follow
        name, equals, value = token[2:].partition("=")
        if not token.startswith("--") or not equals or not name:
            continue
        key = name.lower().replace("_", "-")
        env = _NPM_PASSES_ON.format(key.replace("-", "_"))
        if key != name and "--" + key in ACTING["npm"]:
            found.append(
                Acting((token.split("=", 1)[0], "--" + key), f"{ACTING['npm']['--' + key]}: {env}")
            )
        elif _leaves(value) or value.startswith("~"):
            found.append(
                Acting((f"--{name}",), f"names a path outside the working directory: {env}")
            )
    return found


# Modules a warning category may come from without running anything new: pytest's own
# (`-W ignore::pytest.PytestUnraisableExceptionWarning`), already imported by then.
_INERT_CATEGORY_MODULES = ("builtins", "warnings", "pytest", "_pytest")
_IMPORTS_CATEGORY = "imports the module its warning category names (code that runs on import)"


def _warning_categories(program: str, args: list[str]) -> list[Acting]:
    """`pytest -W error::pkg.mod.Class`, `python -W ignore::pkg.mod.Class`: the filter's
    category is imported from its module before anything else runs, and some modules act on
    import (lib2to3.__main__ refactors the files its argv names, writing them where `-o`
    says; test.__main__ runs CPython's test suite). A builtin category imports nothing."""
    found = []
    for value in _warning_filters(program, args):
        parts = value.split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        module = category.rpartition(".")[0]
        if module and not any(
            module == inert or module.startswith(inert + ".") for inert in _INERT_CATEGORY_MODULES
        ):
            found.append(Acting(("-W", "--pythonwarnings"), _IMPORTS_CATEGORY))
    return found


def _warning_filters(program: str, args: list[str]) -> list[str]:
    """The values of `-W` (also glued, or ending a cluster: `-qWerror::x.Y`) and, for
    pytest, `--pythonwarnings`; python's own options end at its script, `-c` or `-m`."""
    values, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            break
        if token.startswith("--") and program == "pytest":
            name, equals, value = token[2:].partition("=")
            if len(name) > 1 and "pythonwarnings".startswith(name):
                if not equals:
                    value, k = (args[k] if k < len(args) else ""), k + 1
                values.append(value)
            continue
        if not token.startswith("-") or token.startswith("--") or token == "-":
            if program == "python":
                break  # the script: the rest are its arguments
            continue
        for position, letter in enumerate(token[1:], start=1):
            if letter not in VALUED_LETTERS[program]:
                continue
            value = token[position + 1 :]
            # argparse takes no option for a value (`pytest -n -W x`: without xdist, `-n` is
            # unknown and `-W` is read); python's getopt takes whatever follows.
            if not value and k < len(args) and (program == "python" or args[k][:1] != "-"):
                value, k = args[k], k + 1
            if letter == "W":
                values.append(value)
            elif program == "python" and letter in "cm":
                return values  # code, or a module whose arguments follow
            break
    return values


def _pylint_reporters(args: list[str]) -> list[Acting]:
    """`pylint --output-format=json:/etc/x` writes that file; `--output-format=pkg.mod.Class`
    imports the module named (a reporter class): `json`, `text`, `colorized` do neither."""
    found = []
    for k, token in enumerate(args):
        if token[:1] == "-" and token[1:2] not in ("-", "") and len(token) > 2:
            token = "-" + token[1:].lstrip("Eh")  # argparse's clusters: `-Efjson:F` (H20-9)
        name, equals, value = token.partition("=")
        if token.startswith("-f") and len(token) > 2 and not equals:
            name, equals, value = "-f", "=", token[2:]  # `-fjson:/tmp/x` (F121)
        spelled = name == "-f" or (
            len(name) > len("--output-") and "--output-format".startswith(name)
        )
        if not spelled:
            continue
        value = value if equals else (args[k + 1] if k + 1 < len(args) else "")
        for reporter in value.split(","):
            if ":" in reporter:
                found.append(Acting((name, "--output-format"), WRITES_FILES))
            elif "." in reporter:
                found.append(Acting((name, "--output-format"), "imports the reporter it names"))
    return found


# Django's commands that write a file or folder they are told, fetch code, or send mail; and
# `--pythonpath DIR`, whose modules (the settings among them) it imports.
_DJANGO_OUTPUT = {"dumpdata": ("-o", "--output")}
_DJANGO_CREATES = frozenset({"startapp", "startproject"})


# The options of manage.py's commands read here, and their short spellings by command.
_DJANGO_LONG = ("--output", "--pythonpath", "--template", "--settings", "--testrunner", "--pdb")
_DJANGO_LONG += ("--default", "--addrport", "--top-level-directory")
# makemessages and compilemessages make `locale/LOCALE/LC_MESSAGES` (any `..` in LOCALE kept),
# squashmigrations writes its `--squashed-name` in the migrations folder (F146)
_DJANGO_LONG += ("--locale", "--squashed-name")
_DJANGO_SHORT = {"dumpdata": {"-o": "--output"}, "test": {"-t": "--top-level-directory"}}
_DJANGO_SHORT |= {"makemessages": {"-l": "--locale"}, "compilemessages": {"-l": "--locale"}}
_DJANGO_NAMED_PATHS = frozenset(
    {("--locale", "makemessages"), ("--locale", "compilemessages")}
    | {("--squashed-name", "squashmigrations")}
)
# Options whose value is the next word: not an operand (`runserver -v 1 0:8000`) (F146).
_DJANGO_VALUED = frozenset({"-v", "--verbosity", "--settings", "--pythonpath", "-e", "-n"})
_DJANGO_VALUED |= {"--extension", "--name", "--template", "-o", "--output", "-l", "--locale"}
# Modules it imports by name: settings, a test runner, diffsettings' defaults (F119, F122).
_DJANGO_IMPORTS = {"--settings": None, "--testrunner": None, "--default": "diffsettings"}


def _django_options(command: str, args: list[str]) -> list[tuple[str, str, str]]:
    """(spelling, option, value) for each of _DJANGO_LONG the words spell as argparse reads
    them: any start of a long one (`--outp`, `--pd`: each it may be), a short one's value
    glued (`-o/tmp/x`) (F122)."""
    found = []
    short = _DJANGO_SHORT.get(command, {})
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        name, equals, value = token.partition("=")
        if token[:2] in short and not token.startswith("--"):
            found.append((token[:2], short[token[:2]], token[2:].removeprefix("=") or following))
        elif name.startswith("--") and len(name) > 2:
            value = value if equals else following
            found += [(name, option, value) for option in _DJANGO_LONG if option.startswith(name)]
    return found


def _django_elsewhere(command: str, args: list[str]) -> list[Acting]:
    found = []
    if command == "sendtestemail":
        found.append(Acting((command,), SENDS))
    for name, option, value in _django_options(command, args):
        names = tuple(dict.fromkeys((name, option)))
        if option == "--output" and command in _DJANGO_OUTPUT:
            found.append(Acting(names, WRITES_FILES))
        elif option == "--pythonpath" and _leaves(value):
            found.append(Acting(names, "imports modules from a folder outside the workspace"))
        elif option == "--template" and command in _DJANGO_CREATES:
            found.append(Acting(names, "copies and renders a template from elsewhere"))
        elif option in _DJANGO_IMPORTS and _DJANGO_IMPORTS[option] in (None, command):
            # `--settings=antigravity`: the module is imported (and opens a browser) (F119)
            if _acts_on_import(value):
                found.append(Acting(names, _IMPORTS_THE_STANDARD_LIBRARY))
        elif option == "--pdb":
            found.append(Acting(names, RUNS))  # the debugger, on its standard input
        elif option == "--top-level-directory" and command == "test" and _leaves(value):
            found.append(Acting(names, "imports the tests of a folder outside"))
        elif option == "--addrport" and command == "testserver" and _exposed(value):
            found.append(Acting(names, _LISTENS))
        elif (option, command) in _DJANGO_NAMED_PATHS and ("/" in value or value[:1] == "."):
            found.append(Acting(names, WRITES_FILES))
    operands = _operands(args, _DJANGO_VALUED)
    if command == "runserver" and operands and _exposed(operands[0]):
        found.append(Acting((operands[0],), _LISTENS))  # `runserver 0.0.0.0:8000` (F122)
    if command == "test":
        # A folder given as a label: the tests below it are discovered and imported; a
        # module's dotted name is imported (`test antigravity`) (F146).
        found += [
            Acting((t,), "imports the tests of a folder outside") for t in operands if _leaves(t)
        ]
        found += [
            Acting((t,), _IMPORTS_THE_STANDARD_LIBRARY)
            for t in operands
            if "/" not in t and _acts_on_import(t)
        ]
    if command in _DJANGO_CREATES and len(operands) > 1 and _leaves(operands[1]):
        found.append(Acting((operands[1],), "creates an app outside the working directory"))
    return found


def _python_module_args(args: list[str]) -> tuple[str, list[str]] | None:
    for k, token in enumerate(args):
        if not token.startswith("-") or token == "-c":
            return None  # a script (the rest are its arguments), or code
        if token == "-m" and k + 1 < len(args):
            return args[k + 1], args[k + 2 :]
        if token.startswith("-m") and len(token) > 2:
            return token[2:], args[k + 1 :]
    return None


# pytest's own options whose value is the next word. A plugin's (`-n`, `--cov-config`,
# `--timeout`) is not: pytest finds its rootdir and ini file before it loads the plugins, so
# their next word is read as a path then (`pytest -n /tmp/x tests` used /tmp/x/pytest.ini,
# whose `-p` ran a plugin there) (F126).
_PYTEST_VALUED = frozenset(
    {"-k", "-m", "-p", "-o", "-c", "-W", "-r", "--tb", "--durations", "--rootdir"}
    | {"--basetemp", "--junitxml", "--deselect", "--ignore", "--ignore-glob", "--confcutdir"}
    | {"--import-mode", "--maxfail", "--log-level", "--capture", "--color"}
)


def _pytest_paths_elsewhere(args: list[str]) -> list[str]:
    """pytest writes its cache in the common directory of its path arguments (its
    rootdir) and bytecode next to the tests it imports: a path that leaves the working
    directory (absolute, or through `..`) is where it may write."""
    paths, skip = [], False
    for token in args:
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = token in _PYTEST_VALUED
        else:
            path = token.split("::", 1)[0]
            if _leaves(path):
                # The cache goes in the folder of a file argument: `/dev/null` (no file to
                # write) makes it /dev/.pytest_cache.
                paths += [path, posixpath.join(posixpath.dirname(path) or ".", ".pytest_cache")]
    return paths


_UNITTEST_FOLDERS = ("start-directory", "top-level-directory")
_UNITTEST_VALUED = frozenset({"-k", "-p", "--pattern", "--durations"})


_UNITTEST_FLAGS = "bcfvq"
_UNITTEST_VALUED_LETTERS = "kspt"


def _unittest_words(args: list[str]) -> list[str]:
    """unittest's words as argparse reads them: a cluster of flags ending in a valued letter
    with its value glued (`-vs/tmp/x` is `-v -s /tmp/x`), `-s=/tmp/x` split at `=` (F138)."""
    words: list[str] = []
    for k, token in enumerate(args):
        if token == "--":
            return words + args[k:]
        if not token.startswith("-") or token.startswith("--") or len(token) < 3:
            words.append(token)
            continue
        expanded: list[str] = []
        for at, letter in enumerate(token[1:], 1):
            if letter in _UNITTEST_VALUED_LETTERS:
                value = token[at + 1 :].removeprefix("=")
                expanded += [f"-{letter}", *([value] if value else [])]
                break
            if letter not in _UNITTEST_FLAGS:
                expanded = [token]  # no cluster argparse takes: as it is
                break
            expanded.append(f"-{letter}")
        words += expanded
    return words


def _unittest_folders_elsewhere(args: list[str]) -> list[str]:
    """`python -m unittest discover -s DIR` imports the modules there, writing __pycache__
    beside them: a start or top folder (`-s`, `-t`, or discover's operands) that leaves the
    working directory is where it writes."""
    args = _unittest_words(args)
    paths, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        name, equals, value = token[2:].partition("=")
        if token in ("-s", "-t") or (
            token.startswith("--") and name and any(o.startswith(name) for o in _UNITTEST_FOLDERS)
        ):
            if not equals:
                value, k = (args[k] if k < len(args) else ""), k + 1
        elif token[:2] in ("-s", "-t"):
            value = token[2:]
        elif token in _UNITTEST_VALUED:
            k += 1
            continue
        elif token.startswith("-"):
            continue
        else:
            value = token
        if value and _leaves(value):
            paths.append(value)
    return paths


def _unittest_modules(args: list[str]) -> list[Acting]:
    """`python -m unittest NAME...` imports each NAME from sys.path: the project's modules, or
    the standard library's, of which some act on import (`venv.__main__` makes a virtualenv of
    its argv and runs pip in it; `lib2to3.__main__`, `antigravity`...). A name in the
    standard library (but `test`, a project's folder as often) or a `__main__` is acting."""
    args = _unittest_words(args)
    if args[:1] == ["discover"]:
        # A start that is no folder is imported as a module, and its folder discovered:
        # `discover -s antigravity` opens the browser, then runs the library's tests (H20-2).
        return [
            Acting((start,), _IMPORTS_THE_STANDARD_LIBRARY)
            for start in _discover_starts(args[1:])
            if "/" not in start and _acts_on_import(start)
        ]
    found, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token in _UNITTEST_VALUED:
            k += 1
        elif (
            not token.startswith("-")
            and "/" not in token
            # `venv.__main__.py` is no file here: unittest imports `venv.__main__` (F138)
            and _acts_on_import(token.removesuffix(".py"))
        ):
            found.append(Acting((token,), _IMPORTS_THE_STANDARD_LIBRARY))
    return found


_IMPORTS_THE_STANDARD_LIBRARY = "imports a module of the standard library"


def _discover_starts(args: list[str]) -> list[str]:
    """`unittest discover`'s start: `-s`'s value, or its first operand (start, pattern, top)."""
    args = _unittest_words(args)
    valued_long = ("start-directory", "pattern", "top-level-directory", "durations")
    starts, operands, k = [], [], 0
    while k < len(args):
        token, k = args[k], k + 1
        name, equals, value = token[2:].partition("=")
        long = [o for o in valued_long if token.startswith("--") and name and o.startswith(name)]
        if token in ("-s", "-p", "-t", "-k") or (long and not equals):
            value, k = (args[k] if k < len(args) else ""), k + 1
        elif token[:2] == "-s":
            value = token[2:]
        elif not token.startswith("-"):
            operands.append(token)
            continue
        if token[:2] == "-s" or "start-directory" in long:
            starts.append(value)
    return starts or operands[:1]


def _pytest_django_settings(args: list[str]) -> list[Acting]:
    """pytest-django's `--ds=antigravity` imports the settings module it names (F119)."""
    values = _option_values(args, ("--ds",))
    return [Acting(("--ds",), _IMPORTS_THE_STANDARD_LIBRARY) for v in values if _acts_on_import(v)]


def _acts_on_import(module: str) -> bool:
    """Whether importing the dotted name may act: a `__main__`, or a module of the standard
    library (but `test`, a project's folder as often), some of which act on import."""
    parts = module.split(".")
    return "__main__" in parts or (parts[0] in sys.stdlib_module_names and parts[0] != "test")


def _leaves(path: str) -> bool:
    """Whether a path leaves the working directory (`tests/../../etc` too: the path as the
    kernel walks it, lexically)."""
    if path.startswith("~"):
        return True  # make, cmake and ctest expand `~` and `~user` themselves (F143)
    leaves = normalise_path(path)
    return leaves.startswith("/") or leaves == ".." or leaves.startswith("../")


def _option_values(args: list[str], options: tuple[str, ...]) -> list[str]:
    values = []
    for k, token in enumerate(args):
        for option in options:
            if token == option and k + 1 < len(args):
                values.append(args[k + 1])
            elif token.startswith(option + "=") or (len(option) == 2 and token[:2] == option):
                values.append(token[len(option) :].removeprefix("="))
    return values


# GNU sed's options (getopt_long: clusters, `--expr` abbreviations, options after operands).
_SED_FLAGS = "nrsuzEb"
_SED_LONG = {
    **dict.fromkeys(("expression", "file", "line-length"), True),  # take a value
    **dict.fromkeys(("quiet", "silent", "debug", "follow-symlinks", "in-place", "posix"), False),
    **dict.fromkeys(("regexp-extended", "separate", "sandbox", "unbuffered", "binary"), False),
    **dict.fromkeys(("null-data", "zero-terminated", "help", "version"), False),
}


def _sed_scripts(args: list[str]) -> list[Acting]:
    """Each script sed compiles, read as GNU sed reads its options: `-e` and `-f` are
    compiled in order, the first operand (when there is neither) after every option, and
    `--sandbox` refuses e, r and w only in what is compiled after it."""
    scripts: list[tuple[str, bool]] = []  # (script, compiled under --sandbox)
    operands: list[str] = []
    sandbox = from_file = False
    k = 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            operands += args[k:]
            break
        if token.startswith("--"):
            name, has_value, value = token[2:].partition("=")
            known = [o for o in _SED_LONG if o == name]
            known = known or [o for o in _SED_LONG if o.startswith(name)]
            if len(known) != 1:
                return [Acting((token,), "sed reads an option the engine does not know")]
            if _SED_LONG[known[0]] and not has_value and k < len(args):
                value, k = args[k], k + 1
            sandbox = sandbox or known[0] == "sandbox"
            from_file = from_file or known[0] == "file"
            if known[0] == "expression":
                scripts.append((value, sandbox))
            continue
        if not token.startswith("-") or token == "-":
            operands.append(token)
            continue
        for position, letter in enumerate(token[1:], start=1):
            if letter in "efl":
                value = token[position + 1 :]
                if not value and k < len(args):
                    value, k = args[k], k + 1
                if letter == "e":
                    scripts.append((value, sandbox))
                from_file = from_file or letter == "f"
                break
            if letter == "i":
                break  # the rest of the word is the backup suffix
            if letter not in _SED_FLAGS:
                return [Acting((token,), "sed reads an option the engine does not know")]
    if not scripts and not from_file and operands:
        scripts.append((operands[0], sandbox))
    return [
        Acting((script,), "the sed script may run commands or read and write files")
        for script, sandboxed in scripts
        if not sandboxed and not _sed_is_plain(script)
    ]


# A bracket expression: GNU sed reads the delimiter inside one as itself (`s/[/]*/x/w F`'s
# regex is `[/]*`, F a file it writes) (H19-1). Collating and equivalence elements are refused.
_SED_BRACKET = r"\[\^?\]?(?:\[:[a-z]+:\]|\[(?![:.=])|[^]\n\[])*\]"
_SED_ADDRESS = rf"(?:\d+|\$|/(?:{_SED_BRACKET}|[^/\\\n\[]|\\.)*/[IM]*)"
_SED_COMMAND = re.compile(
    rf"""[ \t;\n]*
    (?:{_SED_ADDRESS}(?:,(?:{_SED_ADDRESS}|[~+]\d+))?[ \t]*!?[ \t]*)?   # [address[,address]][!]
    (?:[pdqQ=nNPDhHgGxlz{{}}]                                        # print, delete, hold...
      |[aic][ \t\\].*                                               # text to the line end
      |s(?P<s>[^\\\n\[\]])(?:{_SED_BRACKET}|(?!(?P=s))[^\\\n\[]|\\.)*(?P=s)
       (?:(?!(?P=s))[^\\\n]|\\.)*(?P=s)
       [gpiImM0-9]*                                                  # no e, no w
      |y(?P<y>[^\\\n])(?:(?!(?P=y))[^\\\n]|\\.)*(?P=y)(?:(?!(?P=y))[^\\\n]|\\.)*(?P=y)
    )[ \t]*""",
    re.VERBOSE,
)


def _sed_is_plain(script: str) -> bool:
    """Only printing, deleting, substituting and text commands: no e, w, W, r, R, F or flags."""
    if len(script) > 1024:
        return False
    position = 0
    while position < len(script):
        command = _SED_COMMAND.match(script, position)
        if command is None or command.end() == position:
            return script[position:].strip(" \t;\n") == ""
        position = command.end()
    return True


# What in an awk program may act: commands, pipes, writes, other files read, and gawk's
# `/inet/…` names (a connection, or a server when the remote port is 0) put in ARGV (H19-3).
_AWK_ACTS = re.compile(r"system|getline|[|>]|@|close|fflush|print\s*>|/inet|ARGV|SYMTAB")
# gawk's options (getopt_long, `F:f:v:W;…e:E:…i:l:…Z:`): the letters and long names that take
# a value, glued or the next word, long names cut short (`--assig`); `-W NAME` is `--NAME`;
# and those whose value is optional, glued only (`-Lv`: `v` is -L's value) (H19-7).
_AWK_VALUED_LETTERS = "FvfeEilWZ"
_AWK_OPTIONAL_VALUE_LETTERS = "dDLop"
_AWK_VALUED_LONG = ("assign", "field-separator", "file", "source", "exec", "include", "load")
_AWK_PROGRAM_FILES = frozenset("fEil") | {"file", "exec", "include", "load"}


def _awk_program(args: list[str]) -> list[Acting]:
    """The program texts (the operand, or every `-e`/`--source`) and the data operands."""
    texts: list[str] = []
    from_file, k = False, 0

    def long_option(word: str) -> None:
        nonlocal from_file, k
        name, glued, value = word.partition("=")
        full = [o for o in _AWK_VALUED_LONG if name and o.startswith(name)]
        if full and not glued:
            value, k = (args[k] if k < len(args) else ""), k + 1
        from_file = from_file or any(o in _AWK_PROGRAM_FILES for o in full)
        if "source" in full:
            texts.append(value)

    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            break
        if not token.startswith("-") or token == "-":
            k -= 1
            break
        if token.startswith("--"):
            long_option(token[2:])
            continue
        for i, letter in enumerate(token[1:], 2):
            if letter in _AWK_OPTIONAL_VALUE_LETTERS:
                break
            if letter not in _AWK_VALUED_LETTERS:
                continue
            value = token[i:]
            if not value:
                value, k = (args[k] if k < len(args) else ""), k + 1
            if letter == "W":
                long_option(value)
            from_file = from_file or letter in _AWK_PROGRAM_FILES
            if letter == "e":
                texts.append(value)
            break
    if not texts and not from_file and k < len(args):
        texts, k = [args[k]], k + 1
    return [
        Acting((text,), "the awk program may run commands or write files")
        for text in texts
        if _AWK_ACTS.search(text)
    ] + [
        Acting((operand,), "opens a network connection or listens (gawk's /inet names)")
        for operand in args[k:]
        if operand.startswith(("/inet/", "/inet4/", "/inet6/"))
    ]


_GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l"})
_GIT_CONFIG_READING_SUBCOMMANDS = frozenset({"get", "list"})  # git 2.46's `git config get`
_GIT_CONFIG_VALUED = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment"})


def _git_config(use: Acting, args: list[str]) -> Acting | None:
    """`git config KEY VALUE` writes: the rule must name the KEY; reading needs nothing.
    git reads its options up to the first operand: `git config KEY VALUE list` (or `-l`,
    there a value pattern) writes, and only an action before the operands makes it read."""
    if use.names != ("config",):
        return use
    after = args[args.index("config") + 1 :] if "config" in args else []
    k, reads, undone = 0, False, False
    while k < len(after) and after[k].startswith("-") and after[k] != "-":
        if after[k] == "--":
            k += 1
            break
        reads = reads or after[k] in _GIT_CONFIG_READS
        # `--get --no-get KEY VALUE`: the action taken back, the key written (F125)
        undone = undone or after[k].startswith("--no-")
        k += 2 if after[k] in _GIT_CONFIG_VALUED else 1
    reads = reads and not undone
    if reads or (k < len(after) and after[k] in _GIT_CONFIG_READING_SUBCOMMANDS):
        return None
    keys = [t for t in after if not t.startswith("-") and t not in ("set", "unset")]
    return Acting((keys[0],) if keys else ("config",), "writes git configuration")


# A pretty format's signature placeholders (`--format=%G?`): git verifies each commit's.
# for-each-ref's `%(signature)` atoms (git 2.48+) verify each tag's and commit's (F119).
# A `+`, `-` or space may stand between `%` and the placeholder (`%+GS`, F136).
_SIGNATURE_FORMAT = re.compile(r"%[-+ ]?G[?GSKFPT]|%\(signature")


def _git_signature_formats(args: list[str]) -> list[Acting]:
    return [Acting(("%G",), _VERIFIES)] if any(map(_SIGNATURE_FORMAT.search, args)) else []


# What gives `git commit`, an annotated `git tag` and `git notes add` their message: without one
# of these they open the editor for it. (short letters, long names; `--fixup=amend:` edits.)
_GIT_MESSAGE = {
    "commit": ("mFC", ("message", "file", "reuse-message", "no-edit", "fixup", "dry-run")),
    "tag": ("mF", ("message", "file")),
    "notes": ("mFC", ("message", "file", "reuse-message")),
}
_GIT_MESSAGE_VALUED = "mFcCtu"  # letters after one of these in a cluster are its value
_GIT_TAG_ANNOTATED = ("asu", ("annotate", "sign", "local-user"))


def _git_editor(args: list[str]) -> list[Acting]:
    """`git commit`, `git commit --amend`, `git tag -a v1`, `git notes add`: with no message
    given, git runs the editor for one (whether or not a terminal is there to use it)."""
    k = _git_subcommand_at(args)
    if k < len(args) and args[k] == "pull" and any(map(_interactive_rebase, args[k + 1 :])):
        return [Acting(("--rebase",), _EDITS)]  # `git pull --rebase=interactive`
    if k >= len(args) or args[k] not in _GIT_MESSAGE:
        return []
    subcommand, rest = args[k], args[k + 1 :]
    if subcommand == "notes":
        while rest and (rest[0] == "--ref" or rest[0].startswith("--ref=")):
            rest = rest[2:] if rest[0] == "--ref" else rest[1:]  # `notes --ref x add` (F125)
        if rest[:1] not in (["add"], ["append"], ["edit"]):
            return []
        rest = rest[1:]
    if subcommand == "tag" and not _git_gives(rest, *_GIT_TAG_ANNOTATED):
        return []  # a lightweight tag (or a listing): no message at all
    if _git_gives(rest, *_GIT_MESSAGE[subcommand]) and not _takes_back(rest):
        return []
    return [Acting(("--edit",), _EDITS)]


# `git commit -m x --no-message`: a later negation takes the message back (F125).
_GIT_MESSAGE_NEGATED = ("--no-message", "--no-file", "--no-reuse-message", "--no-fixup")


def _takes_back(args: list[str]) -> bool:
    """parse-options takes any unambiguous start of a negation: `--no-mess` (F136)."""
    negations = (*_GIT_MESSAGE_NEGATED, "--no-dry-run")
    return any(_negates(token, negations) for token in args)


def _negates(token: str, negations: tuple[str, ...]) -> bool:
    """Whether `token` is one of `negations` (`--no-NAME`) or a start of one git takes."""
    name = token.split("=", 1)[0]
    return len(name) > len("--no-") and any(n.startswith(name) for n in negations)


def _before_end_of_options(args: list[str]) -> list[str]:
    """The words git may read as options: after `--` or `--end-of-options` all are operands."""
    for k, token in enumerate(args):
        if token in ("--", "--end-of-options"):
            return args[:k]
    return args


def _interactive_rebase(token: str) -> bool:
    """`--rebase=interactive`, `--reb=i`, `-r=i`, `-ri`: pull's rebase, interactive."""
    if token.startswith("-r") and not token.startswith("-r="):
        token = "-r=" + token[2:]  # `-ri`: the optional value glued (F125)
    name, _, value = token.partition("=")
    spelled = name == "-r" or (len(name) > 2 and "--rebase".startswith(name))
    return spelled and value[:1] == "i"


def _git_gives(args: list[str], letters: str, names: tuple[str, ...]) -> bool:
    """Whether git's options among `args` include one of `letters` (also in a cluster, before
    a valued letter) or a long option among `names` (abbreviated too)."""
    for k, token in enumerate(args):
        if token in ("--", "--end-of-options"):
            return False
        if token.startswith("--") and len(token) > 2:
            name, _, value = token[2:].partition("=")
            if name == "fixup" or (len(name) > 1 and "fixup".startswith(name)):
                value = value or (args[k + 1] if k + 1 < len(args) else "")
                if value.startswith(("amend:", "reword:")):
                    continue  # `--fixup=amend:HEAD` edits the message it takes over
            if any(option.startswith(name) for option in names):
                return True
        elif token.startswith("-") and len(token) > 1:
            for letter in token[1:]:
                if letter in letters:
                    return True
                if letter in _GIT_MESSAGE_VALUED:
                    break
    return False


# Properties of `mvn -DNAME[=VALUE]` that choose what the build does, not where it writes.
_MAVEN_INERT = frozenset(
    {"skipTests", "maven.test.skip", "skipITs", "test", "it.test", "maven.javadoc.skip"}
    | {"checkstyle.skip", "spotbugs.skip", "pmd.skip", "jacoco.skip", "enforcer.skip"}
    | {"gpg.skip", "failIfNoTests", "surefire.failIfNoSpecifiedTests", "revision"}
    | {"maven.test.failure.ignore", "changelist", "sha1"}
)


# Maven's long options it also takes with one dash (commons-cli's GnuParser strips the dashes:
# `-log-file F`, `-define x=y`, `-global-settings F`) (F124).
_MAVEN_LONG = frozenset(
    {"define", "log-file", "file", "settings", "global-settings", "toolchains"}
    | {"global-toolchains"}
)


def _maven_long(token: str) -> str:
    name = token[1:].split("=", 1)[0]
    return "-" + token if token[:2] != "--" and token[:1] == "-" and name in _MAVEN_LONG else token


def _maven_properties(args: list[str]) -> list[str]:
    """The property names `mvn` args define: `-Dname`, `-D name=v`, `--define=name`."""
    names, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        long, equals, value = token[2:].partition("=")
        spelled_long = token.startswith("--") and long and "define".startswith(long)
        if token in ("-D", "--D") or spelled_long:
            if not equals:
                value, k = (args[k] if k < len(args) else ""), k + 1
        elif token.startswith("--D="):
            value = token[len("--D=") :]
        elif token.startswith("-D"):
            value = token[2:]
        else:
            continue
        # `-Drevision=x/../../tmp/y`: a value that is a path is no inert one (F147)
        name, _, setting = value.partition("=")
        names.append(f"{name}=" if "/" in setting or "\\" in setting else name)
    return names


# `npm install DIR`, `pip install DIR`: a package folder (or archive) is built where it is (pip
# writes build/ and *.egg-info there) and its scripts run (npm's `prepare`, a setup.py).
_INSTALLERS = {
    "npm": frozenset({"install", "i", "add"}),
    "pip": frozenset({"install"}),
    # From their manuals (not installed where the oracle runs): `yarn add ../x`, `uv pip
    # install ../x`, `poetry add ../x`.
    **dict.fromkeys(("yarn", "poetry"), frozenset({"add"})),
    "pnpm": frozenset({"add", "install", "i"}),
    "uv": frozenset({"add", "pip"}),
}
_ELSEWHERE = "builds a package folder outside the working directory, running its scripts there"


# The options whose value is a spec, or a file of specs (`-r`), glued to it: `-r/x`,
# `--requirement=/dev/stdin`, `--req=…` (optparse takes an unambiguous start).
_SPEC_OPTIONS = ("--requirement", "--editable", "--constraint")
# ... and uv's (`--requirements=F`, `--overrides=F`), pip's and uv's `--group=PYPROJECT:NAME` (F122)
_SPEC_OPTIONS += ("--requirements", "--constraints", "--overrides", "--build-constraints")
_SPEC_OPTIONS += ("--group",)
_SPEC_OPTIONS += ("--requirements-from-script",)  # pip 26: a PEP 723 script's dependencies


def _spec_value(token: str) -> str:
    if token[:2] in ("-r", "-e", "-c") and len(token) > 2 and token[1] != "-":
        return token[2:].removeprefix("=")
    name, equals, value = token.partition("=")
    if equals and len(name) > 3 and any(option.startswith(name) for option in _SPEC_OPTIONS):
        return value
    return token


# A package named by its address (F120): the code comes from there, not from the registry or
# index the project is configured with (a rule for `pip install *` admits the index's
# packages, as one for `git push *` the project's remotes): a URL, a git repository, a hosted
# one (`github:x/y`) and, for npm, yarn and pnpm, GitHub's `owner/repo` shorthand.
_FROM_AN_ADDRESS = "installs a package from an address of its own, not the configured registry"
_ADDRESS = re.compile(
    r"(?:^|[@\s])(?:[a-z][a-z0-9+.-]*://|git\+|git@|(?:github|gitlab|bitbucket|gist):)"
)
_GITHUB_SHORTHAND = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?")


def _named_by_address(program: str, spec: str) -> bool:
    address = _ADDRESS.search(spec)
    if address is not None:  # `file:///x` is a path: see below
        return not address.group(0).lstrip("@ \t").startswith("file://")
    if program not in _PACKAGE_MANAGERS:
        return False
    # `owner/repo`, or after an alias's name: `x@owner/repo`, `@s/x@owner/repo#main` (F132)
    aliased = spec[1:].partition("@")[2] if spec.startswith("@") else spec.partition("@")[2]
    return any(_GITHUB_SHORTHAND.fullmatch(each) for each in (spec, aliased) if each)


_LOCAL_PROTOCOL = re.compile(r"^(?:file|link|portal):")


def _packages_elsewhere(program: str, args: list[str]) -> list[Acting]:
    """The package specs of an install that are paths leaving the working directory
    (`/usr/share/x`, `../x`, `file:../x`, `name@file:/x`, `name @ file:///x`, `-e=/x`)."""
    words = [_spec_value(a) for a in args]
    words = [w for w in words if not w.startswith("-")]
    if not words or words[0] not in _INSTALLERS[program]:
        return []
    found = []
    for word in words[1:]:
        if _named_by_address(program, word):
            # named as written, or without its revision (`…/b.git@v1`, `owner/repo#main`)
            unpinned = re.sub(r"[@#][^/@#]*$", "", word)
            found.append(Acting(tuple(dict.fromkeys((word, unpinned))), _FROM_AN_ADDRESS))
            continue
        if "exec:" in word:  # yarn's generator script, run to make the package (F122)
            found.append(Acting((word,), "runs the script that generates the package"))
            continue
        path = word.rpartition("@")[2].strip()  # `name@file:…`, pip's `name @ file:///…`
        if "patch:" in word:  # `x@patch:x@npm%3A1#/tmp/x.patch`: a patch from there
            path = word.rpartition("#")[2]
        # yarn's and pnpm's `link:` and `portal:` name a folder as `file:` does (F122); npm
        # reads `file://X/…` as `/X/…` (F132)
        path = _LOCAL_PROTOCOL.sub("", path)
        path = "/" + path.lstrip("/") if path.startswith("//") else path
        # `x@~/pkg`: the home folder's (F132)
        if path and (_leaves(path) or path.startswith("~")):
            found.append(Acting((word,), _ELSEWHERE))
    return found


# cmake's cache entries that choose how the project is built, not which program runs or where.
_CMAKE_INERT = frozenset(
    {"CMAKE_BUILD_TYPE", "BUILD_TESTING", "BUILD_SHARED_LIBS", "CMAKE_EXPORT_COMPILE_COMMANDS"}
    | {"CMAKE_VERBOSE_MAKEFILE", "CMAKE_COLOR_DIAGNOSTICS", "CMAKE_C_STANDARD"}
    | {"CMAKE_CXX_STANDARD", "CMAKE_CXX_STANDARD_REQUIRED", "CMAKE_POSITION_INDEPENDENT_CODE"}
    | {"CMAKE_INTERPROCEDURAL_OPTIMIZATION", "CMAKE_MESSAGE_LOG_LEVEL"}
)


def _cmake_entries(args: list[str]) -> list[str]:
    """The cache entry names `cmake` args define: `-DNAME=V`, `-D NAME:TYPE=V`."""
    names, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "-D":
            value, k = (args[k] if k < len(args) else ""), k + 1
        elif token.startswith("-D"):
            value = token[2:]
        else:
            continue
        names.append(value.split("=", 1)[0].split(":", 1)[0])
    return names


# cmake's and ctest's `--version [FILE]`, `--help-full [FILE]`, `--help-command NAME [FILE]`...
# write FILE: the next word that is no option, after the name for these.
_CMAKE_HELP_NAMED = frozenset(
    {"--help-command", "--help-module", "--help-policy", "--help-property", "--help-variable"}
    | {"--help-manual"}
)


# MSBuild's switches (any of `-`, `--`, `/`, case-insensitive, the value after `:`) that load
# code, set the properties its imports and tools come from, or write where they are told.
_MSBUILD_SETS = "sets MSBuild properties: the folders it writes, the files it imports"
_MSBUILD_ACTING = {
    **dict.fromkeys(("property", "p", "restoreproperty", "rp"), _MSBUILD_SETS),
    **dict.fromkeys(("logger", "l", "distributedlogger", "dl"), "loads a logger assembly"),
    **dict.fromkeys(("binarylogger", "bl", "preprocess", "pp", "targets", "ts"), WRITES_FILES),
    **dict.fromkeys(("outputresultscache", "orc", "profileevaluation"), WRITES_FILES),
    **dict.fromkeys(("fileloggerparameters", "flp"), WRITES_FILES),  # `-flp:LogFile=/etc/x`
    # where `-getProperty`, `-getItem`, `-getTargetResult` put their results (F119)
    "getresultoutputfile": WRITES_FILES,
    **{f"{name}{n}": WRITES_FILES for name in ("fileloggerparameters", "flp") for n in range(10)},
}
_MSBUILD_SWITCH = re.compile(r"(?:--|-|/)([A-Za-z][A-Za-z0-9]*)(?=:|$)")
# MSBuild's switches that take no value: `/restore` is one, `/tmp` a project's path.
_MSBUILD_BARE = frozenset(
    {"restore", "r", "nologo", "m", "maxcpucount", "bl", "binarylogger", "noautoresponse"}
    | {"noautorsp", "ds", "detailedsummary", "fl", "filelogger", "tl", "graph", "graphbuild"}
    | {"isolate", "isolateprojects", "q", "question", "pp", "preprocess", "ts", "targets"}
    | {"noconlog", "noconsolelogger", "interactive", "lowpriority", "low", "ver", "version"}
    | {"help", "h", "warnaserror", "err", "nowarn", "noerr", "orc", "outputresultscache"}
)


def _msbuild_switch(token: str) -> str | None:
    """The switch a word spells for MSBuild (`/p:X=1`, `-Property:X`, `--bl`), lowercased."""
    match = _MSBUILD_SWITCH.match(token)
    if match is None:
        return None
    name = match.group(1).lower()
    if token.startswith("/") and ":" not in token and name not in _MSBUILD_BARE:
        return None  # `/tmp/x.csproj`: a path
    return name


def _msbuild_switches(args: list[str]) -> list[Acting]:
    """`dotnet build /p:OutDir=/etc/`, `-logger:/tmp/x.dll`, `@/tmp/x.rsp` (more switches from a
    file); and `dotnet test -- NAME=VALUE`, run settings that move its results or add code."""
    found = []
    for k, token in enumerate(args):
        if token == "--":
            if args[k + 1 :]:
                found.append(Acting(("--",), "sets vstest run settings (results, adapters)"))
            break
        if token.startswith("@"):
            found.append(Acting(("@",), "reads more MSBuild switches from a file"))
            continue
        name = _msbuild_switch(token)
        if name in _MSBUILD_ACTING:
            head = token.split(":", 1)[0]
            names = (head, f"-{name}", f"/{name}:", f"--{name}")
            found.append(Acting(tuple(dict.fromkeys(names)), _MSBUILD_ACTING[name]))
    return found


# dotnet's options whose value is the next word (never a project).
_DOTNET_VALUED = frozenset(
    {"-c", "--configuration", "-f", "--framework", "-r", "--runtime", "-o", "--output", "-v"}
    | {"--verbosity", "-s", "--source", "--settings", "--version-suffix", "--os", "-a", "--arch"}
    | {"--test-adapter-path", "--artifacts-path", "--results-directory", "-l", "--logger"}
    | {"--collect", "--diag", "-d", "--filter", "-e", "--environment", "-p", "--property"}
    | {"--packages", "--configfile", "--blame-crash-dump-type", "--blame-hang-dump-type"}
    | {"--blame-hang-timeout", "--launch-profile", "--project", "--framework"}
)


def dotnet_projects(args: list[str]) -> list[str]:
    """The project, solution, folder or test assembly `dotnet build|test|run... ARGS` builds
    or runs (`--project` too): its MSBuild code (or the tests in the DLL) runs."""
    if not args or args[0] not in _DOTNET_MSBUILD:
        return []
    projects, k = [], 1
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            break
        if token == "--project" and k < len(args):
            projects.append(args[k])
        if token in _DOTNET_VALUED:
            k += 1
        elif token.startswith("--project="):
            projects.append(token.split("=", 1)[1])
        elif not token.startswith(("-", "@")) and _msbuild_switch(token) is None:
            projects.append(token)
    return projects


# go's flags handed to the tools it runs (`-ldflags=-extld=PROG` runs PROG as the linker, `-o
# FILE` writes there); the ones in _GO_INERT_TOOL_FLAGS only name what is built (`-X v=1 -s
# -w`, `-N -l`), so `-ldflags "-X main.version=1.2"` stays the project's build.
_GO_TOOL_FLAGS = ("-ldflags", "-gcflags", "-asmflags", "-gccgoflags")
_GO_INERT_TOOL_FLAGS = {
    "-ldflags": frozenset({"X", "s", "w", "buildid", "v", "compressdwarf", "checklinkname"}),
    "-gcflags": frozenset({"N", "l", "m", "e", "S", "B", "C", "wb", "live", "std", "complete"}),
}
_GO_PACKAGE_PATTERN = re.compile(r"[^-=\s][^=\s]*=")  # `all=`, `./cmd/...=`: the packages


def _go_tool_flags(args: list[str]) -> list[Acting]:
    """`go build -ldflags=-extld=/x/ls`, `-gcflags 'all=-cpuprofile=/etc/x'`: every flag in
    the value but the inert ones runs a program or writes a file (from go's manual)."""
    found, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "-args":
            break
        name, equals, value = token.lstrip("-").partition("=")
        option = "-" + name
        if not token.startswith("-") or option not in _GO_TOOL_FLAGS:
            continue
        if not equals:
            value, k = (args[k] if k < len(args) else ""), k + 1
        if packages := _GO_PACKAGE_PATTERN.match(value):
            value = value[packages.end() :]
        inert = _GO_INERT_TOOL_FLAGS.get(option, frozenset())
        for word in value.replace("'", " ").replace('"', " ").split():
            flag = word.lstrip("-").split("=", 1)[0]
            if word.startswith("-") and flag not in inert:
                found.append(Acting((option, word), f"passes {word} to the tool go runs"))
    return found


def _go_versioned_packages(args: list[str]) -> list[Acting]:
    """`go run golang.org/x/tools/cmd/stringer@latest`: go downloads that module and runs its
    program, code from the network that the project never named (as `npx`, `uvx` do). And
    `go run cmd/go env -w …`, `go run cmd/gofmt -w /tmp/x.go`: a package of Go's own tree
    (an import path with no dot in its first element: `cmd/...`, `std`) is the toolchain's
    program, run with any arguments (F123)."""
    if args[:2] == ["mod", "download"]:
        # a module named with its version may ask for a newer go, which go downloads and runs
        # (F137)
        return [
            Acting((word, "@"), "downloads a module, and the toolchain it asks for, and runs it")
            for word in args[2:]
            if "@" in word and not word.startswith("-")
        ]
    if args[:1] == ["fmt"]:
        # `go fmt std`, `go fmt crypto/tls`, `go fmt all`: gofmt -w on Go's own tree (F137)
        return [
            Acting((word,), "rewrites the files of a package of Go's own tree")
            for word in args[1:]
            if _goroot_package(word) and not word.endswith(".go")
        ]
    if args[:1] not in (["run"], ["install"], ["build"], ["test"], ["vet"], ["generate"]):
        return []
    found = []
    for word in go_packages(args):
        if "@" in word and args[0] in ("run", "install"):
            found.append(Acting((word, "@"), "downloads a module and runs its program"))
        elif _goroot_package(word):
            found.append(Acting((word,), "builds and runs a package of Go's own tree"))
    return found


def _gradle_properties(args: list[str]) -> list[Acting]:
    """`gradle properties` (a task's name may be shortened: `prop`, `:app:prop`) prints every
    project property, the user's ~/.gradle/gradle.properties' credentials among them (F124)."""
    tasks = [token.rsplit(":", 1)[-1] for token in args if not token.startswith("-")]
    found = [t for t in tasks if len(t) >= 3 and "properties".startswith(t.lower())]
    return [Acting((task,), _REVEALS) for task in found]


# ctest's dashboard steps: Submit uploads the build's and tests' logs to the project's CDash
# site, Update runs the project's version control update (a fetch, the tree rewritten) (F123).
# `-T all`, in any case, is every step (H21-N3)
_CTEST_STEPS = {"submit": SENDS, "update": RUNS, "all": SENDS}
# `-D MemoryCheck`, `-D NightlyMemoryCheck`: dashboards of their own, submitted (F143)
_CTEST_STEPS |= {"memorycheck": SENDS}
_CTEST_MODELS = ("experimental", "nightly", "continuous")


def _ctest_dashboards(args: list[str]) -> list[Acting]:
    found = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        if token in ("-D", "--dashboard", "-T", "--test-action"):
            name, value = token, following
        elif token.startswith("-D") and len(token) > 2:
            name, value = "-D", token[2:]
        elif token.startswith(("--dashboard=", "--test-action=")):
            name, _, value = token.partition("=")
        else:
            continue
        value = value.lower()
        if name in ("-D", "--dashboard") and "=" in value:
            continue  # `-D VAR=VALUE`: a variable of a ctest script
        model = next((m for m in _CTEST_MODELS if value.startswith(m)), None)
        step = value.removeprefix(model) if model else value
        if model and not step:
            found.append(Acting((name,), "runs every dashboard step, Update and Submit too"))
        elif step in _CTEST_STEPS:
            found.append(Acting((name,), _CTEST_STEPS[step]))
    return found


def _goroot_package(word: str) -> bool:
    first = word.split("/", 1)[0]
    return bool(first) and not word.startswith(("-", "~")) and "." not in first


# go's flags whose value is the next word (their `-flag=value` spelling is one word).
_GO_VALUED = frozenset(
    {"-C", "-o", "-p", "-asmflags", "-buildmode", "-compiler", "-gccgoflags", "-gcflags"}
    | {"-installsuffix", "-ldflags", "-mod", "-modfile", "-overlay", "-pgo", "-pkgdir", "-tags"}
    | {"-toolexec", "-exec", "-covermode", "-coverpkg", "-coverprofile", "-run", "-bench"}
    | {"-count", "-cpu", "-timeout", "-parallel", "-benchtime", "-list", "-skip", "-fuzz"}
    | {"-fuzztime", "-shuffle", "-vet", "-outputdir", "-cpuprofile", "-memprofile", "-f"}
    | {"-blockprofile", "-mutexprofile", "-trace", "-memprofilerate", "-blockprofilerate"}
    | {
        "-mutexprofilefraction",
        "-fuzzminimizetime",
        "-fuzzcachedir",
        "-vettool",
        "-debug-actiongraph",
    }
)
_GO_BUILDING = frozenset({"build", "test", "run", "vet", "install", "list", "generate"})


def go_packages(args: list[str]) -> list[str]:
    """The packages, files or folders `go build|test|run... ARGS` builds and runs (`go run`'s
    first, the rest its program's arguments), and the folder of `-C DIR`, where it runs."""
    if not args or args[0] not in _GO_BUILDING:
        return []
    packages, k = [], 1
    flags_ended = False
    while k < len(args):
        token, k = args[k], k + 1
        if token == "-args" or (token == "--" and args[0] == "test"):
            break  # the rest is the test binary's
        if args[0] == "run" and packages and not token.endswith(".go"):
            break  # `go run main.go -- x`: the program's arguments, from the first non-file
        if token == "--" and not flags_ended and not packages:
            flags_ended = True  # for go's flag package `--` only ends the flags (F137)
            continue
        option = "-" + token.lstrip("-")
        if flags_ended:
            packages.append(token)
            if args[0] == "run" and not token.endswith(".go"):
                break
        elif token.startswith("-") and option in _GO_VALUED:
            value, k = (args[k] if k < len(args) else ""), k + 1
            if option == "-C":
                packages.append(value)
        elif token.startswith(("-C=", "--C=")):
            packages.append(token.split("=", 1)[1])
        elif not token.startswith("-"):
            packages.append(token)
            if args[0] == "run" and not token.endswith(".go"):
                break  # `go run ./cmd/x ARGS`: the program's arguments follow
    return packages


# The JavaScript tools' options whose value is code they load (a config file they execute, a
# formatter, a plugin, a test runner) or a folder whose code they run (`jest --rootDir DIR`):
# one outside the workspace is code the rules never saw (from their manuals: none is installed
# where the oracle runs). yargs also takes the kebab-case spelling (`--root-dir`).
_CODE_PATH_OPTIONS = {
    "eslint-options": (
        "-c",
        "--config",
        "-f",
        "--format",
        "--resolve-plugins-relative-to",
        "--parser",
        # the name standard input is linted as: its folder's configuration is loaded (F121)
        "--stdin-filename",
        # the configuration it prints for a file is the one beside that file, run (F142)
        "--print-config",
    ),
    "prettier-options": ("--config", "--plugin", "--plugin-search-dir", "--stdin-filepath")
    + ("--file-info",),  # the configuration beside the file is loaded (F142)
    "jest": ("-c", "--config", "--rootDir", "--roots", "--testRunner", "--reporters", "--runner")
    + ("--globalSetup", "--globalTeardown", "--testEnvironment", "--resolver", "--projects")
    + ("--setupFiles", "--setupFilesAfterEnv", "--testSequencer", "--snapshotResolver")
    + ("--testResultsProcessor", "--watchPlugins", "--preset", "--filter", "--modulePaths")
    + ("--env",)  # testEnvironment's other name (F117)
    # the modules it loads to print snapshots and coverage, the folders it resolves modules
    # from, and (JSON values: see _JSON_CODE_OPTIONS) its transformers and module map (F119)
    + ("--prettierPath", "--snapshotSerializers", "--moduleDirectories", "--coverageReporters")
    + ("--transform", "--moduleNameMapper", "--haste"),
    "vitest": ("-c", "--config", "-r", "--root", "--dir", "--reporter", "--workspace")
    + ("--globalSetup", "--environment", "--setupFiles")
    # a custom pool, diff configuration, coverage reporter or browser provider: a module (F119)
    + ("--pool", "--diff", "--coverage.reporter", "--browser.provider")
    + ("--experimental.vcsProvider",),  # imported to find the changed files (F121)
    # mocha's required modules, reporter, interface, configuration files and extra specs (F119)
    "mocha-options": ("-r", "--require", "-R", "--reporter", "-u", "--ui", "--config")
    + ("--package", "--file", "--spec"),
    # the tsconfig whose `paths` resolve the specs' imports, another reporter (F121)
    "playwright": ("-c", "--config", "--reporter", "--tsconfig", "--add-reporter"),
    # golangci-lint's configuration names the plugins (shared objects) it loads.
    "golangci-lint": ("-c", "--config"),
    # rspec's spec files and folders run as Ruby: an operand or `--default-path` elsewhere.
    "rspec-options": ("--default-path", "-P", "--pattern"),  # spec files it loads (F123)
}


# eslint's and prettier's options whose value is the next word (their other words are files).
_CONFIG_FROM_OPERANDS = {
    "eslint": frozenset(
        {"-c", "--config", "--env", "--ext", "--global", "--parser", "--parser-options"}
        | {"--resolve-plugins-relative-to", "--rulesdir", "--plugin", "--rule", "--ignore-path"}
        | {"--ignore-pattern", "--stdin-filename", "-f", "--format", "-o", "--output-file"}
        | {"--max-warnings", "--cache-location", "--cache-strategy", "--fix-type", "--flag"}
        | {"--concurrency", "--report-unused-disable-directives-severity"}
    ),
    "prettier": frozenset(
        {"--config", "--plugin", "--ignore-path", "--stdin-filepath", "--parser", "--print-width"}
        | {"--tab-width", "--trailing-comma", "--arrow-parens", "--end-of-line", "--prose-wrap"}
        | {"--embedded-language-formatting", "--html-whitespace-sensitivity", "--quote-props"}
        | {"--cache-location", "--cache-strategy", "--log-level", "--config-precedence"}
        | {"--cursor-offset", "--range-start", "--range-end", "--object-wrap"}
    ),
}


# jest's options whose value is JSON naming modules (`--transform '{"\\.js$": "/tmp/x.js"}'`).
_JSON_CODE_OPTIONS = frozenset({"--transform", "--moduleNameMapper", "--haste"})


def _json_strings(value: str) -> list[str]:
    """The string literals of a JSON value, decoded (`"\\u002ftmp"` is `/tmp`), found by their
    quotes whatever the nesting (a parser has a depth past which it gives up, node's is far
    deeper than Python's); the value itself when it holds none (jest refuses it, but
    nothing is lost by judging it). Keys are patterns, judged as well: that only asks more."""
    strings = []
    for literal in _JSON_STRING.findall(value):
        try:
            strings.append(json.loads(literal))
        except ValueError:
            strings.append(literal)
    return strings or [value]


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


# mocha's options whose value is the next word (its other words are spec files it runs).
_MOCHA_VALUED = frozenset(
    {"-r", "--require", "-R", "--reporter", "-O", "--reporter-option", "--reporter-options"}
    | {"-u", "--ui", "--config", "--package", "--file", "--spec", "-g", "--grep", "-f"}
    | {"--fgrep", "--extension", "--ignore", "--exclude", "-t", "--timeout", "--slow", "-s"}
    | {"-j", "--jobs", "--retries", "-n", "--node-option", "--watch-files", "--watch-ignore"}
)


# rspec's own formatters; any other name is a class it requires a library for by its name
# (`-f Debug::Open` started the debug gem's server, which another process drove) (F123).
_RSPEC_FORMATTERS = frozenset(
    {"progress", "p", "documentation", "d", "html", "h", "json", "j", "failures", "f"}
)


def _rspec_formatters(args: list[str]) -> list[Acting]:
    found = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        name, equals, value = token.partition("=")
        if token in ("-f", "--format"):
            name, value = token, following
        elif token.startswith("-f") and len(token) > 2:
            name, value = "-f", token[2:]
        elif re.fullmatch(r"-[a-zA-Z]*f", token):
            name, value = "-f", following  # `-bf X`: a cluster ending in the valued letter
        elif re.fullmatch(r"-[a-zA-Z]+f.+", token) and not token.startswith("--"):
            name, value = "-f", token[token.index("f") + 1 :]  # `-bfX`
        elif token.startswith("--") and _long_spells("rspec", "--format", name[2:]):
            value = value if equals else following  # `--form X`, `--FORMAT X` (F145)
        else:
            continue
        if value.lower() not in _RSPEC_FORMATTERS:
            found.append(Acting((name, "--format"), "requires the formatter's library"))
    return found


_RUBY_GLOB = re.compile(r"[{}\\]|(?:^|/)\.[*?\[]")


def _rspec_globs(args: list[str]) -> list[Acting]:
    r"""`rspec -P '{..}/../tmp/x/*_spec.rb'`, `rspec '{..}/tmp/x'`: rspec hands its pattern,
    its folder operands and `--default-path` to Ruby's `Dir[]`, where `{..}`, `\.\.` and `.*`
    climb like `..`: such a value is no path the engine can read (F145)."""
    values = _operands(args, _RSPEC_VALUED) + _option_values(args, ("-P", "--default-path"))
    values += [
        value if equals else (args[k + 1] if k + 1 < len(args) else "")
        for k, token in enumerate(args)
        for name, equals, value in [token.partition("=")]
        if token.startswith("--") and _long_spells("rspec", "--pattern", name[2:])
    ]
    values += [t[t.index("P") + 1 :] for t in args if re.fullmatch(r"-[a-zA-Z]*P.+", t)]
    values += [args[k + 1] for k, t in enumerate(args[:-1]) if re.fullmatch(r"-[a-zA-Z]+P", t)]
    return [
        Acting((v,), "is a Ruby glob, which climbs with `{..}`")
        for v in values
        if _RUBY_GLOB.search(v)
    ]


# rspec's options whose value is the next word.
_RSPEC_VALUED = frozenset(
    {"-I", "-r", "--require", "-O", "--options", "-o", "--out", "-f", "--format", "-e"}
    | {"--example", "-t", "--tag", "--default-path", "--seed", "--order", "-P", "--pattern"}
    | {"--exclude-pattern", "--failure-exit-code", "--error-exit-code", "-c", "--color"}
)


def _operands(args: list[str], valued: frozenset[str]) -> list[str]:
    """The words that are no option nor an option's value (`valued`: those taking the next)."""
    operands, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            return operands + args[k:]
        if token in valued:
            k += 1
        elif not token.startswith("-"):
            operands.append(token)
    return operands


@lru_cache(maxsize=1024)
def _kebab(option: str) -> str:
    return re.sub(r"(?<=[a-z])([A-Z])", lambda m: "-" + m.group(1).lower(), option)


@lru_cache(maxsize=64)
def _option_spellings(program: str) -> tuple[tuple[str, str], ...]:
    """Each code path option of `program`, and its kebab-case spelling (yargs takes both)."""
    options = _CODE_PATH_OPTIONS.get(program, ())
    return tuple((spelling, option) for option in options for spelling in (option, _kebab(option)))


def code_paths(program: str, args: list[str]) -> list[str]:
    """The values of `program`'s options that name code it loads or a folder it runs, and the
    operands whose code it runs: rspec's specs, the files whose configuration eslint and
    prettier load."""
    options = _CODE_PATH_OPTIONS.get(program, ())
    if program in _CONFIG_FROM_OPERANDS:
        # They look for their configuration (JavaScript they run: `.eslintrc.js`,
        # `prettier.config.js`) from each file's folder up: a file outside is that code too.
        operands = _operands(args, _CONFIG_FROM_OPERANDS[program])
        if program == "prettier":  # it expands `{src,/tmp/x}/*.js` and `@(a|b)` itself (F121)
            operands = [each for operand in operands for each in glob_alternatives(operand)]
        return operands + code_paths(f"{program}-options", args)
    if program == "rspec":
        return _operands(args, _RSPEC_VALUED) + code_paths("rspec-options", args)
    if program == "mocha":  # its operands are spec files it runs
        return _operands(args, _MOCHA_VALUED) + code_paths("mocha-options", args)
    if program == "uv":
        return _uv_build_sources(args)
    if program in ("black", "ruff"):
        return _formatter_configuration_paths(program, args)
    if program == "python":
        module = _python_module_args(args)  # `python -m black --check /tmp/x/a.py`
        return code_paths(*module) if module and module[0] in ("black", "ruff") else []
    spellings = dict(_option_spellings(program))
    if program == "rspec-options":  # OptionParser's spellings: `--Default-Path`, `--de-p`
        spellings |= {
            token.split("=", 1)[0]: option
            for token in args
            for option in options
            if token.startswith("--") and _long_spells("rspec", option, token[2:].split("=")[0])
        }
    if program in _CLUSTERING:
        args = _short_spellings(args, "".join(o[1] for o in options if len(o) == 2))
    values, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        name, equals, value = token.partition("=")
        if name not in spellings or token == "--":
            continue
        if not equals:
            value, k = (args[k] if k < len(args) else ""), k + 1
        if spellings[name] in _JSON_CODE_OPTIONS or value.lstrip().startswith("{"):
            # `jest --config '{"globalSetup": "/tmp/x.js"}'`: a configuration as JSON (F121)
            values += _json_strings(value)
        else:
            values += [part for part in value.split(",") if part]
    return values


def _formatter_configuration_paths(program: str, args: list[str]) -> list[str]:
    """black and ruff read the configuration (pyproject.toml, ruff.toml) from each file's
    folder up, and the stdin file name's: its `cache-dir` is written, black's `src` formatted
    (H20-3). A file outside is that configuration, in a dry run too."""
    key = program
    if program == "ruff":
        if not args or args[0] not in ("check", "format"):
            return []
        key, args = f"ruff {args[0]}", args[1:]
    stdin_names = _option_values(args, ("--stdin-filename",))
    return _operands(args, _FORMATTER_VALUED[key]) + stdin_names


# Their options that open a port on the host they name (the default is the loopback one): a
# debugger (`--inspect=0.0.0.0:9229`) or a UI anyone who reaches it can drive (F121).
_LISTENING = {
    "vitest": ("--inspect", "--inspectBrk", "--inspect-brk", "--api.host", "--browser.api.host"),
    "playwright": ("--ui-host",),
    "yarn": ("--inspect", "--inspect-brk"),  # `yarn run --inspect=H:P BIN`: node's (F122)
}
_LOOPBACK = frozenset({"", "127.0.0.1", "localhost", "::1"})
_HOST_AND_PORT = re.compile(r"[\w.\[\]:-]*:\d+")
_LISTENS = "listens on the network address it names"


def _listeners(program: str, args: list[str]) -> list[Acting]:
    found = []
    for k, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name not in _LISTENING[program]:
            continue
        if not equals:
            following = args[k + 1] if k + 1 < len(args) else ""
            named = name.endswith("host") or _HOST_AND_PORT.fullmatch(following)
            value = following if named else ""
        # a host option with no value, an empty one or `0` is every interface (F142)
        if _exposed(value) or (name.endswith("host") and value.strip("[]") in ("", "0")):
            found.append(Acting((name,), _LISTENS))
    return found


def _exposed(address: str) -> bool:
    """Whether `HOST:PORT`, `HOST` or `PORT` names a host other than the loopback one
    (`0:8000` is every interface to Django, `9229` the default, loopback, host)."""
    host, colon, _port = address.rpartition(":")
    if not colon:
        host = "" if address.isdigit() else address
    return host.strip("[]") not in _LOOPBACK


def _vitest_experimental(args: list[str]) -> list[Acting]:
    """`--experimental.openTelemetry.sdkPath=F` (imported in every worker),
    `--experimental.fsModuleCachePath=DIR` (filled, and deleted with `--clearCache`): vitest
    passes any key under `experimental` into its configuration unchecked (F142)."""
    return [
        Acting((token.split("=", 1)[0],), RUNS)
        for token in args
        if token.startswith(("--experimental.", "--browser.experimental."))
    ]


def _vitest_json_report(args: list[str]) -> list[Acting]:
    """`vitest list --json=/tmp/x` writes the list there (`--json` alone prints it) (F121)."""
    for k, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name == "--json" and not equals and k + 1 < len(args):
            value = args[k + 1] if "/" in args[k + 1] or args[k + 1].endswith(".json") else ""
        if name == "--json" and value not in ("", "true", "false"):
            return [Acting(("--json",), WRITES_FILES)]
    return []


# yargs (jest), mri (vitest) and commander (playwright) read a cluster of short options (`-ic
# F` is `-i -c F`) and a value glued to its letter (`-cF`); yargs and mri read `--c` as `-c`.
# pflag (golangci-lint) reads them the same way, but `--c` (F137).
_CLUSTERING = frozenset({"jest", "vitest", "playwright", "golangci-lint"})


def _short_spellings(args: list[str], letters: str) -> list[str]:
    """`args` with each spelling of the one-letter options `letters` written out as `-L
    VALUE`: in a cluster, the letter takes the rest of the word or, with none, the next
    word (which, depends on the parser and the letters before it: both are judged) (F121)."""
    words: list[str] = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        name, equals, value = token.partition("=")
        if len(name) == 3 and name.startswith("--") and name[2] in letters:
            words += [name[1:], value if equals else following]
            continue
        if token.startswith("--") or not token.startswith("-") or len(token) <= 2:
            words.append(token)
            continue
        at = next((j for j in range(1, len(token)) if token[j] in letters), None)
        if at is None:
            words.append(token)
            continue
        rest = token[at + 1 :].removeprefix("=")
        words += [f"-{token[at]}", following] + ([f"-{token[at]}", rest] if rest else [])
    return words


_ALTERNATIVES = re.compile(r"\{([^{}]*,[^{}]*)\}|[@!+*?]\(([^()]*\|[^()]*)\)")
_MOST_ALTERNATIVES = 64


def glob_alternatives(pattern: str) -> list[str]:
    """The patterns a glob's `{a,b}` and `@(a|b)` alternatives spell, for a tool that expands
    them itself (fast-glob, micromatch): `{src,/tmp/x}/*.js` is also `/tmp/x/*.js`. Past
    a bound, the pattern and its parts as words."""
    done, waiting = [], [pattern]
    while waiting:
        if len(done) + len(waiting) > _MOST_ALTERNATIVES:
            return [pattern, *re.split(r"[{},|()]", pattern)]
        current = waiting.pop()
        match = _ALTERNATIVES.search(current)
        if match is None:
            done.append(current)
            continue
        braces, extglob = match.groups()
        choices = braces.split(",") if braces is not None else extglob.split("|")
        waiting += [current[: match.start()] + c + current[match.end() :] for c in choices]
    return done


# `cargo clippy -- ARGS` hands ARGS to clippy-driver, which reads rustc's command line
# (`--emit=link=/tmp/x`, `-o F`, `--codegen linker=P`, `@FILE`): only lint levels are read as
# inert (`-D warnings`, `-W clippy::pedantic`, `--cap-lints warn`) (F123).
_LINT_LEVELS = frozenset({"-D", "-W", "-A", "-F", "--deny", "--warn", "--allow", "--forbid"})


_CLIPPY_JOIN = "__CLIPPY_HACKERY__"


def _rustdoc_split_words(args: list[str]) -> list[Acting]:
    """`cargo test -- 'x --logfile F'`: cargo hands each word (and the test name) to rustdoc
    as `--test-args`, which splits it on whitespace into libtest's options (F141)."""
    if args[:1] not in (["test"], ["bench"]):
        return []
    return [
        Acting((word,), "rustdoc splits it into options for the test harness")
        for word in args[1:]
        if word.split() != [word] and any(part.startswith("-") for part in word.split())
    ]


def _clippy_driver_options(args: list[str]) -> list[Acting]:
    if args[:1] != ["clippy"] or "--" not in args:
        return []
    # cargo-clippy joins the words with `__CLIPPY_HACKERY__`, clippy-driver splits on it: a
    # word holding it is several rustc options (F141)
    words = [part for word in args[args.index("--") + 1 :] for part in word.split(_CLIPPY_JOIN)]
    found, k = [], 0
    while k < len(words):
        token, k = words[k], k + 1
        name = token.split("=", 1)[0]
        if token in _LINT_LEVELS or token == "--cap-lints":
            level = words[k] if k < len(words) else ""
            k += 1
            if level.startswith("@"):
                # rustc expands a response file before it reads options: the file's first
                # line is the level, the rest options (`-Clinker=/tmp/x/ld`) (H21-N4)
                found.append(Acting((token, level), _RESPONSE_FILE))
        elif name in _LINT_LEVELS | {"--cap-lints"} or token[:2] in _LINT_LEVELS:
            continue
        else:
            found.append(Acting((token,), "is handed to rustc (clippy-driver), which acts on it"))
    return found


_CMAKE_INSTALLS = "installs to CMAKE_INSTALL_PREFIX (/usr/local unless the cache says otherwise)"


# ninja's tools that only print (`-t targets`); any other (`browse` serves the build graph on
# an address it is given, `clean` deletes, `restat` rewrites the log) acts (F124).
_NINJA_PRINTING = frozenset(
    {"commands", "inputs", "targets", "query", "deps", "graph", "compdb", "rules", "list"}
    | {"missingdeps", "msvc", "multi-inputs"}
)


def _ninja_tools(args: list[str]) -> list[Acting]:
    tools = [args[k + 1] for k, token in enumerate(args[:-1]) if token == "-t"]
    tools += [token[2:] for token in args if token.startswith("-t") and len(token) > 2]
    return [Acting(("-t", tool), RUNS) for tool in tools if tool not in _NINJA_PRINTING]


def _cmake_install_target(args: list[str]) -> list[Acting]:
    """`cmake --build build --target install` is `cmake --install build`: the files go to the
    install prefix, outside the workspace unless configured otherwise."""
    if "--build" not in args:
        return []
    targets, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            break
        if token in ("-t", "--target"):
            while k < len(args) and not args[k].startswith("-"):
                targets.append(args[k])
                k += 1
        elif token.startswith(("--target=", "-t=")):
            targets += token.split("=", 1)[1].split(",")
    if "--" in args:  # `cmake --build build -- install`: the build tool's goals (F115)
        targets += [t for t in args[args.index("--") + 1 :] if not t.startswith("-")]
    # cmake reads a target as a `;` list, make and ninja `./install` as `install` (H21-N2)
    targets = [normalise_path(each) for target in targets for each in target.split(";")]
    installing = [t for t in targets if t == "install" or t.startswith("install/")]
    return [Acting(("--target", "install"), _CMAKE_INSTALLS)] if installing else []


# mvn's options whose value is the next word: the other words are its goals and phases.
_MAVEN_VALUED = frozenset(
    {"-f", "--file", "-s", "--settings", "-gs", "--global-settings", "-t", "--toolchains"}
    | {"-gt", "--global-toolchains", "-l", "--log-file", "-D", "--define", "-P"}
    | {"--activate-profiles", "-pl", "--projects", "-rf", "--resume-from", "-T", "--threads"}
    | {"-b", "--builder", "--color", "-emp", "--encrypt-master-password", "-ep"}
    | {"--encrypt-password"}
)


def _maven_plugin_coordinates(args: list[str]) -> list[Acting]:
    """`mvn com.example:evil-maven-plugin:1.0:run`: a goal named by its coordinates makes
    Maven download that plugin and run it, code the project never named (`dependency:tree`,
    a prefix, is one of the plugin groups Maven resolves by default)."""
    goals = [token for token in _operands(args, _MAVEN_VALUED) if token.count(":") >= 2]
    return [Acting((goal,), "downloads the Maven plugin it names and runs it") for goal in goals]


# cmake's options whose value may be the next word, and the modes in which its operands are
# no source folder (`-E rm x`, `-P script`, `--build DIR`).
_CMAKE_VALUED = frozenset(
    {"-S", "-B", "-C", "-D", "-U", "-G", "-T", "-A", "-H", "--toolchain", "--install-prefix"}
    | {"--preset", "--build", "--install", "--open", "-P", "--system-information"}
)
_CMAKE_MODES = frozenset(
    {"-E", "-P", "--build", "--install", "--open", "--workflow", "--find-package"}
    | {"--system-information", "--version", "-version", "--help", "-h", "-help", "/?", "/V"}
)


def cmake_source_folders(args: list[str]) -> list[str]:
    """The folders whose CMake code `cmake ARGS` configures (running every `execute_process`
    there): `-S DIR`, the old `-H DIR`, or an operand (a source folder, or a build folder whose
    cache names one). None in cmake's other modes (`--build`, `-E`, `-P`...)."""
    folders, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token in _CMAKE_MODES or token.startswith("--help"):
            return []
        if token in _CMAKE_VALUED:
            value, k = (args[k] if k < len(args) else ""), k + 1
            if token in ("-S", "-H"):
                folders.append(value)
        elif token[:2] in ("-S", "-H") and len(token) > 2:
            folders.append(token[2:].removeprefix("="))  # `-S=DIR` is DIR (F143)
        elif not token.startswith("-") or token == "-":
            folders.append(token)
    return [_home_expanded(folder) for folder in folders if folder]


def _cmake_help_files(args: list[str]) -> list[str]:
    files = []
    for k, token in enumerate(args):
        if token in ("--version", "-version", "/V") or token.startswith("--help-"):
            words = list(
                takewhile(
                    lambda w: not w.startswith("-") and w not in ("/V", "/?"), args[k + 1 : k + 3]
                )
            )
            files += words[1:2] if token in _CMAKE_HELP_NAMED else words[:1]
    return files


# make's options whose value may be the next word: the words left are goals and assignments.
_MAKE_VALUED = frozenset(
    {"-f", "-C", "-I", "-o", "-W", "-E", "--file", "--makefile", "--directory", "--eval"}
    | {"--include-dir", "--old-file", "--assume-old", "--what-if", "--new-file", "--assume-new"}
)


def _make_goals(args: list[str]) -> list[str]:
    """The goals `make` is asked for that leave its working directory: files its rules, the
    built-in ones too, write (`make /usr/share/x/y` runs `cat y.sh > y` there; `make -t GOAL`
    touches it). Goals in the working directory are the project's own (`make test`)."""
    goals, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token in _MAKE_VALUED:
            k += 1
        elif not token.startswith("-") and not _MAKE_ASSIGNMENT.match(token):
            # `x.a(/tmp/evil/e.o)`: an archive's member, built (and then deleted) where named
            member = re.fullmatch(r"[^()]*\((.*)\)", token)
            named = (token, member.group(1) if member else "")
            goals += [_home_expanded(goal) for goal in named if goal and _leaves(goal)]
    return goals


def _home_expanded(path: str) -> str:
    """`~/x`, `~daemon/../share/x` as make, cmake and ctest expand them: in a home folder,
    outside the workspace (the exact one unknown: under `/~`, where a rule can see it)."""
    return f"/{path}" if path.startswith("~") else path


def written_operands(base: str, args: list[str]) -> list[str]:
    """The files a program's operands name for writing (`tee a b`, `cp x DEST`, `dd of=F`)."""
    program = canonical_program(base)
    if program == "dd":
        return [token[3:] for token in args if token.startswith("of=")]
    if program in STARTS_A_JVM:
        # The JVM keeps its performance data in /tmp whatever TMPDIR says.
        written = _option_values(args, OUTPUT_OPTIONS.get(program, ()))
        written += _jar_written(args) if program == "jar" else []  # (F178)
        return ["/tmp/hsperfdata_<user>", *written]
    if program == "make":
        return _make_goals(args)
    if program in ("cmake", "ctest"):
        values = _option_values(args, OUTPUT_OPTIONS.get(program, ())) + _cmake_help_files(args)
        if program == "cmake" and "--build" in args and "--" in args[args.index("--build") :]:
            # `cmake --build DIR -- GOALS`: make's goals (F143)
            values += _make_goals(args[args.index("--", args.index("--build")) + 1 :])
        return [_home_expanded(value) for value in values]
    if program == "python":
        module = _python_module_args(args)
        return (written_operands(*module) if module else []) + _python_written(args)
    if program == "coverage":
        # `coverage run -m pytest /tmp/x` writes where pytest would (F121)
        module, target, rest = _coverage_target(args)
        return written_operands(target, rest) if module and target in _COVERAGE_RUNNERS else []
    if program == "gcc":
        args = _gcc_words(args)
    if program == "gcc":
        return _option_values(args, OUTPUT_OPTIONS[program]) + _precompiled_headers(args)
    if program == "openssl":
        return _option_values(_openssl_words(args), OUTPUT_OPTIONS[program])
    if program == "patch":
        return _patch_written(args)
    if program == "zip":
        return _zip_written(args)
    if program == "iconv":
        # glibc's argp: `-co/tmp/f` (a cluster), `--out F` (an abbreviation) (F171)
        words = read_getopt(args, "fto", ("from-code", "to-code", "output"))
        return [value for option, value in words.values if option in ("o", "output")]
    if program == "psql":
        # getopt_long: `-Ao/tmp/f` (a cluster), `--out F`, `--log F` (abbreviations) (F176)
        words = read_getopt(args, _PSQL_VALUED, _PSQL_LONG_VALUED)
        return [
            value for option, value in words.values if option in ("o", "output", "L", "log-file")
        ]
    if program == "gpg":
        return _gpg_written(args)
    if program == "rustc":
        # `--emit=link=/tmp/x,asm`: each kind given a path is written there (F178)
        emitted = _option_values(args, ("--emit",))
        paths = [kind.partition("=")[2] for value in emitted for kind in value.split(",")]
        return _option_values(args, OUTPUT_OPTIONS[program]) + [path for path in paths if path]
    if program == "docker":
        return _docker_written(args)
    if program == "ssh-keygen":
        return _ssh_keygen_written(args)
    if program in OUTPUT_OPTIONS:
        return _option_values(args, OUTPUT_OPTIONS[program])
    if program == "vim":
        return _vim_written(args)
    if program == "aws":
        return _aws_written(args)
    if program == "tar":
        # `tar -cf /tmp/a.tar src` writes the archive there (`-` is standard output)
        writing, archives = tar_archives(args)
        return [a for a in archives if a != "-" and not _tar_remote(a, args)] if writing else []
    if program == "pytest":
        return _pytest_paths_elsewhere(args)
    if program == "cargo":
        return _cargo_written(args)
    if program == "go" and args[:1] in (["mod"], ["work"]):
        return _go_edited_file(args)
    if program == "go" and args[:1] == ["fmt"]:
        return [t for t in args[1:] if not t.startswith("-")]  # `go fmt ../other/...`
    if program == "uv":
        return _created_projects(program, args) + _uv_script_files(args)
    if program == "poetry":
        return _created_projects(program, args)
    if program == "tsc":
        # `tsc x.ts` writes x.js beside it, `tsc -p DIR`/`-b DIR` that project's outputs: its
        # operands and option values name where it writes (`--target ES2020`: a name, inside).
        return [token for token in args if not token.startswith("-")]
    if program == "unittest":
        return _unittest_folders_elsewhere(args)
    if program == "xxd":
        return _xxd_operands(args)[1:2]
    if program == "git":
        return _git_destinations(args)
    if program == "gh":
        # (F173, gh's manual) the clone's folder, where release and run assets are written
        if args[:2] in (["release", "download"], ["run", "download"]):
            return _option_values(args, ("-D", "--dir", "-O", "--output"))
        return _gh_clone_words(args)[0]
    if program == "ruff" and args[:1] in (["format"], ["check"]):
        return _formatted_operands(f"ruff {args[0]}", args[1:])
    if program in _FORMATTER_DRY_RUNS:
        return _formatted_operands(program, args)
    shape = WRITES.get(program)
    if shape is None:
        return []
    words = read_getopt(
        args,
        _WRITES_VALUED.get(program, ""),
        _WRITES_LONG_VALUED.get(program, ()),
        mode_first=shape == "after-first",  # `chmod -x FILE`: a mode, not an option
        t_names_target=program != "touch",  # touch's `-t STAMP`: a time
    )
    operands, target = words.operands, words.target
    if program == "scp" and (not operands or _scp_remote(operands[-1])):
        return []  # sent to another host: ssh's options and the address are the concern
    parents = program == "cp" and any(len(n) > 1 and "parents".startswith(n) for n in words.longs)
    if shape == "all":
        # `mv -t DIR SRC...` moves each SRC into DIR: DIR is written as well.
        written = operands + ([target] if target is not None else [])
        if program == "py_compile":
            # The byte code goes beside FILE, in its folder's __pycache__: compiling
            # /dev/null writes nothing to /dev/null but makes /dev/__pycache__ (F138).
            written += [
                posixpath.join(posixpath.dirname(f) or ".", "__pycache__") for f in operands
            ]
        return written + _backups(program, args, words, written[-1:])
    if shape == "after-first":
        # `chmod --reference=RFILE FILE...` takes no MODE: every operand is changed (seen:
        # `chmod --reference=notes.txt /tmp/t` re-moded /tmp/t, `chown --reference` /tmp, F171)
        return operands if any(o == "reference" for o, _ in words.values) else operands[1:]
    if shape == "first":
        return operands[:1]
    if shape == "second":
        if program == "uniq":
            # coreutils' obsolete `+N`, anywhere, is `--skip-chars=N`, no file (H19-6)
            operands = [word for word in operands if not re.fullmatch(r"\+\d+", word)]
        return operands[1:2]
    written = [target] if target is not None else operands[-1:]
    sources = operands if target is not None else operands[:-1]
    # (scp's `-T` relaxes its name checks: no `--no-target-directory`)
    no_folder = ("T" in words.letters and program != "scp") or any(
        len(n) > 2 and "no-target-directory".startswith(n) for n in words.longs
    )
    if written and not no_folder:
        # DEST may be a folder: each SRC lands in it under its own name (`cp kit/ruff.toml
        # src/` writes src/ruff.toml; `cp -r kit/. src/` and rsync's `kit/` the folder's files).
        written += [_landed_in(written[0], source) for source in sources]
    written += _backups(program, args, words, written[:1])
    written += link_targets(program, args, words)
    if parents and written:
        # `cp --parents SRC DEST` writes DEST/SRC: `cd a/b && cp --parents ../../f /w/a` is /f.
        sources = operands if target is not None else operands[:-1]
        written += [normalise_path(f"{written[0]}/{source}") for source in sources]
    return written


_TAR_WRITING_LETTERS = frozenset("cruA")
_TAR_WRITING_LONGS = ("create", "append", "update", "catenate", "concatenate", "delete")


def tar_archives(args: list[str]) -> tuple[bool, list[str]]:
    """Whether tar writes its archive (`-c`, `-r`, `-u`, `-A`, `--delete`), and the archives
    `-f`/`--file` name, as GNU tar reads its words (the old `tar cf X`, clusters, `-fX`)."""
    if args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # `tar czf a.tgz`: the old option syntax
    valued = VALUED_LETTERS["tar"]
    writing, archives, k = False, [], 0
    while k < len(args):
        token = args[k]
        if token == "--":
            break
        if token.startswith("--"):
            name, equals, value = token[2:].partition("=")
            if len(name) > 1 and any(o.startswith(name) for o in _TAR_WRITING_LONGS):
                writing = True
            elif name == "file":
                if not equals and k + 1 < len(args):
                    k += 1
                    value = args[k]
                archives.append(value)
        elif token.startswith("-") and token != "-":
            for at, letter in enumerate(token[1:], 2):
                writing = writing or letter in _TAR_WRITING_LETTERS
                if letter in valued:
                    value = token[at:]
                    if not value and k + 1 < len(args):
                        k += 1
                        value = args[k]
                    if letter == "f":
                        archives.append(value)
                    break
        k += 1
    return writing, archives


def _tar_remote(name: str, args: list[str]) -> bool:
    """GNU tar's `_remdev`: an archive `HOST:FILE` (a colon after a first character, no `/`
    before it) is opened by running `rsh HOST /usr/sbin/rmt` (seen under strace: `tar -tf
    127.0.0.1:/x.tar` execs /usr/bin/rsh), unless `--force-local` is given."""
    colon = name.find(":")
    return (
        colon > 0
        and "/" not in name[:colon]
        and not any(len(t) > 3 and "--force-local".startswith(t) for t in args)
    )


# GNU patch 2.7's valued options (its getopt string, and the long ones that take a value).
_PATCH_VALUED = "BdDFgioprVxYz"
_PATCH_LONG_VALUED = (
    "prefix", "directory", "ifdef", "fuzz", "get", "input", "output", "strip", "reject-file",
    "version-control", "debug", "basename-prefix", "suffix", "reject-format", "quoting-style",
)  # fmt: skip
_PATCH_LETTER = {"output": "o", "reject-file": "r", "prefix": "B", "basename-prefix": "Y"}


def _patch_written(args: list[str]) -> list[str]:
    """Where `patch [FILE [PATCHFILE]]` writes (seen in the sandbox): FILE in place, or the
    `-o` file (`--out=F` abbreviated) instead; the rejects to `-r`; backups named `-B`
    PREFIX + file or dir/`-Y` PREFIX + base (`-b -B /tmp/ a` wrote /tmp/a), whatever the
    diff names when no FILE is given (`<files>`); all in the `-d` folder (`-d /tmp/d`
    patched /tmp/d/a): patch changes into it as it reads the option."""
    words = read_getopt(args, _PATCH_VALUED, _PATCH_LONG_VALUED, t_names_target=False)
    folder, given = ".", {"o": [], "r": [], "B": [], "Y": []}
    for option, value in words.values:
        if option in ("d", "directory"):
            folder = posixpath.join(folder, value)
        elif (letter := _PATCH_LETTER.get(option, option)) in given:
            given[letter].append(value)
    patched = [f for f in words.operands[:1] if f != "-"]
    named = patched or ["<files>"]
    written = [f for f in given["o"] if f != "-"] or named
    written += given["r"]
    written += [prefix + f for prefix in given["B"] for f in named]
    written += [
        posixpath.join(posixpath.dirname(f), prefix + posixpath.basename(f))
        for prefix in given["Y"]
        for f in named
    ]
    return [posixpath.join(folder, f) if folder != "." else f for f in written]


# zip 3.0's valued options (a multi-letter one read first: `-TTsh`, `-lf F`, `-tt DATE`), and
# its long spellings; `-x` and `-i` take every word up to the next option.
_ZIP_MULTI_VALUED = ("TT", "tt", "lf")
_ZIP_VALUED = "bnOPstZxi"
_ZIP_LONG = {
    "temp-path": "b", "suffixes": "n", "output-file": "O", "password": "P", "split-size": "s",
    "from-date": "t", "before-date": "tt", "unzip-command": "TT", "logfile-path": "lf",
    "compression-method": "Z", "exclude": "x", "include": "i",
}  # fmt: skip


def _zip_words(args: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """zip's operands (the archive first) and valued options (`TT`, `b`...) with values."""
    operands: list[str] = []
    values: list[tuple[str, str]] = []
    k, options_end = 0, False
    while k < len(args):
        token, k = args[k], k + 1
        option, value = None, None
        if options_end or not token.startswith("-") or token == "-":
            operands.append(token)
        elif token == "--":
            options_end = True
        elif token.startswith("--"):
            name, equals, value = token[2:].partition("=")
            matches = [o for o in _ZIP_LONG if o.startswith(name)] if name else []
            option = _ZIP_LONG[matches[0]] if len(matches) == 1 else None
            value = value if equals else None
        else:
            at = 1
            while at < len(token) and option is None:
                multi = token[at : at + 2]
                if multi in _ZIP_MULTI_VALUED or token[at] in _ZIP_VALUED:
                    option = multi if multi in _ZIP_MULTI_VALUED else token[at]
                    value = token[at + len(option) :] or None
                at += 1
        if option is None:
            continue
        if value is None and k < len(args):
            value, k = args[k], k + 1
        values.append((option, value or ""))
        while option in ("x", "i") and k < len(args) and not args[k].startswith("-"):
            values.append((option, args[k]))
            k += 1
    return operands, values


def _zip_named(path: str) -> list[str]:
    """zip adds `.zip` to an archive with no extension."""
    return [path] if "." in path.rsplit("/", 1)[-1] else [path, path + ".zip"]


def _zip_written(args: list[str]) -> list[str]:
    """Where zip writes (seen in the sandbox): the archive, its first operand, or the `-O`
    archive instead (`zip -q /tmp/out.zip notes.txt` wrote /tmp/out.zip); its temporary file
    in the `-b` folder; the `-lf` log (`-lf /tmp/zlog` wrote /tmp/zlog.log)."""
    operands, values = _zip_words(args)
    outputs = [_zip_named(value) for option, value in values if option == "O"]
    archives = outputs or [_zip_named(a) for a in operands[:1] if a != "-"]
    written = [name for names in archives for name in names]
    written += [value.rstrip("/") + "/<files>" for option, value in values if option == "b"]
    logs = [value for option, value in values if option == "lf"]
    written += logs + [log + ".log" for log in logs if "." not in log.rsplit("/", 1)[-1]]
    return written


def _zip_unzip_command(args: list[str]) -> list[Acting]:
    """`-TT CMD` glued (`-TTsh`) or in a cluster (`-qTTsh`): zip runs CMD on the archive
    to test it (seen: `zip -q out.zip notes.txt -T -TTsh` ran sh)."""
    _, values = _zip_words(args)
    return [Acting(("-TT",), RUNS)] if any(option == "TT" for option, _ in values) else []


def _scp_remote(operand: str) -> bool:
    """OpenSSH's `colon()`: a `[host]:`, `host:` or `user@host:` before any `/` (not a
    leading `:`), or an `scp://` address, is another host's."""
    if operand.startswith("scp://"):
        return True
    return ":" in operand.split("/", 1)[0][1:]


def _landed_in(folder: str, source: str) -> str:
    """Where `cp SOURCE FOLDER` puts SOURCE: its name in the folder, or the folder's files."""
    name = "" if source.endswith("/") else source.rsplit("/", 1)[-1]
    return f"{folder.rstrip('/')}/{'<files>' if name in ('', '.', '..') else name}"


def _pycache_beside(name: str) -> str:
    return posixpath.join(posixpath.dirname(name) or ".", "__pycache__")


def links_copied_from(program: str, args: list[str]) -> list[str]:
    """The sources cp copies as links when they are links: one outside the workspace may be
    a link to anywhere (`/proc/self/root`), and a write through the copy lands there (F131)."""
    if program == "rsync":
        return _rsync_sources(args) if _rsync_keeps("links", args) else []
    if program != "cp":
        return []
    words = read_getopt(args, _WRITES_VALUED["cp"], _WRITES_LONG_VALUED["cp"])
    recursive = _cp_recursive(words)
    # cp keeps the last of `-a`, `-d`, `-P`, `-H`, `-L` given (`cp -rL -P` keeps links), and
    # with none follows every link, or with a recursion only those named on the command line.
    # `-H` follows only those: a recursive copy still makes each link inside the folder
    # again as a link (`cp -rH /etc/fonts/conf.d r` leaves `r/51-local.conf -> /usr/…`).
    follows = "command line" if recursive else "all"
    for flag in words.in_order:
        name = flag.removeprefix("--")
        if flag in ("-L",) or (
            flag.startswith("--") and len(name) > 2 and "dereference".startswith(name)
        ):
            follows = "all"
        elif flag == "-H":
            follows = "command line"
        elif flag in ("-a", "-d", "-P") or (
            flag.startswith("--")
            and len(name) > 1
            and any(o.startswith(name) for o in ("no-dereference", "archive"))
        ):
            follows = "none"
    if follows == "all" or (follows == "command line" and not recursive):
        return []
    return _cp_sources(words)


# Where the special files are (device nodes; /proc's fd links and root lead to them).
SPECIAL_FILE_FOLDERS = ("/dev", "/proc", "/sys", "/run")


def special_files_copied_from(program: str, args: list[str]) -> list[str]:
    """The sources a recursive cp makes again as special files: with `-r`, `-R` or `-a`
    (whatever link flag is last) cp makes a device node, a FIFO or a socket it meets as a
    new one of the same kind and number unless `--copy-contents` is given. `-L` follows
    every link, but what it lands on may be a device: `cp -rL /dev/sda d && echo x > d`
    writes the disk (seen as root: `cp -rL /dev/full f` made `f` the char device 1,7, and
    `echo x > f` failed with ENOSPC, written to the device, not to a file). rsync makes
    them again with `-D`, `--devices` or `-a`, recursive or not (`rsync -a /dev/full f`)."""
    if program == "rsync":
        return _rsync_sources(args) if _rsync_keeps("devices", args) else []
    if program != "cp":
        return []
    words = read_getopt(args, _WRITES_VALUED["cp"], _WRITES_LONG_VALUED["cp"])
    recursive = _cp_recursive(words)
    copy_contents = any(len(n) > 2 and "copy-contents".startswith(n) for n in words.longs)
    if not recursive or copy_contents:
        return []
    return _cp_sources(words)


def _cp_recursive(words: GetoptWords) -> bool:
    """Whether cp copies folders: `-r`, `-R`, `-a`, `--recursive`, `--archive` (abbreviated)."""
    return bool(set(words.letters) & set("aRr")) or any(
        len(n) > 1 and any(o.startswith(n) for o in ("archive", "recursive")) for n in words.longs
    )


def _cp_sources(words: GetoptWords) -> list[str]:
    """The sources of cp or ln: every operand with `-t FOLDER`, else all but the last."""
    return words.operands if words.target is not None else words.operands[:-1]


def _rsync_sources(args: list[str]) -> list[str]:
    return read_getopt(args, _WRITES_VALUED["rsync"], ()).operands[:-1]


def _rsync_keeps(kind: str, args: list[str]) -> bool:
    """Whether rsync makes the source's symbolic links (`kind` "links") or device nodes
    ("devices") again as such. rsync's popt reads its words in order, exact long names only:
    `-a` (`--archive`) sets `-l` and `-D`, a later `--no-l`/`--no-links` (`--no-D`,
    `--no-devices`) takes them back, and `-a` after it sets them again (`rsync --no-l -a
    /proc/self/root r` left `r -> /`). A link is followed with `-L`/`--copy-links`, made a
    file or skipped when it leads out of the copied tree (`--copy-unsafe-links`,
    `--safe-links`, `--munge-links`); `--copy-devices` sends a device's contents."""
    sets = {"links": ("-l", "--links"), "devices": ("-D", "--devices")}[kind]
    unsets = {"links": ("--no-l", "--no-links"), "devices": ("--no-D", "--no-devices")}[kind]
    if kind == "links":
        safe = ("-L", "--copy-links", "--copy-unsafe-links", "--safe-links", "--munge-links")
    else:
        safe = ("--copy-devices",)
    keeps = False
    for flag in read_getopt(args, _WRITES_VALUED["rsync"], ()).in_order:
        if flag in safe:
            return False
        if flag in sets or flag in ("-a", "--archive"):
            keeps = True
        elif flag in unsets:
            keeps = False
    return keeps


def _backups(program: str, args: list[str], words: GetoptWords, written: list[str]) -> list[str]:
    """`cp -b -S v notes.txt .en` renames the old `.en` to `.env`: with `-b`, `--backup` or a
    suffix, cp and mv write the destination plus the suffix (`~` by default), or each
    source's name in a destination folder plus it (F133)."""
    if program not in ("cp", "mv"):
        return []
    suffixes = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        name, equals, value = token.partition("=")
        if token == "--":
            break
        if len(name) > 3 and "--suffix".startswith(name):
            suffixes.append(value if equals else following)
        elif token[:1] == "-" and token[1:2] not in ("-", ""):
            # a cluster: `-fbSv` (`S` takes the rest of the word, or the next one)
            for at, letter in enumerate(token[1:], 2):
                if letter in "tS":
                    if letter == "S":
                        suffixes.append(token[at:] or following)
                    break
    backup = "b" in words.letters or any(len(n) > 1 and "backup".startswith(n) for n in words.longs)
    if not suffixes and not backup:
        return []
    sources = [o for o in words.operands if o not in written]
    found = []
    for suffix in suffixes or ["~"]:
        for destination in written:
            found.append(destination.rstrip("/") + suffix)
            found += [
                f"{destination.rstrip('/')}/{s.rstrip('/').rsplit('/', 1)[-1]}{suffix}"
                for s in sources
            ]
    return found


def symbolic_link_texts(program: str, args: list[str]) -> list[str]:
    """The texts of the symbolic links `cp -s` or `ln -s` makes."""
    if program not in ("cp", "ln"):
        return []
    words = read_getopt(args, _WRITES_VALUED[program], _WRITES_LONG_VALUED[program])
    name = "symbolic-link" if program == "cp" else "symbolic"
    if "s" not in words.letters and not any(len(n) > 1 and name.startswith(n) for n in words.longs):
        return []
    texts = _cp_sources(words)
    if program == "ln" and words.target is None and len(words.operands) == 1:
        texts = words.operands
    return texts


def climbing_link_texts(program: str, args: list[str]) -> list[str]:
    """The texts of the symbolic links `cp -s` or `ln -s` makes that climb (`../../etc/x`):
    right where they are made, but moved or copied as links one folder up (`mv a/b b`, `cp
    -P h ../h`) the same text leads elsewhere (F133)."""
    texts = symbolic_link_texts(program, args)
    if not texts:
        return []
    words = read_getopt(args, _WRITES_VALUED[program], _WRITES_LONG_VALUED[program])
    if program == "ln" and (
        "r" in words.letters or any(len(n) > 1 and "relative".startswith(n) for n in words.longs)
    ):
        return texts  # `ln -r`: ln writes a climbing text the words do not show (F141)
    return [text for text in texts if not text.startswith("/") and ".." in text.split("/")]


# `uv venv DIR`, `uv init DIR`, `poetry new DIR` create DIR (with none: `.venv`, `pyproject.toml`);
# their options whose value is the next word (from their manuals: neither is installed here).
_CREATES_PROJECT = {"uv": {"venv": ".venv", "init": "pyproject.toml"}, "poetry": {"new": ""}}
_CREATING_VALUED = frozenset(
    {"-p", "--python", "--prompt", "-i", "--index-url", "--extra-index-url", "--index"}
    | {"--default-index", "-f", "--find-links", "--link-mode", "--exclude-newer", "--name"}
    | {"--index-strategy", "--keyring-provider", "--cache-dir", "--directory", "--project"}
    | {"--config-file", "--color", "--python-preference", "--build-backend", "--vcs"}
    | {"--author-from", "--description", "--readme", "--dependency", "--dev-dependency"}
    | {"--author", "--license", "--allow-existing"}
)


_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".H", ".h++", ".tcc")
_NO_OUTPUT = frozenset({"-E", "-fsyntax-only", "-M", "-MM"})


def _precompiled_headers(args: list[str]) -> list[str]:
    """`gcc -c /usr/include/stdio.h` writes `/usr/include/stdio.h.gch`: a header given with no
    `-o` is precompiled beside itself (also after `-x c-header`) (F124)."""
    if any(t.startswith("-o") or t in _NO_OUTPUT for t in args):
        return []
    headers, header_language, k = [], False, 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "-x":
            header_language, k = (args[k] if k < len(args) else "").endswith("-header"), k + 1
        elif token.startswith("-x"):
            header_language = token.endswith("-header")
        elif not token.startswith("-") and (header_language or token.endswith(_HEADERS)):
            headers.append(f"{token}.gch")
    return headers


def interpreter_links(program: str, args: list[str]) -> list[str]:
    """`uv venv v` makes `v/bin/python` (and python3, python3.X) a symbolic link to the
    system's interpreter: the start of each such link's path."""
    if program != "uv" or [a for a in args if not a.startswith("-")][:1] != ["venv"]:
        return []
    return [f"{folder.rstrip('/')}/bin/python" for folder in _created_projects(program, args)]


def _created_projects(program: str, args: list[str]) -> list[str]:
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in _CREATES_PROJECT[program]:
        return []
    named = _operands(args[args.index(words[0]) + 1 :], _CREATING_VALUED)
    if named:
        return named[:1]
    default = _CREATES_PROJECT[program][words[0]]
    return [default] if default else []


def _uv_script_files(args: list[str]) -> list[str]:
    """`uv add --script F x` and `uv remove --script F x` rewrite F's inline metadata, `uv lock
    --script F` writes `F.lock` beside it (F120), and `export`, `tree`, `sync` rewrite a lock
    there that is out of date: with any subcommand, after any global option (F121)."""
    scripts = _option_values(args, ("--script",))
    return scripts + [f"{script}.lock" for script in scripts]


# `uv build`'s options whose value is the next word (its operand is the project it builds).
_UV_BUILD_VALUED = frozenset(
    {"-o", "--out-dir", "--package", "-b", "--build-constraint", "-p", "--python", "-C"}
    | {"--config-setting", "--config-settings-package", "--index", "--default-index", "-f"}
    | {"--index-url", "--extra-index-url", "--find-links", "--color", "--cache-dir"}
    | {"--directory", "--project", "--config-file", "--allow-insecure-host", "-P"}
    | {"--upgrade-package", "--refresh-package", "--index-strategy", "--keyring-provider"}
    | {"--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--python-platform"}
)


def _uv_build_sources(args: list[str]) -> list[str]:
    """`uv build /tmp/x` runs that project's build backend there (F121)."""
    if "build" not in args:
        return []
    return _operands(args[args.index("build") + 1 :], _UV_BUILD_VALUED)


def _uv_interpreters(args: list[str]) -> list[Acting]:
    """`uv venv -p /tmp/python`, `uv sync --python ../x/bin/python`: uv runs the interpreter a
    path names (to learn its version, then as the environment's). `-p 3.12` is a version."""
    found = []
    for k, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name not in ("-p", "--python", "--python-executable"):
            continue
        value = value if equals else (args[k + 1] if k + 1 < len(args) else "")
        if "/" in value:
            found.append(Acting((name, "--python"), "runs the Python interpreter it names"))
    if args[:2] in (["python", "find"], ["python", "list"]):
        # the request may be an interpreter's path: uv runs it to learn its version (H20-5)
        for value in (token for token in args[2:] if not token.startswith("-")):
            if "/" in value:
                found.append(Acting((value,), "runs the Python interpreter it names"))
    if args[:2] == ["python", "pin"]:
        # `.python-version` may name an interpreter by path: every later uv command there
        # runs it (the file is a configuration path for a write by hand).
        for value in (token for token in args[2:] if not token.startswith("-")):
            if "/" in value:
                found.append(Acting((value,), "pins an interpreter every uv command runs"))
    return found


FORMATTERS = frozenset({"black", "isort", "ruff"})
# Formatters rewrite, in place, the files and folders they are given (`ruff format` the
# working directory when given none), unless one of these flags says only to check or print.
_FORMATTER_DRY_RUNS = {
    "black": frozenset({"--check", "--diff"}),
    # (`--diff` writes `F.isorted` beside F, then deletes it (H20-8): not a dry run)
    "isort": frozenset({"--check-only", "--check", "-c", "--stdout", "-d"}),
    "ruff format": frozenset({"--check", "--diff"}),
    # `fix = true` in the project's ruff.toml makes `ruff check F` rewrite F (F121)
    "ruff check": frozenset({"--no-fix", "--diff", "--show-settings", "--show-files"}),
}
# Their options whose value is the next word (never a file they rewrite). Any other word
# that is not an option counts as rewritten: a flag taken for a file only asks more.
_FORMATTER_VALUED = {
    "black": frozenset(
        {"-l", "--line-length", "-t", "--target-version", "--include", "--exclude"}
        | {"--extend-exclude", "--force-exclude", "--stdin-filename", "-W", "--workers"}
        | {"--config", "--required-version", "--python-cell-magics", "-c", "--code"}
    ),
    "isort": frozenset(),
    "ruff format": frozenset(
        {"--config", "--line-length", "--target-version", "--exclude", "--extension"}
        | {"--stdin-filename", "--range", "--cache-dir"}
    ),
    "ruff check": frozenset(
        {"--config", "--select", "--ignore", "--extend-select", "--per-file-ignores"}
        | {"--extend-per-file-ignores", "--fixable", "--unfixable", "--extend-fixable"}
        | {"--exclude", "--extend-exclude", "--target-version", "--line-length", "-o"}
        | {"--output-file", "--output-format", "--cache-dir", "--stdin-filename", "--extension"}
        | {"--dummy-variable-rgx", "--add-noqa", "-e"}
    ),
}
# Flags that take no value: a dry run's flag after any other option may be that option's
# value (`black --cache-dir --check F` formats F), so only then it does not count (F121).
_FORMATTER_FLAGS = frozenset(
    {"-q", "--quiet", "-v", "--verbose", "--fast", "--safe", "--preview", "--unstable", "-S"}
    | {"--skip-string-normalization", "-C", "--skip-magic-trailing-comma", "--pyi"}
    | {"--ipynb", "--color", "--no-color", "--no-cache", "--exit-zero", "--show-fixes"}
)
_DRY_FLAGS = frozenset().union(*_FORMATTER_DRY_RUNS.values())


def _formatted_operands(formatter: str, args: list[str]) -> list[str]:
    """The files and folders a formatter rewrites in place (none in a dry run)."""
    operands, dry_run, k = [], False, 0
    while k < len(args):
        token = args[k]
        if token == "--":
            operands += args[k + 1 :]
            break
        if token in _FORMATTER_DRY_RUNS[formatter]:
            before = args[k - 1] if k else ""
            swallowed = before.startswith("-") and "=" not in before and len(before) > 1
            dry_run = dry_run or not swallowed or before in _FORMATTER_FLAGS | _DRY_FLAGS
        elif token in _FORMATTER_VALUED[formatter]:
            k += 1
        elif token != "-" and not token.startswith("-"):
            operands.append(token)
        k += 1
    if dry_run:
        return []
    if formatter in ("ruff format", "ruff check") and not operands:
        operands = ["."]
    # A folder's files are rewritten, not the folder: `black .` writes inside the workspace.
    return [_files_in(operand) for operand in operands if operand != "-"]


def _files_in(operand: str) -> str:
    last = operand.rstrip("/").rsplit("/", 1)[-1]
    if last in ("", ".", "..") or "." not in last:
        return operand.rstrip("/") + "/<files>"
    return operand


# Long options of WRITES programs that take a value (a separate word when not after `=`).
_WRITES_LONG_VALUED = {
    "cp": ("target-directory", "suffix", "sparse", "no-preserve"),
    "mv": ("target-directory", "suffix"),
    "ln": ("target-directory", "suffix"),
    "install": ("target-directory", "suffix", "group", "mode", "owner", "strip-program"),
    "uniq": ("skip-fields", "skip-chars", "check-chars"),
    "touch": ("date", "reference", "time"),
    "mkdir": ("mode",),
    "truncate": ("size", "reference"),
    "chmod": ("reference",),
    "chown": ("from", "reference"),
    "chgrp": ("reference",),
    "split": ("suffix-length", "additional-suffix", "bytes", "line-bytes", "lines", "number")
    + ("separator", "filter"),
    "mknod": ("mode",),
}
_GIT_GLOBAL_VALUED = frozenset(
    {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--shallow-file", "--config-env"}
    | {"--super-prefix", "--attr-source", "--list-cmds", "--exec-path"}
)
# git's own options (git.c): any other before the subcommand is one the engine does not know
# (`--shallow-file log rebase -x CMD` read `log` as the subcommand) (F125).
_GIT_GLOBALS = _GIT_GLOBAL_VALUED | frozenset(
    {"-v", "--version", "-h", "--help", "-p", "--paginate", "-P", "--no-pager", "--bare"}
    | {"--html-path", "--man-path", "--info-path", "--no-replace-objects", "--no-lazy-fetch"}
    | {"--no-optional-locks", "--no-advice", "--literal-pathspecs", "--glob-pathspecs"}
    | {"--noglob-pathspecs", "--icase-pathspecs"}
)
_GIT_CLONE_VALUED = frozenset(
    {"-o", "-b", "-u", "-c", "-j", "--origin", "--branch", "--upload-pack", "--reference"}
    | {"--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since", "--jobs"}
    | {"--shallow-exclude", "--config", "--server-option", "--filter", "--template"}
    | {"--bundle-uri", "--ref-format", "--object-format", "--initial-branch"}
)


def _git_subcommand_at(args: list[str]) -> int:
    """Where git's subcommand is in `git ARGS`: after git's own options (`-C DIR`, `-c K=V`)."""
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_GLOBAL_VALUED else 1
    return k


def _git_destinations(args: list[str]) -> list[str]:
    """The directory `git clone URL DIR` or `git init DIR` creates; the files `git mv`, `rm`,
    `clean`, `checkout`, `restore`, `stash push` and `checkout-index` write, move or delete
    (`git mv hook .git/hooks/pre-commit` renames before it refuses the path; `git checkout
    side -- .githooks` writes the hooks a project runs) (F130)."""
    k = _git_subcommand_at(args)
    if k >= len(args):
        return []
    if args[k] in ("clone", "init"):
        operands = _git_clone_operands(args[k + 1 :])
        return operands[1:2] if args[k] == "clone" else operands[:1]
    rest = args[k + 1 :]
    if args[k] == "stash":
        if rest[:1] != ["push"] and not (rest[:1] and rest[0].startswith("-")):
            return []  # `stash list`, `pop`, `show`, `save`: no pathspec (nor a bare `stash`)
        rest = rest[1:] if rest[:1] == ["push"] else rest
    return [_files_in(path) for path in _git_pathspecs(args[k], rest)]


def _git_pathspecs(subcommand: str, args: list[str]) -> list[str]:
    """The pathspecs of a subcommand that writes, moves or deletes the files they name; none
    when it only changes the index (`restore --staged`, `rm --cached`)."""
    if subcommand not in _GIT_PATHSPEC_VALUED:
        return []
    index_only = {"restore": ("--staged", "-S"), "rm": ("--cached",)}.get(subcommand, ())
    options = _before_end_of_options(args)
    # `--work` is `--worktree`, `--no-cached` takes `--cached` back (F136)
    undone = any(
        _negates(token, ("--no-staged", "--no-cached"))
        or (len(token) > 2 and "--worktree".startswith(token.split("=", 1)[0]))
        or (token[:1] == "-" and token[1:2] != "-" and "W" in token)
        for token in options
    )
    if any(flag in options for flag in index_only) and not undone:
        return []
    if subcommand == "stash" and args[:1] == ["save"]:
        return []  # `stash save [-u] [MESSAGE]`: no pathspecs, everything (F136)
    return _operands(args, _GIT_PATHSPEC_VALUED[subcommand])


def _git_pathspec_patterns(args: list[str]) -> list[Acting]:
    """A pathspec git expands itself (`'*settings.json'`, where `*` crosses folders) or
    with magic (`:/.githooks`, `:(top)…`): the files it writes are not the words (F130)."""
    k = _git_subcommand_at(args)
    if k >= len(args):
        return []
    rest = args[k + 1 :]
    if args[k] == "stash" and rest[:1] == ["push"]:
        rest = rest[1:]
    pathspecs = _git_pathspecs(args[k], rest)
    found = [
        Acting((pathspec,), "writes the files git's own pathspec matching finds")
        for pathspec in pathspecs
        if pathspec.startswith(":") or any(c in pathspec for c in "*?[")
    ]
    options = _before_end_of_options(rest)
    if args[k] in _GIT_PATHSPEC_VALUED and any(
        len(name) > 3 and "--pathspec-from-file".startswith(name)
        for name in (token.split("=", 1)[0] for token in options)
    ):
        # the paths it writes are in a file or on stdin (F136)
        found.append(Acting(("--pathspec-from-file",), "writes the files a list names"))
    # Untracked files removed everywhere (`git clean -fdx`, `git stash -u`): an untracked
    # `.claude/settings.json` or `.env` among them, which the rules guard by name (F130).
    # `/workspace`, an absolute path: the top of the working tree, for all the engine knows
    everywhere = not pathspecs or any(_normalised_is_here(p) or p[:1] == "/" for p in pathspecs)
    dry_run = any(
        t in ("-n", "--dry-run") or (t[:2] == "-n" and t[1:2] != "-") for t in options
    ) and not any(_negates(t, ("--no-dry-run",)) for t in options)
    flags = [
        t
        for t in options
        # `--include`, `--al`: git's abbreviations (F136)
        if any(len(t) > 2 and long.startswith(t) for long in ("--include-untracked", "--all"))
        or (t[:1] == "-" and t[1:2] != "-" and {"u", "a"} & set(t[1:].split("m")[0]))
    ]
    names = ["clean"] if args[k] == "clean" else flags[:1] if args[k] == "stash" else []
    if names and everywhere and not dry_run:
        found.append(Acting((names[0],), "deletes untracked files, configuration files among them"))
    return found


def _normalised_is_here(path: str) -> bool:
    return normalise_path(path) in ("", ".")


# The options of the commands that write their pathspecs whose value is the next word.
_GIT_PATHSPEC_VALUED = {
    "mv": frozenset(),
    "rm": frozenset({"--pathspec-from-file"}),
    "clean": frozenset({"-e", "--exclude"}),
    "checkout": frozenset({"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"}),
    "restore": frozenset({"-s", "--source", "--conflict", "--pathspec-from-file"}),
    "stash": frozenset({"-m", "--message", "--pathspec-from-file"}),
    "checkout-index": frozenset({"--prefix", "--stage"}),
}
# git's own merge strategies; any other NAME is the program `git-merge-NAME` on the PATH (F130).
_GIT_STRATEGIES = frozenset({"ort", "recursive", "resolve", "octopus", "ours", "subtree"})


def _git_merge_strategies(args: list[str]) -> list[Acting]:
    k = _git_subcommand_at(args)
    if k >= len(args) or args[k] not in ("merge", "pull", "rebase", "cherry-pick", "revert"):
        return []
    strategies = _option_values(args[k + 1 :], ("-s",)) + [
        value if has_value else (args[n + 1] if n + 1 < len(args) else "")
        for n, token in enumerate(args[k + 1 :], k + 1)
        for name, has_value, value in [token.partition("=")]
        if len(name) > 3 and "--strategy".startswith(name)
    ]
    return [
        Acting(("-s", strategy), "runs the program git-merge-NAME found on the PATH")
        for strategy in strategies
        if strategy not in _GIT_STRATEGIES
    ]


# `git apply` writes the files its patch names (`.githooks/pre-commit`, `.claude/…`), which
# the command line does not show; these only report (F130).
_GIT_APPLY_REPORTS = frozenset({"--check", "--stat", "--numstat", "--summary"})


def _git_patches_applied(args: list[str]) -> list[Acting]:
    k = _git_subcommand_at(args)
    if k >= len(args) or args[k] != "apply":
        return []
    options = [t for t in _before_end_of_options(args[k + 1 :]) if t.startswith("--")]
    # `--no-stat` takes the report back, `--app` is `--apply`; after `--` a word is a patch
    # (F136).
    negations = tuple(f"--no-{report[2:]}" for report in _GIT_APPLY_REPORTS)
    applies = any(len(o) > 3 and "--apply".startswith(o) or _negates(o, negations) for o in options)
    if any(option in _GIT_APPLY_REPORTS for option in options) and not applies:
        return []
    return [Acting(("apply",), "writes the files the patch names")]


# What puts the files of the repository's objects (a commit, a stash, the index) into the
# working tree, whatever their names. The agent can make such objects without writing a file
# (`git fast-import`, a fetched bundle, `reset --soft` to one), so a `.claude/settings.local.json`
# or `.githooks/pre-commit` among them lands where no write the engine reads names it (F152).
_GIT_LANDS_TREES = frozenset(
    {"merge", "pull", "rebase", "cherry-pick", "revert", "bisect", "am"}
    | {"checkout-index", "sparse-checkout", "worktree", "submodule", "clone"}
)
_GIT_STASH_KEEPS_TREE = frozenset({"list", "show", "drop", "clear", "create", "store"})
# Their subcommands that put no files in the working tree (`submodule foreach` is read apart).
_GIT_SHOWS_ONLY = {
    "worktree": frozenset({"list"}),
    "submodule": frozenset({"status", "summary", "foreach"}),
    "bisect": frozenset({"log", "visualize", "view"}),
}
_GIT_SWITCH_VALUED = frozenset({"-c", "-C", "--create", "--force-create", "--orphan"})
LANDS = "puts the files of a commit, a stash or the index in the working tree, whatever they are"


def _git_trees_landed(args: list[str]) -> list[Acting]:
    k = _git_subcommand_at(args)
    if k >= len(args):
        return []
    subcommand, rest = args[k], args[k + 1 :]
    options = _before_end_of_options(rest)
    if subcommand in _GIT_LANDS_TREES:
        lands = not (
            subcommand in _GIT_SHOWS_ONLY and rest[:1] and rest[0] in _GIT_SHOWS_ONLY[subcommand]
        )
    elif subcommand == "reset":
        # git reads a unique prefix (`--k` is `--keep`) and the last mode given: any of these
        # lands, and the rule must name it (`git reset --soft *` is not a rule for `--hard`)
        modes = [
            mode
            for name in (token.split("=", 1)[0] for token in options)
            for mode in ("--hard", "--merge", "--keep")
            if len(name) > 2 and mode.startswith(name)
        ]
        return [Acting((f"reset {mode}", mode), LANDS) for mode in dict.fromkeys(modes)]
    elif subcommand == "read-tree":
        lands = any(t[:1] == "-" and t[1:2] != "-" and "u" in t[1:] for t in options)
    elif subcommand == "stash":
        lands = rest[:1] == [] or rest[0] not in _GIT_STASH_KEEPS_TREE
    elif subcommand == "switch":
        lands = bool(_git_operands(rest, _GIT_SWITCH_VALUED))
    elif subcommand == "checkout":
        # a commit (or a branch, a tag: any name) before `--`, a forced checkout, a folder
        operands = _git_operands(options, _GIT_PATHSPEC_VALUED["checkout"])
        forced = any(_forces_checkout(t) for t in options)
        lands = bool(operands) or forced or _lands_a_folder("checkout", rest)
    elif subcommand == "restore":
        lands = _lands_a_folder("restore", rest)
    else:
        return []
    return [Acting((subcommand,), LANDS)] if lands else []


# `git archive` expands the `$Format:…$` placeholders of each file the archived tree's own
# .gitattributes marks `export-subst`, as `git log --format` does: `%G?`, `%GS`, `%GK`… of a
# commit with a `gpgsig` header run gpg (F46 held those formats on the command line only).
# `git hash-object -w` writes such a tree and commit, so no word of the script shows them.
ARCHIVE_PLACEHOLDERS = (
    "expands the $Format placeholders of the files it packs (export-subst, set by the "
    "archived tree itself): a signature's runs gpg"
)


def _git_archive_placeholders(args: list[str]) -> list[Acting]:
    k = _git_subcommand_at(args)
    if k < len(args) and args[k] == "archive":
        return [Acting(("archive",), ARCHIVE_PLACEHOLDERS)]
    return []


def _forces_checkout(token: str) -> bool:
    """`-f`, `-qf`, `--force` and its prefixes (`--for`); in a cluster, up to the letter whose
    value is the rest of the word (`-bfix` names the branch `fix`)."""
    if token.startswith("--"):
        return len(token) > 2 and "--force".startswith(token.split("=", 1)[0])
    if not token.startswith("-"):
        return False
    for letter in token[1:]:
        if letter == "f":
            return True
        if letter in "bB":
            return False
    return False


def _lands_a_folder(subcommand: str, rest: list[str]) -> bool:
    """`git restore .`, `git checkout -- src`: the files in the folder are the objects' own."""
    return any(
        path.endswith("/<files>")
        for path in (_files_in(p) for p in _git_pathspecs(subcommand, rest))
    )


def _git_clone_operands(args: list[str]) -> list[str]:
    """The operands of `git clone` or `git init` (after the subcommand)."""
    return _git_operands(args, _GIT_CLONE_VALUED)  # init's valued options are among clone's


def _git_operands(args: list[str], valued: frozenset[str]) -> list[str]:
    operands, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            return operands + args[k:]
        if token.startswith("-") and token != "-":
            k += _git_takes_next_word(token, valued)
        else:
            operands.append(token)
    return operands


# Flags whose name starts a valued option's (`--recurse-submodules` is fetch's flag, with an
# optional glued value): git takes an exact name before an abbreviation.
_GIT_EXACT_FLAGS = frozenset({"--recurse-submodules"})


def _git_takes_next_word(token: str, valued: Iterable[str]) -> bool:
    """Whether git's parse-options takes the word after `token` as its value: a valued long
    option, or an abbreviation of one (`--dep 1`), or a cluster whose last letter is a valued
    short option (`-qo x`; a letter before the end takes the rest of the word) (F130)."""
    if token.startswith("--"):
        if "=" in token or token in _GIT_EXACT_FLAGS or len(token) < 3:
            return False
        return any(option.startswith(token) for option in valued if option[:2] == "--")
    letters = token[1:]
    for at, letter in enumerate(letters):
        if "-" + letter in valued:
            return at == len(letters) - 1
    return False


# The options of the commands that reach a repository which take their value as the next word
# (`git push -o ci.skip origin`), so the word after one is not the repository.
_GIT_REACHING_VALUED = {
    "push": ("--repo", "--recurse-submodules", "--receive-pack", "--exec", "-o")
    + ("--push-option",),
    "fetch": ("--upload-pack", "-j", "--jobs", "--depth", "--shallow-since", "--deepen")
    + ("--shallow-exclude", "--refmap", "-o", "--server-option", "--negotiation-tip")
    + ("--filter", "--submodule-prefix", "--recurse-submodules-default"),
    "pull": ("--cleanup", "-s", "--strategy", "-X", "--strategy-option", "--upload-pack")
    + ("--depth", "--shallow-since", "--shallow-exclude", "--deepen", "--refmap", "-o")
    + ("--server-option", "--negotiation-tip"),
    "ls-remote": ("--upload-pack", "--sort", "-o", "--server-option"),
}
_REACHES = "reaches a repository that no configured remote names (an address or a path)"


def _names_a_place(repository: str) -> bool:
    """A URL (`https://…`, `ext::…`), an scp-like address (`host:path`) or a path, where git
    would otherwise take a configured remote's name (`origin`)."""
    return (
        "/" in repository
        or ":" in repository
        or repository.startswith((".", "~"))
        or repository in ("", "-")
    )


def _git_repository_elsewhere(args: list[str]) -> list[Acting]:
    """`git push /tmp/x HEAD`, `git push https://elsewhere/r.git`, `git fetch ../other`: a
    rule for `git push *` means the project's remotes; a repository named by its address is
    one the rule never saw, where the code goes (push) or what is read (a path outside the
    workspace), so the rule must name it."""
    k = _git_subcommand_at(args)
    if k < len(args) and args[k] in _GIT_REACHING_ADDRESSES:
        return [
            Acting((place,), _REACHES)
            for place in dict.fromkeys(_GIT_REACHING_ADDRESSES[args[k]](args[k + 1 :]))
            if _is_an_address(place)
        ]
    if k >= len(args) or args[k] not in _GIT_REACHING_VALUED:
        return []
    valued = _GIT_REACHING_VALUED[args[k]]
    k0 = k
    places: list[str] = []
    operands: list[str] = []
    k += 1
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--":
            operands += args[k:]
            break
        if token.startswith("--") and len(token) > 2:
            name, has_value, value = token.partition("=")
            if len(name) >= len("--rep") and "--repo".startswith(name):  # git takes `--rep`
                places.append(value if has_value else args[k] if k < len(args) else "")
            k += _git_takes_next_word(token, valued)  # `--depth 1`, `--push-opt x`
        elif token.startswith("-") and token != "-":
            k += _git_takes_next_word(token, valued)  # `-o ci.skip`, `-qo x` (F130)
        else:
            operands.append(token)
    # `git fetch --multiple origin /tmp/x host:x`: every operand is a repository.
    several = args[k0] == "fetch" and any(_spells_multiple(token) for token in args[k0 + 1 :])
    places += operands if several else operands[:1]
    # A URL anywhere else is no refspec either (a value read as the repository by mistake).
    places += [token for token in operands[1:] if "://" in token or token.startswith("ext::")]
    return [Acting((place,), _REACHES) for place in dict.fromkeys(places) if _names_a_place(place)]


def _is_an_address(place: str) -> bool:
    """A URL (`https://…`, `ext::…`), an scp-like `host:path`, or a path that leaves the
    working directory: what `git clone` reads, or `git archive --remote` asks for."""
    if "://" in place or "::" in place:
        return True
    host, colon, _ = place.partition(":")
    return bool(colon and host and "/" not in host) or (
        not place.startswith("/") and _leaves(place)
    )


def _git_archive_remote(args: list[str]) -> list[str]:
    places = []
    for k, token in enumerate(args):
        name, has_value, value = token.partition("=")
        if len(name) >= len("--r") and "--remote".startswith(name):  # git takes `--rem`
            places.append(value if has_value else args[k + 1] if k + 1 < len(args) else "")
    return places


# The other commands that reach a repository by the address they are given: clone's source,
# `archive --remote`, a submodule's URL (request-pull and the transport plumbing are git
# commands the engine does not know: ASK). Not the project's remotes: a rule must name the
# address, as for push. A clone from an absolute path reads a local repository (reads are not
# rules' business); from a URL, `host:path` or `../` it reaches elsewhere.
_GIT_REACHING_ADDRESSES = {
    "clone": lambda args: _git_clone_operands(args)[:1],
    "archive": _git_archive_remote,
    "submodule": lambda args: _git_submodule_added(args),
    # `git remote show|prune NAME`: a NAME that is no remote is queried as a URL (F125)
    "remote": lambda args: _git_remote_queried(args),
}


_GIT_SUBMODULE_ADD_VALUED = frozenset({"-b", "--branch", "--name", "--reference", "--depth"})


def _git_submodule_added(args: list[str]) -> list[str]:
    """`git submodule [-q] add [-b B] [--name N] [--reference R] [--depth D] URL [PATH]`: the
    URL, after the options and their values (`--name n URL` hid it) (F130)."""
    while args[:1] and args[0].startswith("-"):
        args = args[1:]  # `--quiet`, `--cached` before the subcommand
    if args[:1] != ["add"]:
        return []
    return _git_operands(args[1:], _GIT_SUBMODULE_ADD_VALUED)[:1]


def _git_remote_queried(args: list[str]) -> list[str]:
    """`git remote [-v] show|prune NAME`: a NAME that is no remote is queried as a URL (F125);
    `-n` (`--dry-run` for prune) reaches nothing."""
    options = _before_end_of_options(args)
    # after `--` or `--end-of-options` every word is a remote's name, `-n` too (F136)
    words = [token for token in options if not token.startswith("-")] + args[len(options) + 1 :]
    if words[:1] == ["prune"]:
        return words[1:]  # `-n` still asks the address which branches it has (F130)
    if words[:1] != ["show"] or "-n" in options:
        return []
    return words[1:]


def _spells_multiple(token: str) -> bool:
    """`--multiple`, or an abbreviation git takes for it (`--mul`, `--m`)."""
    name = token.split("=", 1)[0]
    return token != "--" and len(name) > 2 and "--multiple".startswith(name)


# xxd's valued options and their long spellings: `-c 8`, `-cols 8`, `-c8` (glued).
_XXD_VALUED = {
    **{"c": ("ols",), "g": ("roup",), "l": ("en",), "o": ("ffset",), "n": ("ame",)},
    "s": ("eek", "kip"),  # `-skip 0` as `-seek 0` (H19-5)
}


def _xxd_operands(args: list[str]) -> list[str]:
    """xxd's operands (INFILE OUTFILE): its options are single words, never clusters, and
    they end at `--` (also `---`, read as `--` once a dash is dropped) or at the first word
    that is not one: `xxd README.md -d/../x` writes `-d/../x` (N1)."""
    k = 0
    while k < len(args):
        token = args[k]
        if token[:2] == "--" and len(token) > 2:
            token = token[1:]  # xxd reads `--len` as `-len` (H19-5), `---` as `--`
        if token == "--":
            return args[k + 1 :]
        if len(token) < 2 or token[0] != "-":
            return args[k:]  # `-` (standard input) too
        k += 1
        suffixes = _XXD_VALUED.get(token[1:2])
        rest = token[2:]
        if suffixes is not None and (not rest or rest.startswith(suffixes)):
            k += 1  # the value is the next word (`-capitalize` is a flag: glued, unread)
        elif token == "-R":
            k += 1  # vim 9.1's colour choice (`-R always`)
    return []


def _less_chained_options(args: list[str]) -> list[Acting]:
    """less reads more options inside one option's word: after a string value's `$`
    (`--prompt=x$--lesskey-src=F`, `-Px$-kF`), after a long option's number
    (`--window=5k/tmp/kb`; a short one's cluster is read as one), after a blank
    (`'--quiet k/tmp/kb'`). Any of them may be one that loads a lesskey file, whose
    LESSOPEN runs a command (N2)."""
    chained = [
        token
        for token in args
        if token.startswith("-")
        and ("$" in token or " " in token or "\t" in token or _number_then_more(token))
    ]
    return [Acting((token,), RUNS) for token in chained]


# less's long options whose value is a number (`--tabs`: numbers and commas; `--shift` and
# `--jump-target`: a number, a fraction): the value ends at the first other character, even
# the first one (`--window=--lesskey-src=F`), and the rest of the word is read as options.
_LESS_NUMBERS = (
    "window", "max-back-scroll", "max-forw-scroll", "buffers", "line-num-width",
    "status-col-width", "wheel-lines", "tabs", "shift", "jump-target", "header",
    "max-scroll", "tilde", "scroll",
)  # fmt: skip
_LESS_NUMBER_VALUE = re.compile(r"[+-]?[0-9.,%]*")


def _number_then_more(token: str) -> bool:
    name, has_value, value = token[2:].partition("=")
    if not token.startswith("--") or not has_value or not name:
        return False
    numeric = any(option.startswith(name.lower()) for option in _LESS_NUMBERS)
    return numeric and _LESS_NUMBER_VALUE.fullmatch(value) is None


@lru_cache(maxsize=4096)
def _naming(name: str) -> re.Pattern:
    if len(name) == 2 and name[0] == "-" and name[1] != "-":
        # `-x` is also named inside a cluster of short options: `tar -xzf *` names `-x`.
        return re.compile(rf"(?:^|[\s:*])-[A-Za-z0-9]*{re.escape(name[1])}")
    return re.compile(rf"(?:^|[\s:*]){re.escape(name)}(?=$|[\s=*,:])")


_WORD = re.compile(r"[\w+-][\w.+-]*")


def pattern_names(pattern: str, name: str, times: int = 1) -> bool:
    """Does a rule's pattern name an acting option or a program (as a word of the command)
    or a path or script (as text), `times` times?"""
    if name[:1] in ("-", "+") or _WORD.fullmatch(name):
        # the words of the command, not the tool's name before them (`sed run_command`)
        words = pattern.partition(":")[2] or pattern
        return len(_naming(name).findall(words)) >= times
    if name and set(name) <= set(":*?[]/."):
        # `:`, `*`, `/`: every rule holds them as text (`run_command:`, a final `*`); none
        # names them (`git stash -u -- :` deletes every untracked file) (F148)
        return False
    if is_config_name(name):
        return pattern_names_path(pattern, name, times)
    return pattern.count(name) >= times


# Maven's lifecycle phases and plugin goals that reach past the workspace (F147, sandbox):
# the local repository every build on the machine reads, the pom's distribution servers (with
# the user's credentials), a web server on every interface, the project's version control.
_MAVEN_GOALS = {
    "install": "installs into ~/.m2/repository, which every Maven build on the machine reads",
    "dependency:purge-local-repository": "deletes from ~/.m2/repository",
    "deploy": SENDS,
    "site:deploy": SENDS,
    "site:stage-deploy": SENDS,
    "release:prepare": SENDS,
    "release:perform": SENDS,
    "site:run": _LISTENS,
}


def _maven_goals(args: list[str]) -> list[Acting]:
    found = []
    for goal in _operands(args, _MAVEN_VALUED):
        what = _MAVEN_GOALS.get(goal) or (RUNS if goal.startswith("scm:") else None)
        if what:
            found.append(Acting((goal,), what))
    return found


def _gradle_reaches(args: list[str]) -> list[Acting]:
    """`--scan` uploads the build to scans.gradle.com (its plugin downloaded first);
    `publishToMavenLocal` installs into ~/.m2; a project property whose value is a path
    (`--project-prop version=x/../../tmp/y`) names where the build writes (F147)."""
    found = [Acting(("--scan",), SENDS) for token in args if token == "--scan"][:1]
    found += [
        Acting((token,), "installs into ~/.m2/repository, which every Maven build reads")
        for token in args
        if token.rsplit(":", 1)[-1] == "publishToMavenLocal"
    ]
    for k, token in enumerate(args):
        if token in ("-P", "--project-prop"):
            value = args[k + 1] if k + 1 < len(args) else ""
        elif token.startswith(("-P", "--project-prop=")):
            value = token.removeprefix("--project-prop=").removeprefix("-P")
        else:
            continue
        if "/" in value.partition("=")[2]:
            found.append(Acting(("-P", "--project-prop"), "names a path the build writes"))
    return found


def _golangci_revisions(args: list[str]) -> list[Acting]:
    """`--new-from-rev=--output=/tmp/x`: the revision goes to `git diff` before its `--`, where
    git reads it as an option (F137, from golangci-lint's source)."""
    found = []
    for k, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name in ("--new-from-rev", "--new-from-merge-base"):
            value = value if equals else (args[k + 1] if k + 1 < len(args) else "")
            if value.startswith("-"):
                found.append(Acting((name,), "hands an option to the git it runs"))
    return found


# The readings of a program's words past its table's options and subcommands (F119-F125).
_CURL_FILE_VALUES = ("-H", "--header", "--proxy-header", "--url-query")


def _curl_files_sent(args: list[str]) -> list[Acting]:
    """A header or query part curl takes from `@FILE` (`-H @/etc/passwd`, `-sH@F`): the
    file's lines are sent (seen: the file opened to be sent). One written out sends no more
    than the URL could, and stays under a rule for curl."""
    found = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        if token.startswith("--"):
            name, equals, value = token[2:].partition("=")
            option = next(
                (o for o in _CURL_FILE_VALUES if _long_spells("curl", o, name) and name), None
            )
            value = value if equals else following
        elif token.startswith("-") and "H" in token[1:]:
            option = "-H"  # the last letter of a cluster takes the value: `-sH @F`, `-H@F`
            value = token[token.index("H") + 1 :] or following
        else:
            continue
        if option is not None and value.startswith("@"):
            found.append(Acting((option,), SENDS))
    return found


def _openssl_words(args: list[str]) -> list[str]:
    """openssl's arguments with `--name` read as `-name`, as its parser does (`rand --out F`
    wrote F in the sandbox, F169); `-name=VALUE` stays one word (see _option_values)."""
    return [t[1:] if t.startswith("--") and len(t) > 2 else t for t in args]


def _openssl_modules(args: list[str]) -> list[Acting]:
    """A provider or engine named by a path: `-provider /tmp/x` and `openssl engine /tmp/e.so`
    load that file (a path rules over the modules folder; a bare name is looked up there)."""
    words = _openssl_words(args)
    found = [
        Acting(("-provider",), RUNS)
        for value in _option_values(words, ("-provider",))
        if "/" in value
    ]
    if words[:1] == ["engine"]:
        k = 1
        while k < len(words) and words[k].startswith("-") and words[k] != "--":
            k += 2 if words[k] in ("-pre", "-post") else 1  # flags: -t, -tt, -c, -v…
        found += [Acting((word,), RUNS) for word in words[k:] if "/" in word]
    return found


# The AWS CLI's options that take no value: its global flags and the s3 transfer commands'.
_AWS_FLAGS = frozenset(
    {"--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--no-cli-pager"}
    | {"--cli-auto-prompt", "--no-cli-auto-prompt", "--version", "--dryrun", "--quiet"}
    | {"--recursive", "--only-show-errors", "--no-progress", "--follow-symlinks", "--delete"}
    | {"--no-follow-symlinks", "--no-guess-mime-type", "--force-glacier-transfer", "--force"}
    | {"--ignore-glacier-warnings", "--exact-timestamps", "--size-only", "--no-overwrite"}
)
_AWS_TRANSFERS = frozenset({"cp", "mv", "sync"})


def _aws_positional(args: list[str]) -> list[str]:
    """aws's words but its options and their values (the CLI takes options anywhere)."""
    positional, k = [], 0
    while k < len(args):
        token = args[k]
        if token.startswith("--") and "=" not in token and token not in _AWS_FLAGS:
            k += 1  # its value
        elif not token.startswith("-") or token == "-":
            positional.append(token)
        k += 1
    return positional


def _aws_commands(args: list[str]) -> list[Acting]:
    """The acting commands and options of ACTING's aws entries wherever the options stand:
    after a global option's value (`aws --profile p configure set …`) the table's walk takes
    the value for an unknown command and stops (F174)."""
    positional, found = _aws_positional(args), []
    named = {t.split("=", 1)[0] for t in args if t.startswith("--")}
    for depth in (2, 3):
        table = ACTING.get(" ".join(["aws", *positional[:depth]]), {})
        if "" in table:
            found.append(Acting((positional[depth - 1],), table[""]))
        found += [Acting((o,), what) for o, what in table.items() if o and o in named]
    return found


def _aws_transfer(args: list[str]) -> tuple[str, list[str]] | None:
    """`aws [globals] s3 cp|mv|sync SRC... DEST`: the command and its local operands' places
    (`-` is standard input or output; an `s3://` address is no local file)."""
    positional = _aws_positional(args)
    if positional[:1] != ["s3"] or positional[1:2] == [] or positional[1] not in _AWS_TRANSFERS:
        return None
    return positional[1], positional[2:]


def _aws_local(operand: str) -> bool:
    return operand != "-" and not operand.lower().startswith("s3://")


def _aws_local_files(args: list[str]) -> list[Acting]:
    """A local file an aws command reads and sends: an s3 transfer's local source (`s3 cp
    /etc/passwd s3://b/x`, `s3 sync ~ s3://b`), a `file://`/`fileb://` parameter value
    (`--body`, `--cli-input-json`, `--user-data`...) (F174, the AWS CLI's manual)."""
    found = []
    for token in args:
        value = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
        scheme = next((s for s in ("fileb://", "file://") if value.lower().startswith(s)), None)
        if scheme is not None:
            found.append(Acting((scheme,), "reads a local file and sends it"))
    transfer = _aws_transfer(args)
    if transfer is not None:
        command, operands = transfer
        if any(_aws_local(source) for source in operands[:-1]):
            found.append(Acting((command,), "uploads local files"))
    return found


def _aws_written(args: list[str]) -> list[str]:
    """An s3 transfer's local destination (a folder's files for `sync`, `--recursive` or a
    folder named so), and `mv`'s local sources, which it deletes (F174)."""
    transfer = _aws_transfer(args)
    if transfer is None or not transfer[1]:
        return []
    command, operands = transfer
    written = [source for source in operands[:-1] if command == "mv" and _aws_local(source)]
    destination = operands[-1]
    if len(operands) > 1 and _aws_local(destination):
        written.append(destination)
        if command == "sync" or "--recursive" in args or destination.endswith("/"):
            written.append(destination.rstrip("/") + "/<files>")
    return written


_MKNOD_DEVICES = frozenset({"b", "c", "u"})


def _mknod_devices(args: list[str]) -> list[Acting]:
    """`mknod NAME b|c|u MAJOR MINOR` makes a device node: as root, the disk or memory it
    names read and written through a file in the workspace (`mknod n b 8 0` is /dev/sda);
    a FIFO (`p`) is only a file (F174, coreutils' manual; the sandbox can make none)."""
    operands = read_getopt(args, "m", ("mode",)).operands
    kind = operands[1] if len(operands) > 1 else ""
    return [Acting((kind,), "makes a device node")] if kind in _MKNOD_DEVICES else []


_SPLIT_LONG_VALUED = (
    *("suffix-length", "bytes", "line-bytes", "lines", "number", "separator"),
    *("additional-suffix", "filter"),
)
_SPLIT_SUFFIX = "abcdefghijklmnopqrstuvwxyz0123456789"


def _split_pieces_like_config(args: list[str]) -> list[Acting]:
    """split writes PREFIX + a suffix of letters or digits + `--additional-suffix`: a prefix
    that a suffix turns into a configuration path's name (`split -n 18 -a 1
    --additional-suffix=c notes.txt .bash` writes .bashrc, the 18th piece's suffix `r`)
    needs a rule naming that prefix (F174, coreutils' manual). Every suffix of one or two
    characters is tried; a longer one (`-a 3`, or one `-n` widens) by where it may lead."""
    words = read_getopt(args, "abClnt", _SPLIT_LONG_VALUED, t_names_target=False)
    prefix = words.operands[1] if len(words.operands) > 1 else "x"
    options = dict(words.values)
    extra = options.get("additional-suffix", "")
    pieces = [prefix + a + b + extra for a in _SPLIT_SUFFIX for b in ("", *_SPLIT_SUFFIX)]
    reached = any(config_path_names(piece) for piece in pieces)
    length = options.get("suffix-length") or options.get("a") or ""
    if not reached and (length not in ("", "1", "2") or {"n", "number"} & options.keys()):
        reached = any(
            set(config_names_continuing(prefix + a)) - _CONTINUED_FROM_ANYWHERE
            for a in _SPLIT_SUFFIX
        )
    return [Acting((prefix,), WRITES_FILES)] if reached else []


# Names any path may go on to (`NAME.pth`): by its letters and digits alone, a suffix
# reaches none of them (the short suffixes above are tried with the additional one).
_CONTINUED_FROM_ANYWHERE = frozenset(config_names_continuing("q"))


# vim's options that name a file it writes: the keys typed (`-w`, `-W`), the viminfo file
# (`-i`, but `NONE`), the start-up timing and channel logs; `-V[N]FILE` glues it (F169,
# sandbox: `-w /tmp/vw`, `-V1/tmp/vv` wrote /tmp).
_VIM_WRITES_NEXT = "wWi"
_VIM_LONG_WRITES = ("startuptime", "log")


def _vim_written(args: list[str]) -> list[str]:
    written: list[str] = []
    for k, token in enumerate(args):
        following = args[k + 1 : k + 2]
        if token == "--":
            break  # file names only after it
        if token.startswith("--"):
            if token[2:].lower().startswith(_VIM_LONG_WRITES):
                written += following
            continue
        for at, letter in enumerate(token[1:] if token.startswith("-") else "", 2):
            rest = token[at:]
            if letter == "V":
                written += [rest.lstrip("0123456789")] if rest.lstrip("0123456789") else []
            elif letter in _VIM_WRITES_NEXT and not rest and following != ["NONE"]:
                written += following
            if letter in "Vq" or (letter == "w" and rest[:1].isdigit()):
                break  # the rest of the word is the value (`-w40`: the window's height)
    return written


def _vim_ex_mode(base: str, args: list[str]) -> list[Acting]:
    """ex, `vim -e`, `vim -E` (`-es` silent) read Ex commands from standard input when it is
    no terminal: `vim -es notes.txt < s.vim` ran its `:!touch PWNED` (F169, sandbox), as
    `sh < file` runs a script the words do not show."""
    letters = []
    for token in args:
        if token == "--":
            break
        if token.startswith("-") and not token.startswith("--"):
            letters += takewhile(lambda letter: letter not in "Vq", token[1:])
    if base == "ex" or "e" in letters or "E" in letters:
        return [Acting(("-E" if "E" in letters else "-e",), "reads Ex commands from its input")]
    return []


# docker's own options that take a value (`-c` is `--context` there), and the words that
# group its commands (`docker buildx build`, `docker image build`, `docker container cp`)
_DOCKER_GLOBAL_VALUED = frozenset(
    {"-H", "--host", "-c", "--context", "--config", "-l", "--log-level"}
    | {"--tlscacert", "--tlscert", "--tlskey"}
)
# (`system connection`: podman's, F178)
_DOCKER_GROUPS = frozenset(
    {"buildx", "image", "builder", "container", "plugin", "context", "system", "connection"}
)
_DOCKER_BUILD_FLAGS = frozenset(
    {"--no-cache", "--pull", "--quiet", "--rm", "--force-rm", "--push", "--load", "--squash"}
    | {"--compress", "--disable-content-trust", "--check", "--debug", "--help"}
)
# compose's options that take a value, and the commands that start, build or copy nothing
_COMPOSE_VALUED = frozenset(
    {"-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile"}
    | {"--ansi", "--progress", "--parallel"}
)
_COMPOSE_READS_ONLY = frozenset(
    {"ps", "ls", "logs", "config", "images", "top", "version", "port", "events", "stats"}
)


def _docker_command(args: list[str]) -> tuple[list[str], list[str]]:
    """docker's command words (`compose`, `buildx build`) and the arguments after them."""
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _DOCKER_GLOBAL_VALUED else 1
    words: list[str] = []
    while k < len(args) and not args[k].startswith("-"):
        words.append(args[k])
        k += 1
        if words[-1] not in _DOCKER_GROUPS:
            break
    return words, args[k:]


def _docker_build_elsewhere(args: list[str]) -> list[Acting]:
    """(F173, docker's manual) A build context or Dockerfile outside the working directory
    (`docker build /etc`, `-f /etc/x .`): the client reads it and sends it to the daemon,
    whose image then holds those files. A rule names the path itself."""
    words, rest = _docker_command(args)
    if words[-1:] != ["build"]:
        return []
    found, k = [], 0
    while k < len(rest):
        token, following = rest[k], rest[k + 1] if k + 1 < len(rest) else ""
        name, equals, value = token.partition("=")
        if token.startswith("--") and len(token) > 2:
            if not equals and name not in _DOCKER_BUILD_FLAGS:
                value, k = following, k + 1
            if name == "--file" and _leaves(value):
                found.append(Acting((value,), SENDS))
        elif token.startswith("-") and len(token) > 1:
            if token[1] != "q":
                value = token[2:].removeprefix("=")
                if not value:
                    value, k = following, k + 1
                if token[1] == "f" and _leaves(value):
                    found.append(Acting((value,), SENDS))
        elif _leaves(token):
            found.append(Acting((token,), SENDS))
        k += 1
    return found


def _docker_compose(args: list[str]) -> list[Acting]:
    """(F173, compose's manual) A compose file says what its services mount (`/:/h`), run and
    build: `docker compose up`, `run`, `exec`, `cp`, `build` need a rule naming them; `ps`,
    `logs`, `config` and the like start nothing."""
    words, rest = _docker_command(args)
    if words != ["compose"]:
        return []
    k = 0
    while k < len(rest) and rest[k].startswith("-"):
        k += 2 if rest[k] in _COMPOSE_VALUED else 1
    if k < len(rest) and rest[k] not in _COMPOSE_READS_ONLY:
        return [Acting((rest[k],), "runs what a compose file says (its mounts of the host too)")]
    return []


# kubectl's own commands (1.32); any other first word runs `kubectl-WORD` from the PATH
_KUBECTL_COMMANDS = frozenset(
    [
        "create",
        "expose",
        "run",
        "set",
        "explain",
        "get",
        "edit",
        "delete",
        "rollout",
        "scale",
        "autoscale",
        "certificate",
        "cluster-info",
        "top",
        "cordon",
        "uncordon",
        "drain",
        "taint",
        "describe",
        "logs",
        "attach",
        "exec",
        "port-forward",
        "proxy",
        "cp",
        "auth",
        "debug",
        "events",
        "diff",
        "apply",
        "patch",
        "replace",
        "wait",
        "kustomize",
        "label",
        "annotate",
        "completion",
        "alpha",
        "api-resources",
        "api-versions",
        "config",
        "plugin",
        "version",
        "options",
        "help",
    ]
)


def _kubectl_plugins(args: list[str]) -> list[Acting]:
    """(F173, kubectl's manual) `kubectl foo` runs the first `kubectl-foo` on the PATH when no
    command of kubectl's has that name (only a first word: after an option it looks for none)."""
    if args and not args[0].startswith("-") and args[0] not in _KUBECTL_COMMANDS:
        return [Acting((args[0],), "runs kubectl-NAME, a plugin it finds on the PATH")]
    return []


def _gh_fields_sent(args: list[str]) -> list[Acting]:
    """(F173, gh's manual) `gh api -F key=@FILE` (`--field`) sends the file's contents as the
    field's value; `-f` (`--raw-field`) sends the text as written."""
    if args[:1] != ["api"]:
        return []
    found = []
    for k, token in enumerate(args):
        following = args[k + 1] if k + 1 < len(args) else ""
        if token in ("-F", "--field"):
            name, value = token, following
        elif token.startswith("--field="):
            name, value = "--field", token.removeprefix("--field=")
        elif token.startswith("-F"):
            name, value = "-F", token[2:].removeprefix("=")
        else:
            continue
        if value.partition("=")[2].startswith("@"):
            found.append(Acting((name,), SENDS))
    return found


def _gh_clone_words(args: list[str]) -> tuple[list[str], list[str]]:
    """`gh repo clone REPO [DIR] [-- GITFLAGS]`: (DIR or nothing, GITFLAGS); gh hands every
    word after REPO to `git clone`, a first one not an option as its directory."""
    if args[:2] not in (["repo", "clone"], ["repo", "fork"]):
        return [], []
    rest = args[2:]
    k = 0
    while k < len(rest) and rest[k].startswith("-") and rest[k] != "--":
        k += 2 if rest[k] in ("-u", "--upstream-remote-name", "--remote-name") else 1
    after = [token for token in rest[k + 1 :] if token != "--"]
    if args[1] == "fork":
        return [], rest[rest.index("--") + 1 :] if "--" in rest else []
    if after[:1] and not after[0].startswith("-"):
        return after[:1], after[1:]
    return [], after


def _gh_git_flags(args: list[str]) -> list[Acting]:
    """(F173, gh's manual) The flags `gh repo clone`/`fork --clone` hand to `git clone`
    (`-- -c core.fsmonitor=CMD`, `--template`, `-u`) are read as git clone's."""
    flags = _gh_clone_words(args)[1]
    found = acting_uses("git", ["clone", *flags]) if flags else []
    return [use for use in found if use.names != ("clone",)]  # the clone itself: gh's


_HOST_FILE_SENT = "reads a host file outside the working directory and hands it on"


def _docker_value(rest: list[str], k: int, letter: str, long: str) -> tuple[str | None, int]:
    """The value of `-L`/`--long` at rest[k] (pflag: `-LV`, `-L=V`, `-L V`, a cluster `-qL V`,
    `--long=V`, `--long V`), and the index of the last word read."""
    token = rest[k]
    following = rest[k + 1] if k + 1 < len(rest) else ""
    if token == long:
        return following, k + 1
    if token.startswith(long + "="):
        return token[len(long) + 1 :], k
    if token.startswith("-") and not token.startswith("--") and letter in token[1:]:
        value = token[token.index(letter, 1) + 1 :].removeprefix("=")
        return (value, k) if value else (following, k + 1)
    return None, k


def _docker_images_read(args: list[str]) -> list[Acting]:
    """(F175, docker's manual) `docker load -i FILE` (`image load`) reads an image archive from
    the host, `docker import SRC` a host file or an address the daemon fetches (`-` is standard
    input): one outside the working directory is named by its path, an address by itself."""
    words, rest = _docker_command(args)
    if words in (["load"], ["image", "load"]):
        found, k = [], 0
        while k < len(rest):
            value, k = _docker_value(rest, k, "i", "--input")
            if value is not None and _leaves(value):
                found.append(Acting((value,), _HOST_FILE_SENT))
            k += 1
        return found
    if words not in (["import"], ["image", "import"]):
        return []
    k = 0
    while k < len(rest) and rest[k].startswith("-") and rest[k] != "-":
        valued = rest[k] in ("-c", "--change", "-m", "--message", "--platform")
        k += 2 if valued else 1
    source = rest[k] if k < len(rest) else "-"
    if "://" in source:
        return [Acting((source,), "has the daemon fetch an image's files from the address")]
    return [Acting((source,), _HOST_FILE_SENT)] if source != "-" and _leaves(source) else []


_DOCKER_ELSEWHERE = {
    # (F175, docker's manual) a plugin runs as root with the host's mounts, devices and
    # network it asks for (`install`, a new version by `upgrade`, started by `enable`); a
    # context is where later commands, and the build contexts they send, go
    **{
        f"plugin {sub}": "runs a plugin's code with the host access it asks for"
        for sub in ("install", "upgrade", "enable")
    },
    **{
        f"context {sub}": "changes where later docker commands, and the files they send, go"
        for sub in ("create", "update", "use", "import")
    },
    # (F178) `plugin set` changes the mounts, devices and environment a plugin runs with;
    # podman's `system connection add`/`default` make a new place later commands are sent
    "plugin set": "changes the host mounts, devices and settings a plugin has",
    **{
        f"system connection {sub}": "changes where later commands are sent"
        for sub in ("add", "default")
    },
}


def _docker_elsewhere(args: list[str]) -> list[Acting]:
    words = _docker_command(args)[0]
    what = _DOCKER_ELSEWHERE.get(" ".join(words))
    return [Acting((words[-1],), what)] if what else []


# kubectl's options that read a host file whose bytes go to the cluster (`create secret`,
# `create configmap`); `--from-file` and `--from-env-file` take a list (commas), and
# `--from-file` an entry `KEY=PATH`. kubectl reads `_` in a flag's name as `-`.
_KUBECTL_FILE_OPTIONS = ("from-file", "from-env-file")


def _kubectl_files_sent(args: list[str]) -> list[Acting]:
    """(F175, kubectl's manual) `kubectl create secret generic s --from-file=/etc/shadow`
    (`KEY=PATH`, `--from-env-file`, `configmap`, `secret tls --cert/--key`) reads the host
    file and stores it in the cluster: one outside the working directory is named by its
    path (a file of the workspace is as the rule's own reads)."""
    tls = "secret" in args and "tls" in args
    found = []
    for k, token in enumerate(args):
        if not token.startswith("--"):
            continue
        name, equals, value = token[2:].partition("=")
        name = name.replace("_", "-")
        if name in _KUBECTL_FILE_OPTIONS:
            pieces = (value if equals else args[k + 1] if k + 1 < len(args) else "").split(",")
            paths = [p.partition("=")[2] or p if name == "from-file" else p for p in pieces]
        elif tls and name in ("cert", "key"):
            paths = [value if equals else args[k + 1] if k + 1 < len(args) else ""]
        else:
            continue
        found += [Acting((path,), _HOST_FILE_SENT) for path in paths if path and _leaves(path)]
    return found


# gh release create's options that take a value (pflag: `-tT`, `-t=T`, `-t T`, `--title=T`)
_GH_RELEASE_VALUED = frozenset(
    {"-n", "--notes", "-F", "--notes-file", "-t", "--title", "--target", "-R", "--repo"}
    | {"--notes-start-tag", "--discussion-category"}
)


def _gh_release_assets(args: list[str]) -> list[Acting]:
    """(F175, gh's manual) `gh release create TAG FILE[#LABEL]...` uploads each operand after
    the tag as an asset, as `release upload` does: a rule names `create`."""
    if args[:2] != ["release", "create"]:
        return []
    operands, k, rest = [], 0, args[2:]
    while k < len(rest):
        token = rest[k]
        if token == "--":
            operands += rest[k + 1 :]
            break
        if token.startswith("--"):
            k += 2 if token in _GH_RELEASE_VALUED else 1
            continue
        if token.startswith("-") and len(token) > 1:
            letters = token[1:].split("=", 1)[0]
            valued = next(
                (at for at, c in enumerate(letters) if f"-{c}" in _GH_RELEASE_VALUED), None
            )
            k += 2 if valued == len(letters) - 1 and "=" not in token else 1
            continue
        operands.append(token)
        k += 1
    if len(operands) > 1:
        return [Acting(("create",), "uploads the files it names as the release's assets")]
    return []


def _gh_clone_lands(args: list[str]) -> list[Acting]:
    """(F175) `gh repo clone REPO` runs `git clone`, which lands a repository's files (hooks
    config, `.claude/`, anything), an acting subcommand under `git *` (F152): so under `gh *`;
    `gh repo fork --clone` likewise."""
    if args[:2] == ["repo", "clone"]:
        return [Acting(("clone",), LANDS)]
    if args[:2] == ["repo", "fork"]:
        clones = [t.partition("=")[2] for t in args if t == "--clone" or t.startswith("--clone=")]
        if clones and clones[-1] not in ("false", "False", "FALSE", "f", "F", "0"):
            return [Acting(("--clone",), LANDS)]
    return []


# sqlite3's options that take the next word (the first other word is the database, the rest
# SQL or dot-commands); `--name` is `-name`
_SQLITE_VALUED = frozenset(
    {"-cmd", "-init", "-separator", "-newline", "-nullvalue", "-vfs", "-maxsize", "-mmap"}
    | {"-nonce", "-escape"}
)
_SQLITE_VALUED_TWICE = frozenset({"-lookaside", "-pagecache", "-heap"})
# (F176, sqlite3's manual) what its SQL does past the database: the shell's load_extension()
# loads a library, writefile() writes a file, edit() runs an editor; ATTACH opens (creates)
# another database file, VACUUM INTO writes a copy
_SQLITE_ACTS = re.compile(
    r"\b(load_extension|writefile|edit)\s*\(|\b(attach)\b|\bvacuum\b[^;]*?\b(into)\b", re.I
)
_SQLITE_WRITES = re.compile(
    r"\b(create|insert|update|delete|drop|alter|replace|reindex|pragma|vacuum|begin)\b", re.I
)


def _shell_operands(args: list[str], valued: frozenset[str]) -> tuple[list[str], list[str]]:
    """sqlite3's and duckdb's command lines: the database and the SQL or dot-commands after it
    (none after sqlite3's `-A`: .archive's), and the SQL duckdb's `-c` and `-s` give."""
    operands, commands, k = [], [], 0
    while k < len(args):
        token = args[k]
        name = "-" + token.lstrip("-")
        if token.startswith("-") and len(token) > 1:
            if name in ("-c", "-s") and name in valued and k + 1 < len(args):
                commands.append(args[k + 1])
            k += 2 if name in valued else 3 if name in _SQLITE_VALUED_TWICE else 1
            if name.startswith("-A"):
                break  # the rest is .archive's
            continue
        operands.append(token)
        k += 1
    return operands, commands


def _database_written(operands: list[str], statements: list[str]) -> list[Acting]:
    """The database file outside the working directory that the SQL given writes, named by
    its path."""
    written = any(_SQLITE_WRITES.search(sql) for sql in statements)
    if operands and written and operands[0] not in (":memory:", "") and _leaves(operands[0]):
        return [Acting((operands[0],), WRITES_FILES)]
    return []


def _sqlite_sql(args: list[str]) -> list[Acting]:
    # (F176) `sqlite3 db "select load_extension('/tmp/x.so')"` and the like: a rule names
    # the function or statement; the database outside the working directory, written by the
    # SQL given, is named by its path
    operands, _ = _shell_operands(args, _SQLITE_VALUED)
    statements = [sql for sql in operands[1:] if sql[:1] != "."]  # a dot-command: the table's
    found = []
    for sql in statements:
        for match in _SQLITE_ACTS.finditer(sql):
            word = next(group for group in match.groups() if group)
            found.append(Acting((word,), "runs or writes past the database (" + word + ")"))
    return found + _database_written(operands, statements)


# (F181, DuckDB 1.4's manual) its CLI's options taking a value; SQL that writes a file or a
# folder (COPY … TO, EXPORT DATABASE), opens or creates another database (ATTACH), or fetches
# and loads a library (INSTALL, LOAD)
_DUCKDB_VALUED = frozenset(
    {"-c", "-s", "-cmd", "-init", "-f", "-separator", "-newline", "-nullvalue", "-format-file"}
)
_DUCKDB_ACTS = re.compile(
    r"\b(copy)\b[^;]*?\bto\b|\b(export)\s+database\b|\b(attach)\b"
    r"|\b(install|load)\s+['\"]?[\w./-]",
    re.I,
)


def _duckdb_sql(args: list[str]) -> list[Acting]:
    operands, commands = _shell_operands(args, _DUCKDB_VALUED)
    statements = [sql for sql in [*operands[1:], *commands] if sql[:1] != "."]
    found = [
        Acting((_last_group(match),), "writes files or loads a library past the database")
        for sql in statements
        for match in _DUCKDB_ACTS.finditer(sql)
    ]
    return found + _database_written(operands, statements)


_PSQL_VALUED = "cdfFhLopPRTUv"
_PSQL_LONG_VALUED = (
    "command",
    "dbname",
    "file",
    "field-separator",
    "host",
    "log-file",
    "output",
    "port",
) + ("pset", "record-separator", "table-attr", "username", "set", "variable")
# (F176, psql 15's manual) the meta-commands that run a program (`\!`, `\g |CMD`, an editor),
# write or read a local file (`\o`, `\copy`, `\w`, `\s`, `\lo_export`, `\i`) or move psql
_PSQL_META = re.compile(
    r"\\(!|o|out|copy|g|gx|w|write|i|include|ir|include_relative|s|e|edit|ef|ev|setenv|cd"
    r"|lo_export|lo_import)(?![A-Za-z_])"
)


# (F179, PostgreSQL 15's manual) SQL that has the server run a program or use its own files:
# COPY … TO/FROM PROGRAM or a file of the server's, pg_read_file() and its kin, the server-side
# lo_import()/lo_export(), ALTER SYSTEM (archive_command and the like are programs), and
# functions written in C or an untrusted language. The server may be this machine.
_PSQL_SERVER_ACTS = re.compile(
    r"\b(copy)\b[^;]*?\b(?:to|from)\s+(?:(program)\b|e?')"
    r"|\b(pg_read_file|pg_read_binary_file|pg_ls_dir|pg_stat_file|lo_import|lo_export)\s*\("
    r"|\balter\s+(system)\b"
    r"|\blanguage\s+'?(c|plpython3u|plpythonu|plperlu|pltclu)\b",
    re.I,
)


def _psql_meta_commands(args: list[str]) -> list[Acting]:
    words = read_getopt(args, _PSQL_VALUED, _PSQL_LONG_VALUED)
    commands = [value for option, value in words.values if option in ("c", "command")]
    return [
        Acting(("\\" + match.group(1),), "runs a meta-command that runs or writes")
        for value in commands
        for match in _PSQL_META.finditer(value)
    ] + [
        Acting((_last_group(match),), "has the database server run a program or use its files")
        for value in commands
        for match in _PSQL_SERVER_ACTS.finditer(value)
    ]


def _last_group(match: re.Match) -> str:
    """The innermost word a match names: `PROGRAM` in `COPY t TO PROGRAM`, else `COPY`."""
    return next(group for group in reversed(match.groups()) if group)


_MYSQL_VALUED = "eDhPSu"
_MYSQL_LONG_VALUED = ("execute", "database", "host", "port", "socket", "user")
# (F176, MySQL 8's manual) the client's commands: `system`/`\!` run a program, `tee`/`\T`
# write, `source`/`\.` read a script of them, `pager`/`\P` and `edit`/`\e` run one
_MYSQL_COMMANDS = re.compile(r"\\([!T.Pe])|(?:^|;)\s*(system|tee|source|pager|edit)\b", re.I | re.M)


# (F179, MySQL 8's manual) SQL that has the server write or read its files or load a library:
# SELECT … INTO OUTFILE/DUMPFILE, LOAD DATA (a server file, or LOCAL: this machine's),
# LOAD_FILE(), INSTALL PLUGIN/COMPONENT, a function from a library (SONAME)
_MYSQL_SERVER_ACTS = re.compile(
    r"\binto\s+(outfile|dumpfile)\b|\bload\s+(data|xml)\b|\b(load_file)\s*\("
    r"|\binstall\s+(plugin|component)\b|\b(soname)\b",
    re.I,
)


def _mysql_client_commands(args: list[str]) -> list[Acting]:
    words = read_getopt(args, _MYSQL_VALUED, _MYSQL_LONG_VALUED)
    commands = [value for option, value in words.values if option in ("e", "execute")]
    return [
        Acting((_last_group(match),), "runs a client command")
        for value in commands
        for match in _MYSQL_COMMANDS.finditer(value)
    ] + [
        Acting((_last_group(match),), "has the database server use its files or a library")
        for value in commands
        for match in _MYSQL_SERVER_ACTS.finditer(value)
    ]


# (F180, redis-cli 7's --help) its options taking a value; the modes that send no command of
# the script's; the server's commands that reach past its data: CONFIG SET/REWRITE (`dir` and
# `dbfilename` then SAVE write a file anywhere the server may), MODULE LOAD (a library),
# REPLICAOF/SLAVEOF (the server takes another's data), MIGRATE (sends keys elsewhere)
_REDIS_VALUED = frozenset(
    {"-h", "-p", "-s", "-a", "-u", "-r", "-i", "-n", "-d", "-D", "-X", "--user", "--pass"}
    | {"--sni", "--cacert", "--cacertdir", "--cert", "--key", "--tls-ciphers"}
    | {"--tls-ciphersuites", "--show-pushes", "--lru-test", "--rdb", "--functions-rdb"}
    | {"--pipe-timeout", "--memkeys-samples", "--keystats-samples", "--pattern", "--count"}
    | {"--quoted-pattern", "--intrinsic-latency", "--eval", "--cluster"}
)
_REDIS_MODES = frozenset(
    {"--rdb", "--functions-rdb", "--scan", "--bigkeys", "--memkeys", "--hotkeys", "--keystats"}
    | {"--stat", "--latency", "--latency-history", "--latency-dist", "--intrinsic-latency"}
    | {"--lru-test", "--replica", "--eval", "--cluster", "--version", "--help", "-v"}
)
_REDIS_REACHING = {
    ("config", "set"): CONFIGURES,
    ("config", "rewrite"): CONFIGURES,
    ("module", "load"): RUNS,
    ("module", "loadex"): RUNS,
    ("replicaof",): SENDS,
    ("slaveof",): SENDS,
    ("migrate",): SENDS,
}


def _redis_words(args: list[str]) -> tuple[set[str], list[str]]:
    """redis-cli's options given, and the command after them (its name and arguments)."""
    options, k = set(), 0
    while k < len(args) and args[k].startswith("-") and len(args[k]) > 1:
        options.add(args[k])
        k += 2 if args[k] in _REDIS_VALUED else 1
    return options, args[k:]


def _redis_commands(args: list[str]) -> list[Acting]:
    options, command = _redis_words(args)
    if options & {"--eval", "--cluster"}:
        return []  # the words after are keys and arguments, or a cluster command
    words = tuple(word.lower() for word in command[:2])
    return [
        Acting((command[len(key) - 1],), what)
        for key, what in _REDIS_REACHING.items()
        if words[: len(key)] == key
    ]


def _mongosh_scripts(args: list[str]) -> list[Acting]:
    return [Acting((word,), RUNS) for word in args if word.endswith(".js") and word[:1] != "-"]


def reads_commands_from_input(program: str, args: list[str]) -> bool:
    """(F179) Whether a database client takes its commands from its standard input: psql with
    neither `-c` nor `-f` (or with `-f -`), mysql without `-e`, sqlite3 with no SQL after the
    database, (F180) redis-cli with no command, mongosh with no script, (F181) duckdb with no
    SQL; none of them when it only lists databases or prints its version or help."""
    if program == "psql":
        words = read_getopt(args, _PSQL_VALUED, _PSQL_LONG_VALUED)
        given = {(option[0], value) for option, value in words.values if option[0] in "cf"}
        only_prints = words.letters & set("lV?") or {"list", "version", "help"} & set(words.longs)
        return ("f", "-") in given or not (given or only_prints)
    if program == "mysql":
        words = read_getopt(args, _MYSQL_VALUED, _MYSQL_LONG_VALUED)
        executes = any(option in ("e", "execute") for option, _ in words.values)
        only_prints = words.letters & set("V?") or {"version", "help"} & set(words.longs)
        return not (executes or only_prints)
    if program == "sqlite3":
        only_prints = {"-version", "-help"} & {"-" + word.lstrip("-") for word in args}
        return len(_shell_operands(args, _SQLITE_VALUED)[0]) <= 1 and not only_prints
    if program == "duckdb":
        operands, commands = _shell_operands(args, _DUCKDB_VALUED)
        only_prints = {"-version", "-help", "-h", "-no-stdin"} & set(args)
        return len(operands) <= 1 and not commands and "-f" not in args and not only_prints
    if program == "redis-cli":
        # (F180) with no command, redis-cli sends the lines of its input (`--pipe`: raw)
        options, command = _redis_words(args)
        return not command and not options & _REDIS_MODES
    if program == "mongosh":
        given = {"--eval", "-f", "--file", "--version", "--help", "-h"} & set(args)
        return not given and not _mongosh_scripts(args)
    return False


def commands_from_input(program: str, args: list[str], text: str) -> list[Acting]:
    """(F179) What the commands a database client reads from a here-document or an echo into
    its pipe do, read as its `-c`, `-e` or SQL operands are."""
    if program == "psql":
        return _psql_meta_commands(["-c", text])
    if program == "mysql":
        return _mysql_client_commands(["-e", text])
    if program == "redis-cli":
        return [acting for line in text.splitlines() for acting in _redis_commands(line.split())]
    if program == "mongosh":
        return [Acting(("--eval",), RUNS)] if text.strip() else []
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    dot_commands = [line.split()[0] for line in lines if line.startswith(".")]
    sql = "\n".join(line for line in lines if not line.startswith("."))
    read, valued = (
        (_duckdb_sql, _DUCKDB_VALUED) if program == "duckdb" else (_sqlite_sql, _SQLITE_VALUED)
    )
    database = _shell_operands(args, valued)[0][:1]
    return [Acting((name,), "runs a dot-command") for name in dot_commands] + read(
        [*(database or [":memory:"]), sql]
    )


# gpg's valued short letters and the long options taking a value that `--out` may shorten
_GPG_VALUED = "oruRfFzN"
_GPG_LONG_VALUED = ("output", "recipient", "local-user", "hidden-recipient", "homedir")
# ssh-keygen's getopt string (OpenSSH 9): the letters taking a value; the modes that only
# read the `-f` file (fingerprint, public key, export, import, bubblebabble, find, certificate,
# KRL query, PKCS#11 keys)
_SSH_KEYGEN_VALUED = "CDEFIMNOPRVYZabfgjmnrstwz"
_SSH_KEYGEN_READING = frozenset("lyeiBFLQD")


def _ssh_keygen_written(args: list[str]) -> list[str]:
    # (F176, manual) generating a key (`-f F` writes F and F.pub), a new passphrase or
    # comment (`-p`, `-c`), a KRL (`-k`), known_hosts hashed or cleaned (`-H`, `-R`) write the
    # `-f` file; `-s CA KEY.pub` writes KEY-cert.pub, `-Y sign -f K FILE` writes FILE.sig
    words = read_getopt(args, _SSH_KEYGEN_VALUED, ())
    values = dict(words.values)
    if "M" in values:
        # (F178) `-M generate OUT`, `-M screen -f CANDIDATES OUT` write the moduli file OUT
        return words.operands[:1]
    if words.letters & _SSH_KEYGEN_READING or values.get("Y", "sign") != "sign":
        return []
    # (F178) with no `-f`, generating (or `-p`, `-c`) writes ~/.ssh/id_TYPE
    written = _ssh_keygen_default_key(words)
    written += [value for option, value in words.values if option == "f"]
    written += [f"{name}.pub" for name in written if "Y" not in values]
    if "s" in values:
        written += [name.removesuffix(".pub") + "-cert.pub" for name in words.operands]
    if values.get("Y") == "sign":
        written += [name + ".sig" for name in words.operands]
    return written


# (F177, go's manual) `go tool NAME`: Go's own tools, as `go run cmd/NAME` runs them (F123).
# pprof's `-http` listens and opens the browser, `-web`... open a viewer; trace serves the
# trace and opens the browser (only `-pprof=KIND` prints); cover's `-html` without `-o` opens
# the browser; test2json runs the test binary it is given; pack's `c`/`r` write the archive;
# fix rewrites the files it is given (unless `-diff`); dist builds and installs Go itself.
_PPROF_VIEWERS = frozenset({"http", "web", "weblist", "gv", "evince", "eog"})
_DIST_ACTING = frozenset({"install", "bootstrap", "test", "clean"})


def _go_tools(args: list[str]) -> list[Acting]:
    if args[:1] != ["tool"] or len(args) < 2:
        return []
    tool, rest = args[1], args[2:]
    flags = {token.lstrip("-").split("=", 1)[0] for token in rest if token.startswith("-")}
    operands = [token for token in rest if not token.startswith("-")]
    if tool == "pprof" and flags & _PPROF_VIEWERS:
        names = sorted(flags & _PPROF_VIEWERS)
        return [Acting((tool, f"-{names[0]}"), "serves or shows the profile in a browser")]
    if tool == "trace" and "pprof" not in flags:
        return [Acting((tool,), "serves the trace on an address and opens the browser")]
    if tool == "cover" and "html" in flags and "o" not in flags:
        return [Acting((tool, "-html"), "opens the browser")]
    if tool == "test2json":
        rest = [t for k, t in enumerate(rest) if t != "-p" and (k == 0 or rest[k - 1] != "-p")]
        if any(not token.startswith("-") for token in rest):
            return [Acting((tool,), "runs the test binary it is given")]
    if tool == "pack" and operands and operands[0][:1] in ("c", "r"):
        return [Acting((tool, operands[0]), WRITES_FILES)]
    if tool == "fix" and operands and "diff" not in flags:
        return [Acting((tool,), "rewrites the files it is given")]
    if tool == "dist" and operands and operands[0] in _DIST_ACTING:
        return [Acting((tool, operands[0]), "builds, tests or installs Go's own tree")]
    return []


# (F177, node's manual) its built-in test reporters; any other is a module loaded
_NODE_REPORTERS = frozenset({"spec", "tap", "dot", "junit", "lcov"})


def _node_test_reporters(args: list[str]) -> list[Acting]:
    found = []
    for k, token in enumerate(args):
        if not token.startswith("-"):
            break  # the script: the rest is its own
        name, equals, value = token.partition("=")
        if name != "--test-reporter":
            continue
        value = value if equals else (args[k + 1] if k + 1 < len(args) else "")
        if value not in _NODE_REPORTERS:
            found.append(Acting(("--test-reporter", value), RUNS))
    return found


# (F177, the java launcher's manual) `-XX:` and `-X` options that run a command, load code,
# read more options, or write a log, dump, archive or recording where they say
_JAVA_RUNS = ("-javaagent:", "-agentlib:", "-agentpath:", "-Xrunjdwp", "-Xbootclasspath")
_JAVA_XX = {
    "OnError": RUNS,
    "OnOutOfMemoryError": RUNS,
    "VMOptionsFile": _RESPONSE_FILE,
    "Flags": _RESPONSE_FILE,
    **dict.fromkeys(
        ("HeapDumpPath", "ErrorFile", "ArchiveClassesAtExit", "SharedArchiveFile", "LogFile")
        + ("PerfDataSaveFile", "StartFlightRecording", "FlightRecorderOptions"),
        WRITES_FILES,
    ),
}
# the launcher's options whose value is the next word; the first other operand is the class
_JAVA_VALUED = frozenset(
    {"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path"}
    | {"--add-modules", "--add-reads", "--add-exports", "--add-opens", "--limit-modules"}
    | {"--patch-module", "--enable-native-access", "--source"}
)


def _java_options(args: list[str]) -> list[Acting]:
    found, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token in _JAVA_VALUED:
            k += 1
            continue
        if not token.startswith(("-", "@")) or token in ("-jar", "-m", "--module"):
            break  # the class, the jar or the module: the rest is the program's
        if token.startswith("@"):
            found.append(Acting(("@",), _RESPONSE_FILE))
        elif token.startswith(_JAVA_RUNS):
            found.append(Acting((token.split("=", 1)[0].split(":", 1)[0] + ":",), RUNS))
        elif token.startswith("-XX:"):
            name = token[4:].lstrip("+-").split("=", 1)[0]
            if name in _JAVA_XX:
                found.append(Acting((f"-XX:{name}",), _JAVA_XX[name]))
        elif token.startswith("-Xloggc:"):
            found.append(Acting(("-Xloggc:",), WRITES_FILES))
        elif token.startswith("-Xlog:"):
            parts = token.split(":")
            if len(parts) > 2 and parts[2] not in ("", "stdout", "stderr"):
                found.append(Acting(("-Xlog:",), WRITES_FILES))
    return found


# (F178, cargo's manual) the options taking a value of cargo itself and of new, init, vendor
_CARGO_VALUED = frozenset(
    {"--color", "--config", "-Z", "-C", "--manifest-path", "--vcs", "--edition", "--name"}
    | {"--registry", "-s", "--sync"}
)  # (`cargo new --bin PATH`: there `--bin` is a flag)
# the folder `cargo new PATH`, `cargo init [PATH]` and `cargo vendor [PATH]` write (their default)
_CARGO_WRITES_FOLDER = {"new": "", "init": "", "vendor": "vendor"}


def _cargo_command(args: list[str]) -> tuple[str, list[str]]:
    """cargo's command (`cargo +nightly --color never rustc`) and the words after it."""
    k = 1 if args[:1] and args[0].startswith("+") else 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _CARGO_VALUED else 1
    return (args[k], args[k + 1 :]) if k < len(args) else ("", [])


def _cargo_written(args: list[str]) -> list[str]:
    """(F178) `cargo new /tmp/x`, `cargo init /tmp/x`, `cargo vendor /tmp/v` write that folder;
    `cargo rustc -- -o F` and `cargo rustdoc -- -o DIR` hand rustc and rustdoc where they
    write; `cargo fmt -- FILE`: rustfmt formats FILE in place."""
    command, rest = _cargo_command(args)
    if command in _CARGO_WRITES_FOLDER:
        dashes = rest.index("--") if "--" in rest else len(rest)
        named = _operands(rest[:dashes], _CARGO_VALUED) + rest[dashes + 1 :]
        default = _CARGO_WRITES_FOLDER[command]
        folders = named[:1] or ([default] if default else [])
        # (the working directory itself: its Cargo.toml, src/, .gitignore)
        return [folder for folder in folders if normalise_path(folder) not in ("", ".")]
    if "--" not in rest:
        return []
    after = rest[rest.index("--") + 1 :]
    if command == "fmt":
        return [token for token in after if not token.startswith("-")]
    if command == "rustc":
        return written_operands("rustc", after)
    if command == "rustdoc":
        return _option_values(after, _RUSTDOC_WRITES)
    return []


# (F178, rustdoc's `--help`) where rustdoc writes, and what it runs or loads: the doctests'
# builder and its wrapper, a runtool, codegen and unstable options (a linker, a backend)
_RUSTDOC_WRITES = ("-o", "--out-dir", "--output", "--persist-doctests", "--parts-out-dir")
_RUSTDOC_RUNS = frozenset(
    {"--test-builder", "--test-builder-wrapper", "--test-runtool", "--runtool", "-C"}
    | {"--codegen", "-Z"}
)
_BUILDS_CODE_ELSEWHERE = "makes the build depend on code outside the working directory"


def _cargo_handed_on(args: list[str]) -> list[Acting]:
    """(F178, cargo's manual) `cargo rustc -- ARGS` and `cargo rustdoc -- ARGS` hand ARGS to
    rustc and rustdoc (`-C linker=P`, `@FILE`, `--test-builder P` run or load what they name);
    `cargo add --path DIR` makes the build depend on DIR's crate (its build.rs runs on the next
    build), `--git URL` on a repository's."""
    command, rest = _cargo_command(args)
    if command in ("rustc", "rustdoc") and "--" in rest:
        after = rest[rest.index("--") + 1 :]
        if command == "rustc":
            return acting_uses("rustc", after)
        return [
            Acting((token.split("=", 1)[0],), RUNS)
            for token in after
            if token.split("=", 1)[0] in _RUSTDOC_RUNS or token.startswith(("-C", "-Z", "@"))
        ]
    if command != "add":
        return []
    found = [Acting(("--git",), _FROM_AN_ADDRESS) for _ in _option_values(rest, ("--git",))]
    return found + [
        Acting(("--path", path), _BUILDS_CODE_ELSEWHERE)
        for path in _option_values(rest, ("--path",))
        if _leaves(path)
    ]


def _go_replacement_leaves(spec: str) -> bool:
    """`-replace old[@v]=new[@v]`: a new that is a path (`./x`, `../x`, `/x`) leaving the
    working directory (a module path is fetched from the proxy, as `go get` does)."""
    new = spec.partition("=")[2]
    return new.startswith(("/", "./", "../", "~")) and _leaves(new.split("@", 1)[0])


def _go_workspaces(args: list[str]) -> list[Acting]:
    """(F178, go's manual) `go work use DIR`, `go work init DIR`, `go work edit -use=DIR` and
    `-replace M=DIR`, `go mod edit -replace M=DIR` make later builds use the code in DIR: one
    outside the working directory is named by its path."""
    if args[:2] not in (["work", "use"], ["work", "init"], ["work", "edit"], ["mod", "edit"]):
        return []
    rest = args[2:]
    if args[1] in ("use", "init"):
        paths = [token for token in rest if not token.startswith("-")]
    else:
        paths = _option_values(rest, ("-use", "--use"))
        replaced = _option_values(rest, ("-replace", "--replace"))
        paths += [spec.partition("=")[2] for spec in replaced if _go_replacement_leaves(spec)]
    return [Acting((path,), _BUILDS_CODE_ELSEWHERE) for path in paths if _leaves(path)]


# go's editing flags that take a value (`-go=1.22`, `-require m@v`): the word after a bare one
_GO_EDIT_VALUED = frozenset(
    {"-go", "-toolchain", "-godebug", "-dropgodebug", "-module", "-require", "-droprequire"}
    | {"-exclude", "-dropexclude", "-replace", "-dropreplace", "-retract", "-dropretract"}
    | {"-tool", "-droptool", "-ignore", "-dropignore", "-use", "-dropuse", "-C", "-modfile"}
)


def _go_edited_file(args: list[str]) -> list[str]:
    """(F178) `go mod edit [flags] [FILE]` and `go work edit [flags] [FILE]` rewrite FILE
    (go.mod, go.work by default), unless `-print` or `-json` only prints it."""
    if args[:2] not in (["mod", "edit"], ["work", "edit"]):
        return []
    rest = [token.replace("--", "-", 1) if token.startswith("--") else token for token in args]
    flags = {token.split("=", 1)[0] for token in rest[2:] if token.startswith("-")}
    if flags & {"-print", "-json"}:
        return []
    return _operands(rest[2:], _GO_EDIT_VALUED)[:1]


# (F178, GnuPG 2.2's manual) the commands that write their output beside each input when no
# `-o` says where (`-c /tmp/a` writes /tmp/a.gpg, `--decrypt-files /tmp/a.gpg` /tmp/a); `-d`
# alone prints
_GPG_BESIDE_LETTERS = frozenset("cesb")
_GPG_BESIDE_LONGS = ("symmetric", "encrypt", "sign", "clearsign", "clear-sign", "detach-sign")
_GPG_EACH_FILE = ("encrypt-files", "decrypt-files")
_GPG_COMMANDS = _GPG_BESIDE_LONGS + _GPG_EACH_FILE + ("decrypt", "verify", "sign-key", "store")
# and more of its long options taking a value (`--passphrase-file F` names no input)
_GPG_MORE_VALUED = (
    *("passphrase-file", "passphrase", "passphrase-fd", "status-fd", "logger-fd"),
    *("trust-model", "pinentry-mode", "cipher-algo", "digest-algo", "default-key"),
    *("compress-algo", "s2k-cipher-algo", "s2k-digest-algo", "set-filename"),
)


def _gpg_command(name: str) -> str | None:
    """The command `--name` spells: an exact name first, else the one it starts (a start of
    several is an error to gpg)."""
    if name in _GPG_COMMANDS:
        return name
    matches = [command for command in _GPG_COMMANDS if command.startswith(name)]
    return matches[0] if len(matches) == 1 else None


# (F179) gpg given no command guesses one: an encrypted FILE.gpg is decrypted to FILE (seen
# with gpg 2.2.40: `gpg ../c.gpg` wrote ../c). Its commands (GnuPG 2.2's gpg.c), a start of
# one counting as it:
_GPG_COMMAND_LETTERS = frozenset("sbecdkK")
_GPG_EVERY_COMMAND = _GPG_COMMANDS + (
    *("encrypt-files", "verify-files", "multifile", "list-keys", "list-public-keys"),
    *("list-signatures", "list-sigs", "check-signatures", "check-sigs", "fingerprint"),
    *("list-secret-keys", "list-packets", "list-config", "list-gcrypt-config", "show-keys"),
    *("generate-key", "gen-key", "quick-generate-key", "quick-gen-key", "quick-add-key"),
    *("quick-add-uid", "quick-adduid", "quick-revoke-uid", "quick-revuid", "quick-set-expire"),
    *("quick-set-primary-uid", "quick-update-pref", "quick-set-ownertrust"),
    *("full-generate-key", "full-gen-key", "generate-revocation", "gen-revoke"),
    *("generate-designated-revocation", "desig-revoke", "delete-keys", "delete-key"),
    *("delete-secret-keys", "delete-secret-key", "delete-secret-and-public-keys"),
    *("quick-sign-key", "quick-lsign-key", "quick-revoke-sig", "lsign-key", "nrsign-key"),
    *("nrlsign-key", "edit-key", "key-edit", "passwd", "change-passphrase", "export"),
    *("export-secret-keys", "export-secret-subkeys", "export-ssh-key", "export-ownertrust"),
    *("import-ownertrust", "send-keys", "receive-keys", "recv-keys", "search-keys"),
    *("refresh-keys", "fetch-keys", "locate-keys", "locate-external-keys", "import"),
    *("fast-import", "card-status", "edit-card", "card-edit", "change-pin", "update-trustdb"),
    *("check-trustdb", "fix-trustdb", "print-md", "print-mds", "gen-prime", "gen-random"),
    *("enarmor", "dearmor", "server", "tofu-policy", "rebuild-keydb-caches", "version"),
    *("help", "warranty", "dump-options", "dump-option-table", "list-trustdb"),
)


def _gpg_guesses(words: GetoptWords) -> bool:
    """Whether gpg is given no command (and so guesses what its files call for)."""
    return not words.letters & _GPG_COMMAND_LETTERS and not any(
        command.startswith(name) for name in words.longs for command in _GPG_EVERY_COMMAND
    )


def _gpg_written(args: list[str]) -> list[str]:
    words = read_getopt(args, _GPG_VALUED, _GPG_LONG_VALUED + _GPG_MORE_VALUED)
    outputs = [value for option, value in words.values if option in ("o", "output")]
    inputs = [name for name in words.operands if name != "-"]
    commands = {_gpg_command(name) for name in words.longs}
    if "encrypt-files" in commands:
        return outputs + [f"{name}.gpg" for name in inputs]  # each FILE.gpg beside FILE
    if "decrypt-files" in commands or _gpg_guesses(words):
        # each FILE without its suffix (gpg asks for a name when it has none)
        return outputs + [re.sub(r"\.(gpg|pgp|asc)$", "", name) for name in inputs]
    beside = words.letters & _GPG_BESIDE_LETTERS or commands & {*_GPG_BESIDE_LONGS, "store"}
    return outputs or ([f"{name}.gpg" for name in inputs] if beside else [])


# (F178) ssh-keygen's letters choosing a mode other than generating a key; with none of them
# and no `-f`, it writes ~/.ssh/id_TYPE (the name it asks for on standard input by default)
_SSH_KEYGEN_MODES = frozenset("lyeiBFLQDkRHsYAMGTKr")


def _ssh_keygen_default_key(words: GetoptWords) -> list[str]:
    values = dict(words.values)
    if "f" in values or (words.letters | set(values)) & _SSH_KEYGEN_MODES:
        return []
    key = values.get("t", "rsa" if words.letters & {"p", "c"} else "ed25519")
    # rooted, so the write check reads it as outside the working directory, as the home is
    return [f"/~/.ssh/id_{key}"]  # and its .pub


def _docker_plugin_folder(args: list[str]) -> list[Acting]:
    """(F178, docker's manual) `docker plugin create NAME DIR` reads DIR's rootfs and
    config.json into the daemon (one outside the working directory is named by its path)."""
    words, rest = _docker_command(args)
    if words != ["plugin", "create"]:
        return []
    operands = [token for token in rest if not token.startswith("-")]
    return [Acting((path,), _HOST_FILE_SENT) for path in operands[1:2] if _leaves(path)]


def _docker_written(args: list[str]) -> list[str]:
    """(F178) `docker context export NAME [FILE]` writes FILE (NAME.dockercontext here; `-`:
    standard output)."""
    words, rest = _docker_command(args)
    if words != ["context", "export"]:
        return []
    operands = [token for token in rest if not token.startswith("-")]
    return [path for path in operands[1:2] if path != "-"]


def _python_written(args: list[str]) -> list[str]:
    """(F178, python's manual) `-X pycache_prefix=DIR` writes the bytecode of what it imports
    under DIR, before the script, `-c` or `-m` (clusters: `-IXpycache_prefix=DIR`); (F179)
    from Python 3.12 `-X perf` writes /tmp/perf-PID.map, and 3.13's `-X perf_jit`
    /tmp/jit-PID.dump too."""
    written, k = [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if token == "--" or not token.startswith("-") or token == "-":
            break
        if token.startswith("--"):
            k += token == "--check-hash-based-pycs"
            continue
        for position, letter in enumerate(token[1:], start=1):
            if letter in "cm":
                return written
            if letter in "WX":
                value = token[position + 1 :]
                if not value and k < len(args):
                    value, k = args[k], k + 1
                if letter == "X" and value.startswith("pycache_prefix="):
                    written.append(value.partition("=")[2])
                elif letter == "X" and value in ("perf", "perf_jit"):
                    written.append("/tmp/perf-PID.map")
                    written += ["/tmp/jit-PID.dump"] if value == "perf_jit" else []
                break
    return written


# (F178, jar's `--help`, JDK 17-21) its mode letters, the letters taking a value (in the order
# given: `cvfm F M`), and its long options taking one
_JAR_VALUED = "fmeip"
_JAR_LONG_VALUED = ("file", "manifest", "main-class", "generate-index", "module-path")
_JAR_LONG_VALUED += ("module-version", "hash-modules", "release", "date", "dir")


def _jar_written(args: list[str]) -> list[str]:
    """`jar cf F …`, `--create --file F`, `u` write the archive F; `-i F` (`--generate-index`)
    rewrites F; `x` writes in the working directory, or the folder `-C`/`--dir` names."""
    modes, files, folders, k = set(), [], [], 0
    while k < len(args):
        token, k = args[k], k + 1
        if k == 1 and not token.startswith("-"):
            token = "-" + token  # the old syntax: `jar cvf x.jar …`
        if token.startswith("--"):
            name, equals, value = token[2:].partition("=")
            full = next((o for o in _JAR_LONG_VALUED if o.startswith(name)), name) if name else ""
            if full in ("create", "update", "extract"):
                modes.add(full[0])
            if full in _JAR_LONG_VALUED:
                if not equals and k < len(args):
                    value, k = args[k], k + 1
                if full in ("file", "generate-index"):
                    files.append(value)
                    modes |= {"c"} if full == "generate-index" else set()
                elif full == "dir":
                    folders.append(value)
        elif token == "-C" and k < len(args):
            folders.append(args[k])
            k += 1
        elif token.startswith("-") and len(token) > 1:
            modes |= set(token[1:]) & set("cuxi")
            for letter in token[1:]:
                if letter in _JAR_VALUED and k < len(args):
                    if letter in "fi":
                        files.append(args[k])
                    k += 1
    written = files if modes & set("cui") else []
    if "x" in modes:
        # (the working directory itself when no folder is named)
        written += [folder for folder in folders if normalise_path(folder) not in ("", ".")]
    return written


_MORE_READINGS: dict[str, tuple[Callable[[list[str]], list[Acting]], ...]] = {
    "go": (_go_tools, _go_workspaces),
    "node": (_node_test_reporters,),
    "java": (_java_options,),
    "docker": (
        _docker_build_elsewhere,
        _docker_compose,
        _docker_images_read,
        _docker_elsewhere,
        _docker_plugin_folder,
    ),
    "docker-compose": (lambda args: _docker_compose(["compose", *args]),),
    "kubectl": (_kubectl_plugins, _kubectl_files_sent),
    "gh": (_gh_fields_sent, _gh_git_flags, _gh_release_assets, _gh_clone_lands),
    "curl": (_curl_files_sent,),
    "uv": (_uv_interpreters,),
    "npm": (_npm_settings, _npm_global, _npm_version_taken_back),
    "ctest": (_ctest_dashboards,),
    "rspec": (_rspec_formatters, _rspec_globs),
    "cargo": (_clippy_driver_options, _rustdoc_split_words, _cargo_handed_on),
    "vitest": (partial(_listeners, "vitest"), _vitest_json_report, _vitest_experimental),
    "playwright": (partial(_listeners, "playwright"),),
    "yarn": (partial(_listeners, "yarn"),),
    "golangci-lint": (_golangci_revisions,),
    "mvn": (_maven_goals,),
    **dict.fromkeys(("gradle", "gradlew", "./gradlew"), (_gradle_properties, _gradle_reaches)),
    "date": (_date_set_by_operand,),
    "openssl": (_openssl_modules,),
    "zip": (_zip_unzip_command,),
    "aws": (_aws_local_files, _aws_commands),
    "mknod": (_mknod_devices,),
    "split": (_split_pieces_like_config,),
    "sqlite3": (_sqlite_sql,),
    "duckdb": (_duckdb_sql,),
    "psql": (_psql_meta_commands,),
    "mysql": (_mysql_client_commands,),
    "redis-cli": (_redis_commands,),
    "mongosh": (_mongosh_scripts,),
}
