"""JSON-safe values: the one encoding of awkward values in every file the project writes.

JSON (RFC 8259 §6) has no NaN and no infinities, and a backend under test produces them
everywhere: an output that is infinite where a finite value is expected gives an infinite
error and an infinite error/tolerance ratio.  Every document we write -- ``results.jsonl``,
``results.json``, the report's embedded data, the submission package's JSON files, coverage
JSON -- therefore follows one encoding:

* a non-finite float is the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (the spelling
  both Python's ``float()`` and JavaScript's ``Number()`` read back);
* every other value is plain JSON: numpy scalars become Python numbers, numpy arrays lists,
  tuples lists, mapping keys strings, bytes text (UTF-8, invalid bytes replaced);
* a string holding a lone surrogate (a backend message decoded with ``surrogateescape``, say)
  has it replaced by U+FFFD, so every file is valid UTF-8;
* integers stay exact in the file, whatever their size (a JavaScript reader sees those beyond
  2**53 rounded; the report writes them as text: :func:`page_safe`).

Readers take numbers with :func:`decode_number`, which also understands the spelling
``"nan"``/``"inf"``/``"-inf"`` that results written before suite 0.3.1 used.

Writing is cheap where nothing is awkward: :func:`dumps` serialises once with
``allow_nan=False`` and only walks the value (:func:`json_safe`) when that fails.  The result
lines (``results.jsonl``, ``results.json``'s cases: one a case of every run) are written by
orjson (:func:`json_line`): the same values, spelt as orjson spells them (UTF-8 text, ``1e-5``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

#: the encoded non-finite floats
NAN, POS_INF, NEG_INF = "NaN", "Infinity", "-Infinity"

_DECODE = {NAN: math.nan, POS_INF: math.inf, NEG_INF: -math.inf,
           "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "+inf": math.inf}

#: integers a JavaScript number holds exactly
JS_SAFE_INT = 2**53


def encode_float(x: float) -> float | str:
    """``x`` itself if finite, else its encoded string (:data:`NAN`, :data:`POS_INF`, :data:`NEG_INF`)."""
    if math.isfinite(x):
        return x
    return NAN if math.isnan(x) else (POS_INF if x > 0 else NEG_INF)


def decode_number(v: Any) -> float | None:
    """A number field as written by any writer of ours: a JSON number, or an encoded non-finite
    float (either spelling); ``None`` for anything else (absent, null, text, bool).

    Returns:
        the value as a Python float (an integer field converted).
    """
    t = type(v)
    if t is float:
        return v
    if t is int:
        return float(v) if abs(v) < 2**1023 else math.copysign(math.inf, v)
    if t is str:
        return _DECODE.get(v)
    return None


def clean_text(s: str) -> str:
    """``s`` with lone surrogates replaced by U+FFFD (every other character kept)."""
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def json_safe(obj: Any, *, js: bool = False) -> Any:
    """``obj`` as plain JSON data in the module's encoding (see the module docstring): a new
    value, ``obj`` is not changed.  Never raises: anything else becomes its ``str()``.

    Args:
        js: also write integers beyond :data:`JS_SAFE_INT` in magnitude as their decimal text, for
            a JavaScript reader (:func:`page_safe`).
    """
    t = type(obj)
    if t is str:
        return clean_text(obj)
    if obj is None or t is bool:
        return obj
    if t is int:
        return str(obj) if js and abs(obj) > JS_SAFE_INT else obj
    if t is float:
        return encode_float(obj)
    if isinstance(obj, dict):
        return {clean_text(k) if isinstance(k, str) else _key(k): json_safe(v, js=js) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v, js=js) for v in obj]
    if isinstance(obj, int):  # a subclass (IntEnum, say)
        return json_safe(int(obj), js=js)
    if isinstance(obj, float):
        return encode_float(float(obj))
    if isinstance(obj, str):
        return clean_text(str(obj))
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).decode("utf-8", "replace")
    import numpy as np

    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return json_safe(int(obj), js=js)
    if isinstance(obj, np.floating):
        return encode_float(float(obj))
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist(), js=js)
    if isinstance(obj, (set, frozenset)):
        return [json_safe(v, js=js) for v in sorted(obj, key=repr)]
    return clean_text(str(obj))


def _key(k: Any) -> str:
    v = json_safe(k)
    return v if isinstance(v, str) else json.dumps(v)


def _encodes(text: str) -> bool:
    """``text`` (as ``json.dumps`` wrote it) is valid UTF-8 when encoded: no lone surrogate,
    whether written as a character or, with ``ensure_ascii``, as an escape (``\\udXXX``; an
    escaped pair, a character beyond the BMP, is checked by the caller)."""
    if text.isascii():
        return "\\ud" not in text
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def written(obj: Any, **kw) -> tuple[Any, str]:
    """``(value, text)``: the JSON text ``json.dumps(obj, **kw)`` in the module's encoding (strict
    JSON, no ``NaN`` token, encodes to UTF-8) and the value it holds: ``obj`` itself when it
    holds nothing awkward (serialised once, no walk), else :func:`json_safe` of it."""
    # json.dumps with arguments builds an encoder per call: the compact one (a run's every result
    # line) is made once, the same text (~2 us a record less)
    encode = _encode_compact if kw == _COMPACT_KW else None
    try:
        text = encode(obj) if encode is not None else json.dumps(obj, allow_nan=False, **kw)
    except (ValueError, TypeError):  # NaN or infinities, or a value JSON has no type for
        text = None
    else:
        if _encodes(text):
            return obj, text
    safe = json_safe(obj)
    if text is not None and safe == obj:  # the escapes were pairs: characters beyond the BMP
        return obj, text
    return safe, (encode(safe) if encode is not None else json.dumps(safe, allow_nan=False, **kw))


_COMPACT_KW = {"separators": (",", ":")}
_COMPACT = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def _c_compact():
    """The C encoder that ``_COMPACT.encode`` makes at each call (``json.encoder.c_make_encoder``), made
    once, or ``None`` where this Python has none or it does not write what ``_COMPACT.encode`` writes
    (checked here on awkward values).  It keeps no state between calls (no dict of the containers
    being encoded: a circular value, which ``written`` could not make safe either, ends in the same
    ``RecursionError``), so threads may share it."""
    try:
        from json.encoder import c_make_encoder, encode_basestring_ascii

        if c_make_encoder is None:
            return None
        enc = c_make_encoder(None, _COMPACT.default, encode_basestring_ascii, None, ":", ",", False, False, False)
        sample = {"a": [1, -2**70, 1.5e-07, 1e-05, 0.1, -0.0, 1e300, True, None, "\u00e9\ud83d\ude00\x7f\n\""],
                  "b": {"c": [], "d": {}}, "": 2.5, "t": (1, 2)}
        if "".join(enc(sample, 0)) != _COMPACT.encode(sample):
            return None
        for bad in ([float("nan")], {"x": object()}):
            try:
                "".join(enc(bad, 0))
            except (ValueError, TypeError):
                pass
            else:
                return None
        return enc
    except Exception:  # noqa: BLE001 - another Python's signature: JSONEncoder.encode as before
        return None


_C_COMPACT = _c_compact()


def _encode_compact(obj: Any) -> str:
    """``_COMPACT.encode(obj)``: the same text, by the C encoder made once (:func:`_c_compact`; ~2 us
    a result line less: ``encode`` makes it anew at each call)."""
    if _C_COMPACT is None or isinstance(obj, str):  # a lone string: encode does not use the C encoder
        return _COMPACT.encode(obj)
    return "".join(_C_COMPACT(obj, 0))


def json_line(obj: Any) -> tuple[Any, bytes]:
    """``(value, line)``: ``obj`` as one line of compact strict JSON in the module's encoding, UTF-8,
    ending in a newline (a line of ``results.jsonl`` and of ``results.json``'s cases), and the value
    the line holds (``obj`` itself unless it holds something awkward: then :func:`json_safe` of it).

    Written by orjson (a tenth of the time of ``json``'s C encoder on a result record: ~1.4 against
    ~13 us warm) where the line parses back to exactly the value: orjson writes NaN and infinities
    as ``null`` and serialises dataclasses, enums and dates, so the line is parsed back and compared
    (~3 us); a value that differs is made safe (:func:`json_safe`) and written by orjson again, and
    one orjson refuses even then (an integer beyond 64 bits) by :func:`written`.  A line read back
    and written again is the same bytes (``results.json`` written from its parsed cases is the file).
    Beside :func:`dumps` (every other file) the spelling differs, never the value: UTF-8 text rather
    than ``\\u`` escapes, exponents without padding (``1e-5`` for ``1e-05``)."""
    line = _orjson_line(obj)
    if line is not None:
        return obj, line
    safe = json_safe(obj)
    line = _orjson_line(safe)
    if line is not None:
        return safe, line
    value, text = written(safe, separators=(",", ":"))
    return value, text.encode() + b"\n"


def _orjson_line(obj: Any) -> bytes | None:
    """orjson's compact line of ``obj`` (newline-ended), or ``None`` where it refuses ``obj`` or the
    line does not parse back to ``obj``."""
    try:
        line = orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError: a value it does not write
        return None
    return line if orjson.loads(line) == obj else None


def dumps(obj: Any, **kw) -> str:
    """``json.dumps(obj, **kw)`` in the module's encoding (:func:`written`'s text)."""
    return written(obj, **kw)[1]


def page_safe(obj: Any) -> Any:
    """:func:`json_safe` for a JavaScript reader: integers beyond :data:`JS_SAFE_INT` in magnitude
    as their decimal text as well (the page shows them exactly)."""
    return json_safe(obj, js=True)
