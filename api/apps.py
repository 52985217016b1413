from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The HTTP API over the domain apps: DRF views, serializers, authentication, errors."""

    name = "api"

    def ready(self):
        from api import schema, strict_fields  # noqa: F401  (schema registers the OpenAPI authentication extension)

        strict_fields.install()
