"""Files that configure what programs run, or hold credentials: a write there acts later.

Two calls can compose into damage that neither shows: write `core.fsmonitor` into
`/workspace/.git/config`, then an allowed `git status` runs it. So a path below is
ALWAYS only when the ALWAYS rule that matched names it literally (the name in the
first column, e.g. `write_file:/workspace/.git/hooks/*` names `.git/hooks`); a rule
for `/workspace/*` alone does not cover it. This holds for reads too (credentials),
wherever the path appears: a path tool's argument, a shell redirection, or an
operand a program writes (`tee`, `cp`...). Matched on any path component sequence
(`/workspace/sub/.git/config` too), case-insensitively.

Deliberately not here: project files that tests and builds run by design
(`conftest.py`, `pyproject.toml`, `package.json`, `Makefile`): a rule that allows
`pytest *` allows the project's own code to run, and the agent edits that code.
"""

import re

import regex

# name (what a rule must contain) -> the regex of path components it stands for
CONFIG_PATHS: dict[str, str] = {
    # The directory, a `.git` file pointing elsewhere, or anything in it: `.git/commondir` names
    # the folder whose config and hooks git uses, `.git/modules/NAME/` is a submodule's own.
    ".git": r"\.git(?:/.*)?",
    ".git/config": r"\.git/config",
    ".git/hooks": r"\.git/hooks(?:/.*)?",
    ".gitconfig": r"\.gitconfig",
    ".config/git": r"\.config/git(?:/.*)?",
    ".bashrc": r"\.bashrc",
    ".bash_profile": r"\.bash_profile",
    ".bash_login": r"\.bash_login",
    ".bash_logout": r"\.bash_logout",
    ".profile": r"\.profile",
    # zsh loads a compiled `NAME.zwc` instead when it is as new as NAME or NAME is missing
    # (F139)
    ".zshenv": r"\.zshenv(?:\.zwc)?",
    ".zshrc": r"\.zshrc(?:\.zwc)?",
    ".zprofile": r"\.zprofile(?:\.zwc)?",
    ".zlogin": r"\.zlogin(?:\.zwc)?",
    ".zlogout": r"\.zlogout(?:\.zwc)?",  # read as an interactive login shell exits (F131)
    ".envrc": r"\.envrc",
    # mise (trust is by path, not content, unless paranoid): its config's `{{ exec(…) }}`
    # templates and `[env] _.source` run as any mise shim (`node`, `python`) or `mise exec`
    # loads it.
    "mise": r"\.?mise(?:\.[\w-]+)?\.toml|\.?mise/config(?:\.[\w-]+)?\.toml|\.mise(?:/.*)?",
    ".config/mise": r"\.config/mise(?:/.*)?",
    # Gemini CLI loads a trusted project's `.env` into its environment at start (each variable
    # not already set), which its shell commands inherit: `BASH_ENV=./x.sh` there runs x.sh
    # before every command, `git status` included. And the file dotenv tools read secrets from.
    ".env": r"\.env",
    ".ssh": r"\.ssh(?:/.*)?",
    ".npmrc": r"\.npmrc",
    ".yarnrc": r"\.yarnrc(?:\.yml)?",
    ".pypirc": r"\.pypirc",
    "pip.conf": r"pip\.conf",
    ".netrc": r"\.netrc",
    ".git-credentials": r"\.git-credentials",
    ".curlrc": r"\.curlrc",
    ".wgetrc": r"\.wgetrc",
    ".cargo/config": r"\.cargo/config(?:\.toml)?",
    # bundler's settings: `BUNDLE_GEMFILE` names the Gemfile (Ruby) every `bundle exec` runs,
    # `BUNDLE_PATH` where the gems come from; its plugin index (F145)
    ".bundle/config": r"\.bundle/config",
    ".bundle/plugin": r"\.bundle/plugin(?:/.*)?",
    ".docker": r"\.docker(?:/.*)?",
    ".kube": r"\.kube(?:/.*)?",
    ".aws": r"\.aws(?:/.*)?",
    ".gnupg": r"\.gnupg(?:/.*)?",
    # Agent CLIs' own settings: their hooks (fluidbox's among them) and MCP servers' commands.
    ".claude": r"\.claude(?:/.*)?",
    ".claude.json": r"\.claude\.json",
    ".mcp.json": r"\.mcp\.json",
    ".codex": r"\.codex(?:/.*)?",
    ".gemini": r"\.gemini(?:/.*)?",
    ".cursor": r"\.cursor(?:/.*)?",
    # Their memory files, read at start and (Claude Code's) as the agent reaches a folder: an
    # `@.env` line there imports the file, which the CLI then reads and sends to the model
    # with no tool call, past a rule that denies reading it (F152).
    "CLAUDE.md": r"CLAUDE\.md",
    "CLAUDE.local.md": r"CLAUDE\.local\.md",
    "GEMINI.md": r"GEMINI\.md",
    # aider runs its `lint-cmd` after every edit and `test-cmd` with --auto-test; Continue
    # runs a workspace's `config.ts`.
    ".aider.conf.yml": r"\.aider\.conf\.ya?ml",
    ".continue": r"\.continue(?:/.*)?",
    # Editors' workspace settings: tasks that run on opening the folder, terminal settings;
    # a dev container's `initializeCommand` runs on the host as the folder is reopened in it.
    ".vscode": r"\.vscode(?:/.*)?",
    ".zed": r"\.zed(?:/.*)?",  # its tasks, and the language servers' binaries it starts
    ".devcontainer": r"\.devcontainer(?:/.*|\.json)?",
    # Git hook managers keep the hooks in the project: husky points core.hooksPath at
    # `.husky/_`, whose stubs run `.husky/<hook>` (an allowed `git commit` ran a planted
    # `.husky/pre-commit`, F104); `.githooks/` is the usual hooksPath by hand; pre-commit's,
    # lefthook's, lint-staged's, simple-git-hooks' and overcommit's files name the commands
    # their installed hook runs.
    ".husky": r"\.husky(?:/.*)?",
    ".githooks": r"\.githooks(?:/.*)?",
    ".pre-commit-config.yaml": r"\.pre-commit-config\.ya?ml",
    "lefthook": r"\.?lefthook(?:-local)?\.(?:ya?ml|toml|json)",
    ".lintstagedrc": r"\.lintstagedrc(?:\.[a-z]+)?",
    "lint-staged.config": r"lint-staged\.config\.[a-z]+",
    "simple-git-hooks": r"\.?simple-git-hooks(?:\.[a-z]+)?",
    ".overcommit.yml": r"\.overcommit\.yml",
    ".vimrc": r"\.vimrc",
    ".exrc": r"\.exrc",
    ".lessfilter": r"\.lessfilter",
    # less reads its key bindings and `#env` (LESSOPEN=|cmd %s: a preprocessor it runs) there.
    ".lesskey": r"\.lesskey",
    ".less": r"\.less",
    ".config/lesskey": r"\.config/lesskey",
    # Python runs the `import` lines of every .pth file in its site folders at start-up
    # (the user's ~/.local/lib/pythonX.Y/site-packages, a virtualenv's).
    ".pth": r"[^/]+\.pth",
    # And what those lines import: a venv's distutils-precedence.pth imports _distutils_hack,
    # an editable install's .pth its finder module, so any file of a site-packages folder may
    # run as Python starts (`.venv/bin/python -c 1` ran a planted `_distutils_hack`).
    "site-packages": r"site-packages(?:/.*)?",
    "dist-packages": r"dist-packages(?:/.*)?",
    # The same for JavaScript: npx, `npm run` and `npm test` put `node_modules/.bin` first on
    # PATH, and every tool from there runs the package's files (`npx tsc` ran a planted
    # `node_modules/.bin/tsc`, F105); `~/.npm/_npx/*/node_modules` is npx's own cache.
    "node_modules": r"node_modules(?:/.*)?",
    # uv reads `.python-version` here and in every parent, and it may name an interpreter by
    # its path: `uv pip list`, `uv sync`, `uv run` run that program to learn its version.
    ".python-version": r"\.python-version",
    # asdf's (and mise's) `.tool-versions`: `nodejs path:/x` makes the `node` shim run /x's.
    ".tool-versions": r"\.tool-versions",
    # A venv's `home =` names the Python installation whose standard library it loads.
    "pyvenv.cfg": r"pyvenv\.cfg",
    # The user's site-packages comes before the system's: a `yaml.py` or `pip/` there is what
    # yq or pip imports.
    ".local/lib/python": r"\.local/lib/python[^/]*/site-packages(?:/.*)?",
    ".mavenrc": r"\.mavenrc",  # the mvn launcher sources it
    # Other version control systems keep the repository's configuration inside it, as git
    # does, and run what it names on their everyday commands: Mercurial's and Sapling's
    # `[hooks] pre-status = CMD` (any `pre-COMMAND`), `[extensions] x = /path/x.py`;
    # Jujutsu's `ui.pager`, `ui.diff.tool`, `fix.tools`; Subversion's `diff-cmd`.
    ".hg": r"\.hg(?:/.*)?",
    ".hgrc": r"\.hgrc",
    ".sl": r"\.sl(?:/.*)?",
    ".slconfig": r"\.slconfig",
    ".jj": r"\.jj(?:/.*)?",
    ".config/jj": r"\.config/jj(?:/.*)?",
    ".subversion": r"\.subversion(?:/.*)?",
    # Command-line clients run their start-up file before the command line's own work, in
    # batch mode too: sqlite3's `.shell CMD` (`sqlite3 db 'select 1'`), gdb's `shell CMD`
    # (`gdb -batch`), tmux's `run-shell`, psql's `\! CMD`; mysql's `plugin-dir` and
    # `default-auth` load a shared object, terraform's `dev_overrides` run a provider from a
    # folder, mailx's `set sendmail=` runs a program.
    ".sqliterc": r"\.sqliterc",
    ".psqlrc": r"\.psqlrc(?:-[^/]*)?",
    ".gdbinit": r"\.gdbinit",
    ".config/gdb": r"\.config/gdb(?:/.*)?",
    ".tmux.conf": r"\.tmux\.conf",
    ".config/tmux": r"\.config/tmux(?:/.*)?",
    ".my.cnf": r"\.my\.cnf",
    ".mylogin.cnf": r"\.mylogin\.cnf",
    ".terraformrc": r"\.terraformrc",
    "terraform.rc": r"terraform\.rc",
    ".mailrc": r"\.mailrc",
    # Start-up code of Python shells and notebooks (`ipython -c` runs profile_default/startup/
    # first), the JVM options every Gradle build takes (`org.gradle.jvmargs=-javaagent:…`),
    # rustup's toolchains (a linked one is a folder of programs cargo runs), and the
    # programs folder a login shell puts first on PATH (Debian's ~/.profile): Codex runs
    # each command as `bash -lc`.
    ".ipython": r"\.ipython(?:/.*)?",
    # R runs `.Rprofile` (the working directory's first, then the home folder's) and reads
    # `.Renviron` at every start, `Rscript -e` too; Julia runs `~/.julia/config/startup.jl`.
    ".Rprofile": r"\.Rprofile",
    ".Renviron": r"\.Renviron",
    ".julia/config": r"\.julia/config(?:/.*)?",
    ".jupyter": r"\.jupyter(?:/.*)?",
    ".gradle/gradle.properties": r"\.gradle/gradle\.properties",
    ".rustup": r"\.rustup(?:/.*)?",
    # A project's toolchain file: `[toolchain] path = "/x"` makes every cargo and rustc run
    # there (`cargo --version`, `cargo fmt`, `cargo tree` included) run /x's programs.
    "rust-toolchain": r"rust-toolchain(?:\.toml)?",
    ".local/bin": r"\.local/bin(?:/.*)?",
    # The other programs folders installers put ahead of the system's on PATH: a `bash` planted
    # there is what Gemini CLI and Codex start their hooks with (fluidbox's among them, which
    # it then answers in fluidbox's place), a `git` or `node` what they run at start.
    ".cargo/bin": r"\.cargo/bin(?:/.*)?",
    ".pyenv": r"\.pyenv/(?:shims|bin|versions/[^/]+/bin)(?:/.*)?",
    ".nvm": r"\.nvm/versions/node/[^/]+/bin(?:/.*)?",
    ".volta/bin": r"\.volta/bin(?:/.*)?",
    ".bun/bin": r"\.bun/bin(?:/.*)?",
    ".deno/bin": r"\.deno/bin(?:/.*)?",
    # Credentials the command-line tools agents use keep in the home folder (tokens read in
    # clear), some with settings that run programs too (gh's `pager`, `editor`, `!` aliases).
    ".pgpass": r"\.pgpass",
    ".config/gh": r"\.config/gh(?:/.*)?",
    ".config/hub": r"\.config/hub",
    ".config/gcloud": r"\.config/gcloud(?:/.*)?",
    ".azure": r"\.azure(?:/.*)?",
    ".terraform.d": r"\.terraform\.d(?:/.*)?",
    ".vault-token": r"\.vault-token",
    ".pulumi": r"\.pulumi(?:/.*)?",
    ".gem/credentials": r"\.gem/credentials",
    ".cargo/credentials": r"\.cargo/credentials(?:\.toml)?",
    ".composer/auth.json": r"(?:\.config/)?\.?composer/auth\.json",
    ".nuget": r"\.nuget/NuGet(?:/.*)?",
    ".config/NuGet": r"\.config/NuGet(?:/.*)?",
    ".password-store": r"\.password-store(?:/.*)?",
    ".local/share/keyrings": r"\.local/share/keyrings(?:/.*)?",
    # From the manuals (not installed or not run where the oracle runs): `GOFLAGS=-toolexec=…`
    # in go's env file, gradle's init scripts (every build runs them), and the aliases file
    # Debian's and Ubuntu's .bashrc source.
    ".config/go/env": r"\.config/go/env",
    ".gradle/init": r"\.gradle/init(?:\.d(?:/.*)?|\.gradle(?:\.kts)?)",
    ".bash_aliases": r"\.bash_aliases",
    ".m2/settings.xml": r"\.m2/settings(?:-security)?\.xml",  # localRepository: where it writes
    # The distribution `./gradlew` and `./mvnw` download and run (`distributionUrl`, F116).
    "gradle-wrapper.properties": r"gradle-wrapper\.properties",
    "maven-wrapper.properties": r"maven-wrapper\.properties",
    # Maven reads `.mvn/maven.config` (its command line's options: `-l FILE`, `-D`) and
    # `.mvn/jvm.config` (the JVM's: `-XX:OnOutOfMemoryError=CMD`) on every run, `mvn -v` too,
    # and loads the extensions `.mvn/extensions.xml` names; `./mvnw` runs `.mvn/wrapper`'s jar.
    ".mvn": r"\.mvn(?:/.*)?",
    "sitecustomize.py": r"sitecustomize\.py",
    "usercustomize.py": r"usercustomize\.py",
}
# Of those, the ones that hold no secret: reading them is reading code or settings an agent
# reads to do its work (a library's source in site-packages, a toolchain's), only a write
# acts. Every other name guards reads too.
EXECUTION_ONLY = frozenset(
    {".hg", ".sl", ".jj", ".config/jj", ".sqliterc", ".psqlrc", ".gdbinit", ".config/gdb"}
    | {".tmux.conf", ".config/tmux", ".mailrc", ".ipython", ".rustup", ".local/bin"}
    | {".cargo/bin", ".pyenv", ".nvm", ".volta/bin", ".bun/bin", ".deno/bin"}
    | {"site-packages", "dist-packages", "node_modules", "pyvenv.cfg", ".devcontainer", ".husky"}
    | {".githooks", "gradle-wrapper.properties", "maven-wrapper.properties", ".mvn"}
    | {".pre-commit-config.yaml", "lefthook", ".lintstagedrc", "lint-staged.config"}
    | {"simple-git-hooks", ".overcommit.yml", "mise", ".config/mise", ".zed", ".Rprofile"}
    | {".julia/config", "rust-toolchain", ".python-version", ".tool-versions"}
    | {"CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"}
)
# Each name's pattern as a whole path's last components (grouped: some hold alternatives).
_ANCHORED = {name: rf"(?:^|/)(?:{pattern})/?$" for name, pattern in CONFIG_PATHS.items()}
_MATCHERS = [(name, re.compile(anchored, re.IGNORECASE)) for name, anchored in _ANCHORED.items()]
# The same, matched partially: a folder of which some CONFIG_PATHS path lies inside (`.cargo` holds
# `.cargo/config.toml`, `.local/lib/python3.11` a site-packages), from a component of the folder
# on; a name that may start in any folder (`CLAUDE.md`) is not the folder's own.
_FOLDER_MATCHERS = [
    (name, regex.compile(rf"(?:^|/)(?:{pattern})$", regex.IGNORECASE))
    for name, pattern in CONFIG_PATHS.items()
]
_CANDIDATE = re.compile(
    r"\.(?:git|bash|profile|zsh|zp|zl|env|ssh|npmrc|yarnrc|pypirc|netrc|curlrc|wgetrc|cargo|"
    r"docker|kube|aws|gnupg|claude|mcp|codex|gemini|cursor|vscode|vimrc|exrc|less|config|pth|local|"
    r"mavenrc|m2|mvn|gradle|hg|sl|jj|subversion|sqliterc|psqlrc|gdbinit|tmux|my|mylogin|terraform|"
    r"mailrc|ipython|jupyter|rustup|pgpass|azure|vault|pulumi|gem|nuget|password|pyenv|nvm|"
    r"volta|bun|deno)|pip\.conf|"
    r"customize|terraform\.rc|-packages|node_modules|pyvenv|composer|devcontainer|husky|githooks|pre-commit|"
    r"lefthook|lintstaged|lint-staged|simple-git-hooks|overcommit|mise|aider|continue|zed|"
    r"\.R(?:profile|environ)|julia|rust-toolchain|python-version|tool-versions|wrapper\.properties|"
    r"\.bundle|claude\.(?:local\.)?md|gemini\.md",
    re.IGNORECASE,
)


def config_path_names(path: str, *, reading: bool = False) -> list[str]:
    """The CONFIG_PATHS names a (normalised) path falls under, for a read or a write; most
    paths: none, cheaply."""
    if not _CANDIDATE.search(path):
        return []
    names = [name for name, matcher in _MATCHERS if matcher.search(path)]
    return [name for name in names if not (reading and name in EXECUTION_ONLY)]


# The same in `regex`, which can tell where a match would go on past the text's end.
_CONTINUED_MATCHERS = [
    (name, regex.compile(anchored, regex.IGNORECASE)) for name, anchored in _ANCHORED.items()
]


def config_names_continuing(start: str) -> list[str]:
    """The CONFIG_PATHS names of the paths that begin with `start` (a path that is written
    with more after it, as split writes PREFIX + a suffix it chooses)."""
    names = []
    for name, matcher in _CONTINUED_MATCHERS:
        found = matcher.search(start, partial=True)
        # begun inside `start` (not only after it: `x` + `/.git` is no continuation of `x`)
        if found is not None and found.start() < len(start) and found.end() == len(start):
            names.append(name)
    return names


def config_folder_names(path: str) -> list[str]:
    """The CONFIG_PATHS names of the files a write of a whole folder may put inside it: a
    tree copied or moved to `path` (`cp -r kit .cargo`), or a folder's files the reading
    cannot name one by one (`.cargo/<files>`: `cp -r kit/. .cargo/`, an archive extracted
    there), which may hold `.cargo/config.toml` as a named write of it would (F162)."""
    folder = path[: -len("/<files>")] if path.endswith("/<files>") else path
    folder = folder.rstrip("/")
    if not folder or not _CANDIDATE.search(folder):
        return []
    names = []
    for name, matcher in _FOLDER_MATCHERS:
        found = matcher.search(folder + "/", partial=True)
        if found is not None and found.start() < len(folder):
            names.append(name)
    return names


# How a rule's pattern names a configuration path (review 56): as a path, not as text. A
# name counts where it begins a path component (after `/`, `:`, a wildcard, or the dot of
# a name such as `.mise.toml`) and the component it begins can still be that path:
# `.github/*` holds the text `.git` but names no `.git` (it allowed
# `.github/.git/hooks/pre-commit`), `.sshkeys/*` names no `.ssh`, `.environments/*` no `.env`.
_WHOLE = {
    name: regex.compile(rf"(?:{pattern})", regex.IGNORECASE)
    for name, pattern in CONFIG_PATHS.items()
}
_FOLDERS = frozenset(name.split("/", 1)[0] for name in CONFIG_PATHS if "/" in name)
_ENDS_COMPONENT = "/*?["
_BEGINS_COMPONENT = ":/*?]"


def is_config_name(name: str) -> bool:
    """A name configuration-path requirements carry (a CONFIG_PATHS name or its folder)."""
    return name in CONFIG_PATHS or name in _FOLDERS


def pattern_names_path(pattern: str, name: str, times: int = 1) -> bool:
    """Whether `pattern` names the configuration path `name` as a path, `times` times."""
    whole = _WHOLE.get(name)
    found, at = 0, pattern.find(name)
    while at >= 0:
        start = at
        before = pattern[at - 1] if at else ""
        if before == "." and not name.startswith("."):
            start = at - 1  # the dot begins the name: `.mise.toml` names `mise`
            before = pattern[start - 1] if start else ""
        if not before or before in _BEGINS_COMPONENT:
            end = at + len(name)
            while end < len(pattern) and pattern[end] not in _ENDS_COMPONENT:
                end += 1
            span = pattern[start:end]
            if span == name or (
                whole is not None and whole.fullmatch(span, partial=True) is not None
            ):
                found += 1
                if found >= times:
                    return True
        at = pattern.find(name, at + 1)
    return False
