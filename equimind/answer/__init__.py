"""The answer path (issue 14, issue 27): a direct, cited answer to a specific ask, or a refusal that says why.

``Answerer`` (answerer.py) is the entry point: it takes a ``ParsedQuestion`` (``query/parsed.py``) and runs the
ordered strategy chain (strategies.py): computed figures (computed.py, figures.py, lines.py), XBRL reported lines
(xbrl_answer.py, fiscal.py), the LLM answerer (llm_answer.py), the extractive answerer (extract.py, units.py,
values.py, similarity.py, acronyms.py) and the lookups over the whole retrieved filings. The answerability refusal
is answerability.py (term_index.py); ``Answer`` (record.py) the record it returns.
"""

from equimind.answer.record import Answer, RefusalReason, Support

__all__ = ["Answer", "RefusalReason", "Support"]
