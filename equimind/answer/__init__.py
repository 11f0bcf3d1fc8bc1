"""The answer path (issue 14): a direct, cited answer to a specific ask, or a refusal that says why.

``Answerer`` (answerer.py) is the entry point; ``Answer`` (record.py) the record it returns. Question analysis in
question.py / periods.py, the XBRL answerer in xbrl_answer.py / fiscal.py / concepts.py (the documented concept
map), the extractive answerer in extract.py / units.py / values.py, the LLM answerer in llm_answer.py.
"""

from equimind.answer.record import Answer, RefusalReason, Support
from equimind.query.kinds import AnswerKind

__all__ = ["Answer", "AnswerKind", "RefusalReason", "Support"]
