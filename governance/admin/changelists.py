"""The portal's lists: Django's change list, with a date it cannot build or an id no key can
hold read as a bad filter."""

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

    def get_results(self, request):
        # A relation's own lookup (`?org=`, `?run__org__exact=`, `?policy=`) is not an
        # integer field's, whose out-of-range values Django reads as matching nothing: on
        # SQLite a value past 64 bits reached the driver, whose OverflowError was a 500.
        # The row count is the list's first query; a value no key can hold is a bad filter.
        try:
            return super().get_results(request)
        except OverflowError as error:
            raise IncorrectLookupParameters(error) from error


class BoundedLists:
    """For the admins of other apps (Django's users and groups, django-axes' and django-q2's
    lists, superusers only): their change lists read dates and ids the same way."""

    def get_changelist(self, request, **kwargs):
        return BoundedChangeList


def bound_every_change_list(site: admin.AdminSite) -> None:
    """Registers again, with BoundedLists first, every admin of the site with another change
    list class (a date hierarchy's year, a relation's id past 64 bits: see BoundedChangeList):
    run once the admin modules are all imported."""
    for model, model_admin in list(site._registry.items()):
        if issubclass(model_admin.get_changelist(None), BoundedChangeList):
            continue
        bounded = type(
            f"Bounded{type(model_admin).__name__}", (BoundedLists, type(model_admin)), {}
        )
        site.unregister(model)
        site.register(model, bounded)
