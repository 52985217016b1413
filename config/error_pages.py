"""404 and 500 outside DRF views: JSON in the API's error shape under /api/, Django's pages elsewhere."""

from django.http import JsonResponse
from django.views import defaults

from config.api_errors import error_body


def api_not_found(request):
    return JsonResponse(error_body("not_found", "No such endpoint."), status=404)


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("not_found", "No such endpoint."), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("internal_error", "The request could not be completed."), status=500)
    return defaults.server_error(request)
