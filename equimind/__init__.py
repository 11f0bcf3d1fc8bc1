"""EquiMind: evidence-first equity research over SEC filings and market data."""

__version__ = "0.1.0"
