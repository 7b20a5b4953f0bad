"""Events and the venues that host them."""

from django.db import models
from karni.models import BaseModel, SoftDeleteModel


class EventStatus(models.TextChoices):
    DRAFT = "draft"
    PUBLISHED = "published"
    CANCELLED = "cancelled"


class Venue(BaseModel):
    name = models.CharField(max_length=200)
    address = models.CharField(max_length=300)
    capacity = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)


class Event(SoftDeleteModel):
    title = models.CharField(max_length=200)
    starts_at = models.DateTimeField()
    capacity = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=EventStatus.choices)
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="events")
    description = models.TextField(blank=True)
    created_by = models.ForeignKey("accounts.User", on_delete=models.PROTECT)

    class Meta:
        ordering = ("starts_at",)
