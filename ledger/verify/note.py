"""C2SP signed notes (c2sp.org/signed-note), verifier keys and checkpoints
(c2sp.org/tlog-checkpoint), with Ed25519 signatures. Needs only `cryptography`."""

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

ED25519 = 0x01
EM_DASH = "\u2014"
MAX_SIGNATURES = 100
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_HEX_ID = re.compile(r"[0-9a-f]{8}")


class NoteError(Exception):
    """A note, key or checkpoint is malformed or not signed by a trusted key."""


def b64decode_strict(text: str) -> bytes:
    """Standard base64 (RFC 4648 §4) with padding, nothing else accepted."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteError(f"not standard base64: {text[:40]!r}") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise NoteError(f"not canonical base64: {text[:40]!r}")
    return raw


def valid_key_name(name: str) -> bool:
    return bool(name) and not any(ch.isspace() or ch == "+" for ch in name)


def key_id(name: str, signature_type: int, public_key: bytes) -> int:
    """SHA-256(key name || 0x0A || signature type || public key)[:4], big-endian."""
    digest = hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([signature_type]) + public_key)
    return int.from_bytes(digest.digest()[:4], "big")


def _shown(text: str) -> str:
    """A name from an untrusted note, safe to print on a terminal."""
    return text if text.isprintable() else repr(text)


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: int
    public_key: bytes

    @classmethod
    def parse(cls, text: str) -> "VerifierKey":
        """`<name>+<hex key id>+<base64(0x01 || 32-byte Ed25519 public key)>`."""
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("a verifier key is <name>+<key id hex>+<base64 key>")
        name, id_hex, material = parts
        if not valid_key_name(name):
            raise NoteError(f"bad key name {name!r}")
        if not _HEX_ID.fullmatch(id_hex):
            raise NoteError(f"bad key id {id_hex!r}: 8 lowercase hex digits")
        raw = b64decode_strict(material)
        if len(raw) != 33 or raw[0] != ED25519:
            raise NoteError("only Ed25519 verifier keys (type 0x01, 32 bytes) are supported")
        key = cls(name=name, key_id=int(id_hex, 16), public_key=raw[1:])
        if key_id(name, ED25519, key.public_key) != key.key_id:
            raise NoteError(f"key id {id_hex} does not match the key {name!r}")
        return key

    def encode(self) -> str:
        material = base64.b64encode(bytes([ED25519]) + self.public_key).decode("ascii")
        return f"{self.name}+{self.key_id:08x}+{material}"

    @property
    def label(self) -> str:
        return f"{self.name}+{self.key_id:08x}"

    def verifies(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class Signature:
    name: str
    key_id: int
    signature: bytes

    @property
    def label(self) -> str:
        return f"{self.name}+{self.key_id:08x}"


@dataclass(frozen=True)
class SignedNote:
    text: str  # includes its final newline, not the blank separator line
    signatures: tuple[Signature, ...]

    @classmethod
    def parse(cls, note: str) -> "SignedNote":
        if any(ord(ch) < 0x20 and ch != "\n" for ch in note):
            raise NoteError("a note may contain no control characters other than newline")
        split = note.rfind("\n\n")
        if split < 0:
            raise NoteError("no blank line separates the text from the signatures")
        text, block = note[: split + 1], note[split + 2 :]
        if not block or not block.endswith("\n"):
            raise NoteError("the signature block must end with a newline")
        lines = block[:-1].split("\n")
        if len(lines) > MAX_SIGNATURES:
            raise NoteError(f"more than {MAX_SIGNATURES} signatures")
        signatures = []
        for line in lines:
            parts = line.split(" ")
            if len(parts) != 3 or parts[0] != EM_DASH or not valid_key_name(parts[1]):
                raise NoteError(f"malformed signature line {line[:60]!r}")
            raw = b64decode_strict(parts[2])
            if len(raw) < 5:
                raise NoteError("a signature is a 4-byte key id and the signature bytes")
            signatures.append(Signature(parts[1], int.from_bytes(raw[:4], "big"), raw[4:]))
        return cls(text=text, signatures=tuple(signatures))

    def verified_by(self, trusted: "list[VerifierKey]") -> list[VerifierKey]:
        """The trusted keys whose signatures verify. Unknown signatures are ignored; a known
        key's failing signature rejects the whole note; no verified known key rejects it."""
        message = self.text.encode("utf-8")
        known = {(key.name, key.key_id): key for key in trusted}
        verified = []
        for signature in self.signatures:
            key = known.get((signature.name, signature.key_id))
            if key is None:
                continue
            if not key.verifies(message, signature.signature):
                raise NoteError(f"the signature of {key.label} does not verify")
            verified.append(key)
        if not verified:
            signers = ", ".join(_shown(s.label) for s in self.signatures)
            raise NoteError(f"not signed by a trusted key (signed by {signers})")
        return verified


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    note: SignedNote

    @classmethod
    def parse(cls, note_text: str) -> "Checkpoint":
        note = SignedNote.parse(note_text)
        lines = note.text[:-1].split("\n")
        if len(lines) < 3 or any(not line for line in lines):
            raise NoteError("a checkpoint has an origin, a tree size and a root hash line")
        origin, size_text, root_text = lines[:3]
        if not _DECIMAL.fullmatch(size_text) or len(size_text) > 20 or int(size_text) >= 2**64:
            raise NoteError(f"bad tree size {size_text[:40]!r}: a decimal below 2**64")
        root = b64decode_strict(root_text)
        if len(root) != 32:
            raise NoteError("the root hash is not 32 bytes")
        return cls(origin=origin, size=int(size_text), root=root, note=note)


def checkpoint_text(origin: str, size: int, root: bytes) -> str:
    """The note text of a checkpoint: origin, tree size, base64 root, each ending in \\n."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode('ascii')}\n"


def signature_line(name: str, key: int, signature: bytes) -> str:
    blob = base64.b64encode(key.to_bytes(4, "big") + signature).decode("ascii")
    return f"{EM_DASH} {name} {blob}\n"
