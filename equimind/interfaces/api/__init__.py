"""The REST API and dashboard host: ``app`` (factory, lifespan, pages, server), ``deps`` (engine, ticker, as-of),
``errors`` (the one exception → HTTP status table), one router module per resource, and ``models`` (the bodies)."""
