"""URLs of signing in and of the people an admin manages."""

from django.contrib.auth import views as auth_views
from django.urls import path

from reviewer.users import auth_views as auth
from reviewer.users import views as users

urlpatterns: list = [
    path("login/", auth.login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("users/", users.user_list, name="user_list"),
    path("users/new/", users.user_new, name="user_new"),
    path("users/<int:user_id>/", users.user_edit, name="user_edit"),
    path("users/<int:user_id>/password/", users.user_password, name="user_password"),
]
