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

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

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
    "clean am apply notes show-ref for-each-ref count-objects fsck gc prune version help "
    "submodule bisect sparse-checkout rev-list name-rev"
)
_LOG_DIFF = {"--output": WRITES_FILES, "--ext-diff": RUNS}
_FETCH = {"--upload-pack": RUNS, "--config": CONFIGURES}

ACTING: dict[str, dict[str, str]] = {
    "find": {
        **dict.fromkeys(("-exec", "-execdir", "-ok", "-okdir"), RUNS),
        "-delete": DELETES,
        **dict.fromkeys(("-fprint", "-fprint0", "-fprintf", "-fls"), WRITES_FILES),
    },
    "fd": dict.fromkeys(("-x", "--exec", "-X", "--exec-batch"), RUNS),
    "git": {
        "-c": CONFIGURES,
        "--config-env": CONFIGURES,
        "--exec-path": RUNS,
        "-C": "reads another repository's configuration and hooks",
        "--git-dir": "reads another repository's configuration and hooks",
        "--work-tree": WRITES_FILES,
        "--super-prefix": CONFIGURES,
    },
    **{f"git {sub}": _LOG_DIFF for sub in ("log", "show", "diff", "whatchanged", "range-diff")},
    "git format-patch": {**_LOG_DIFF, "-o": WRITES_FILES, "--output-directory": WRITES_FILES},
    "git grep": {"-O": RUNS, "--open-files-in-pager": RUNS},
    "git fetch": _FETCH,
    "git pull": {**_FETCH, "--exec": RUNS},
    "git ls-remote": _FETCH,
    "git clone": {**_FETCH, "-u": RUNS, "--template": RUNS, "-c": CONFIGURES},
    "git push": {"--receive-pack": RUNS, "--exec": RUNS},
    "git archive": {"--exec": RUNS, "-o": WRITES_FILES, "--output": WRITES_FILES},
    "git rebase": {"-x": RUNS, "--exec": RUNS},
    "git difftool": {"-x": RUNS, "--extcmd": RUNS},
    "git init": {"--template": RUNS, "--separate-git-dir": WRITES_FILES},
    "git branch": {
        **dict.fromkeys(("-d", "-D", "--delete", "-m", "-M", "--move"), DELETES),
        **dict.fromkeys(("-c", "-C", "--copy", "-f", "--force"), WRITES_FILES),
        **dict.fromkeys(("-u", "--set-upstream-to", "--unset-upstream"), CONFIGURES),
        "--edit-description": RUNS,
    },
    "git tag": {"-d": DELETES, "--delete": DELETES},
    # Subcommands with no acting option of their own: known, so `git commit -m` is not read
    # against every other subcommand's options (what an unknown subcommand or alias is).
    **{f"git {sub}": {} for sub in _GIT_SUBCOMMANDS.split()},
    "git submodule foreach": {"": RUNS},
    "git bisect run": {"": RUNS},
    "git filter-branch": {"": RUNS},
    "git send-email": {"": SENDS},
    "git credential": {"": "reveals credentials"},
    "git daemon": {"": SENDS},
    "git instaweb": {"": RUNS},
    "git config": {"": CONFIGURES},  # unless it only reads: see _git_config
    "pytest": {
        "--basetemp": "deletes and recreates the directory",
        "-p": RUNS,
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
        "--pdbcls": RUNS,
    },
    "python": {"-c": RUNS, "-m": RUNS},
    "node": dict.fromkeys(
        ("-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader")
        + ("--experimental-loader", "--inspect", "--inspect-brk"),
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
    },
    "sed": {"-i": WRITES_FILES, "--in-place": WRITES_FILES, "-f": RUNS, "--file": RUNS},
    "awk": dict.fromkeys(("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"), RUNS)
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
    },
    "man": dict.fromkeys(("-P", "--pager", "-H", "--html", "-C", "--config-file"), RUNS),
    "rg": {"--pre": RUNS},
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
        **dict.fromkeys(("--prefix", "-g", "--global", "--location", "--cache"), WRITES_FILES),
        **dict.fromkeys(("--userconfig", "--globalconfig", "--registry"), CONFIGURES),
    },
    **{f"npm {sub}": {"": RUNS} for sub in ("exec", "x", "explore")},
    **{f"npm config {sub}": {"": CONFIGURES} for sub in ("set", "delete", "edit", "rm")},
    "npm set": {"": CONFIGURES},
    "npm publish": {"": SENDS},
    "yarn": {"--use-yarnrc": CONFIGURES},
    "yarn dlx": {"": RUNS},
    "yarn config set": {"": CONFIGURES},
    "pnpm dlx": {"": RUNS},
    "pnpm config set": {"": CONFIGURES},
    "pip": {
        **dict.fromkeys(("-t", "--target", "--prefix", "--root", "--src", "--log"), WRITES_FILES),
        **dict.fromkeys(("-i", "--index-url", "--extra-index-url", "-f", "--find-links"), RUNS),
        **dict.fromkeys(("--trusted-host", "-C", "--config-settings", "--user"), CONFIGURES),
    },
    "pip config": {"": CONFIGURES},
    "cargo": {
        **dict.fromkeys(("--config", "-Z", "--manifest-path", "-C"), RUNS),
        **dict.fromkeys(("--target-dir", "--out-dir", "--artifact-dir"), WRITES_FILES),
    },
    "cargo install": {"": "installs programs onto the PATH"},
    **{
        f"go {sub}": {
            **dict.fromkeys(("-exec", "-toolexec", "-overlay", "-modfile", "-vettool"), RUNS),
            **dict.fromkeys(("-o", "-outputdir", "-coverprofile", "-cpuprofile"), WRITES_FILES),
            **dict.fromkeys(
                ("-memprofile", "-blockprofile", "-mutexprofile", "-trace"), WRITES_FILES
            ),
        }
        for sub in ("build", "test", "run", "vet", "install", "generate", "list")
    },
    "go env": {"-w": CONFIGURES, "-u": CONFIGURES},
    "gofmt": {"-w": WRITES_FILES},
    "prettier": {"-w": WRITES_FILES, "--write": WRITES_FILES},
    "eslint": {"--fix": WRITES_FILES, "-o": WRITES_FILES, "--output-file": WRITES_FILES},
    "ruff": {"--fix": WRITES_FILES, "--config": CONFIGURES},
    "yq": {"-i": WRITES_FILES, "--inplace": WRITES_FILES},
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
    },
    "wget": {
        **dict.fromkeys(("-O", "--output-document", "-o", "--output-file"), WRITES_FILES),
        **dict.fromkeys(("-a", "--append-output", "-P", "--directory-prefix"), WRITES_FILES),
        **dict.fromkeys(("--post-file", "--body-file"), SENDS),
        **dict.fromkeys(("-e", "--execute", "--config"), CONFIGURES),
    },
    "docker": {},
    "go": {},
    "pnpm": {},
    **{
        f"docker {sub}": {
            **dict.fromkeys(("-v", "--volume", "--mount", "--privileged", "--cap-add"), RUNS),
            **dict.fromkeys(("--device", "--pid", "--ipc", "--network", "--net"), RUNS),
            **dict.fromkeys(("--security-opt", "--userns", "--uts"), RUNS),
        }
        for sub in ("run", "create", "exec")
    },
    "zip": {"-TT": RUNS, "--unzip-command": RUNS},
    "dd": {},
    "gcc": {
        **dict.fromkeys(("-wrapper", "-B", "-fplugin", "-specs", "--specs", "-Xlinker"), RUNS),
        **dict.fromkeys(("-Wl", "-Xassembler", "-Xpreprocessor", "-fplugin-arg"), RUNS),
        **dict.fromkeys(("-MF", "-save-temps", "-dumpdir", "-dumpbase", "-aux-info"), WRITES_FILES),
    },
    "rustc": {"-C": RUNS, "--codegen": RUNS, "-Z": RUNS, "--out-dir": WRITES_FILES},
    "xxd": {},
    "vim": dict.fromkeys(("-c", "+", "-S", "--cmd", "-u", "-y"), RUNS),
    "sqlite3": {"-cmd": RUNS, "-init": RUNS, ".": "runs a dot-command (.shell, .output ...)"},
}

# Short option letters that take a value: letters after them in `-abc` are that value.
VALUED_LETTERS = {
    "pytest": "kmcpoWrn",
    "git": "cC",
    "sort": "kotST",
    "tar": "fCbgHIKLNTVX",
    "ssh": "bcDEeFIiJLlmOopQRSWw",
    "curl": "oDcKTdFuHAeEXxrwYyzb",
    "wget": "OoaPeUtTw",
    "sed": "efl",
    "awk": "Fvfiload",
    "make": "fCIjlOWo",
    "python": "cmWXQ",
    "rsync": "eBTfM",
    "cargo": "ZCpj",
    "node": "erp",
    "perl": "eEMIix",
    "ruby": "erICEFi",
}

# Programs whose operands are files they write: "all", "last" (the destination; or
# the -t/--target-directory value), "after-first" (chmod MODE FILE...), "second" (uniq).
WRITES = {
    **dict.fromkeys(("tee", "touch", "mkdir", "rm", "rmdir", "unlink", "shred", "mkfifo"), "all"),
    **dict.fromkeys(("truncate", "mv"), "all"),
    **dict.fromkeys(("cp", "ln", "install", "rsync"), "last"),
    **dict.fromkeys(("chmod", "chown", "chgrp"), "after-first"),
    **dict.fromkeys(("uniq", "xxd"), "second"),
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
)
# Programs that write where they run without naming the file (a download, an archive's
# files, a.out): after a `cd`, that directory must be writable by the rules.
WRITES_WHERE_IT_RUNS = RUNS_PROJECT_CODE | {"wget", "curl", "unzip", "tar", "gcc", "git", "split"}
# Written operands that create, remove or re-mode files without putting content in them.
WRITES_NO_CONTENT = frozenset(
    {"touch", "mkdir", "rm", "rmdir", "unlink", "shred", "mkfifo", "chown", "chgrp", "truncate"}
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
    "openssl": ("-out",),
    "patch": ("-o", "--output"),
}
_WRITES_VALUED = {
    "xxd": "cglosC",
    "compileall": "dlirxpej",
    "cp": "tS",
    "mv": "tS",
    "ln": "tS",
    "install": "tSgmo",
    "mkdir": "m",
    "touch": "rdt",
    "truncate": "sr",
    "uniq": "fsw",
    "rsync": "eBTfM",
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
    **dict.fromkeys(("vi", "nvim", "ex", "view", "vimdiff", "rvim"), "vim"),
    **dict.fromkeys(("cc", "c++", "g++", "clang", "clang++", "gcc-12", "g++-12"), "gcc"),
}
_PYTHON = re.compile(r"python\d+(?:\.\d+)*")
_NAME_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_MODE = re.compile(r"[-+=ugoarwxXst0-7,]+")
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
    found = list(_scan(program, args))
    if program == "python":
        found += _python_module(args)
    elif program == "sed":
        found += _sed_scripts(args)
    elif program == "awk":
        found += _awk_program(args)
    elif program == "git":
        found = [_git_config(use, args) for use in found if use.names != ("config",)] + [
            _git_config(use, args) for use in found if use.names == ("config",)
        ]
        found = [use for use in found if use is not None]
    return list(dict.fromkeys(found))


_NO_CLUSTERS = frozenset(
    {"find", "go", "gcc", "sqlite3"}
)  # `-name` is one option there, never `-n -a -m -e`
_STOPS_AT_OPERAND = frozenset({"python", "node", "perl", "ruby", "php"})  # then: a script's args
_GLOBALS_FIRST = frozenset({"git"})  # `git -c x log`: git's own options come before `log`


def _scan(program: str, args: list[str]) -> Iterator[Acting]:
    key, tables = program, [ACTING.get(program, {})]
    subcommands = _SUBCOMMANDS.get(program, ())
    valued = VALUED_LETTERS.get(program, "")
    descending = True
    if program == "tar" and args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # `tar xzf a.tgz`: the old option syntax
    for token in args:
        options = [(o, w) for table in tables for o, w in table.items()]
        if token.startswith("--") and len(token) > 2:
            name = token[2:].split("=", 1)[0]
            for option, what in options:
                if (
                    option.startswith("--") and option[2:].startswith(name)
                ) or option == "-" + name:
                    yield Acting((option, "--" + name), what)
        elif token.startswith("-") and len(token) > 1:
            head = token.split("=", 1)[0]
            whole = [
                (o, w)
                for o, w in options
                if not o.startswith("--")
                and (o == head or (program in _NO_CLUSTERS and len(o) == 2 and head.startswith(o)))
            ]
            yield from (Acting((o,), w) for o, w in whole)
            if not whole and program not in _NO_CLUSTERS:
                yield from _letters(token, options, valued)
        elif token.startswith(".") and token[1:2].isalpha() and any(o == "." for o, _ in options):
            yield Acting((token.split()[0],), dict(options)["."])
        elif token.startswith("+") and any(o == "+" for o, _ in options):
            yield Acting((token,), dict(options)["+"])
        elif _NAME_ASSIGNMENT.match(token) and any(o == "NAME=" for o, _ in options):
            yield Acting((token.split("=", 1)[0] + "=",), "sets a variable the program runs with")
        elif program in _STOPS_AT_OPERAND:
            return
        elif descending and f"{key} {token}" in _PATHS:
            key = f"{key} {token}"
            table = ACTING.get(key, {})
            tables = [table] if program in _GLOBALS_FIRST else [*tables, table]
            if "" in table:
                yield Acting((token,), table[""])
        elif descending:
            descending = False
            if key == program and subcommands:
                # Not a subcommand we know (an option's value, an alias): any of them may follow.
                tables += [ACTING[k] for k in subcommands if "" not in ACTING[k]]


def _letters(token: str, options: list[tuple[str, str]], valued: str) -> Iterator[Acting]:
    letters = {o[1]: w for o, w in options if len(o) == 2 and o[0] == "-"}
    for letter in token[1:]:
        if letter in letters:
            yield Acting(("-" + letter,), letters[letter])
        if letter in valued:
            return


def _python_module(args: list[str]) -> list[Acting]:
    """`python -m MOD ARGS`: MOD's own acting options count too (`python -m pytest -p x`)."""
    module = _python_module_args(args)
    return acting_uses(*module) if module else []


def _python_module_args(args: list[str]) -> tuple[str, list[str]] | None:
    for k, token in enumerate(args):
        if not token.startswith("-") or token == "-c":
            return None  # a script (the rest are its arguments), or code
        if token == "-m" and k + 1 < len(args):
            return args[k + 1], args[k + 2 :]
        if token.startswith("-m") and len(token) > 2:
            return token[2:], args[k + 1 :]
    return None


_PYTEST_VALUED = frozenset(
    {"-k", "-m", "-p", "-o", "-c", "-W", "-n", "-r", "--tb", "--durations", "--rootdir"}
    | {"--basetemp", "--junitxml", "--deselect", "--ignore", "--ignore-glob", "--confcutdir"}
    | {"--import-mode", "--maxfail", "--log-level", "--capture", "--color", "--cov"}
    | {"--cov-report", "--cov-config", "--timeout", "--dist", "--numprocesses", "--reruns"}
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
            if path.startswith("/") or path == ".." or path.startswith("../"):
                paths.append(path)
    return paths


def _option_values(args: list[str], options: tuple[str, ...]) -> list[str]:
    values = []
    for k, token in enumerate(args):
        for option in options:
            if token == option and k + 1 < len(args):
                values.append(args[k + 1])
            elif token.startswith(option + "=") or (len(option) == 2 and token[:2] == option):
                values.append(token[len(option) :].removeprefix("="))
    return values


def _sed_scripts(args: list[str]) -> list[Acting]:
    if "--sandbox" in args:
        return []
    scripts, operands, k = [], [], 0
    while k < len(args):
        token = args[k]
        if token in ("-e", "--expression") and k + 1 < len(args):
            scripts.append(args[k + 1])
            k += 2
            continue
        if token.startswith("--expression="):
            scripts.append(token.split("=", 1)[1])
        elif token.startswith("-e") and len(token) > 2 and token[1] == "e":
            scripts.append(token[2:])
        elif token in ("-l", "--line-length"):
            k += 1
        elif not token.startswith("-") or token == "-":
            operands.append(token)
        k += 1
    if not scripts and operands:
        scripts.append(operands[0])
    return [
        Acting((script,), "the sed script may run commands or read and write files")
        for script in scripts
        if not _sed_is_plain(script)
    ]


_SED_ADDRESS = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
_SED_COMMAND = re.compile(
    rf"""[ \t;\n]*
    (?:{_SED_ADDRESS}(?:,(?:{_SED_ADDRESS}|[~+]\d+))?[ \t]*!?[ \t]*)?   # [address[,address]][!]
    (?:[pdqQ=nNPDhHgGxlz{{}}]                                        # print, delete, hold...
      |[aic][ \t\\].*                                               # text to the line end
      |s(?P<s>[^\\\n])(?:(?!(?P=s))[^\\\n]|\\.)*(?P=s)(?:(?!(?P=s))[^\\\n]|\\.)*(?P=s)
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


_AWK_ACTS = re.compile(r"system|getline|[|>]|@|close|fflush|print\s*>")


def _awk_program(args: list[str]) -> list[Acting]:
    k = 0
    while k < len(args):
        token = args[k]
        if token in ("-F", "-v", "--field-separator", "--assign"):
            k += 2
            continue
        if token == "--":
            k += 1
            break
        if not token.startswith("-") or token == "-":
            break
        if token[:2] in ("-f", "-i", "-l", "-E") or token.startswith(("--file", "--include")):
            return []  # the program comes from a file: the option itself acts
        k += 1
    if k >= len(args) or not _AWK_ACTS.search(args[k]):
        return []
    return [Acting((args[k],), "the awk program may run commands or write files")]


_GIT_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "get", "list"}
)


def _git_config(use: Acting, args: list[str]) -> Acting | None:
    """`git config KEY VALUE` writes: the rule must name the KEY; reading needs nothing."""
    if use.names != ("config",):
        return use
    if any(token in _GIT_CONFIG_READS for token in args):
        return None
    after = args[args.index("config") + 1 :] if "config" in args else []
    keys = [t for t in after if not t.startswith("-") and t not in ("set", "unset")]
    return Acting((keys[0],) if keys else ("config",), "writes git configuration")


def written_operands(base: str, args: list[str]) -> list[str]:
    """The files a program's operands name for writing (`tee a b`, `cp x DEST`, `dd of=F`)."""
    program = canonical_program(base)
    if program == "dd":
        return [token[3:] for token in args if token.startswith("of=")]
    if program in STARTS_A_JVM:
        # The JVM keeps its performance data in /tmp whatever TMPDIR says.
        return ["/tmp/hsperfdata_<user>"]
    if program == "python":
        module = _python_module_args(args)
        return written_operands(*module) if module else []
    if program in OUTPUT_OPTIONS:
        return _option_values(args, OUTPUT_OPTIONS[program])
    if program == "pytest":
        return _pytest_paths_elsewhere(args)
    shape = WRITES.get(program)
    if shape is None:
        return []
    valued = _WRITES_VALUED.get(program, "")
    operands, target, k, options_end = [], None, 0, False
    while k < len(args):
        token = args[k]
        if shape == "after-first" and not operands and _MODE.fullmatch(token):
            operands.append(token)  # `chmod -x FILE`: a mode, not an option
        elif options_end or not token.startswith("-") or token == "-":
            operands.append(token)
        elif token == "--":
            options_end = True
        elif token.startswith("--target-directory="):
            target = token.split("=", 1)[1]
        elif token.startswith("--"):
            pass
        else:
            for position, letter in enumerate(token[1:], start=1):
                if letter in valued:
                    value = token[position + 1 :]
                    if not value and k + 1 < len(args):
                        k += 1
                        value = args[k]
                    if letter == "t":
                        target = value
                    break
        k += 1
    if shape == "all":
        return operands
    if shape == "after-first":
        return operands[1:]
    if shape == "second":
        return operands[1:2]
    return [target] if target is not None else operands[-1:]


@lru_cache(maxsize=4096)
def _naming(name: str) -> re.Pattern:
    if len(name) == 2 and name[0] == "-" and name[1] != "-":
        # `-x` is also named inside a cluster of short options: `tar -xzf *` names `-x`.
        return re.compile(rf"(?:^|[\s:*])-[A-Za-z0-9]*{re.escape(name[1])}")
    return re.compile(rf"(?:^|[\s:*]){re.escape(name)}(?=$|[\s=*,])")


_WORD = re.compile(r"[\w+-][\w.+-]*")


def pattern_names(pattern: str, name: str) -> bool:
    """Does a rule's pattern name an acting option or a program (as a word of the command)
    or a path or script (as text)?"""
    if name[:1] in ("-", "+") or _WORD.fullmatch(name):
        return _naming(name).search(pattern) is not None
    return name in pattern
