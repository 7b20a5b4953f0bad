"""karni.agent.common.jsontext: json.loads's answers, json.dumps's text, without json."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from karni.agent.common.jsontext import dumps, loads

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


VALUES = [
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "## a\n- b"}},
    {"claude-code s-1": [1764590000.123456, ["apps/models.py", "caf\u00e9.py"]], "x": [0, None]},
    ['quote " backslash \\ tab \t nul \x00 emoji \U0001f600 lone \ud800', "", "\u2028"],
    [True, False, None, 0, -1, 10**30, 0.1, -0.0, 1e300, 5e-324, 3.0],
    [math.nan, math.inf, -math.inf],
    ({"a": ()}, [[[]]], {}),
    "just a string",
    7,
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("compact", [False, True])
def test_the_same_text_as_json_dumps(value: object, compact: bool) -> None:
    expected = json.dumps(value, separators=(",", ":") if compact else None)
    assert dumps(value, compact=compact) == expected


@pytest.mark.parametrize("value", [{1: "a"}, {"a": {b"b": 1}}, [object()], {"a": {1, 2}}, b"x"])
def test_what_is_not_plain_data_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError):
        dumps(value)


def test_reading_a_document_imports_neither_json_nor_re() -> None:
    probe = (
        "import sys\n"
        "from karni.agent.common.jsontext import dumps, loads\n"
        "assert loads('{\"a\": [1, \"b\"]}') == {'a': [1, 'b']}\n"
        "assert dumps({'a': [1, 'b']}) == '{\"a\": [1, \"b\"]}'\n"
        "print(sorted({'json', 're'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


@pytest.mark.parametrize("text", ["{", '{"a": 1', "[1,]", '{"a" 1}', '["open', "{not json"])
def test_a_broken_document_is_a_value_error_before_json_is_imported(text: str) -> None:
    """The C scanner's own error class lives in `json.decoder`; it is loaded only to say so."""
    probe = (
        "import sys\n"
        "from karni.agent.common.jsontext import loads\n"
        "try:\n"
        f"    loads({text!r})\n"
        "except ValueError:\n"
        "    print('ValueError')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "ValueError\n"


def test_without_the_c_scanner_json_reads_the_document() -> None:
    probe = (
        "import sys\n"
        "sys.modules['_json'] = None\n"  # `import _json` fails, as on an interpreter without it
        "from karni.agent.common import jsontext\n"
        "print(jsontext.load_scanner(), jsontext.loads(sys.argv[1]), 'json' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, '{"a": [1, 2.5]}'], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "None {'a': [1, 2.5]} True\n"
