"""MCP names of frozen brokered tools: valid for model APIs, distinct, deterministic."""

from governance.mcp_server.names import (
    MODEL_API_NAME,
    hashed_name,
    mcp_names,
    readable_guess,
    readable_name,
)


def test_the_connection_separator_becomes_a_double_underscore():
    assert readable_name("tracker.create_issue") == "tracker__create_issue"


def test_other_characters_are_escaped_reversibly():
    assert readable_name("files.fs.read") == "files__fs_x2e_read"


def test_long_and_colliding_names_are_hashed_the_same_way_every_time():
    long_name = "conn." + "x" * 120
    colliding = ["a.b_x2e_c", "a.b.c"]
    names = mcp_names([long_name, *colliding, "tracker.get_issue"])
    assert all(MODEL_API_NAME.match(name) for name in names.values())
    assert len(set(names.values())) == 4
    assert names["tracker.get_issue"] == "tracker__get_issue"
    assert len(names[long_name]) == 64
    assert names == mcp_names([long_name, *colliding, "tracker.get_issue"])


def test_a_readable_name_is_guessed_back_and_a_hashed_one_is_not():
    # The endpoint's token check reads the guessed tool ahead; the run's listing decides.
    for frozen in ["tracker.create_issue", "files.fs.read", "my-conn.tool-1", "é.ß"]:
        assert readable_guess(readable_name(frozen)) == frozen
    long_name = "conn." + "x" * 120
    colliding = ["a.b_x2e_c", "a.b.c"]
    names = mcp_names([long_name, *colliding])
    for frozen in [long_name, *colliding]:
        assert readable_guess(names[frozen]) != frozen
    assert readable_guess("no_separator") is None
    # What no frozen name holds is never guessed (nor sent to the database as text).
    for name in ["a__b_x110000_", "a__b_xd800_", "a__b_x0_", "a__b.c", "a__" + "b" * 70]:
        assert readable_guess(name) is None


def test_a_name_shaped_like_another_tools_cut_name_never_takes_its_place():
    # An upstream names its tools like the cut names of another: the first two it could be.
    long_name = "crm.lookup_" + "x" * 60
    impostors = ["crm." + hashed_name(long_name, attempt)[len("crm__") :] for attempt in (0, 1)]
    names = mcp_names([long_name, *impostors])
    assert len(set(names.values())) == 3
    assert all(MODEL_API_NAME.match(name) for name in names.values())
    for impostor in impostors:
        assert names[impostor] == readable_name(impostor)  # readable names stay as they are
    assert names[long_name] == hashed_name(long_name, 2)
    assert len(names[long_name]) == 64
    assert names == mcp_names([*reversed(impostors), long_name])
