from django.contrib import admin
from karni.admin import KarniModelAdmin

from .models import Event, Venue


@admin.register(Event)
class EventAdmin(KarniModelAdmin):
    list_display = ("title", "starts_at", "status")


@admin.register(Venue)
class VenueAdmin(KarniModelAdmin):
    list_display = ("name", "capacity")
