"""The OpenAPI schema: `/v1/schema` (YAML; JSON with `?format=json`) and `/v1/schema.json`."""

import threading

from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response


class SchemaApi(SpectacularAPIView):
    """Generated once per process: it changes only with the code. drf-spectacular's first
    generation is not thread-safe (concurrent first requests failed with 500s while it
    loaded its extensions), so the first one generates under a lock and the rest reuse it."""

    _lock = threading.Lock()
    _schema: dict | None = None

    def _get_schema_response(self, request):
        with SchemaApi._lock:
            if SchemaApi._schema is None:
                generator = self.generator_class(urlconf=self.urlconf, patterns=self.patterns)
                SchemaApi._schema = generator.get_schema(request=request, public=True)
        disposition = f'inline; filename="{self._get_filename(request, None)}"'
        return Response(data=SchemaApi._schema, headers={"Content-Disposition": disposition})


class SchemaJsonApi(SchemaApi):
    """The same schema as JSON, for a plain link or `curl`."""

    renderer_classes = [OpenApiJsonRenderer]
