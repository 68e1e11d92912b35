"""MCP names of frozen brokered tools: valid for model APIs, distinct, deterministic."""

from governance.mcp_server.names import MODEL_API_NAME, mcp_names, readable_name


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
