"""Several crawl workers over Redis: membership, and the exchange of discovered links.

Each worker is a whole crawl (fetcher, parser, JE frontier and seen table, resumable from its
state folder); the cluster only decides which worker fetches which URL. See `protocol`.
"""
