"""The model-backed historian: a chain of models in place of ``local/extractive``.

- :mod:`.entries`: a model id (``backend/model``) and the settings of its calls;
- :mod:`.settings`: which chain a harness uses (harness blocks, profiles, defaults);
- :mod:`.backends`: one call to one model, looking its backend up by name:
  :mod:`.anthropic_api`, :mod:`.openai_api` or :mod:`.claude_code` (SDKs
  imported only there), each built on :mod:`.calling`;
- :mod:`.prompt`: the prompts (first draft, repair, editor);
- :mod:`.chain`: retries, repair, fallbacks and ``two_pass`` (the runner's hook);
- :mod:`.redaction` and :mod:`.dumps`: secrets out, failures kept;
- :mod:`.session` and :mod:`.check`: wiring for ``run``/``wrapup`` and ``models check``.

Nothing is imported here, so importing a submodule costs only that submodule.
See ``docs/how-to/historian-model.md``.
"""
