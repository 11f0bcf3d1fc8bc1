"""The question, understood once: ``parsed.QuestionParser.parse`` -> ``ParsedQuestion`` (company, subjects, ask kind,
answer kind, metric, computed figure, periods, shaped retrieval query); plus the search command's auto filter.
"""
