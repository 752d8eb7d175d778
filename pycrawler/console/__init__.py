"""The operator's console: a web page and Prometheus metrics for a crawl (docs/console.md).

``pycrawler crawl ... --console [HOST:]PORT`` serves it from the crawl's own event loop while
the crawl runs (:class:`~.server.ConsoleServer` over :class:`~.figures.LiveFigures`);
``pycrawler console STATE`` serves the same page, read-only, for a stopped crawl
(:class:`~.stopped.StoppedFigures`). The parts:

- :mod:`.access`: the listening address, the token file, which requests are let in;
- :mod:`.crawl_log`: response codes, MIME types, hosts and the rate over time, tallied from
  crawl.log (the same reading serves a running and a stopped crawl);
- :mod:`.figures`: the figures of a running crawl, read at most once a second;
- :mod:`.metrics`: the figures in Prometheus' text format (``prometheus_client``);
- :mod:`.server`: the aiohttp application: the page, its JSON, ``/metrics`` and the actions;
- ``static/``: the page (plain HTML and JavaScript) and uPlot, the chart library, with its licence.
"""
