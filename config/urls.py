from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api.error_pages import api_not_found
from config.health import healthz

api_v1 = [
    path("", include("api.space_urls")),
    path("", include("api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says; send them to the console's icon.
    path("favicon.ico", RedirectView.as_view(url=static("engram/favicon.svg"), permanent=True)),
    path("console/", include("console.urls")),
    path("api/v1/", include(api_v1)),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
]

handler404 = "api.error_pages.not_found"
handler500 = "api.error_pages.server_error"
