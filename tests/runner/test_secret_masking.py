"""Secret masking catches the value raw and in the encodings a program is likely to print."""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import quote

import pytest

from runner import SecretMasker

SECRET = 'sk-live_4eC39HqLyjWDarjtT1zdp7dc"/+'


def encodings_of(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        binascii.hexlify(raw).decode(),
        binascii.hexlify(raw).decode().upper(),
        quote(secret, safe=""),
        json.dumps(secret)[1:-1],
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode(),
        base64.b64encode(raw + b"\n").decode(),  # echo "$TOKEN" | base64
        base64.b64encode(b"x" + raw).decode(),  # embedded after one byte
        base64.b64encode(b"Authorization: Bearer " + raw + b"\r\n").decode(),
    ]


@pytest.mark.parametrize("encoded", encodings_of(SECRET))
def test_each_encoding_of_the_secret_is_masked(encoded: str) -> None:
    masked = SecretMasker([SECRET]).mask_text(f"before {encoded} after")
    assert masked.startswith("before ") and masked.endswith(" after")
    assert "***" in masked
    assert SECRET not in masked and encoded not in masked


def test_text_without_secrets_is_unchanged() -> None:
    text = "exit code 0\nall good: 42 files"
    assert SecretMasker([SECRET]).mask_text(text) == text
    assert SecretMasker().mask_bytes(text.encode()) == text.encode()


def test_a_short_secret_is_masked_raw_without_shredding_its_encodings() -> None:
    masker = SecretMasker(["abc"])
    assert masker.mask_text("xabcx 616263") == "x***x 616263"
