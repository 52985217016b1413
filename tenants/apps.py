from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from config import database_roles, strict_fields
        from tenants import checks, schema  # noqa: F401  (registers the system checks and the schema extension)

        strict_fields.install()
        database_roles.install(self)
