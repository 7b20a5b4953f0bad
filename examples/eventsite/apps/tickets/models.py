"""Ticket types, orders and the tickets they issue."""

from django.db import models
from karni.models import BaseModel


class Priced(BaseModel):
    """Anything sold for a price; abstract, so it has no table of its own."""

    price = models.DecimalField(max_digits=8, decimal_places=2)
    currency = models.CharField(max_length=3, default="EUR")

    class Meta:
        abstract = True


class TicketType(Priced):
    event = models.ForeignKey("events.Event", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    quantity = models.PositiveIntegerField()


class Order(BaseModel):
    buyer = models.ForeignKey("accounts.User", on_delete=models.PROTECT)
    status = models.CharField(max_length=20, default="pending")
    total = models.DecimalField(max_digits=10, decimal_places=2)
    updated_at = models.DateTimeField(auto_now=True)


class Ticket(BaseModel):
    id = models.UUIDField(primary_key=True)
    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="tickets")
    ticket_type = models.ForeignKey(TicketType, on_delete=models.PROTECT)
    code = models.CharField(max_length=12, unique=True)
    checked_in_at = models.DateTimeField(null=True, blank=True)
