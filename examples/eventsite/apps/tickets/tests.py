from django.test import TestCase


class TicketTypeViewSetTests(TestCase):
    def test_lists_ticket_types(self):
        response = self.client.get("/api/ticket-types/")
        self.assertEqual(response.status_code, 200)
