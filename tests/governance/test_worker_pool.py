"""`DB_POOL_SIZE` in the worker's environment (one environment for every process is what
a deployment writes) must not break django-q2's forked workers."""

import pytest
from django_q.models import Success
from django_q.tasks import async_task

from tests.support.servers import Worker
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_every_task_with_the_pool_setting_in_its_environment(tmp_path):
    with Worker(tmp_path, DB_POOL_SIZE="4") as worker:
        worker.wait_until_ready()
        tasks = [async_task("math.floor", index + 0.5) for index in range(30)]
        wait_until(
            lambda: Success.objects.filter(id__in=tasks).count() == len(tasks),
            "the worker to run 30 tasks",
        )
        log = worker.log()
    assert sorted(Success.objects.filter(id__in=tasks).values_list("result", flat=True)) == list(
        range(30)
    )
    assert "didn't produce records" not in log
