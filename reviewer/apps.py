from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"
    default_auto_field = "django.db.models.BigAutoField"
