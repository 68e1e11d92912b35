"""Timeline endpoints: catch-up (`?after=N`) and the Server-Sent Events stream."""

import json
import re
import time

from django.conf import settings
from django.db import connection
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import renderers, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.api.fields import query_once
from governance.selectors import access_run
from governance.throttling import credential_key, wait_slot_release, wait_slot_take
from ledger.models import Event

MAX_PAGE = 1000
SEQ = re.compile(r"[0-9]{1,18}", re.ASCII)
POLL_SECONDS = 0.25


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 10**18 - 1})
class SeqField(serializers.IntegerField):
    """A cursor: the seq of an event, written as the API writes it (what `Last-Event-ID` is
    held to). DRF's IntegerField also reads `+1`, `1.0`, non-ASCII digits and any number of
    digits, each a 200 page of "nothing after" that a client would take for the end."""

    default_error_messages = {"invalid": "must be the seq of an event (at most 18 digits)"}

    def to_internal_value(self, data):
        if not isinstance(data, str) or not SEQ.fullmatch(data):
            self.fail("invalid")
        return int(data)


def event_json(event: Event) -> dict:
    return {
        "seq": event.seq,
        "type": event.type,
        "at": event.at.isoformat().replace("+00:00", "Z"),
        "data": event.data,
        "hash": event.hash,
    }


def access_timeline(run_id, actor):
    """Operators, runners (their own run), org staff, and members for runs they invoked."""
    return access_run(run_id, actor)


class EventOut(serializers.Serializer):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    at = serializers.CharField()
    data = serializers.JSONField()
    hash = serializers.CharField()


class RunEventsApi(APIView):
    class QueryIn(serializers.Serializer):
        after = SeqField(default=0)
        limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=100)

    @extend_schema(
        parameters=[QueryIn],
        responses=inline_serializer(
            "EventPage",
            {"events": EventOut(many=True), "next_after": serializers.IntegerField()},
        ),
    )
    def get(self, request, run_id):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        run = access_timeline(run_id, request.auth)
        after = query.validated_data["after"]
        events = list(
            Event.objects.filter(run=run, seq__gt=after).order_by("seq")[
                : query.validated_data["limit"]
            ]
        )
        next_after = events[-1].seq if events else after
        return Response({"events": [event_json(e) for e in events], "next_after": next_after})


class EventStreamRenderer(renderers.BaseRenderer):
    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode()


def _sse_frames(run_id, after: int, deadline: float):
    # A bounded stream: it ends after FLUIDBOX_STREAM_SECONDS and the browser's EventSource
    # reconnects with Last-Event-ID, so no sync worker thread is pinned by a client forever.
    yield "retry: 1000\n\n"
    last = after
    while True:
        batch = list(Event.objects.filter(run_id=run_id, seq__gt=last).order_by("seq")[:200])
        for event in batch:
            last = event.seq
            payload = json.dumps(event_json(event), separators=(",", ":"))
            yield f"id: {event.seq}\nevent: {event.type}\ndata: {payload}\n\n"
        if not connection.in_atomic_block:
            connection.close()  # no connection held between polls
        if time.monotonic() >= deadline:
            return
        if not batch:
            yield ": keep-alive\n\n"
            time.sleep(POLL_SECONDS)


class _HeldStream:
    """The frames of one stream, holding the credential's wait slot until the response is
    closed (Django closes it when the client leaves or the stream ends, iterated or not)."""

    def __init__(self, frames, holder) -> None:
        self._frames = frames
        self._holder = holder

    def __iter__(self):
        return iter(self._frames)

    def close(self) -> None:
        self._frames.close()
        if self._holder is not None:
            holder, self._holder = self._holder, None
            wait_slot_release(holder)


ServerSentEvent = inline_serializer(
    "ServerSentEvent",
    {
        "id": serializers.CharField(required=False, help_text="the event's seq"),
        "event": serializers.CharField(required=False, help_text="the event's type"),
        "data": serializers.CharField(required=False, help_text="the event as JSON (EventOut)"),
        "retry": serializers.IntegerField(required=False),
    },
)


class RunEventStreamApi(APIView):
    renderer_classes = [renderers.JSONRenderer, EventStreamRenderer]
    # Not HEAD: the server would stream on to nowhere for the stream's whole time, holding
    # one of the credential's wait slots after the client had its headers and gone.
    http_method_names = ["get", "options"]

    class QueryIn(serializers.Serializer):
        after = SeqField(default=0)
        max_seconds = serializers.IntegerField(min_value=1, required=False)

    @extend_schema(
        parameters=[
            QueryIn,
            OpenApiParameter(
                "Last-Event-ID",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                pattern=f"^{SEQ.pattern}$",
                description="resume after this seq (wins over `after`)",
            ),
        ],
        responses={(200, "text/event-stream"): ServerSentEvent},
    )
    def get(self, request, run_id):
        query = self.QueryIn(data=query_once(request))
        query.is_valid(raise_exception=True)
        after = query.validated_data["after"]
        last_event_id = request.headers.get("Last-Event-ID")
        if last_event_id is not None:
            if not SEQ.fullmatch(last_event_id):
                raise ValidationError({"Last-Event-ID": "must be the seq of an event"})
            after = int(last_event_id)
        run = access_timeline(run_id, request.auth)
        seconds = min(
            settings.FLUIDBOX_STREAM_SECONDS,
            query.validated_data.get("max_seconds", settings.FLUIDBOX_STREAM_SECONDS),
        )
        # A stream holds a web thread for up to `seconds`: one of the credential's few slots.
        holder = wait_slot_take(credential_key(request.auth), seconds=seconds, org_id=run.org_id)
        response = StreamingHttpResponse(
            _HeldStream(_sse_frames(run.pk, after, time.monotonic() + seconds), holder),
            content_type="text/event-stream",
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response

    def handle_exception(self, exc):
        # Errors are our JSON error shape, even for a client that asked for the event stream.
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = renderers.JSONRenderer.media_type
        return super().handle_exception(exc)
