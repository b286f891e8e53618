"""URLs of the review desk."""

urlpatterns: list = []
