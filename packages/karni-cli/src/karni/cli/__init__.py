"""The `karni` command line."""
