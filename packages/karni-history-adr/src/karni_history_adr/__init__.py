"""A history provider for Architecture Decision Records."""
