"""The core every stage shares: the types per stage (documents, degraded, search, research), config, errors, the
injectable protocols, the as-of guard (timeguard), the citation check and the bounded LRU cache. Imports nothing above.
"""
