"""fastjson gives the same objects through orjson and through its stdlib fallback."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from karni_historian import fastjson
from karni_historian.ingest import ingest
from karni_historian.ingest.claude_code import project_key
from karni_historian.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = "7d3e2a10-5c4b-4f1e-9a2d-3b8c6e1f0a42"

LINES = [
    b'{"type":"user","message":{"content":"caf\\u00e9 \xe2\x98\x95 \\n\\t"},"n":[1,2.5,-0.0,1e-7]}',
    b'{"a":1,"a":2}',
    b" [true, false, null] ",
    b'"\\u0000\\u2028"',
    b"18446744073709551615",  # the largest integer orjson reads as one
    b"18446744073709551616",  # one more: orjson would read a float
    b"-9223372036854775809",
    b'{"id":"msg_0123456789012345678901234"}',  # a long run of digits inside a string
    b'{"x":NaN,"y":-Infinity}',
    b"1e400",
    b'"\\ud83d"',  # an escaped lone surrogate
    b'\xef\xbb\xbf{"bom":true}',
    '{"wide": "\u00e9"}'.encode("utf-16"),
    b"[" * 200 + b"]" * 200,
]

MALFORMED = [
    b"",
    b"   ",
    b"{",
    b'{"a":}',
    b"\x00{}",
    b'"\xff"',
    b"[1,]",
    b"nul",
    b"[" * 5000 + b"]" * 5000,
]


@pytest.fixture
def stdlib_only(monkeypatch):
    """fastjson as it runs without the speedups extra."""
    monkeypatch.setattr(fastjson, "_orjson_loads", None)
    monkeypatch.setattr(fastjson, "_orjson_dumps", None)


def _same(first, second):
    """Equal, with NaN equal to NaN and ints told apart from floats."""
    if isinstance(first, float) and math.isnan(first):
        return isinstance(second, float) and math.isnan(second)
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(_same(first[k], second[k]) for k in first)
    if isinstance(first, list):
        return len(first) == len(second) and all(map(_same, first, second))
    return first == second


def _decoded(lines):
    results = []
    for line in lines:
        try:
            results.append(fastjson.loads(line))
        except ValueError as error:
            results.append(type(error))
    return results


def test_orjson_is_used_in_the_workspace():
    assert fastjson.ACCELERATED and fastjson._orjson_loads is not None


def test_decoding_matches_the_standard_library_with_and_without_orjson(monkeypatch):
    expected = [json.loads(line) for line in LINES]
    accelerated = _decoded(LINES)
    monkeypatch.setattr(fastjson, "_orjson_loads", None)
    fallback = _decoded(LINES)
    for line, want, fast, slow in zip(LINES, expected, accelerated, fallback, strict=True):
        assert _same(want, fast) and _same(want, slow), line
    assert accelerated[5] == 18446744073709551616 and isinstance(accelerated[5], int)


def _decoded_as_a_group(lines):
    """What ingest does with a group of lines: one decoder, then loads for what it refuses."""
    decode = fastjson.loads_for(lines)
    results = []
    for line in lines:
        try:
            results.append(decode(line))
        except ValueError:
            try:
                results.append(fastjson.loads(line))
            except ValueError as error:
                results.append(type(error))
    return results


def test_a_group_of_lines_decodes_as_each_line_alone():
    for lines in (LINES, MALFORMED, [line for line in LINES if b"4467" not in line]):
        got = _decoded_as_a_group(lines)
        assert all(map(_same, got, _decoded(lines))), lines


def test_a_group_takes_orjson_only_without_a_long_run_of_digits():
    plain = [b'{"n":184467440737095516}', b'{"id":"msg_01"}']
    assert fastjson.loads_for(plain) is fastjson._orjson_loads
    assert fastjson.loads_for([*plain, b"18446744073709551616"]) is fastjson.loads
    # digits split by a line break are two short runs, not one long one
    assert fastjson.loads_for([b"[1234567890]", b"[123456789]"]) is fastjson._orjson_loads


def test_malformed_input_raises_value_error_either_way(monkeypatch):
    for line in MALFORMED:
        with pytest.raises(ValueError):
            fastjson.loads(line)
    monkeypatch.setattr(fastjson, "_orjson_loads", None)
    for line in MALFORMED:
        with pytest.raises(ValueError):
            fastjson.loads(line)


VALUES = [
    [{"type": "text", "text": 'café ☕\n\u2028\x00\x1f"\\/', "ignored": True}],
    [{"type": "tool", "name": "Edit", "input": {"n": [1, -2, 3.25, -0.0], "ok": None}}],
    {"big": 2**70, "small": -(2**63)},
    [],
]


def test_encoding_is_compact_and_the_same_either_way(stdlib_only):
    fallback = [fastjson.dumps(value) for value in VALUES]
    assert fallback[0] == json.dumps(VALUES[0], ensure_ascii=False, separators=(",", ":"))
    assert all(json.loads(text) == value for text, value in zip(fallback, VALUES, strict=True))


def test_orjson_writes_the_bytes_the_fallback_writes(monkeypatch):
    accelerated = [fastjson.dumps(value) for value in VALUES]
    monkeypatch.setattr(fastjson, "_orjson_dumps", None)
    assert accelerated == [fastjson.dumps(value) for value in VALUES]


def test_non_finite_floats_are_null_with_orjson_and_read_back_either_way(monkeypatch):
    value = [1.5, math.inf, math.nan]
    assert fastjson.dumps(value) == "[1.5,null,null]"
    monkeypatch.setattr(fastjson, "_orjson_dumps", None)
    text = fastjson.dumps(value)
    assert text == "[1.5,Infinity,NaN]"
    decoded = fastjson.loads(text.encode())
    assert decoded[1] == math.inf and math.isnan(decoded[2])


def test_a_lone_surrogate_is_encoded_by_the_standard_library():
    assert fastjson.dumps(["\ud83d"]) == '["\ud83d"]'


def test_without_orjson_installed_the_module_falls_back():
    probe = (
        "import sys; sys.modules['orjson'] = None\n"
        "from karni_historian import fastjson\n"
        "print(fastjson.ACCELERATED, fastjson.dumps({'a': [1, 'é']}), fastjson.loads(b'[1]'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    assert out.split() == ["False", '{"a":[1,"é"]}', "[1]"]


def _ingested(root, transcript):
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(str(root))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{SESSION}.jsonl").write_text(transcript.replace("__PROJECT__", str(root)))
    with Store.open(root, create=True) as store:
        ingest(store, root)
        rows = store.connection.execute(
            "SELECT ordinal, role, parts_json, timestamp, message_id FROM raw_messages"
            " ORDER BY ordinal"
        ).fetchall()
        files = store.connection.execute("SELECT * FROM message_files ORDER BY 1, 2, 3").fetchall()
    return [tuple(str(v).replace(str(root), "ROOT") for v in row) for row in rows], files


def test_ingest_stores_the_same_bytes_with_and_without_orjson(tmp_path, user_folders, monkeypatch):
    transcript = (FIXTURES / "claude_code_session.jsonl").read_text(encoding="utf-8")
    transcript += '{"type":"user","uuid":"nan-1","sessionId":"s","message":{"content":[{"type":'
    transcript += '"tool_result","tool_use_id":"x","content":"n"}]},"toolUseResult":{"n":NaN}}\n'
    stores = []
    for name in ("fast", "slow"):
        root = tmp_path / name
        root.mkdir()
        (root / "manage.py").write_text("")
        if name == "slow":
            monkeypatch.setattr(fastjson, "_orjson_loads", None)
            monkeypatch.setattr(fastjson, "_orjson_dumps", None)
        stores.append(_ingested(root, transcript))
    assert len(stores[0][0]) > 20 and stores[0][1]
    assert stores[0] == stores[1]
