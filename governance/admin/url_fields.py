"""The URL an admin types for a webhook or an audit sink, checked against the egress rules of
the organization it is saved for (the form knows the organization only once it is clean)."""

from governance.egress import url_address_refused
from governance.errors import Invalid


def address_checked(form, data: dict) -> None:
    """A form error on `url` when the organization may not reach its address; checked when
    the object is created or its URL changes (delivery checks every request again)."""
    url = data.get("url")
    org = form.instance.org if form.instance.pk else data.get("org")
    if not url or org is None or "url" in form.errors:
        return
    if form.instance.pk and url == form.instance.url:
        return
    try:
        url_address_refused(org, url)
    except Invalid as error:
        form.add_error("url", error.detail)
