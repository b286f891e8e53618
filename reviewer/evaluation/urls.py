"""URLs of evaluation sets and of making a version live."""

from django.urls import path

from reviewer.evaluation import views

urlpatterns: list = [
    path("types/<slug:name>/evaluation/", views.evaluation_set, name="evaluation_set"),
    path("types/<slug:name>/live/<int:version>/", views.doctype_make_live, name="doctype_make_live"),
    path("evaluations/<int:run_id>/", views.evaluation_run, name="evaluation_run"),
    path("evaluations/<int:run_id>/csv/", views.evaluation_run_csv, name="evaluation_run_csv"),
]
