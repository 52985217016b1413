from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from memory import telemetry

        telemetry.configure()  # OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set
