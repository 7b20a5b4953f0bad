"""karni.agent.common.jsontext: json.loads's answers without importing json."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from karni.agent.common.jsontext import loads

DOCUMENTS = [
    '{"apiVersion": 1, "command": "context", "data": {"prompts": []}}',
    ' \n [1, 2.5, -3e4, true, false, null, "caf\\u00e9", "tab\\t"] \r\n',
    '"just a string"',
    "12",
    "{}",
    '{"a": {"b": [{}, []]}, "a2": "repeated key", "a2": "last wins"}',
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_same_value_as_json_loads(text: str) -> None:
    assert loads(text) == json.loads(text)
    assert repr(loads(text)) == repr(json.loads(text))


def test_the_constants_json_accepts() -> None:
    value = loads("[NaN, Infinity, -Infinity]")
    assert math.isnan(value[0]) and value[1:] == [math.inf, -math.inf]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "{", '{"a": 1} trailing', "[1,]", '"\x01"', "nan", '{"a" 1}', '"open', "'x'"],
)
def test_what_json_refuses_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        loads(text)


def test_reading_a_document_imports_neither_json_nor_re() -> None:
    probe = (
        "import sys\n"
        "from karni.agent.common.jsontext import loads\n"
        "assert loads('{\"a\": [1, \"b\"]}') == {'a': [1, 'b']}\n"
        "print(sorted({'json', 're'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
