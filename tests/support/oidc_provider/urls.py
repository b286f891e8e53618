"""The test provider's URLs: django-oidc-provider under /openid/ (the issuer is <site>/openid), a login page, and
the control endpoint of the tests."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from tests.support.oidc_provider import views

urlpatterns = [
    path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("control/<str:what>/", views.control, name="control"),
]
