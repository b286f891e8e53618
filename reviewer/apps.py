from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class ReviewerConfig(AppConfig):
    name = "reviewer"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.http import multipartparser

        # Django has no setting for it: its multipart parser reads this module constant for every part. A
        # longer header is still refused, and the upload page says why (reviewer.batches.views.bad_request).
        if not isinstance(getattr(multipartparser, "MAX_TOTAL_HEADER_SIZE", None), int):
            raise ImproperlyConfigured("django.http.multipartparser.MAX_TOTAL_HEADER_SIZE is gone: "
                                       "UPLOAD_MAX_PART_HEADER_BYTES cannot be applied")
        multipartparser.MAX_TOTAL_HEADER_SIZE = settings.UPLOAD_MAX_PART_HEADER_BYTES

        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        post_save.connect(_username_key_keep, sender=get_user_model(), dispatch_uid="proofdesk-username-key")


def _username_key_keep(sender, instance, created: bool, raw: bool = False, update_fields=None, **_kwargs) -> None:
    if raw or (update_fields is not None and "username" not in update_fields):
        return  # a fixture loaded as it is; a save that leaves the name alone (last_login, password)
    from reviewer.users.services import username_key_keep

    username_key_keep(user=instance, created=created)
