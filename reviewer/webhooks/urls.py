from django.urls import path

from reviewer.webhooks import views

urlpatterns = [
    path("", views.webhook_list, name="webhook_list"),
    path("<int:endpoint_id>/", views.webhook_detail, name="webhook_detail"),
    path("<int:endpoint_id>/active/", views.webhook_toggle, name="webhook_toggle"),
    path("<int:endpoint_id>/delete/", views.webhook_delete, name="webhook_delete"),
    path("<int:endpoint_id>/deliveries/<int:delivery_id>/replay/", views.webhook_replay, name="webhook_replay"),
]
