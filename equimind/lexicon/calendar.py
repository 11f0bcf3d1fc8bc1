"""Calendar words: the month names every parser of dates and periods reads (English, hand-written)."""

from __future__ import annotations

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
