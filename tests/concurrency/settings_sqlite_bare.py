"""The control case's settings: SQLite with none of fluidbox's options, which is what a
`DATABASE_URL=sqlite:///…` used to get (deferred transactions, a 5 s lock wait)."""

from fluidbox.settings_test import *  # noqa: F403

DATABASES["default"]["OPTIONS"] = {}  # noqa: F405
