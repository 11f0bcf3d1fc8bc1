"""The application: ``Services`` (the one dependency container), the engine facade behind every interface and the
wiring of one research run.
"""
