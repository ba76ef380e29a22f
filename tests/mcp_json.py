"""JSON for the MCP servers written by hand: ``json.loads`` and ``json.dumps``, fast to import.

``import json`` also imports ``re`` and ``enum`` (for its pure-Python fallbacks): 6 ms, half of
what a hand-written server takes to start, and the tests start two dozen of them, each one in
the way of a test. The C functions that do the work behind ``json.loads`` and ``json.dumps``
(CPython's ``_json``) need neither; they are set up here as ``json`` sets them up by default,
and checked on a sample. Where they are missing or differ (another Python), ``json`` is used.
This module imports nothing else (not even ``typing``), for the same reason.

A server run with ``python -I`` does not have its own folder on ``sys.path``: it adds it, then
``from mcp_json import dumps, loads``.
"""

__all__ = ["dumps", "loads"]


class _Decoder:
    """The settings json's C scanner reads: those of a default ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity


def _fast() -> tuple[object, object]:
    """``loads`` and ``dumps`` built on ``_json``; an error if it is missing or differs."""
    import _json

    scan = _json.make_scanner(_Decoder())
    # markers, default, encoder, indent, separators, sort_keys, skipkeys, allow_nan: as dumps
    encode = _json.make_encoder(
        None, None, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )

    def loads(text: str) -> object:
        """One JSON value, with nothing but white space around it."""
        text = text.strip()
        try:
            value, end = scan(text, 0)
        except StopIteration:
            raise ValueError(f"not JSON: {text[:60]!r}") from None
        if end != len(text):
            raise ValueError(f"more than one JSON value: {text[:60]!r}")
        return value

    def dumps(value: object) -> str:
        """``value`` as ``json.dumps(value)`` writes it."""
        return "".join(encode(value, 0))

    if dumps({"a": [1, "é", None, True]}) != '{"a": [1, "\\u00e9", null, true]}':
        raise ValueError("json's C encoder works differently here")
    if loads(' {"a": [1.5, "\\u00e9"]}\n') != {"a": [1.5, "é"]}:
        raise ValueError("json's C scanner works differently here")
    return loads, dumps


try:
    loads, dumps = _fast()
except (ImportError, AttributeError, TypeError, ValueError):  # pragma: no cover
    from json import dumps, loads
