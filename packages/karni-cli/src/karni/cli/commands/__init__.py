"""The ``karni`` subcommands, one module each; see :mod:`karni.cli.main`."""
