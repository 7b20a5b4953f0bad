"""Fixtures and a conformance suite for authors of Karni history providers."""
