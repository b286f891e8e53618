"""URLs of the document types admins define."""

from django.urls import path

from reviewer.types import views as doctypes

urlpatterns: list = [
    path("types/", doctypes.doctype_list, name="doctype_list"),
    path("types/new/", doctypes.doctype_edit, name="doctype_new"),
    path("types/<slug:name>/", doctypes.doctype_edit, name="doctype_edit"),
    path("types/<slug:name>/yaml/", doctypes.doctype_export, name="doctype_export"),
]
