"""The policies the shell corpora are judged under (shared by the engine's and the oracle's tests).

`REVIEW_RULES` is the outside review's prefix-style policy, as it was sent through a live
gate: `rm *` and `curl *` NEVER; a handful of programs ALWAYS; reads and writes ALWAYS
under /workspace and NEVER elsewhere. `BENIGN_RULES` extends it with the program rules an
admin would add so that the commands agents really run (tests/shell_corpus/benign.py)
are allowed: still prefix-style (`pytest *`, `npm test*`, `head *`, ...), never a rule
that names an acting option.

    from tests.shell_corpus.policies import review_policy, benign_policy, kinds
    review_policy().evaluate("run_command", {"command": "ls -la"}, kinds()["run_command"])
"""

from functools import cache

from governance.policy import CompiledPolicy, MatchArgument, PolicyDocument, compile_policy

NEVER, ALWAYS = "NEVER", "ALWAYS"

_FILES = [
    ("read_file:/workspace/*", ALWAYS),
    ("read_file:*", NEVER),
    ("write_file:/workspace/*", ALWAYS),
    ("write_file:*", NEVER),
]

REVIEW_RULES: list[tuple[str, str]] = [
    ("run_command:rm *", NEVER),
    ("run_command:curl *", NEVER),
    ("run_command:git status", ALWAYS),
    ("run_command:git log *", ALWAYS),
    ("run_command:ls *", ALWAYS),
    ("run_command:cat *", ALWAYS),
    ("run_command:echo *", ALWAYS),
    ("run_command:grep *", ALWAYS),
    ("run_command:find *", ALWAYS),
    ("run_command:python -m pytest *", ALWAYS),
    *_FILES,
]

# Programs an admin allows for coding agents: builds, tests, reads and text tools.
# Each entry becomes `run_command:<prefix>` (exactly) and `run_command:<prefix> *`.
BENIGN_PROGRAMS: tuple[str, ...] = (
    # listing, reading, searching
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "rg",
    "find",
    "fd",
    "tree",
    "file",
    "stat",
    "du",
    "df",
    "pwd",
    "which",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "diff",
    "cmp",
    "md5sum",
    "sha256sum",
    "echo",
    "printf",
    "true",
    "date",
    "env",
    "uname",
    "whoami",
    "id",
    "nproc",
    "ps",
    # text pipelines
    "sort",
    "uniq",
    "cut",
    "tr",
    "sed",
    "awk",
    "jq",
    "column",
    "nl",
    "xxd",
    "od",
    "less",
    "tac",
    "rev",
    "paste",
    "comm",
    "fold",
    "fmt",
    "expand",
    "yq",
    # navigation and workspace changes an agent makes inside /workspace
    "cd",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "tee",
    "test",
    "[",
    "sleep",
    "xargs",
    # git reads
    "git status",
    "git log",
    "git diff",
    "git show",
    "git branch",
    "git rev-parse",
    "git ls-files",
    "git blame",
    "git remote -v",
    "git stash list",
    "git tag",
    "git describe",
    "git shortlog",
    "git grep",
    "git add",
    "git commit",
    "git checkout",
    "git switch",
    "git restore",
    "git stash",
    "git fetch",
    "git merge-base",
    "git config --get",
    "git cat-file",
    "git ls-tree",
    "git reflog",
    "git worktree list",
    "git --no-pager",
    # Python
    "python -m pytest",
    "python3 -m pytest",
    "pytest",
    "python -m mypy",
    "mypy",
    "ruff",
    "python -m ruff",
    "black",
    "python -m black",
    "flake8",
    "pylint",
    "isort",
    "tox",
    "python --version",
    "python3 --version",
    "pip list",
    "pip show",
    "pip freeze",
    "pip install",
    "pip3 install",
    "python -m pip install",
    "uv",
    "poetry",
    "coverage",
    "python manage.py",
    "python3 manage.py",
    "python -m unittest",
    "python3 -m unittest",
    "python -m compileall",
    "python3 -m py_compile",
    "python -m py_compile",
    # JavaScript
    "npm test",
    "npm run",
    "npm install",
    "npm ci",
    "npm ls",
    "npm view",
    "npm outdated",
    "npx tsc",
    "npx eslint",
    "npx prettier",
    "npx jest",
    "npx vitest",
    "npx playwright test",
    "yarn",
    "pnpm",
    "node --version",
    "npm --version",
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "playwright test",
    # Rust, Go, C, Java
    "cargo build",
    "cargo test",
    "cargo check",
    "cargo clippy",
    "cargo fmt",
    "cargo run",
    "cargo doc",
    "cargo tree",
    "cargo bench",
    "cargo metadata",
    "rustc --version",
    "cargo --version",
    "go build",
    "go test",
    "go vet",
    "go fmt",
    "gofmt",
    "go mod tidy",
    "go mod download",
    "go list",
    "go run",
    "go version",
    "go env",
    "golangci-lint run",
    "make",
    "cmake",
    "ctest",
    "gcc",
    "g++",
    "clang",
    "mvn",
    "gradle",
    "./gradlew",
    "bundle exec rspec",
    "rspec",
    "rake",
    "dotnet build",
    "dotnet test",
)

BENIGN_RULES: list[tuple[str, str]] = [
    *REVIEW_RULES[:2],
    *[
        (pattern, ALWAYS)
        for program in BENIGN_PROGRAMS
        for pattern in (f"run_command:{program}", f"run_command:{program} *")
    ],
    # Java builds: the JVM writes its performance data in /tmp whatever TMPDIR says.
    ("write_file:/tmp/hsperfdata_*", ALWAYS),
    *REVIEW_RULES[2:],
]


# The benign rules, and more of the shell's builtins an admin may allow: the directory stack
# (`pushd`, `popd`), the `builtin`/`command` prefixes, declarations (`declare`, `export`).
BUILTIN_RULES: list[tuple[str, str]] = [
    *BENIGN_RULES[:2],
    *[
        (pattern, ALWAYS)
        for program in ("pushd", "popd", "dirs", "builtin", "command")
        + ("declare", "typeset", "export", "unset")
        for pattern in (f"run_command:{program}", f"run_command:{program} *")
    ],
    *BENIGN_RULES[2:],
]


# The benign rules, and `ln` (hard and symbolic links) as an admin may allow it beside `cp`.
LINK_RULES: list[tuple[str, str]] = [
    *BENIGN_RULES[:2],
    ("run_command:ln", ALWAYS),
    ("run_command:ln *", ALWAYS),
    *BENIGN_RULES[2:],
]


def _document(name: str, rules: list[tuple[str, str]]) -> PolicyDocument:
    return PolicyDocument.from_dict(
        {"name": name, "rules": [{"pattern": p, "action": a} for p, a in rules]}
    )


@cache
def review_policy() -> CompiledPolicy:
    return compile_policy(_document("shell-review", REVIEW_RULES))


@cache
def benign_policy() -> CompiledPolicy:
    return compile_policy(_document("shell-benign", BENIGN_RULES))


def benign_policy_with(pattern: str) -> CompiledPolicy:
    """The benign rules after an ALWAYS rule for `run_command:PATTERN`: one that names what
    the benign rules alone leave at ASK (an acting option, a folder, an address)."""
    rules = [(f"run_command:{pattern}", "ALWAYS"), *BENIGN_RULES]
    return compile_policy(_document("shell-benign-named", rules))


@cache
def builtins_policy() -> CompiledPolicy:
    return compile_policy(_document("shell-builtins", BUILTIN_RULES))


@cache
def links_policy() -> CompiledPolicy:
    return compile_policy(_document("shell-links", LINK_RULES))


def kinds(shell: str = "bash") -> dict[str, MatchArgument]:
    """The tools the policies speak of; `shell` is run_command's dialect (bash, sh, zsh).
    Commands run in /workspace, as in the oracle's sandbox."""
    return {
        "run_command": MatchArgument("command", "shell", shell=shell, cwd="/workspace"),
        "read_file": MatchArgument("path", "path"),
        "write_file": MatchArgument("path", "path"),
    }


def shell_verdict(policy: str, command: str, shell: str = "bash"):
    """The verdict of `policy` (review, benign, builtins, links) on one shell command."""
    compiled = globals()[f"{policy}_policy"]()
    arguments = {"command": command}
    return compiled.evaluate("run_command", arguments, kinds(shell)["run_command"]).verdict
