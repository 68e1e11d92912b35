"""Settings come from the environment and fail loudly on bad values."""

import json
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


def test_a_bad_trusted_proxy_address_fails_loudly(tmp_path):
    result = settings_in_subprocess(
        FLUIDBOX_DEVELOPMENT="1",
        FORWARDED_ALLOW_IPS="10.0.0.1,proxy",
        FLUIDBOX_DATA_DIR=str(tmp_path),
    )
    assert result.returncode != 0
    assert "FORWARDED_ALLOW_IPS" in result.stderr and "'proxy'" in result.stderr


@pytest.mark.django_db
def test_the_sqlite_database_runs_in_wal_mode():
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def database_settings(**env: str) -> dict:
    code = (
        "import django, os, json; os.environ['DJANGO_SETTINGS_MODULE']='fluidbox.settings'; "
        "django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.DATABASES['default'], default=str))"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FLUIDBOX", "DJANGO"))}
    clean.pop("DATABASE_URL", None)
    clean.update(env)
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_sqlite_by_url_gets_the_same_options_as_the_embedded_default(tmp_path):
    path = tmp_path / "chosen.sqlite3"
    default = database_settings(FLUIDBOX_DEVELOPMENT="1", FLUIDBOX_DATA_DIR=str(tmp_path))
    by_url = database_settings(
        FLUIDBOX_DEVELOPMENT="1", FLUIDBOX_DATA_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{path}"
    )
    assert by_url["NAME"] == str(path)
    assert by_url["OPTIONS"] == default["OPTIONS"]
    assert by_url["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in by_url["OPTIONS"]["init_command"]
    assert by_url["OPTIONS"]["timeout"] >= 20


def test_an_in_memory_sqlite_url_is_refused_with_a_reason(tmp_path):
    result = settings_in_subprocess(
        FLUIDBOX_DEVELOPMENT="1", FLUIDBOX_DATA_DIR=str(tmp_path), DATABASE_URL="sqlite://"
    )
    assert result.returncode != 0
    assert "needs a file" in result.stderr
