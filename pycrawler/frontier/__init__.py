"""The TODO side of a crawler: frontiers of URLs waiting to be fetched.

:mod:`.protocol` defines the TODO protocol (the book's ``putUrl`` / ``getNext`` with batch
forms); :mod:`.todo` is pycrawler's JE frontier, :mod:`.book` reads and writes the seed
book's ``BDBFrontier`` layout, and :mod:`.layouts` opens whichever a store holds.
"""
