"""The site's user: Karni's user with a display name."""

from django.db import models
from karni.auth.models import AbstractKarniUser


class User(AbstractKarniUser):
    display_name = models.CharField(max_length=100)
    phone = models.CharField(max_length=30, blank=True)
    is_staff = models.BooleanField(default=False)
