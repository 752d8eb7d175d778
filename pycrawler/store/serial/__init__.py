"""Java serialization as JE's ``SerialBinding`` stores it, read and written in pure Python.

``com.sleepycat.bind.serial.SerialBinding`` writes a value with ``ObjectOutputStream``
(stream protocol version 2, the java.io "Object Serialization Stream Protocol") with two
changes, both undone here:

* the 4-byte stream header (``AC ED 00 05``) is dropped from every stored value;
* a class descriptor is not written inline: after ``TC_CLASSDESC`` comes one byte (the
  length of the class ID) and the class ID, then the usual end of the (empty) class
  annotations and the superclass descriptor. The ID names a record of the class catalog
  (:mod:`pycrawler.store.catalog`), which holds the descriptor as an ordinary stream.

The decoder (:mod:`.decoder`) turns a value into plain Python *from the descriptors alone*: no Java class of
the record is ever loaded or run, so values from other people's stores are safe to read.
Objects become :class:`~.stream.JavaObject` (a dict of field name -> value with an ``"@class"``
entry), arrays lists (``byte[]`` bytes), strings ``str``, boxed primitives numbers, enums
their constant's name, ``java.util.Date`` an aware UTC ``datetime`` and
``java.sql.Timestamp`` a :class:`~.stream.JavaTimestamp` (which keeps the nanoseconds). The common
``java.util`` collections become lists, dicts and sets (:class:`~.stream.JavaSet`, in the stream's
order), decoded from what their ``writeObject`` methods write. Whatever else a ``writeObject`` method wrote stays under the
key ``"@data"``: a list of :class:`~.stream.BlockData` (its primitive writes) and decoded objects.

The encoder (:mod:`.encoder`) writes the few shapes pycrawler needs to create stores that Java programs
read with ``SerialBinding``: ``String`` values, and objects of a flat class whose fields
are primitives, ``String``, ``java.util.Date``, ``java.sql.Timestamp`` or ``String[]``
(:func:`~.encoder.java_class` describes such a class exactly as ``java.io.ObjectStreamClass`` does).

The stream's constants, class descriptors and decoded values are :mod:`.stream`; its strings,
:mod:`.modified_utf8`; what the known JDK classes' ``writeObject`` data mean,
:mod:`.known_classes`.
"""
