"""The portal's lists: Django's change list, with a date it cannot build read as a bad filter."""

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList


class BoundedChangeList(ChangeList):
    """Django turns the date hierarchy's `?created_at__year=…` into a date range, but only
    a year `int` refuses is a bad filter there: a year past 9999 (`datetime`'s
    OverflowError) or the last year or day it can hold (whose end is past it) raised a 500.
    Now each is what any other bad filter is: the list's "Database error" page."""

    def get_filters(self, request):
        try:
            return super().get_filters(request)
        except (OverflowError, ValueError) as error:
            raise IncorrectLookupParameters(error) from error


class BoundedDates:
    """For the admins of other apps (django-axes' and django-q2's lists, superusers only):
    their change lists read the same dates."""

    def get_changelist(self, request, **kwargs):
        return BoundedChangeList


def bound_every_date_hierarchy(site: admin.AdminSite) -> None:
    """Registers again, with BoundedDates first, every admin of the site whose list has a date
    hierarchy and another change list class: run once the admin modules are all imported."""
    for model, model_admin in list(site._registry.items()):
        if not model_admin.date_hierarchy:
            continue
        if issubclass(model_admin.get_changelist(None), BoundedChangeList):
            continue
        bounded = type(
            f"Bounded{type(model_admin).__name__}", (BoundedDates, type(model_admin)), {}
        )
        site.unregister(model)
        site.register(model, bounded)
