"""The app's URLconf as a process started with OIDC_ISSUER builds it (reviewer/users/urls.py reads the setting
once, at start; the tests configure the provider after the app started)."""

from reviewer import urls as app
from reviewer.users.urls import oidc_urlpatterns

urlpatterns = [*app.urlpatterns, *oidc_urlpatterns()]
handler400, handler403, handler404, handler500 = app.handler400, app.handler403, app.handler404, app.handler500
