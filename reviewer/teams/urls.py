"""URLs of the instance admin's team pages."""

from django.urls import path

from reviewer.teams import views

urlpatterns = [
    path("teams/", views.team_list, name="team_list"),
]
