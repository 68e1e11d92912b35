"""The auditor's endpoints, checked with transparency-log code fluidbox did not write:
sigstore-python (inclusion proofs, checkpoint parsing) and tlog-scales (signed-note keys,
checkpoint signatures, RFC 9162 inclusion and consistency checks)."""

import base64
from types import SimpleNamespace

import pytest
from django.db import transaction
from sigstore._internal.merkle import _hash_leaf, verify_merkle_inclusion
from sigstore._internal.rekor.checkpoint import SignedCheckpoint
from tlog_scales.signing import Vkey
from tlog_scales.tlog import Checkpoint as ScalesCheckpoint
from tlog_scales.tlog import ConsistencyProof, InclusionProof

from governance.models import Role
from governance.services.orgs import api_key_create, user_create
from ledger.redaction import redact
from ledger.services import events_append
from tests.conftest import Api
from tests.ledger.support import checkpoint_now, gate_traffic

pytestmark = pytest.mark.django_db


def filler(run_id, count: int) -> None:
    with transaction.atomic():
        events_append(
            run_id=run_id,
            events=[("tool.requested", redact({"filler": i})) for i in range(count)],
        )


def b64(text: str) -> bytes:
    return base64.b64decode(text)


@pytest.fixture
def signed_twice(org, make_run):
    runs = [make_run() for _ in range(2)]
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 4)
        filler(run_id, 292)  # past 256 leaves: full tiles get written
    first = checkpoint_now(org)
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 40, prefix="more")
    second = checkpoint_now(org)
    return [run_id for run_id, _ in runs], first, second


def test_the_checkpoint_is_a_c2sp_signed_note_that_third_party_code_verifies(
    operator, signed_twice
):
    _, _, second = signed_twice
    response = operator.get("/v1/ledger/checkpoint")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    note = response.content.decode()
    assert note == second.note
    origin, size, root, blank, signature, end = note.split("\n")
    assert second.tree_size == 2 * (1 + 2 * 150 + 2 * 40)
    assert (origin, size, blank, end) == ("127.0.0.1:8000/ledger/acme", "762", "", "")
    assert signature.startswith("\u2014 127.0.0.1:8000/ledger/acme ")
    vkey = operator.get("/v1/ledger/public-key").json()["vkey"]
    # tlog-scales: the vkey's key id derivation and the Ed25519 signature over the note text.
    parsed = ScalesCheckpoint.from_text(note)
    parsed.verify(Vkey.from_string(vkey))
    assert (parsed.origin, parsed.size, parsed.root_hash) == (origin, 762, b64(root))
    # sigstore: parses the same signed note and checkpoint body.
    sigstore = SignedCheckpoint.from_text(note)
    assert sigstore.checkpoint.origin == origin
    assert sigstore.checkpoint.log_size == 762
    assert sigstore.checkpoint.log_hash == b64(root).hex()
    assert sigstore.signed_note.signatures[0].sig_hash.hex() == vkey.split("+")[1]


def test_a_forged_signature_fails_third_party_verification(operator, signed_twice):
    note = operator.get("/v1/ledger/checkpoint").content.decode()
    vkey = operator.get("/v1/ledger/public-key").json()["vkey"]
    forged = note.replace("\n762\n", "\n761\n")
    from cryptography.exceptions import InvalidSignature

    ScalesCheckpoint.from_text(note).verify(Vkey.from_string(vkey))
    with pytest.raises(InvalidSignature):
        ScalesCheckpoint.from_text(forged).verify(Vkey.from_string(vkey))


def test_every_events_inclusion_proof_verifies_with_sigstore_and_tlog_scales(
    operator, signed_twice
):
    run_ids, first, second = signed_twice
    for run_id in run_ids:
        for seq in (1, 2, 150, 301):
            for tree_size in (first.tree_size, second.tree_size):
                if seq > 1 + 2 * 150 and tree_size == first.tree_size:
                    continue
                response = operator.get(
                    "/v1/ledger/proofs/inclusion",
                    data={"run": run_id, "seq": seq, "tree_size": tree_size},
                )
                assert response.status_code == 200, response.content
                proof = response.json()
                path = [b64(h) for h in proof["inclusion_path"]]
                leaf = bytes.fromhex(proof["event_hash"])
                assert _hash_leaf(leaf) == b64(proof["leaf_hash"])
                entry = SimpleNamespace(
                    _inner=SimpleNamespace(
                        canonicalized_body=leaf,
                        inclusion_proof=SimpleNamespace(
                            log_index=proof["leaf_index"],
                            tree_size=proof["tree_size"],
                            hashes=path,
                            root_hash=b64(proof["root_hash"]),
                        ),
                    )
                )
                verify_merkle_inclusion(entry)  # raises on a bad proof
                InclusionProof(proof["leaf_index"], tree_size, path).check(
                    _hash_leaf(leaf), b64(proof["root_hash"])
                )
                held = ScalesCheckpoint.from_text(proof["checkpoint"])
                assert (held.size, held.root_hash) == (tree_size, b64(proof["root_hash"]))
                assert proof["tlog_proof"].startswith(
                    f"c2sp.org/tlog-proof@v1\nindex {proof['leaf_index']}\n"
                )


def test_a_wrong_leaf_fails_sigstores_inclusion_check(operator, signed_twice):
    from sigstore.errors import VerificationError

    run_ids, _, _ = signed_twice
    proof = operator.get("/v1/ledger/proofs/inclusion", data={"run": run_ids[0], "seq": 7}).json()
    entry = SimpleNamespace(
        _inner=SimpleNamespace(
            canonicalized_body=bytes(32),
            inclusion_proof=SimpleNamespace(
                log_index=proof["leaf_index"],
                tree_size=proof["tree_size"],
                hashes=[b64(h) for h in proof["inclusion_path"]],
                root_hash=b64(proof["root_hash"]),
            ),
        )
    )
    with pytest.raises(VerificationError):
        verify_merkle_inclusion(entry)


def test_the_consistency_proof_between_two_checkpoints_verifies_with_tlog_scales(
    operator, signed_twice
):
    _, first, second = signed_twice
    response = operator.get("/v1/ledger/proofs/consistency", data={"first": first.tree_size})
    assert response.status_code == 200
    proof = response.json()
    assert (proof["first"], proof["second"]) == (first.tree_size, second.tree_size)
    old = ScalesCheckpoint.from_text(proof["first_checkpoint"])
    new = ScalesCheckpoint.from_text(proof["second_checkpoint"])
    path = [b64(h) for h in proof["consistency_path"]]
    ConsistencyProof(old.size, new.size, path).check(old.root_hash, new.root_hash)
    with pytest.raises(Exception, match="first_hash|fr"):
        ConsistencyProof(old.size, new.size, path).check(bytes(32), new.root_hash)


def test_history_and_keys_list_every_checkpoint_and_key(operator, signed_twice):
    _, first, second = signed_twice
    history = operator.get("/v1/ledger/checkpoints").json()
    assert history["origin"] == "127.0.0.1:8000/ledger/acme"
    assert [c["tree_size"] for c in history["checkpoints"]] == [second.tree_size, first.tree_size]
    assert history["checkpoints"][1]["note"] == first.note
    page = operator.get(
        "/v1/ledger/checkpoints", data={"before": second.tree_size, "limit": 1}
    ).json()
    assert [c["tree_size"] for c in page["checkpoints"]] == [first.tree_size]
    keys = operator.get("/v1/ledger/keys").json()["keys"]
    assert [k["vkey"] for k in keys] == [operator.get("/v1/ledger/public-key").json()["vkey"]]


def test_an_auditor_reads_it_and_a_member_or_runner_does_not(
    org, auditor, member, make_run, signed_twice
):
    run_ids, _, _ = signed_twice
    as_auditor = Api(api_key_create(org=org, name="audrey", user=auditor).plaintext)
    assert as_auditor.get("/v1/ledger/checkpoint").status_code == 200
    query = {"run": run_ids[0], "seq": 3}
    assert as_auditor.get("/v1/ledger/proofs/inclusion", data=query).status_code == 200
    as_member = Api(api_key_create(org=org, name="mo", user=member).plaintext)
    assert as_member.get("/v1/ledger/checkpoint").status_code == 404
    _, runner = make_run()
    assert runner.get("/v1/ledger/checkpoint").status_code == 403


def test_another_organizations_log_run_and_sizes_are_not_found(
    other_org, other_operator, signed_twice
):
    run_ids, first, _ = signed_twice
    assert other_operator.get("/v1/ledger/checkpoint").json()["error"] == "no_checkpoint"
    response = other_operator.get("/v1/ledger/proofs/inclusion", data={"run": run_ids[0], "seq": 1})
    assert response.status_code == 404
    response = other_operator.get("/v1/ledger/proofs/consistency", data={"first": first.tree_size})
    assert response.status_code == 404
    assert other_operator.get("/v1/ledger/checkpoint", data={"org": "acme"}).status_code == 404
    person = user_create(username="both", org=other_org, role=Role.AUDITOR, password="pw-both-1")
    assert Api(user=person).get("/v1/ledger/checkpoints", data={"org": "acme"}).status_code == 404


def test_bad_input_is_a_clear_4xx(operator, make_run, signed_twice):
    run_ids, first, second = signed_twice
    cases = [
        ("/v1/ledger/proofs/inclusion", {"run": "nope", "seq": 1}, 400),
        ("/v1/ledger/proofs/inclusion", {"run": run_ids[0], "seq": 0}, 400),
        ("/v1/ledger/proofs/inclusion", {"run": run_ids[0], "seq": 9999}, 404),
        ("/v1/ledger/proofs/inclusion", {"run": run_ids[0], "seq": 1, "tree_size": 5}, 404),
        ("/v1/ledger/proofs/consistency", {"first": "x"}, 400),
        (
            "/v1/ledger/proofs/consistency",
            {"first": second.tree_size, "second": first.tree_size},
            400,
        ),
        ("/v1/ledger/checkpoints", {"limit": 100000}, 400),
    ]
    for path, query, status in cases:
        response = operator.get(path, data=query)
        assert response.status_code == status, (path, query, response.content)
        assert set(response.json()) >= {"error", "detail"}
    # An event the sequencer has not reached yet: a conflict, not a 500.
    run_id, runner = make_run()
    response = operator.get("/v1/ledger/proofs/inclusion", data={"run": run_id, "seq": 1})
    assert response.status_code == 409
    assert response.json()["error"] == "not_checkpointed"


def test_a_text_plain_client_gets_json_errors(other_operator):
    response = other_operator.get("/v1/ledger/checkpoint", HTTP_ACCEPT="text/plain")
    assert response.status_code == 404
    assert response.json()["error"] == "no_checkpoint"
