from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path, reverse_lazy
from django.views import defaults
from django.views.generic import RedirectView

from fluidbox.env import env_bool
from governance.observability.endpoint import metrics_view


def json_not_found(request, exception=None):
    return JsonResponse({"error": "not_found", "detail": "no such endpoint"}, status=404)


def bad_request(request, exception=None):
    """Django's own refusals (a Host header this server does not answer to): JSON on the API,
    where every error is `{"error", "detail"}`; the portal keeps Django's page."""
    if request.path.startswith("/v1/"):
        detail = "bad request: the Host header names no host this server answers to, or the "
        detail += "request is otherwise malformed"
        return JsonResponse({"error": "invalid", "detail": detail}, status=400)
    return defaults.bad_request(request, exception)


def json_server_error(request):
    return JsonResponse({"error": "server_error", "detail": "internal error"}, status=500)


urlpatterns = [
    # Someone who opens the server's address in a browser lands on the portal's sign-in.
    path("", RedirectView.as_view(url=reverse_lazy("admin:index")), name="home"),
    path("metrics", metrics_view, name="metrics"),
    path("v1/", include("governance.api.urls")),
    path("admin/", admin.site.urls),
]
if env_bool("FLUIDBOX_BENCH_ENDPOINTS"):  # bench/gate_load.py's ceiling; never in production
    urlpatterns.append(path("bench/", include("bench.ceiling_app")))

handler400 = bad_request
handler404 = json_not_found
handler500 = json_server_error
