"""Bull / Bear / Judge: the offline analyst (text cues, figure rules), the LLM rounds and the judge rule that always
decides the rating.
"""
