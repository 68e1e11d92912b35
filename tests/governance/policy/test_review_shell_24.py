"""Shapes from a shell-rules review of stop 53 (FINDINGS F158, F159): `git archive` runs gpg
for the files it packs, and `git fast-import`'s input stream names a file it appends to.

`git archive` expands the `$Format:…$` placeholders of every file whose attributes say
`export-subst`, and it reads those attributes from the archived tree's own `.gitattributes`.
The placeholders are `git log --format`'s: `%G?` (and `%GS`, `%GK`, …) of a commit carrying a
`gpgsig` header runs `gpg --verify` (F46 held them on the command line only). Every object
involved can be written with `git hash-object -w` (the review and benign rules allow it under
`git --no-pager *`), so the script never names a format: in the sandbox, bash, dash and zsh
each ran `git --no-pager archive COMMIT → /usr/bin/gpg --keyid-format=long --status-fd=1
--verify …` while the engine said ALWAYS. `git archive` now needs a rule that names it.

`git fast-import` takes `option git export-pack-edges=FILE` from its stream (no
`--allow-unsafe-features` needed, unlike `feature export-marks`, F125) and opens FILE for
appending wherever it is: `printf 'option git export-pack-edges=/tmp/fbx\n…' | git --no-pager
fast-import` created /tmp/fbx in bash, dash and zsh. It needs a rule that names it now.
"""

import pytest

from governance.policy import Verdict
from tests.shell_corpus.policies import benign_policy_with, kinds
from tests.shell_corpus.policies import shell_verdict as _verdict

# A tree of `.gitattributes` (`* export-subst`) and `f.txt` (`$Format:%G?$`), as printf writes
# it (octal escapes for its binary object ids), and a commit of it with an empty signature.
TREE = (
    "100644 .gitattributes\\000\\203\\266\\315\\2203)R\\220B\\370\\024gQ\\023\\3256\\031\\014_m"
    "100644 f.txt\\000\\345\\270c4Qt\\307\\374_\\305\\274\\302`\\342\\343\\355 \\330\\373u"
)
COMMIT = "734ace8bcedd012562554463a28462350e0e450b"
WRITE_OBJECTS = (
    "printf '* export-subst\\n' | git --no-pager hash-object -w --stdin && "
    "printf '$Format:%%G?$\\n' | git --no-pager hash-object -w --stdin && "
    f"printf '{TREE}' | git --no-pager hash-object -t tree -w --stdin && "
    "printf 'tree 745ee9595f380ef991686a9537d991d4c30be11d\\nauthor a <a@b> 0 +0000\\n"
    "committer a <a@b> 0 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n \\n"
    " -----END PGP SIGNATURE-----\\n\\nm\\n' | git --no-pager hash-object -t commit -w --stdin"
)

# Each ran gpg in the sandbox (bash, dash and zsh) and was ALWAYS under the benign rules.
ARCHIVES_RUNNING_GPG = [
    f"{WRITE_OBJECTS} && git --no-pager archive {COMMIT} | wc -c",
    f"git --no-pager archive {COMMIT} | wc -c",  # the objects written by an earlier call
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", ARCHIVES_RUNNING_GPG)
def test_an_archive_whose_files_ask_for_a_signature_is_not_allowed(script, shell):
    assert _verdict("benign", script, shell) is Verdict.ASK


@pytest.mark.parametrize(
    "command",
    [
        "git --no-pager archive HEAD",
        "git --no-pager archive --format=zip HEAD",
        "git --no-pager archive HEAD src",
    ],
)
def test_git_archive_needs_a_rule_that_names_it(command):
    assert _verdict("benign", command) is Verdict.ASK
    named = benign_policy_with("git --no-pager archive *")
    evaluation = named.evaluate("run_command", {"command": command}, kinds()["run_command"])
    assert evaluation.verdict is Verdict.ALWAYS


def test_a_rule_for_every_git_command_does_not_name_archive():
    evaluation = benign_policy_with("git *").evaluate(
        "run_command", {"command": "git archive HEAD"}, kinds()["run_command"]
    )
    assert evaluation.verdict is Verdict.ASK


@pytest.mark.parametrize(
    "script",
    [
        WRITE_OBJECTS,  # writing objects runs nothing
        "git --no-pager cat-file -p HEAD",
        "git --no-pager log --format=%s -1",
    ],
)
def test_what_runs_no_placeholder_stays_allowed(script):
    assert _verdict("benign", script) is Verdict.ALWAYS


# Each created /tmp/fbx in the sandbox (bash, dash and zsh) and was ALWAYS under the benign rules.
FAST_IMPORTS_WRITING_ELSEWHERE = [
    "printf 'option git export-pack-edges=/tmp/fbx\\nblob\\ndata 3\\nabc\\n' "
    "| git --no-pager fast-import",
    "printf 'option git export-pack-edges=/tmp/fbx\\n' | git --no-pager fast-import --quiet",
    "git --no-pager fast-import < stream.txt",  # the stream written by an earlier call
]


@pytest.mark.parametrize("shell", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("script", FAST_IMPORTS_WRITING_ELSEWHERE)
def test_a_fast_import_whose_stream_names_a_file_is_not_allowed(script, shell):
    assert _verdict("benign", script, shell) is Verdict.ASK


def test_a_rule_that_names_fast_import_allows_it():
    named = benign_policy_with("git --no-pager fast-import*")
    evaluation = named.evaluate(
        "run_command", {"command": "git --no-pager fast-import < s.fi"}, kinds()["run_command"]
    )
    assert evaluation.verdict is Verdict.ALWAYS
