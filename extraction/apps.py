from django.apps import AppConfig


class ExtractionConfig(AppConfig):
    name = "extraction"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The tasks register with Celery in every process (the web app sends them by name), and a worker's
        # reaper thread starts on its worker_ready signal.
        from extraction.doctypes.registry import set_defined_lookup
        from extraction.doctypes.selectors import doctype_definition
        from extraction.pipeline import reaper, tasks  # noqa: F401

        set_defined_lookup(doctype_definition)  # types admins define live in the database
