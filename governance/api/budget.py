"""Budget endpoints for the runner: reserve, settle."""

import re

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import ClosedSerializer, IdField, StrictIntegerField, StrictStringMixin
from governance.api.permissions import IsRunner
from governance.api.runs import runner_run
from governance.services.budget import reservation_create, reservation_settle

MAX_TOKENS = 10**9
# A plain decimal in ASCII digits, as the README writes it ("0.0123"), an exponent allowed
# (what `str(Decimal)` writes for small amounts). `decimal.Decimal` alone also reads "1_000",
# non-ASCII digits ("\u0661") and a signed zero ("-0").
USD_AMOUNT = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class UsdAmountField(StrictStringMixin, serializers.DecimalField):
    """Money as a decimal string ("0.0123"); a JSON float would already have lost cents."""

    def validate_empty_values(self, data):
        # DRF reads a blank string as null when null is allowed: `""` would settle as
        # "no cost given" instead of being refused. Only JSON null means that.
        if isinstance(data, str) and not data.strip():
            self.fail("invalid")
        return super().validate_empty_values(data)

    def to_internal_value(self, data):
        if isinstance(data, str) and not USD_AMOUNT.fullmatch(data.strip()):
            self.fail("invalid")
        return super().to_internal_value(data)


ReservationOut = inline_serializer(
    "Reservation",
    {
        "id": serializers.CharField(),
        "reserved_tokens": serializers.IntegerField(),
        "remaining_tokens": serializers.IntegerField(),
        "status": serializers.CharField(),
    },
)


class ReservationCreateApi(APIView):
    permission_classes = [IsRunner]

    class InputSerializer(ClosedSerializer):
        request_key = IdField()
        # At least one: a reservation of nothing "fits" a spent budget (201), and a runner
        # that asked is told to go ahead with a model call the budget cannot pay for.
        max_output_tokens = StrictIntegerField(min_value=1, max_value=MAX_TOKENS)
        input_tokens_upper_bound = StrictIntegerField(min_value=0, max_value=MAX_TOKENS)

    @extend_schema(
        request=InputSerializer,
        responses={
            200: ReservationOut,
            201: ReservationOut,
            409: inline_serializer(
                "BudgetExhausted",
                {"error": serializers.CharField(), "remaining_tokens": serializers.IntegerField()},
            ),
        },
    )
    def post(self, request, run_id):
        run = runner_run(run_id, request.auth)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = reservation_create(run=run, **data.validated_data)
        if result.reservation is None:
            return Response(
                {
                    "error": "budget_exhausted",
                    "detail": "the reservation does not fit in the run's remaining budget",
                    "remaining_tokens": result.remaining,
                },
                status=status.HTTP_409_CONFLICT,
            )
        reservation = result.reservation
        return Response(
            {
                "id": str(reservation.pk),
                "reserved_tokens": reservation.reserved_tokens,
                "remaining_tokens": result.remaining,
                "status": reservation.status,
            },
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class ReservationSettleApi(APIView):
    permission_classes = [IsRunner]

    class InputSerializer(ClosedSerializer):
        input_tokens = StrictIntegerField(min_value=0, max_value=MAX_TOKENS)
        output_tokens = StrictIntegerField(min_value=0, max_value=MAX_TOKENS)
        cost_usd = UsdAmountField(
            max_digits=12, decimal_places=6, min_value=0, required=False, allow_null=True
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            200: inline_serializer(
                "Usage",
                {
                    "reservation_id": serializers.CharField(),
                    "input_tokens": serializers.IntegerField(),
                    "output_tokens": serializers.IntegerField(),
                    "cost_usd": serializers.CharField(allow_null=True),
                    "replayed": serializers.BooleanField(),
                },
            )
        },
    )
    def post(self, request, run_id, reservation_id):
        run = runner_run(run_id, request.auth)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        result = reservation_settle(
            run=run,
            reservation_id=reservation_id,
            input_tokens=values["input_tokens"],
            output_tokens=values["output_tokens"],
            cost_usd=values.get("cost_usd"),
        )
        usage = result.usage
        return Response(
            {
                "reservation_id": usage.external_id,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cost_usd": str(usage.cost_usd) if usage.cost_usd is not None else None,
                "replayed": not result.created,
            }
        )
