"""`{{ value|one_line_visible }}`: one-line text from outside fluidbox (a run's agent name)
with its invisible, bidi and look-alike characters shown as marked escapes, as the approval
page shows what an agent wrote."""

from django import template

from governance.portal.verbatim import highlighted, person

register = template.Library()


@register.filter
def one_line_visible(value) -> str:
    return highlighted(str(value if value is not None else ""), layout_is_visible=False)


@register.filter
def person_visible(user, missing: str = "") -> str:
    return person(user, missing)
