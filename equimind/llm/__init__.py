"""LLM providers (pydantic-ai models), one call's failure classes and accounting, structured output with validate ->
retry -> fallback, and the versioned prompts.
"""
