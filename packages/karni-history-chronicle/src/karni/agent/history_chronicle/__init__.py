"""The Karni history provider for Gigai Chronicle."""
