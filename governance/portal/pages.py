"""The admin chrome (header, sidebar, permissions) for the portal's own pages."""

from django.contrib import admin


def page_context(request, title: str, **extra) -> dict:
    return {**admin.site.each_context(request), "title": title, **extra}
