"""The README test's own rules (tests/readme/README.md): what matches and what does not."""

from tests.readme.examples import json_mismatches, read_blocks, text_mismatches


def test_json_wildcards_match_values_and_string_parts_but_not_missing_or_extra_keys():
    assert json_mismatches({"id": "…", "token": "fbr_…"}, {"id": 7, "token": "fbr_x1"}) == []
    assert json_mismatches({"token": "fbr_…"}, {"token": "fbx_x1"}) != []
    assert json_mismatches({"a": 1}, {"a": 1, "b": 2}) == ["$: undocumented key 'b'"]
    assert json_mismatches({"a": 1, "b": "…"}, {"a": 1}) == ["$: missing key 'b'"]
    assert json_mismatches({"a": 1, "…": "…"}, {"a": 1, "b": 2}) == []
    assert json_mismatches({"a": 1}, {"a": True}) != []  # 1 is not true
    assert json_mismatches({"n": None}, {"n": 0}) != []


def test_json_lists_match_exactly_or_by_prefix():
    assert json_mismatches([1, "…"], [1, 2, 3]) == []
    assert json_mismatches([1, "…"], []) != []
    assert json_mismatches([1, 2], [1, 2, 3]) != []
    assert json_mismatches([{"k": "…"}], [{"k": 1}]) == []


def test_text_lines_match_with_ellipses():
    assert text_mismatches("ok: … verified\n", "ok: 3 run(s) verified  \n") == []
    assert text_mismatches("first\n…\nlast\n", "first\na\nb\nlast\n") == []
    assert text_mismatches("first\n…\nlast\n", "first\nlast\n") == []
    assert text_mismatches("first\nlast\n", "first\nmiddle\nlast\n") != []


def test_blocks_get_their_kind_attributes_and_output(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Title\n\n```sh sets=RUN_ID:id\ncurl x\n```\n\nprose\n\n```json output\n{}\n```\n"
        "\n```yaml as=p.yaml\nname: p\n```\n\n```\nbare\n```\n",
        encoding="utf-8",
    )
    run, output, file, bare = read_blocks(readme)
    assert (run.kind, run.attributes, run.output) == ("run", {"sets": "RUN_ID:id"}, output)
    assert (run.line, run.heading, run.text) == (3, "Title", "curl x\n")
    assert (output.kind, file.kind, file.attributes["as"]) == ("output", "as", "p.yaml")
    assert bare.kind is None
