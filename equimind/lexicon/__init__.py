"""Every word list and catalogue the stages read, each in one place with its source stated (XBRL concept map,
accounting formulas, SEC form names, Loughran-McDonald lists, hand-written English question and reporting words),
and the text primitives (the one token pattern, sentence spans, question words).
"""
