"""A tlog-witness (c2sp.org/tlog-witness `add-checkpoint`) over HTTPS on 127.0.0.1, for the
publishing tests. It checks what fluidbox sends with tlog-scales (signature with the log's
vkey, RFC 9162 consistency from the size it holds) and answers with an Ed25519
cosignature/v1 (c2sp.org/tlog-cosignature)."""

import base64
import datetime
import hashlib
import ipaddress
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID
from tlog_scales.signing import Vkey
from tlog_scales.tlog import Checkpoint, ConsistencyProof

NAME = "witness.test/w1"


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "witness.pem", folder / "witness.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class Witness:
    def __init__(self, folder: Path, log_vkey: str) -> None:
        self.log_vkey = Vkey.from_string(log_vkey)
        self.key = Ed25519PrivateKey.generate()
        public = self.key.public_key().public_bytes_raw()
        key_id = hashlib.sha256(NAME.encode() + b"\n\x04" + public).digest()[:4]
        self.key_id = key_id
        material = base64.b64encode(bytes([4]) + public).decode()
        self.vkey = f"{NAME}+{key_id.hex()}+{material}"
        self.size, self.root = 0, hashlib.sha256(b"").digest()
        self.notes: list[str] = []  # every checkpoint it cosigned, in order
        self.failures_to_fake = 0
        self.requests = 0
        self.lock = threading.Lock()
        self.cert, key = self_signed_certificate(folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}/w1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_checkpoint(self, body: str) -> tuple[int, str, str]:
        with self.lock:
            self.requests += 1
            if self.failures_to_fake:
                self.failures_to_fake -= 1
                return 503, "text/plain", "busy\n"
            head, _, note = body.partition("\n\n")
            lines = head.split("\n")
            if not lines[0].startswith("old "):
                return 400, "text/plain", "no old size\n"
            old = int(lines[0][4:])
            proof = [base64.b64decode(line) for line in lines[1:] if line]
            checkpoint = Checkpoint.from_text(note)
            try:
                checkpoint.verify(self.log_vkey)
            except Exception:
                return 403, "text/plain", "bad signature\n"
            if old > checkpoint.size:
                return 400, "text/plain", "old size above the checkpoint's\n"
            if old != self.size:
                return 409, "text/x.tlog.size", f"{self.size}\n"
            try:
                ConsistencyProof(old, checkpoint.size, proof).check(self.root, checkpoint.root_hash)
            except Exception as error:
                return 422, "text/plain", f"{error}\n"
            self.size, self.root = checkpoint.size, checkpoint.root_hash
            self.notes.append(note)
            stamp = int(time.time())
            message = f"cosignature/v1\ntime {stamp}\n{checkpoint.serialize_body()}".encode()
            blob = self.key_id + stamp.to_bytes(8, "big") + self.key.sign(message)
            return 200, "text/plain", f"\u2014 {NAME} {base64.b64encode(blob).decode()}\n"

    def _handler(self):
        witness = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                if self.path != "/w1/add-checkpoint":
                    self.send_error(404)
                    return
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                status, kind, text = witness.add_checkpoint(body)
                payload = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        return Handler
