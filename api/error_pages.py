"""404 and 500 outside DRF views: JSON in the API's error shape under /api/, Django's pages elsewhere."""

from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from api.errors import error_body


@csrf_exempt  # the API authenticates with bearer keys; an unknown route is a 404 for every method
def api_not_found(request):
    return JsonResponse(error_body("not_found", "No such endpoint."), status=404)


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "No such endpoint."), status=404)
    return defaults.page_not_found(request, exception)


def csrf_failure(request, reason=""):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("permission_denied", "CSRF check failed."), status=403)
    return defaults.permission_denied(request, PermissionDenied(reason))


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("internal_error", "The request could not be completed."), status=500)
    return defaults.server_error(request)
