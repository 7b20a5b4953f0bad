"""A loopback fake model server speaking the Anthropic and OpenAI wire formats."""

from fake_model.server import Drop, Error, FakeModelServer, Hang, Reply, covering_xml

__all__ = ["Drop", "Error", "FakeModelServer", "Hang", "Reply", "covering_xml"]
