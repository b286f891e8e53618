"""URLs of the review desk."""

from django.urls import path

from reviewer.desk import pages, queue
from reviewer.desk import views as desk

urlpatterns: list = [
    path("queue/", queue.queue, name="queue"),
    path("queue/next/", queue.queue_next, name="queue_next"),
    path("documents/<int:document_id>/", desk.document_desk, name="desk_document"),
    path("documents/<int:document_id>/proof/", desk.document_proof, name="desk_proof"),
    path("documents/<int:document_id>/edit/", desk.field_edit, name="desk_edit"),
    path("documents/<int:document_id>/take/", desk.field_take, name="desk_take"),
    path("documents/<int:document_id>/presence/", desk.document_presence, name="desk_presence"),
    path("documents/<int:document_id>/verify/", desk.document_verify, name="desk_verify"),
    path("documents/<int:document_id>/reject/", desk.document_reject, name="desk_reject"),
    path("documents/<int:document_id>/claim/", desk.document_claim, name="desk_claim"),
    path("documents/<int:document_id>/release/", desk.document_release, name="desk_release"),
    path("documents/<int:document_id>/send-back/", desk.document_send_back, name="desk_send_back"),
    path("documents/<int:document_id>/history/", desk.document_history, name="desk_history"),
    path("documents/<int:document_id>/pages/<int:number>/image/", pages.page_image, name="desk_page_image"),
    path("documents/<int:document_id>/pages/<int:number>/annotated/", pages.page_annotated, name="desk_page_annotated"),
]
