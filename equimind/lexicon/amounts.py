"""Scale words of written amounts ("$95.0 billion", "(In millions)"): English number words, hand-written."""

from __future__ import annotations

SCALES = {"thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
          "trillion": 1e12, "trillions": 1e12, "mn": 1e6, "bn": 1e9}
