"""The stack's own ceiling for bench/gate_load.py: a bare DRF endpoint doing one transaction.

Served only when FLUIDBOX_BENCH_ENDPOINTS=1 (the hook is in fluidbox/urls.py). Its tables are
created with raw SQL by the bench (`CEILING_TABLES`, `CEILING_COUNTERS`), never by a
migration.

    POST /bench/ceiling  {"counter": 7, "payload": {...}}
        lock counter row 7, insert 3 rows, bump the counter; 200 {"value": N}
"""

from django.db import connection, transaction
from django.urls import path
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from fluidbox.canonical import canonical_json

CEILING_TABLES = (
    "DROP TABLE IF EXISTS bench_ceiling_row",
    "DROP TABLE IF EXISTS bench_ceiling_counter",
    "CREATE TABLE bench_ceiling_counter (id integer PRIMARY KEY, value bigint NOT NULL)",
    """CREATE TABLE bench_ceiling_row (
        id bigserial PRIMARY KEY,
        counter_id integer NOT NULL REFERENCES bench_ceiling_counter (id),
        seq bigint NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
    )""",
)
CEILING_COUNTERS = (
    "INSERT INTO bench_ceiling_counter (id, value) SELECT n, 0 FROM generate_series(1, %s) n"
)


class CeilingApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    class InputSerializer(serializers.Serializer):
        counter = serializers.IntegerField(min_value=1)
        payload = serializers.JSONField()

    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        counter = data.validated_data["counter"]
        payload = canonical_json(data.validated_data["payload"])
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT value FROM bench_ceiling_counter WHERE id = %s FOR UPDATE", [counter]
            )
            (value,) = cursor.fetchone()
            for offset in (1, 2, 3):
                cursor.execute(
                    "INSERT INTO bench_ceiling_row (counter_id, seq, payload) VALUES (%s, %s, %s)",
                    [counter, value + offset, payload],
                )
            cursor.execute(
                "UPDATE bench_ceiling_counter SET value = %s WHERE id = %s", [value + 3, counter]
            )
        return Response({"value": value + 3})


urlpatterns = [path("ceiling", CeilingApi.as_view(), name="bench-ceiling")]
