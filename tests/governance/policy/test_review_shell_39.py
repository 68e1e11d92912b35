"""split's pieces named like a configuration path (F174, left open there; coreutils' manual).

split writes PREFIX + a suffix of letters or digits + `--additional-suffix`: the engine
checked the prefix alone, so `.bash` passed under `split *` while its pieces can be
`.bashrc` (`-n 18 -a 1 --additional-suffix=c`: the 18th piece's suffix is `r`).
"""

import pytest

from governance.policy import Verdict
from tests.governance.policy.test_review_shell_30 import _verdict

MADE_LIKE_CONFIG = [
    "split -n 18 -a 1 --additional-suffix=c notes.txt .bash",
    "split -a 1 --additional-suffix=shrc notes.txt .b",
    "split notes.txt .bash",  # `rc` is the 445th two-letter suffix
    "split notes.txt .git/hooks/pre-",
    "split -t , notes.txt .zsh",
    "split -n 400 --additional-suffix=.pth notes.txt x",
    "split -a 5 -n 400000 notes.txt .b",
]
ORDINARY = [
    "split -l 100 notes.txt parts/",
    "split notes.txt",
    "split -l 10 notes.txt chunk_",
    "split -n 4 notes.txt part-",
    "split -b 1M big.bin big.bin.",
    "split --additional-suffix=.txt -l 5 notes.txt part_",
]


@pytest.mark.parametrize("script", MADE_LIKE_CONFIG)
def test_a_prefix_whose_pieces_can_be_a_configuration_path_needs_a_rule_naming_it(script):
    assert _verdict(script, "split *") is not Verdict.ALWAYS


@pytest.mark.parametrize("script", ORDINARY)
def test_ordinary_pieces_stay_allowed(script):
    assert _verdict(script, "split *") is Verdict.ALWAYS
