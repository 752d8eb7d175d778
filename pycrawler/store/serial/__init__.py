"""Java serialization as JE's ``SerialBinding`` stores it, read and written in pure Python."""
