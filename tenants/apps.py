from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from database import roles as database_roles
        from tenants import checks  # noqa: F401  (registers the system checks)

        database_roles.install(self)
