"""Modified UTF-8, the strings of ``DataOutput.writeUTF`` (JE's ``UtfOps`` writes the same
bytes): U+0000 as ``C0 80``, and a character beyond the BMP as its two UTF-16 surrogates."""

from __future__ import annotations

import re

from ...errors import BadInput

_SURROGATES = re.compile("[\ud800-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def decode_modified_utf8(raw: bytes, where: str = "string") -> str:
    if raw.isascii():
        return raw.decode("ascii")
    try:
        text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where}: not modified UTF-8 ({exc.reason} at byte {exc.start})") from None
    if _SURROGATES.search(text):
        # Java writes a supplementary character as its two UTF-16 surrogates: pair them up.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def encode_modified_utf8(text: str) -> bytes:
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    units = _ASTRAL.sub(lambda m: _surrogate_pair(m.group()), text)
    return units.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


def _surrogate_pair(char: str) -> str:
    code = ord(char) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))
