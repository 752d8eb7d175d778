"""A folder of HTML served on loopback and what a perfect crawl of it fetches.

``pycrawler demo`` serves the JDK documentation with :class:`.server.StaticSite` and measures
its crawl's coverage against :func:`.ground_truth.reachable_pages`; the tests and the crawl
benchmarks crawl their sites the same way.
"""
