"""What django-axes counts a failed sign-in under: the username tried and the address it
came from (settings: AXES_USERNAME_CALLABLE, AXES_CLIENT_IP_CALLABLE).

The address is the TCP peer's, unless the peer is a proxy this deployment trusts
(`FORWARDED_ALLOW_IPS`, the variable gunicorn reads for X-Forwarded-Proto, 127.0.0.1 and ::1
by default). Then X-Forwarded-For is read from the right: each trusted proxy appends the
address it received from, so the first untrusted address from the right is the client's.
Whatever a client wrote into the header itself stands to the left of that and is never read.
"""

import ipaddress

from django.conf import settings

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
    return username.replace("\x00", "")[:USERNAME_STORED_LENGTH]


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
