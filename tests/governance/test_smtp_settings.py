"""Notification mail reaches a real SMTP server configured by the environment alone
(EMAIL_BACKEND, EMAIL_HOST, EMAIL_PORT, DEFAULT_FROM_EMAIL): a newcomer found the server's
address could not be set without editing the settings."""

import socketserver
import subprocess
import threading

import pytest

from tests.support.servers import BIN, ROOT, child_environment


class _Smtp(socketserver.ThreadingTCPServer):
    """Just enough SMTP to accept a message: the commands and the message text kept."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SmtpSession)
        self.commands: list[str] = []
        self.messages: list[str] = []


class _SmtpSession(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 test SMTP")
        message: list[str] | None = None
        while line := self.rfile.readline():
            text = line.decode("utf-8", "replace")
            if message is not None:
                if text == ".\r\n":
                    self.server.messages.append("".join(message))
                    message = None
                    self.reply("250 accepted")
                else:
                    message.append(text)
                continue
            command = text.strip()
            self.server.commands.append(command)
            verb = command.split(" ", 1)[0].upper()
            if verb == "DATA":
                message = []
                self.reply("354 go on")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("250 ok")


@pytest.mark.django_db(transaction=True)
def test_mail_goes_to_the_smtp_server_the_environment_names():
    server = _Smtp()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = child_environment(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=str(server.server_address[1]),
            DEFAULT_FROM_EMAIL="fluidbox@gate.example",
        )
        sent = subprocess.run(
            [str(BIN / "python"), "manage.py", "sendtestemail", "alice@example.com"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert sent.returncode == 0, sent.stderr
    commands = [command.lower() for command in server.commands]  # SMTP verbs have no case
    assert "mail from:<fluidbox@gate.example>" in commands
    assert "rcpt to:<alice@example.com>" in commands
    assert len(server.messages) == 1 and "alice@example.com" in server.messages[0]
