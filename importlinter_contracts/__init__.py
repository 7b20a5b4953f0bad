"""Import-linter contract types of our own, for rules the built-in ones cannot state."""
