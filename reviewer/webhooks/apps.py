from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "reviewer.webhooks"
    label = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # extraction may not import reviewer (tests/architecture/test_app_dependencies.py): it announces each move of a
        # document and this app listens, inside the move's transaction. The task registers in every process;
        # the sweeper thread starts on a worker's worker_ready signal.
        from extraction.pipeline.transitions import document_moved
        from reviewer.webhooks import services, sweeper, tasks  # noqa: F401

        document_moved.connect(services.on_document_moved, dispatch_uid="webhooks.document_moved")
