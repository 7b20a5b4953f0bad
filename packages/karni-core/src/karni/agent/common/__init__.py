"""What every Karni package shares, one small module per concern.

This package imports nothing itself: each caller imports the one module it
needs (``karni.agent.common.root``, ``.config``, ``.cache``, ``.files``, ``.ci``,
``.paths``, ``.ownership``, ``.names``, ``.pipes``, ``.sanitize``), so the hot
path of ``karni context`` pays only for what it uses. Errors are the ones in
:mod:`karni.agent.common.errors`. Standard library only.
"""
