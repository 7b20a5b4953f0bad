"""karni.agent.common.config_cache: a file's text parsed once is read back without tomllib."""

from __future__ import annotations

import math
import sys
import tomllib
from pathlib import Path

import pytest
from karni.agent.common.cache import cache_file
from karni.agent.common.config import parse_config, read_config
from karni.agent.common.config_cache import MAX_CACHED_TEXT, TAG, cached_document
from karni.agent.common.errors import ConfigFileError

TEXT = """\
suggest_tools = false
ratio = 0.25
big = 123456789012345678901234567890
"not a bare key" = "é ☃ \\u0000 \\"quoted\\""

[historian.claude_code]
model = "anthropic/claude-haiku-4-5"
fallbacks = ["a/b", "c/d"]

[[profiles.fast.historian.chain]]
model = { name = "x/y", timeout = 30 }
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture
def without_tomllib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import tomllib`` fail: a parse that needs it raises ImportError."""
    monkeypatch.setitem(sys.modules, "tomllib", None)


def test_a_parsed_text_is_read_back_the_same_without_tomllib(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = read_config(str(config))
    assert first == tomllib.loads(TEXT)
    monkeypatch.setitem(sys.modules, "tomllib", None)
    again = read_config(str(config))
    assert again == first
    assert list(again) == list(first)  # key order too
    assert type(again["ratio"]) is float and type(again["big"]) is int
    assert again is not first  # each caller gets its own document


def test_a_changed_text_is_parsed_again(config: Path) -> None:
    read_config(str(config))
    config.write_text(TEXT.replace("false", "true", 1), encoding="utf-8")
    assert read_config(str(config))["suggest_tools"] is True


def test_the_cache_holds_only_the_exact_text(config: Path, without_tomllib: None) -> None:
    with pytest.raises(ImportError):
        read_config(str(config))  # never parsed: nothing cached yet
    assert cached_document(str(config), TEXT) is None


def test_invalid_toml_is_never_remembered(config: Path) -> None:
    config.write_text("model = [unclosed\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ConfigFileError, match="is not valid TOML"):
            read_config(str(config))
    assert cached_document(str(config), "model = [unclosed\n") is None


def test_floats_json_cannot_spell_round_trip(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a = nan\nb = inf\nc = -inf\nd = -0.0\ne = 1e300\n"
    first = parse_config(str(config), text)
    monkeypatch.setitem(sys.modules, "tomllib", None)
    again = parse_config(str(config), text)
    assert math.isnan(again["a"]) and again["b"] == math.inf and again["c"] == -math.inf
    assert math.copysign(1.0, again["d"]) == -1.0 and again["e"] == first["e"]


def test_dates_are_parsed_every_time(config: Path) -> None:
    text = "when = 2026-12-01T10:00:00Z\n"
    document = parse_config(str(config), text)
    assert document["when"].year == 2026
    assert cached_document(str(config), text) is None


@pytest.mark.parametrize(
    "body",
    ["not json", '["other text", {}]', "[{}, {}]", '["x"]', "[1, 2, 3]"],
)
def test_an_unusable_cache_file_means_parse(config: Path, body: str) -> None:
    path = cache_file("config", str(config))
    assert path is not None
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    encoded = body.encode()
    Path(path).write_bytes(f"{TAG}\t{len(encoded)}\n".encode() + encoded)
    assert read_config(str(config)) == tomllib.loads(TEXT)


def test_a_long_text_is_not_cached(config: Path) -> None:
    text = "a = 1\n" + "# padding\n" * (MAX_CACHED_TEXT // 10 + 1)
    assert parse_config(str(config), text) == {"a": 1}
    assert cached_document(str(config), text) is None
    path = cache_file("config", str(config))
    assert path is not None and not Path(path).exists()


def test_no_cache_folder_means_no_cache(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARNI_CACHE_DIR", "")
    assert read_config(str(config)) == tomllib.loads(TEXT)
    assert cached_document(str(config), TEXT) is None
