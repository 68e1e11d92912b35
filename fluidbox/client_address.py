"""The address a request came from, as sign-in throttling counts it.

The TCP peer's address, unless the peer is a proxy this deployment trusts
(`FORWARDED_ALLOW_IPS`, the variable gunicorn reads for X-Forwarded-Proto, 127.0.0.1 and ::1
by default). Then X-Forwarded-For is read from the right: each trusted proxy appends the
address it received from, so the first untrusted address from the right is the client's.
Whatever a client wrote into the header itself stands to the left of that and is never read.
"""

import ipaddress

from django.conf import settings


def client_address(request) -> str | None:
    peer = request.META.get("REMOTE_ADDR")
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if not peer or not forwarded or not _trusted(peer):
        return peer
    address = peer
    for hop in reversed(forwarded.split(",")):
        try:
            address = str(ipaddress.ip_address(hop.strip()))
        except ValueError:
            return peer  # a garbled hop: believe no more of the header
        if not _trusted(address):
            break
    return address


def _trusted(address: str) -> bool:
    networks = settings.TRUSTED_PROXY_NETWORKS
    if networks is None:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)
