"""Calendar words: the month names every parser of dates and periods reads (English, hand-written).

``MONTH_ABBREVIATIONS``: the short forms filings and questions write ("Sept. 30, 2024", "Jan 26, 2025"); "may" has
none. Read by the period parser (``query.periods``), the year filter (``query.filters``) and the sentence splitter
(a period after one does not end a sentence: ``lexicon.text.split_prose_sentences``).
"""

from __future__ import annotations

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
