"""Every clause of the historian model configuration, the negative ones included."""

import pytest
from karni_historian.condense.models.settings import (
    ConfigFiles,
    harness_of_source,
    resolve_chain,
    validate_config,
)
from karni_historian.errors import ConfigurationError


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "project" / ".karni").mkdir(parents=True)
    (tmp_path / "xdg" / "karni").mkdir(parents=True)
    return tmp_path


def write(root, *, project="", user=""):
    (root / "project" / ".karni" / "config.toml").write_text(project)
    (root / "xdg" / "karni" / "config.toml").write_text(user)
    return ConfigFiles.load(root / "project")


def chain(files, harness, **kwargs):
    return resolve_chain(files, harness, **kwargs)


def ids(resolved):
    return [entry.model_id for entry in resolved.entries]


def test_a_string_model_with_fallbacks_in_order(root):
    files = write(
        root,
        project="""
[historian.claude_code]
model = "anthropic/claude-haiku-4-5"
fallback_models = [
    "openai/gpt-5-mini", {model = "ollama/qwen3", timeout = 600}, "openai/gpt-5-mini",
]
two_pass = true
""",
    )
    resolved = chain(files, "claude_code")
    assert ids(resolved) == ["anthropic/claude-haiku-4-5", "openai/gpt-5-mini", "ollama/qwen3"]
    assert resolved.entries[2].timeout == 600
    assert resolved.entries[2].endpoint == "http://localhost:11434/v1"
    assert resolved.two_pass is True
    assert resolved.origins == {
        "model": "project",
        "fallback_models": "project",
        "two_pass": "project",
    }


def test_a_table_model_carries_its_settings(root):
    files = write(
        root,
        user="""
[historian.opencode.model]
model = "openai-compatible/llama"
base_url = "http://127.0.0.1:8080/v1/"
api_key_env = "LLAMA_KEY"
max_tokens = 4000
temperature = 0.2
timeout = 90
context_window = 32000
variant = "low"
""",
    )
    (entry,) = chain(files, "opencode").entries
    assert entry.model_id == "openai-compatible/llama"
    assert entry.base_url == "http://127.0.0.1:8080/v1"
    assert (entry.api_key_env, entry.max_tokens, entry.temperature) == ("LLAMA_KEY", 4000, 0.2)
    assert (entry.timeout, entry.context_window, entry.reasoning) == (90, 32000, "low")
    assert entry.origin == "user"


def test_project_over_user_key_by_key(root):
    files = write(
        root,
        user='[historian.pi]\nmodel = "anthropic/a"\ntwo_pass = true\n'
        'fallback_models = ["openai/b"]\n',
        project='[historian.pi]\nmodel = "openai/c"\n',
    )
    resolved = chain(files, "pi")
    assert ids(resolved) == ["openai/c", "openai/b"]
    assert resolved.two_pass is True
    assert resolved.origins == {"model": "project", "fallback_models": "user", "two_pass": "user"}


def test_a_block_without_a_model_configures_nothing(root):
    files = write(
        root,
        project='[historian.pi]\nthinking_level = "high"\ntwo_pass = true\n'
        'fallback_models = ["openai/b"]\n[historian.claude_code]\nmodel = ""\n'
        "[historian.opencode.model]\ntimeout = 60\n",
    )
    for harness in ("pi", "claude_code"):
        assert ids(chain(files, harness)) == ["local/extractive"]
    assert ids(chain(files, "opencode")) == ["local/extractive"]


def test_omp_uses_pi_when_it_has_no_block(root):
    files = write(root, user='[historian.pi]\nmodel = "anthropic/pi-model"\n')
    assert ids(chain(files, "omp")) == ["anthropic/pi-model"]


def test_an_omp_block_without_a_model_does_not_inherit_pi(root):
    files = write(
        root,
        user='[historian.pi]\nmodel = "anthropic/pi-model"\n',
        project='[historian.omp]\nthinking_level = "low"\n',
    )
    assert ids(chain(files, "omp")) == ["local/extractive"]
    assert ids(chain(files, "pi")) == ["anthropic/pi-model"]


def test_an_omp_block_with_a_model_wins(root):
    files = write(
        root,
        user='[historian.pi]\nmodel = "anthropic/pi-model"\n[historian.omp]\nmodel = "openai/o"\n',
    )
    assert ids(chain(files, "omp")) == ["openai/o"]


def test_disable_stops_every_harness(root):
    files = write(
        root,
        user='[historian.claude_code]\nmodel = "anthropic/a"\n',
        project="[historian]\ndisable = true\n",
    )
    for harness in ("claude_code", "opencode", "pi", "omp", None):
        resolved = chain(files, harness)
        assert resolved.disabled
        assert resolved.entries == ()
        assert resolved.origins == {"disable": "project"}


def test_a_project_can_turn_a_user_disable_back_off(root):
    files = write(
        root,
        user="[historian]\ndisable = true\n",
        project='[historian]\ndisable = false\n[historian.claude_code]\nmodel = "anthropic/a"\n',
    )
    assert ids(chain(files, "claude_code")) == ["anthropic/a"]


def test_no_model_means_local_extractive_for_everything_but_opencode(root, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    files = write(root)
    for harness in ("claude_code", "pi", "omp", "codex", "gemini", "aider", None):
        resolved = chain(files, harness, session_model="anthropic/claude-sonnet-4-5")
        assert ids(resolved) == ["local/extractive"]
        assert resolved.is_extractive


def test_opencode_inherits_its_session_model_when_its_key_is_set(root, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    files = write(root)
    resolved = chain(files, "opencode", session_model="anthropic/claude-sonnet-4-5")
    assert ids(resolved) == ["anthropic/claude-sonnet-4-5"]
    assert resolved.entries[0].origin == "session"


def test_opencode_without_the_session_models_key_uses_local_extractive(root):
    files = write(root)
    resolved = chain(files, "opencode", session_model="anthropic/claude-sonnet-4-5")
    assert ids(resolved) == ["local/extractive"]
    assert "has no `ANTHROPIC_API_KEY` set" in resolved.note


def test_opencode_with_an_unreachable_provider_uses_local_extractive(root, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    files = write(root)
    resolved = chain(files, "opencode", session_model="github-copilot/gpt-5")
    assert ids(resolved) == ["local/extractive"]
    assert "cannot be reached" in resolved.note


def test_a_configured_opencode_model_is_used_instead_of_the_session_model(root, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    files = write(root, user='[historian.opencode]\nmodel = "openai/gpt-5-mini"\n')
    resolved = chain(files, "opencode", session_model="anthropic/claude-sonnet-4-5")
    assert ids(resolved) == ["openai/gpt-5-mini"]  # never the session model as a fallback


def test_a_profile_switches_the_models_as_a_group(root):
    files = write(
        root,
        user="""
[historian.claude_code]
model = "anthropic/base"
[profiles.cheap.historian.claude_code]
model = "ollama/qwen3"
fallback_models = []
""",
        project='profile = "cheap"\n',
    )
    resolved = chain(files, "claude_code")
    assert ids(resolved) == ["ollama/qwen3"]
    assert resolved.origins["model"] == "profile cheap"


def test_the_project_still_wins_over_its_profile(root):
    files = write(
        root,
        user='[profiles.cheap.historian.pi]\nmodel = "ollama/qwen3"\ntwo_pass = true\n',
        project='profile = "cheap"\n[historian.pi]\nmodel = "anthropic/project"\n',
    )
    resolved = chain(files, "pi")
    assert ids(resolved) == ["anthropic/project"]
    assert resolved.two_pass is True
    assert resolved.origins["two_pass"] == "profile cheap"


def test_a_project_cannot_define_a_profile(root):
    files = write(root, project='[profiles.mine.historian.pi]\nmodel = "anthropic/x"\n')
    project = root / "project" / ".karni" / "config.toml"
    with pytest.raises(
        ConfigurationError, match="`profiles` can be set only in your user configuration"
    ) as error:
        validate_config(files)
    assert str(project) in str(error.value)


def test_an_unknown_profile_is_an_error_naming_the_file(root):
    files = write(root, project='profile = "missing"\n')
    with pytest.raises(ConfigurationError, match=r"defines no \[profiles.missing\]"):
        chain(files, "pi")


@pytest.mark.parametrize(
    ("harness", "key", "message"),
    [
        (
            "pi",
            "variant",
            "`historian.pi.variant` is not allowed: pi entries take `thinking_level`",
        ),
        (
            "omp",
            "variant",
            "`historian.omp.variant` is not allowed: omp entries take `thinking_level`",
        ),
        (
            "opencode",
            "thinking_level",
            "`historian.opencode.thinking_level` is not allowed: opencode entries",
        ),
        ("claude_code", "variant", "claude_code entries take neither"),
        ("codex", "thinking_level", "codex entries take neither"),
        ("gemini", "variant", "gemini entries take neither"),
        ("aider", "thinking_level", "only Pi and OMP entries take `thinking_level`"),
    ],
)
def test_the_wrong_reasoning_key_is_an_error_naming_it(root, harness, key, message):
    files = write(root, user=f'[historian.{harness}]\nmodel = "anthropic/a"\n{key} = "low"\n')
    with pytest.raises(ConfigurationError, match="only") as error:
        validate_config(files)
    assert message in str(error.value)
    assert str(root / "xdg" / "karni" / "config.toml") in str(error.value)


def test_the_wrong_reasoning_key_inside_an_entry_is_an_error(root):
    files = write(
        root, project='[historian.pi]\nfallback_models = [{model = "openai/b", variant = "x"}]\n'
    )
    with pytest.raises(ConfigurationError, match=r"`historian.pi.fallback_models\[1\].variant`"):
        validate_config(files)


def test_a_wrong_block_anywhere_is_reported_whichever_harness_runs(root):
    files = write(root, project='[historian.opencode]\nmodle = "anthropic/a"\n')
    known = "is not a known setting; known: fallback_models, model"
    with pytest.raises(ConfigurationError, match=rf"`historian.opencode.modle` {known}"):
        chain(files, "claude_code")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('model = "gpt-5"', "is not `backend/model`"),
        ('model = "bedrock/x"', "is not `backend/model`"),
        ('model = "openai-compatible/llama"', "needs a `base_url`"),
        ('model = "local/other"', "the only local model is local/extractive"),
        ('model = "claude-code/--dangerously-skip-permissions"', "may not start with `-`"),
        ('model = "ollama/qwen3 --verbose"', "may not start with `-` or hold spaces"),
        (
            'model = {model = "openai/a", base_url = "ftp://x"}',
            "is not an http:// or https:// URL",
        ),
        ('model = {model = "openai/a", max_tokens = 0}', "must be a whole number"),
        ('model = {model = "openai/a", temperature = 3}', "must be a number from 0 to 2"),
        ('model = {model = "openai/a", timeout = "60"}', "`historian.pi.model.timeout`"),
        ('model = {model = "openai/a", api_key_env = "not a name"}', "environment variable"),
        (
            'model = {model = "openai/a", colour = 1}',
            "`historian.pi.model.colour` is not a known key",
        ),
        ('model = "openai/a"\nthinking_level = "extreme"', "must be one of off, minimal"),
        ('model = "openai/a"\ntwo_pass = "yes"', "`historian.pi.two_pass` must be true or false"),
        (
            'model = "openai/a"\nfallback_models = [""]',
            r"fallback_models\[1\]` = \"\" has no model",
        ),
        ("model = 3", "`historian.pi.model` must be a model id or a table"),
        ("model = {model = 3}", "`historian.pi.model.model` must be a model id, not 3"),
    ],
)
def test_bad_values_are_errors_naming_the_key(root, text, message):
    files = write(root, project=f"[historian.pi]\n{text}\n")
    with pytest.raises(ConfigurationError, match=message):
        validate_config(files)


def test_disable_must_be_a_boolean(root):
    files = write(root, project='[historian]\ndisable = "yes"\n')
    with pytest.raises(
        ConfigurationError, match=r"config.toml: `historian.disable` must be true or false"
    ):
        validate_config(files)


def test_a_malformed_file_is_a_configuration_error(root):
    (root / "project" / ".karni" / "config.toml").write_text("[historian\n")
    with pytest.raises(ConfigurationError, match=r"config\.toml"):
        ConfigFiles.load(root / "project")


def test_fallback_models_may_be_one_string(root):
    files = write(
        root, project='[historian.pi]\nmodel = "openai/a"\nfallback_models = "openai/b"\n'
    )
    assert ids(chain(files, "pi")) == ["openai/a", "openai/b"]


def test_entries_inherit_the_block_reasoning_and_the_default_window(root):
    files = write(
        root,
        project='[historian.pi]\nmodel = "openai/a"\nthinking_level = "high"\n'
        'fallback_models = [{model = "openai/b", thinking_level = "off"}]\n',
    )
    first, second = chain(files, "pi", default_window=64_000).entries
    assert (first.reasoning, second.reasoning) == ("high", "off")
    assert first.context_window == 64_000


@pytest.mark.parametrize(
    ("source", "harness"),
    [
        ("claude-code", "claude_code"),
        ("opencode", "opencode"),
        ("pi", "pi"),
        ("omp", "omp"),
        ("codex", "codex"),
        ("gemini", "gemini"),
        ("aider", "aider"),
    ],
)
def test_sources_map_to_harness_blocks(source, harness):
    assert harness_of_source(source) == harness


@pytest.mark.parametrize("harness", ["codex", "gemini", "aider"])
def test_the_newer_harnesses_have_blocks_of_their_own(root, harness):
    files = write(
        root,
        user='[historian.claude_code]\nmodel = "anthropic/cc"\n',
        project=(
            f'[historian.{harness}]\nmodel = "openai/gpt-5-mini"\n'
            'fallback_models = ["anthropic/claude-haiku-4-5"]\n'
        ),
    )
    assert ids(chain(files, harness)) == ["openai/gpt-5-mini", "anthropic/claude-haiku-4-5"]
    # No block: the built-in historian, never another harness's model.
    assert ids(chain(files, "codex" if harness != "codex" else "gemini")) == ["local/extractive"]


def test_sources_without_a_harness_use_local_extractive(root):
    files = write(root, project='[historian.claude_code]\nmodel = "anthropic/a"\n')
    assert harness_of_source("chronicle") is None
    assert ids(chain(files, harness_of_source("generic"))) == ["local/extractive"]


def test_the_declarations_and_the_loaders_agree_on_defaults_and_backends():
    from karni.agent.common.settings_registry import table_of
    from karni_historian.condense.models.entries import (
        BACKENDS,
        DEFAULT_MAX_TOKENS,
        DEFAULT_TIMEOUT,
    )
    from karni_historian.condense.settings import Settings
    from karni_historian.declared_settings import BACKEND_NAMES, SETTINGS

    table = table_of(SETTINGS)
    defaults = Settings()
    for key in (
        "context_limit",
        "execute_threshold_percentage",
        "history_budget_percentage",
        "historian_context",
        "temporal_awareness",
    ):
        assert table.find(f"historian.{key}").default == getattr(defaults, key), key
    assert tuple(BACKENDS) == BACKEND_NAMES
    entry = table.find("historian.pi.model").kind.kinds[1]
    assert entry.fields["max_tokens"].default == DEFAULT_MAX_TOKENS
    assert entry.fields["timeout"].default == DEFAULT_TIMEOUT


def test_karni_check_rules_and_the_historian_are_one_rule_set(root):
    """A project file the historian rejects is rejected by the shared table, with the same line."""
    from karni.agent.common.config import config_layers
    from karni.agent.common.settings_registry import declarations
    from karni.agent.common.settings_table import validate_layers
    from karni_historian.condense.settings import load_settings

    (root / "project" / ".karni" / "config.toml").write_text(
        "[historian]\nexecute_threshold_percentage = 95\n"
    )
    with pytest.raises(ConfigurationError) as error:
        load_settings(root / "project")
    problems = validate_layers(declarations().table(), config_layers(root / "project"))
    assert [str(problem) for problem in problems] == [str(error.value)]
