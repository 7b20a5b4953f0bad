"""URL routes: the admin and the REST API."""

from apps.events.viewsets import EventViewSet, VenueViewSet
from apps.tickets.viewsets import OrderViewSet, TicketTypeViewSet
from django.contrib import admin
from django.urls import include, path
from rest_framework.routers import DefaultRouter

router = DefaultRouter()
router.register("events", EventViewSet)
router.register("venues", VenueViewSet)
router.register("ticket-types", TicketTypeViewSet)
router.register("orders", OrderViewSet)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(router.urls)),
]
