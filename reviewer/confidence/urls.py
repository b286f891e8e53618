"""URLs of the confidence pages (one per document type)."""

from django.urls import path

from reviewer.confidence import views as confidence

urlpatterns: list = [
    path("confidence/<str:doctype>/", confidence.confidence_page, name="confidence_page"),
    path("confidence/<str:doctype>/threshold/", confidence.confidence_threshold, name="confidence_threshold"),
    path("confidence/<str:doctype>/refit/", confidence.confidence_refit_view, name="confidence_refit"),
]
