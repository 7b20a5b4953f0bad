"""A local, model-free historian for coding-agent transcripts."""
