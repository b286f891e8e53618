"""URLs of signing in and of the people an admin manages."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path

from reviewer.users import auth_views as auth
from reviewer.users import oidc
from reviewer.users import views as users


def oidc_urlpatterns() -> list:
    """Sign-in with OpenID Connect under oidc/, with mozilla-django-oidc's URL names (its views reverse them)."""
    return [
        path("oidc/authenticate/", oidc.sign_in, name="oidc_authentication_init"),
        path("oidc/callback/", oidc.callback, name="oidc_authentication_callback"),
    ]


# The password form, and beside it the provider when one is configured: a callable in the context, so the page
# asks at each request whether to offer it.
login = auth.ThrottledLoginView.as_view(extra_context={"oidc_sign_in": oidc.oidc_sign_in_offer})

urlpatterns: list = [
    path("login/", login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("users/", users.user_list, name="user_list"),
    path("users/new/", users.user_new, name="user_new"),
    path("users/<int:user_id>/", users.user_edit, name="user_edit"),
    path("users/<int:user_id>/password/", users.user_password, name="user_password"),
]
# Read once, when the process builds its URLs: without OIDC_ISSUER no OIDC URL exists at all.
if settings.OIDC_ISSUER:
    urlpatterns += oidc_urlpatterns()
