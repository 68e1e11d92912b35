"""A web worker freezes what it has built up once warm, so full garbage collections stop
walking the modules and caches its first requests loaded (fluidbox/gunicorn_conf.py)."""

import gc

from django.core.signals import request_finished
from django.test import Client

from fluidbox import gunicorn_conf


def test_a_worker_freezes_once_after_its_first_requests():
    gc.unfreeze()
    request_finished.connect(gunicorn_conf._freeze_once_warm, weak=False)
    try:
        client = Client()
        seen = next(gunicorn_conf._requests_seen)
        for _ in range(gunicorn_conf.FREEZE_AFTER_REQUESTS - seen - 1):
            client.get("/metrics")
        assert gc.get_freeze_count() == 0
        client.get("/metrics")  # the thousandth
        frozen = gc.get_freeze_count()
        assert frozen > 0
        # Once only: the receiver is gone, and later requests freeze nothing more.
        assert not request_finished.disconnect(gunicorn_conf._freeze_once_warm)
        gc.unfreeze()
        client.get("/metrics")
        assert gc.get_freeze_count() == 0
    finally:
        request_finished.disconnect(gunicorn_conf._freeze_once_warm)
        gc.unfreeze()
