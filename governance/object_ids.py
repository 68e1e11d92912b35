"""The numeric id of a connection, approval, binding or reservation, as a URL path names it."""

import re

from governance.errors import NotFound

# Only the id as fluidbox answered it: `int()` also reads "01", "+1", "0_1", " 1" and
# non-ASCII digits ("\u0661"), each another spelling of the same object.
_OBJECT_ID = re.compile(r"[1-9][0-9]{0,17}", re.ASCII)


def object_id(text, missing: str) -> int:
    """The id `text` spells; NotFound (`missing`) for any other spelling or none."""
    if isinstance(text, bool) or not isinstance(text, int | str):
        raise NotFound(missing)
    if not _OBJECT_ID.fullmatch(str(text)):
        raise NotFound(missing)
    return int(text)
