"""Condensing: settled messages become compartments and facts.

The chunk builder turns stored messages into the historian's input, a historian
(the built-in extractive one, or a model) writes XML, the XML is parsed and
validated against the chunk, and the runner publishes the result to the store.
"""
