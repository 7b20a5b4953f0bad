"""Helpers behind ``scripts/release`` and ``scripts/check-ranges`` (standard library only)."""
