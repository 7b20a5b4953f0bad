"""The events API."""

from karni.api import BaseViewSet

from .models import Event, Venue


class EventViewSet(BaseViewSet):
    queryset = Event.objects.all()
    search_fields = ("title",)


class VenueViewSet(BaseViewSet):
    queryset = Venue.objects.all()
