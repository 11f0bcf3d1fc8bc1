"""Words of question phrasing that say how the answer is framed, not what it is about (hand-written English).

``COMPARE_WORDS``: the words that make a question a comparison ("compare", "versus", "than"), read by question
analysis (a second company named with one of them is a co-subject: ``query.analysis``), by company resolution (the
first company named is the subject: ``query.company``) and by the answer path (two periods compared:
``query.question``). ``COMPARATIVES``: the comparative adjectives and adverbs that compare two periods or companies
("larger", "faster", "more"). ``SPEND_WORDS``: the verbs and nouns of paying out ("How much did X spend on ...",
"what did it pay"): the amount asked is the size of an outflow, stated positive however a cash-flow statement prints
it (``QuestionAnalysis.outflow``).
"""

from __future__ import annotations

from equimind.lexicon.text import wordset

COMPARE_WORDS = wordset("compare compared comparing comparison versus vs than")
COMPARATIVES = wordset("larger bigger smaller faster slower higher lower more less")
SPEND_WORDS = wordset("spend spends spent spending pay pays paid paying payment payments outlay outlays")
