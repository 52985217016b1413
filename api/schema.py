"""Tells drf-spectacular how API keys authenticate, so the schema and Swagger UI offer it."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer eng_<prefix>_<secret>"}


class ConsoleSessionScheme(OpenApiAuthenticationExtension):
    """Support staff read the deletion audit from the console with their session cookie (and CSRF token)."""

    target_class = "api.authentication.ConsoleSessionAuthentication"
    name = "ConsoleSession"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": "sessionid",
            "description": "A console login's session (support staff, operators); unsafe methods need its CSRF token.",
        }
