"""The TODO side of a crawler: frontiers of URLs waiting to be fetched.

:mod:`.protocol` defines the TODO protocol (the book's ``putUrl`` / ``getNext`` with batch
forms); :mod:`.todo` is pycrawler's JE frontier, :mod:`.book` reads and writes the seed
book's ``BDBFrontier`` layout, :mod:`.workqueues` is Heritrix's politeness frontier of per-site
work queues, and :mod:`.layouts` opens whichever a store holds.
"""
