"""The research run: the DB-first agentic loop (loop.py), on-demand fetch (fetch.py), the conclusion (conclude.py),
its typed state (state.py) and progress events (events.py); run.py wires one run from ``Services``."""
