"""The historian's XML: parse and validate (documented address).

The code lives in :mod:`karni_historian.condense.compartment_xml`; this module keeps the
address the README documents, so code written against it keeps working.
"""

from __future__ import annotations

from karni_historian.condense.compartment_xml import HistorianOutputError, parse, validate

__all__ = ["HistorianOutputError", "parse", "validate"]
