"""The ``equimind`` command line: ``app`` (the Typer app and shared options), one module per command family, and
``main`` (registers them all; the console script's entry point)."""
