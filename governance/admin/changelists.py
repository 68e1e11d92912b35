"""The portal's lists: Django's change list, with a date it cannot build read as a bad filter."""

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
