"""Masking of secret values (and their common encodings) in what a tool returns to the model."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from urllib.parse import quote

MASK = b"***"
# Shorter values make an encoded form so short that masking it would shred ordinary output.
_MIN_ENCODED_SECRET = 6
_MIN_BASE64_CORE = 8


class SecretMasker:
    """Replaces every known secret value, raw or encoded, with `***`.

    Encodings covered: hex (both cases), percent-encoding, JSON string escaping, and base64
    (standard and URL-safe) at each of the three byte alignments a value can have inside a
    longer encoded stream — only the characters that depend on the secret alone are matched,
    so `printf "$TOKEN\\n" | base64` is caught as well as `base64 <<< "x$TOKEN"`. A line break
    anywhere in a value (an encoder wrapping its lines) does not hide it.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._variants: set[bytes] = set()
        self._pattern: re.Pattern[bytes] | None = None
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        if not secret:
            return
        variants = _variants_of(secret)
        if variants <= self._variants:
            return  # already masked: no need to build the pattern again
        self._variants |= variants
        ordered = sorted(self._variants, key=len, reverse=True)
        self._pattern = re.compile(b"|".join(_wrapped(variant) for variant in ordered))

    @property
    def longest(self) -> int:
        """The longest byte sequence that would be masked (to size look-ahead buffers)."""
        return max((3 * len(variant) for variant in self._variants), default=0)

    def mask_bytes(self, data: bytes) -> bytes:
        return self._pattern.sub(MASK, data) if self._pattern else data

    def mask_text(self, text: str) -> str:
        if not self._pattern:
            return text
        return self.mask_bytes(text.encode("utf-8", "surrogatepass")).decode(
            "utf-8", "surrogatepass"
        )


def _wrapped(variant: bytes) -> bytes:
    # Encoders wrap long lines (`base64` at 76 columns, `xxd -p` at 60): a line break may
    # fall anywhere in a value.
    return _LINE_BREAK.join(re.escape(variant[index : index + 1]) for index in range(len(variant)))


_LINE_BREAK = rb"(?:\r?\n)?"


def _variants_of(secret: str) -> set[bytes]:
    raw = secret.encode("utf-8")
    variants = {raw}
    if len(raw) < _MIN_ENCODED_SECRET:
        return variants
    variants.add(binascii.hexlify(raw))
    variants.add(binascii.hexlify(raw).upper())
    variants.add(quote(secret, safe="").encode("ascii"))
    variants.add(json.dumps(secret)[1:-1].encode("ascii"))
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset in range(3):
            encoded = encode(bytes(offset) + raw)
            # Characters whose 6 bits come only from the secret's bytes.
            first = (8 * offset + 5) // 6
            last = 8 * (offset + len(raw)) // 6
            core = encoded[first:last]
            if len(core) >= _MIN_BASE64_CORE:
                variants.add(core)
    return variants
