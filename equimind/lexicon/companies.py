"""Words of company names: the legal-form designations that end a registrant's name and name no company.

Source: hand-written from the registrant titles of the SEC ticker map (``company_tickers.json``: "Apple Inc.",
"NVIDIA CORP", "Best Buy Co., Inc.", "ARM HOLDINGS PLC /UK", "Meta Platforms, Inc."): the forms of incorporation of
US and foreign registrants. ``LEGAL_FORMS`` is the base every reader of company names drops; each reader adds, next
to its own use and with its reason, the other name words it also drops (``query.analysis.LEGAL_SUFFIXES``,
``query.company``'s trailing words, ``query.filters``' alias suffixes).
"""

from __future__ import annotations

from equimind.lexicon.text import wordset

LEGAL_FORMS = wordset("inc incorporated corp corporation co company ltd limited plc llc lp sa ag nv holdings group")
