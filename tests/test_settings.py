"""Settings come from the environment and fail loudly on bad values."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from fluidbox.env import env_bool, env_int

ROOT = Path(__file__).resolve().parents[1]


def settings_in_subprocess(**env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FLUIDBOX", "DJANGO"))}
    clean.pop("SECRET_KEY", None)
    clean.pop("DATABASE_URL", None)
    clean.pop("DEBUG", None)
    clean.update(env)
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='fluidbox.settings'; "
        "django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['ENGINE'], settings.DEBUG, "
        "settings.DATABASES['default'].get('OPTIONS', {}).get('transaction_mode'))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )


def test_secret_key_is_required_outside_development(tmp_path):
    result = settings_in_subprocess(FLUIDBOX_DATA_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "SECRET_KEY is required" in result.stderr


def test_development_defaults_to_sqlite_immediate_with_debug_off(tmp_path):
    result = settings_in_subprocess(FLUIDBOX_DEVELOPMENT="1", FLUIDBOX_DATA_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "False", "IMMEDIATE"]


def test_database_url_switches_to_postgresql(tmp_path):
    result = settings_in_subprocess(
        SECRET_KEY="x" * 50,
        DATABASE_URL="postgres://u:p@127.0.0.1:5999/db",
        FLUIDBOX_DATA_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "django.db.backends.postgresql"


def test_a_bad_boolean_fails_loudly(tmp_path):
    result = settings_in_subprocess(
        FLUIDBOX_DEVELOPMENT="1", DEBUG="maybe", FLUIDBOX_DATA_DIR=str(tmp_path)
    )
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_env_helpers_refuse_bad_values(monkeypatch):
    monkeypatch.setenv("X_FLAG", "perhaps")
    with pytest.raises(ImproperlyConfigured):
        env_bool("X_FLAG")
    monkeypatch.setenv("X_NUMBER", "twelve")
    with pytest.raises(ImproperlyConfigured):
        env_int("X_NUMBER", 1)
    monkeypatch.setenv("X_NUMBER", "-3")
    with pytest.raises(ImproperlyConfigured):
        env_int("X_NUMBER", 1, minimum=0)
    monkeypatch.setenv("X_NUMBER", "7")
    assert env_int("X_NUMBER", 1, minimum=0) == 7


@pytest.mark.django_db
def test_the_sqlite_database_runs_in_wal_mode():
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
