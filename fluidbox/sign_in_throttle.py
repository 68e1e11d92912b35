"""What django-axes counts a failed sign-in under: the username tried and the address it
came from (settings: AXES_USERNAME_CALLABLE, AXES_CLIENT_IP_CALLABLE).

The address is the TCP peer's, unless the peer is a proxy this deployment trusts
(`FORWARDED_ALLOW_IPS`, the variable gunicorn reads for X-Forwarded-Proto, 127.0.0.1 and ::1
by default). Then X-Forwarded-For is read from the right: each trusted proxy appends the
address it received from, so the first untrusted address from the right is the client's.
Whatever a client wrote into the header itself stands to the left of that and is never read.

The username is counted as typed only when an account has it. Anything else (a mistyped name,
or a password typed into the username field, which people do) is counted under a keyed digest
of it: the count and the lockout work the same, and no table or log line keeps the text.
"""

import ipaddress

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils.crypto import salted_hmac

# The length of axes' username column. No account's name is longer (Django's allow 150), and
# a longer guess must get the sign-in form's answer, not a database error.
USERNAME_STORED_LENGTH = 255


def attempted_username(request, credentials: dict | None) -> str | None:
    if credentials:
        username = credentials.get(settings.AXES_USERNAME_FORM_FIELD)
    elif request is not None:
        username = getattr(request, "data", request.POST).get(settings.AXES_USERNAME_FORM_FIELD)
    else:
        return None
    if not isinstance(username, str):
        return username
    username = username.replace("\x00", "")[:USERNAME_STORED_LENGTH]
    return username if _is_account(username) else unknown_username(username)


def unknown_username(username: str) -> str:
    """What a username no account has is counted (and shown in the admin) under."""
    digest = salted_hmac("fluidbox.sign_in_throttle", username, algorithm="sha256")
    return f"unknown:{digest.hexdigest()[:16]}"


def _is_account(username: str) -> bool:
    accounts = get_user_model()
    return accounts._default_manager.filter(**{accounts.USERNAME_FIELD: username}).exists()


def client_address(request) -> str | None:
    peer = request.META.get("REMOTE_ADDR")
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if not peer or not forwarded or not _trusted(_parsed(peer)):
        return peer
    for hop in reversed(forwarded.split(",")):
        address = _parsed(hop.strip())
        if address is None:
            return peer  # a garbled hop: believe no more of the header
        if not _trusted(address):
            break
    return str(address)


def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
    networks = settings.TRUSTED_PROXY_NETWORKS
    if address is None:
        return False
    return networks is None or any(address in network for network in networks)
