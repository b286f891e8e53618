from django.apps import AppConfig


class ExtractionConfig(AppConfig):
    name = "extraction"
    default_auto_field = "django.db.models.BigAutoField"
