"""The ticketing API: ticket types are public, orders belong to their buyer."""

from karni.api import BaseViewSet
from rest_framework import viewsets

from .models import Order, TicketType


class TicketTypeViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = TicketType.objects.all()


class OrderViewSet(BaseViewSet):
    queryset = Order.objects.all()

    def get_queryset(self):
        return super().get_queryset().filter(buyer=self.request.user)
