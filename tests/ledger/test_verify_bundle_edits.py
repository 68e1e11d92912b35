"""The offline verifier against someone who edits an exported bundle file: cut a run short,
break a record's types, add a field or a duplicate key, hand over another run's bundle. Each
is refused or named, with a FAIL line naming the record (never a traceback), or a verdict
that claims no more than the bundle proves."""

import json
from pathlib import Path

import pytest

from ledger.verify.__main__ import main
from tests.ledger.support import checkpoint_now, export, gate_traffic, offline_verify, vkey


@pytest.fixture
def finished_runs(org, make_run):
    """Two runs of gate traffic, both finished, under one signed checkpoint."""
    runs = [make_run() for _ in range(2)]
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 4)
        assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
    checkpoint_now(org)
    return [run_id for run_id, _ in runs]


@pytest.fixture
def bundles(org, finished_runs, tmp_path):
    """An organization bundle and run A's bundle, as lists of records, and the key."""
    org_bundle = export(tmp_path, "org.jsonl", org="acme")
    run_bundle = export(tmp_path, "runA.jsonl", run=finished_runs[0])
    return {
        "org": [json.loads(line) for line in org_bundle.read_text().splitlines()],
        "run": [json.loads(line) for line in run_bundle.read_text().splitlines()],
        "key": vkey(org),
        "runs": finished_runs,
    }


def write(tmp_path: Path, records: list, name: str = "edited.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(
        "".join(
            (line if isinstance(line, str) else json.dumps(line, separators=(",", ":"))) + "\n"
            for line in records
        )
    )
    return path


def verify(capsys, bundle: Path, *args: str) -> tuple[int, str, str]:
    """The verifier in this process: an uncaught exception fails the test with its traceback."""
    status = main([str(bundle), *args])
    out, err = capsys.readouterr()
    return status, out, err


def first_index(records: list, kind: str) -> int:
    return next(i for i, record in enumerate(records) if record["record"] == kind)


def last_event_index(records: list) -> int:
    return max(i for i, record in enumerate(records) if record["record"] == "event")


# 1. A run bundle with its last events cut off


def test_a_finished_runs_bundle_names_the_run_and_its_finish(bundles, tmp_path, capsys):
    run_a = bundles["runs"][0]
    status, out, err = verify(
        capsys, write(tmp_path, bundles["run"]), "--public-key", bundles["key"]
    )
    assert status == 0, err
    events = sum(1 for record in bundles["run"] if record["record"] == "event")
    assert out.startswith(f"OK: run {run_a}: its events seq 1-{events} are included in the tree")
    assert out.rstrip().endswith(
        f"the run finished (run.finished is seq {events}) with no call in flight: "
        "no event can follow it, these are all the run's"
    )


def test_a_run_bundle_with_its_last_events_cut_off_is_not_called_complete(
    bundles, tmp_path, capsys
):
    run_a, records = bundles["runs"][0], bundles["run"]
    last = last_event_index(records)
    assert [records[last - 1]["type"], records[last]["type"]] == ["tool.decision", "run.finished"]
    events = records[-1]["events"]
    cut = records[: last - 1] + [{"record": "end", "events": events - 2}]
    status, out, err = verify(capsys, write(tmp_path, cut), "--public-key", bundles["key"])
    assert status == 3, (out, err)
    assert out.startswith(f"INCOMPLETE: run {run_a}: its events seq 1-{events - 2} are included")
    assert "no run.finished event is shown" in out
    assert "the organization's bundle shows every event" in out
    assert not out.startswith("OK")


def test_a_cut_run_bundle_exits_3_in_a_separate_process_too(bundles, tmp_path):
    records = bundles["run"]
    last = last_event_index(records)
    cut = records[:last] + [{"record": "end", "events": records[-1]["events"] - 1}]
    result = offline_verify(write(tmp_path, cut), bundles["key"])
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith("INCOMPLETE: run ")


def test_the_organization_bundle_shows_that_nothing_was_cut(bundles, tmp_path, capsys):
    run_a = bundles["runs"][0]
    bundle = write(tmp_path, bundles["org"])
    status, out, err = verify(capsys, bundle, "--public-key", bundles["key"], "--run", run_a)
    assert status == 0, err
    size = bundles["org"][0]["tree_size"]
    assert out.startswith(f"OK: the whole log 127.0.0.1:8000/ledger/acme up to tree size {size}: ")
    assert f"in 2 run(s) (2 finished) are exactly leaves 0-{size - 1}" in out
    assert f"; run {run_a}: seq 1-" in out and ", finished (run.finished is seq " in out
    # The same cut in the organization's bundle is a missing leaf.
    records = bundles["org"]
    victim = max(i for i, r in enumerate(records) if r["record"] == "event" and r["run"] == run_a)
    cut = records[:victim] + records[victim + 1 : -1] + [{"record": "end", "events": size - 1}]
    status, _, err = verify(capsys, write(tmp_path, cut), "--public-key", bundles["key"])
    assert status == 1
    assert "a leaf is missing" in err or "do not build the signed root" in err


# 4. Another run's bundle handed over


def test_another_runs_bundle_is_named_and_refused_with_run(bundles, org, tmp_path, capsys):
    run_a, run_b = bundles["runs"]
    bundle_b = export(tmp_path, "runB.jsonl", run=run_b)
    status, out, _ = verify(capsys, bundle_b, "--public-key", bundles["key"])
    assert status == 0 and out.startswith(f"OK: run {run_b}: ")
    status, out, err = verify(capsys, bundle_b, "--public-key", bundles["key"], "--run", run_a)
    assert status == 1 and out == ""
    assert err == f"FAIL: record 1 (bundle): a bundle of run {run_b}, not of run {run_a!r}\n"


def test_an_organization_bundle_without_the_expected_run_is_refused(bundles, tmp_path, capsys):
    bundle = write(tmp_path, bundles["org"])
    missing = "00000000-0000-0000-0000-000000000000"
    status, _, err = verify(capsys, bundle, "--public-key", bundles["key"], "--run", missing)
    assert status == 1
    assert f"record 1 (bundle): no event of run {missing!r} under tree size" in err


# 2. and 3. Malformed records, duplicate keys, fields nothing covers


def _set(kind: str, field: str, value, nth: int = 0):
    def edit(records: list) -> int:
        index = [i for i, r in enumerate(records) if r["record"] == kind][nth]
        records[index] = {**records[index], field: value}
        return index

    return edit


def _change(kind: str, field: str, how):
    def edit(records: list) -> int:
        index = first_index(records, kind)
        records[index] = {**records[index], field: how(records[index][field])}
        return index

    return edit


def _replace(kind: str, text_of):
    def edit(records: list) -> int:
        index = first_index(records, kind)
        records[index] = text_of(records[index])
        return index

    return edit


def _first_event_line(transform):
    return _replace("event", lambda record: transform(json.dumps(record, separators=(",", ":"))))


MALFORMED = {
    # scope, edit, what the FAIL line says after "record N (...)"
    "note is a number": ("run", _set("checkpoint", "note", 5), "'note' must be a string"),
    "note is a list": ("run", _set("checkpoint", "note", ["a"]), "'note' must be a string"),
    "note is missing": (
        "org",
        _replace("checkpoint", lambda r: {"record": "checkpoint"}),
        "no 'note' field",
    ),
    "tree size of 5,000 digits": (
        "run",
        _change("checkpoint", "note", lambda note: note.replace("\n", "\n" + "9" * 5000, 1)),
        "bad tree size",
    ),
    "run is a list": ("org", _set("event", "run", ["x"]), "'run' must be an id"),
    "run holds a control character": (
        "org",
        _set("event", "run", "a\u001b[2Kb"),
        "'run' must be an id",
    ),
    "seq is a string": ("org", _set("event", "seq", "1"), "'seq' must be a whole number from 1"),
    "seq is true": ("run", _set("event", "seq", True), "'seq' must be a whole number from 1"),
    "seq is 0": ("run", _set("event", "seq", 0), "'seq' must be a whole number from 1"),
    "leaf is a float": ("org", _set("event", "leaf", 0.0), "'leaf' must be a whole number"),
    "leaf is negative": ("run", _set("event", "leaf", -1), "'leaf' must be a whole number"),
    "type is a number": ("org", _set("event", "type", 7), "'type' must be an id"),
    "at is an object": ("org", _set("event", "at", {}), "'at' must be a string"),
    "hash is upper case": (
        "org",
        _change("event", "hash", str.upper),
        "'hash' must be 64 lowercase hex digits",
    ),
    "prev_hash is a number": ("run", _set("event", "prev_hash", 0), "'prev_hash' must be 64"),
    "data is missing": (
        "org",
        _replace("event", lambda r: {k: v for k, v in r.items() if k != "data"}),
        "no 'data' field",
    ),
    "inclusion is a string": (
        "run",
        _set("event", "inclusion", "x"),
        "must be a list of base64 hashes",
    ),
    "inclusion holds a number": (
        "run",
        _set("event", "inclusion", [5]),
        "a proof is a list of base64 hashes",
    ),
    "inclusion in an org bundle": (
        "org",
        _set("event", "inclusion", []),
        "unknown field 'inclusion'",
    ),
    "tree_size is a string": (
        "org",
        _set("bundle", "tree_size", "45"),
        "'tree_size' must be a whole number",
    ),
    "origin is null": ("org", _set("bundle", "origin", None), "'origin' must be a string"),
    "scope is a list": ("org", _set("bundle", "scope", ["org"]), "'scope' must be a string"),
    "run bundle without its run": (
        "run",
        _set("bundle", "run", None),
        "a run bundle's header names its run",
    ),
    "org bundle naming a run": (
        "org",
        _set("bundle", "run", "abc"),
        "an organization bundle's header names no run",
    ),
    "vkey is a number": ("org", _set("key", "vkey", 1), "'vkey' must be a string"),
    "end events is a string": (
        "org",
        _set("end", "events", "45"),
        "'events' must be a whole number",
    ),
    "end events is true": ("org", _set("end", "events", True), "'events' must be a whole number"),
    "record kind is a list": ("org", _set("event", "record", ["event"]), "unknown record type"),
    "a line is a list": ("org", _replace("event", lambda r: [r]), "not a bundle record"),
    "NaN": (
        "org",
        _first_event_line(lambda t: t.replace('"leaf":0', '"leaf":NaN')),
        "NaN is not JSON",
    ),
    "deep nesting": (
        "org",
        _first_event_line(lambda t: t.replace('"data":', '"data":' + "[" * 100_000, 1)),
        "not JSON",
    ),
    "lone surrogate": (
        "org",
        _first_event_line(lambda t: t.replace('"data":{', '"data":{"x":"\\ud800",')),
        "lone surrogate",
    ),
    "an approval note not covered by the hash": (
        "org",
        _set("event", "note", "approved by ceo"),
        "unknown field 'note': no hash or signature covers it",
    ),
    "a field added to a checkpoint": (
        "org",
        _set("checkpoint", "signed_by", "ceo"),
        "unknown field 'signed_by'",
    ),
    "a field added to the header": (
        "run",
        _set("bundle", "verified", True),
        "unknown field 'verified'",
    ),
    "unavailable next to a proof": (
        "run",
        _set("event", "unavailable", "x"),
        "'unavailable' comes only with no inclusion",
    ),
    "duplicate type key": (
        "org",
        _first_event_line(
            lambda t: t.replace('{"record":"event",', '{"record":"event","type":"tool.FAKE",')
        ),
        "the key 'type' appears twice in one object",
    ),
    "duplicate key inside data": (
        "org",
        _first_event_line(lambda t: t.replace('"data":{', '"data":{"agent":"x",')),
        "the key 'agent' appears twice in one object",
    ),
}


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_record_is_a_fail_line_naming_it(case, bundles, tmp_path, capsys):
    scope, edit, message = MALFORMED[case]
    records = [dict(r) for r in bundles[scope]]
    index = edit(records)
    status, out, err = verify(capsys, write(tmp_path, records), "--public-key", bundles["key"])
    assert status == 1, (out, err)
    assert out == ""
    assert err.startswith(f"FAIL: record {index + 1} ("), err
    assert message in err, err
    assert err.count("\n") == 1


def test_invalid_utf8_is_a_fail_line_naming_the_record(bundles, tmp_path, capsys):
    bundle = write(tmp_path, bundles["org"])
    lines = bundle.read_bytes().split(b"\n")
    index = first_index(bundles["org"], "event")
    lines[index] = lines[index].replace(b'"data":{', b'"data":{"x":"\xff",')
    bundle.write_bytes(b"\n".join(lines))
    status, _, err = verify(capsys, bundle, "--public-key", bundles["key"])
    assert status == 1
    assert err.startswith(f"FAIL: record {index + 1} (line): not UTF-8")


def test_malformed_records_give_no_traceback_in_a_separate_process(bundles, tmp_path):
    for scope, field, value in (
        ("run", "note", 5),
        ("run", "note", ["a"]),
        ("org", "run", ["x", "y"]),
    ):
        records = [dict(r) for r in bundles[scope]]
        kind = "checkpoint" if field == "note" else "event"
        index = _set(kind, field, value)(records)
        result = offline_verify(write(tmp_path, records), bundles["key"])
        assert result.returncode == 1, (field, value, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(f"FAIL: record {index + 1} ({kind}): '{field}' must be")


def test_an_added_field_covered_by_nothing_is_refused_in_a_separate_process(bundles, tmp_path):
    records = [dict(r) for r in bundles["org"]]
    index = _set("event", "note", "approved by ceo")(records)
    result = offline_verify(write(tmp_path, records), bundles["key"])
    assert result.returncode == 1
    assert result.stderr == (
        f"FAIL: record {index + 1} (event): unknown field 'note': no hash or signature covers it\n"
    )


# The command line itself


def test_a_missing_key_file_is_named(bundles, tmp_path, capsys):
    bundle = write(tmp_path, bundles["org"])
    status, out, err = verify(capsys, bundle, "--public-key", "/nonexistent")
    assert status == 2 and out == ""
    assert err == "FAIL: --public-key /nonexistent: no such file\n"


def test_a_key_file_with_no_key_is_named(bundles, tmp_path, capsys):
    keys = tmp_path / "keys.txt"
    keys.write_text("# nothing here\n")
    status, _, err = verify(capsys, write(tmp_path, bundles["org"]), "--public-key", str(keys))
    assert status == 2
    assert err == f"FAIL: --public-key {keys}: no verifier key in it\n"


def test_a_bad_line_in_a_key_file_is_named(bundles, tmp_path, capsys):
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{bundles['key']}  # current\nnot-a-key\n")
    status, _, err = verify(capsys, write(tmp_path, bundles["org"]), "--public-key", str(keys))
    assert status == 2
    assert err.startswith(f"FAIL: --public-key {keys} line 2: a verifier key is")


def test_missing_bundle_and_checkpoint_files_are_named(bundles, tmp_path, capsys):
    status, _, err = verify(capsys, tmp_path / "absent.jsonl", "--public-key", bundles["key"])
    assert status == 2
    assert err == f"FAIL: {tmp_path / 'absent.jsonl'}: No such file or directory\n"
    bundle = write(tmp_path, bundles["org"])
    status, _, err = verify(
        capsys, bundle, "--public-key", bundles["key"], "--checkpoint", "/nonexistent.txt"
    )
    assert status == 2
    assert err == "FAIL: --checkpoint /nonexistent.txt: no such file\n"
