"""What a log line may hold: every record the console handler writes is masked by the redactor
first. A library's log line can quote whatever it was handed (the MCP SDK's client logs why
it dropped an upstream's notification or tool, with the values it was sent, and a hostile
server sends the credential it received), so masking at the handler covers loggers fluidbox
does not know of."""

import logging

from ledger.redaction import mask_inline_secrets, mask_secrets, secret_registry


def _masked(text: str, secrets: tuple[str, ...]) -> str:
    return mask_inline_secrets(mask_secrets(text, secrets))


class MaskSecrets(logging.Filter):
    """Masks the plaintexts the vault has handled in this process and inline secrets
    (`Authorization: Bearer …`) in a record's message and its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = secret_registry.snapshot()
        message = record.getMessage()
        masked = _masked(message, secrets)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            # What the formatter would print, masked: it prints exc_text when there is one.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = _masked(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = _masked(record.stack_info, secrets)
        return True
