"""ImageDecoder (ai.onnx 20): images encoded by Pillow at generation time, decoded by the backend.

The entry's cases are built by its own builder (:attr:`~conformance.ops.entry.Entry.extra_cases`,
family ``values``): the output's shape depends on the bytes, which no shape table can say.  The
oracle, the encoders and the output checks are :mod:`conformance.reference.image`; the readings
of what the text leaves open are in its docstring, the tolerance in docs/tolerance.md ("Image
decoding").  What the cases hold:

* **every format the text lists**, each written with Pillow from pixels the generator draws:
  PNG (deflate and stored; RGB, RGBA, grey, grey + alpha, palette, palette with a transparent
  index, bilevel, 16-bit grey; written by the module: every scanline filter in turn -- None, Sub,
  Up, Average, Paeth --, grey and palette at 2 and 4 bits per sample, Adam7 interlacing with
  empty passes), BMP (24-bit, 32-bit with alpha, 8-bit grey, palette, 1-bit, top-down),
  TIFF (raw, LZW, deflate; RGB, RGBA, grey, palette, bilevel, 16-bit grey), WebP lossless (RGB,
  RGBA with ``exact``: transparent pixels keep their colour), JPEG2000 (JP2 container and raw
  codestream, reversible wavelet: lossless; RGB, RGBA, grey), the portable formats (PPM, PGM,
  PBM and their plain (ASCII) forms with a header comment, 16-bit PGM), JPEG (4:4:4, 4:2:2, 4:2:0, progressive, optimised Huffman tables, grey, EXIF Orientation 6
  judged as stored or as displayed);
  sizes 1x1, 2x3, 5x7, 9x13 (partial JPEG blocks and MCUs) and 16x16;
* ``pixel_format`` RGB, BGR and Grayscale given, and absent (RGB) for every other source;
* lossless formats compared **exactly** with the drawn pixels (alpha dropped, palette
  expanded, grey replicated, BT.601 luma kept away from rounding ties); 16-bit samples
  accepted under either 8-bit scaling; JPEG within a derived bound of a reference decode;
* streams no decoder can read -- empty, random bytes, a PNG cut inside its image data, a
  PNG signature alone, a JPEG with no frame, a BMP cut inside its header -- whose output the
  text says is "an empty matrix" (a value case, not an error);
* a GIF, a format the text does not list: empty or the right image;
* invalid models: ``pixel_format`` not one of the three names ("RGBA", "rgb", ""), and an
  ``encoded_stream`` that is not uint8 (int8, float).
"""

from __future__ import annotations

import numpy as np

from .. import registry
from ..case import Case, DataSet, Input, Output
from ..opspec import op_spec
from ..reference import image as ref
from ..tolerance import Tolerance
from . import schedule
from .engine import register_entries
from .entry import Entry
from .values_common import elem, make_case, smoke

OP = "ImageDecoder"
#: uint8 outputs of a lossless decode: exact.
EXACT = Tolerance(0.0, 0.0, variants=("lossless decode: the drawn pixels, exact",), exact=True)
#: The tolerance record of JPEG outputs (judged by :func:`conformance.reference.image.check_jpeg`).
JPEG_TOL = Tolerance(float(max(ref.JPEG_LEVELS.values())), 0.0,
                     variants=("reference decode (libjpeg-turbo, islow IDCT, fancy upsampling)",
                               "IEEE 1180 IDCT: 1 level per decoder", "JFIF colour conversion"))
#: The tolerance record of checked outputs that are empty, either-scaled or either-decoded.
CHECKED = Tolerance(0.0, 0.0, variants=("judged by the case's check",), exact=True)

CHECK_JPEG = "conformance.reference.image:check_jpeg"
CHECK_JPEG_EXIF = "conformance.reference.image:check_jpeg_either_orientation"
CHECK_16 = "conformance.reference.image:check_scaled_16"
CHECK_EMPTY = "conformance.reference.image:check_empty"
CHECK_EMPTY_OR = "conformance.reference.image:check_empty_or_image"

SIZES = ((5, 7), (16, 16), (1, 1), (9, 13), (2, 3))
#: (encoder, source mode, content, sizes): each source is encoded once per size.
SOURCES = (
    ("png", "RGB", "noise", SIZES),
    ("png-stored", "RGB", "noise", ((9, 13),)),
    ("png", "RGBA", "noise", ((5, 7), (1, 1))),
    ("png", "L", "noise", ((16, 16),)),
    ("png", "LA", "noise", ((9, 13),)),
    ("png", "P", "noise", ((5, 7),)),
    ("png", "P+tRNS", "noise", ((2, 3),)),
    ("png", "1", "noise", ((9, 13),)),
    ("png", "I;16", "noise", ((5, 7),)),
    ("png-filters", "RGB", "noise", ((9, 13),)),
    ("png-filters", "RGBA", "noise", ((7, 5),)),
    ("png-filters", "L/4", "noise", ((5, 7),)),
    ("png-filters", "L/2", "noise", ((9, 13),)),
    ("png-filters", "P/4", "noise", ((5, 7),)),
    ("png-filters", "P/2", "noise", ((2, 3),)),
    ("png-adam7", "RGB", "noise", ((16, 16), (1, 1), (5, 7))),
    ("png-adam7", "LA", "noise", ((9, 13),)),
    ("png-adam7", "P/4", "noise", ((9, 13),)),
    ("png-adam7", "L/2", "noise", ((16, 16),)),
    ("bmp", "RGB", "noise", ((5, 7), (1, 1))),
    ("bmp-top-down", "RGB", "noise", ((5, 7), (2, 3))),
    ("bmp", "RGBA", "noise", ((2, 3),)),
    ("bmp", "L", "noise", ((9, 13),)),
    ("bmp", "P", "noise", ((16, 16),)),
    ("bmp", "1", "noise", ((5, 7),)),
    ("tiff", "RGB", "noise", ((5, 7),)),
    ("tiff-lzw", "RGB", "noise", ((9, 13),)),
    ("tiff-deflate", "RGB", "noise", ((16, 16),)),
    ("tiff", "RGBA", "noise", ((2, 3),)),
    ("tiff", "L", "noise", ((1, 1),)),
    ("tiff", "P", "noise", ((5, 7),)),
    ("tiff", "1", "noise", ((9, 13),)),
    ("tiff", "I;16", "noise", ((2, 3),)),
    ("webp-lossless", "RGB", "noise", ((5, 7), (16, 16))),
    ("webp-lossless", "RGBA", "noise", ((9, 13),)),
    ("jp2", "RGB", "noise", ((5, 7),)),
    ("j2k", "RGB", "noise", ((9, 13),)),
    ("jp2", "L", "noise", ((2, 3),)),
    ("jp2", "RGBA", "noise", ((16, 16),)),
    ("pnm", "RGB", "noise", ((5, 7),)),
    ("pnm", "L", "noise", ((9, 13),)),
    ("pnm", "1", "noise", ((2, 3),)),
    ("pnm-16", "I;16", "noise", ((5, 7),)),
    ("pnm-plain", "RGB", "noise", ((2, 3),)),
    ("pnm-plain", "L", "noise", ((5, 7),)),
    ("pnm-plain", "1", "noise", ((9, 13),)),
    ("jpeg-444", "RGB", "blocks", ((16, 16), (5, 7))),
    ("jpeg-422", "RGB", "blocks", ((16, 16), (9, 13))),
    ("jpeg-420", "RGB", "blocks", SIZES),
    ("jpeg-progressive", "RGB", "blocks", ((16, 16),)),
    ("jpeg-optimized", "RGB", "blocks", ((9, 13),)),
    ("jpeg-exif6", "RGB", "blocks", ((5, 7), (16, 16))),
    ("jpeg-444", "L", "noise", ((16, 16), (5, 7))),
    ("gif", "P", "noise", ((5, 7),)),
)
#: Colours of the ``blocks`` content: saturated but inside [24, 231], so a JPEG decode of
#: them stays inside the RGB cube (no clipping) while its chroma is strong (Cr' up to 95).
BLOCK_COLOURS = np.array([[223, 32, 32], [32, 223, 32], [32, 32, 223], [223, 223, 32], [32, 223, 223],
                          [223, 32, 223], [128, 128, 128], [200, 120, 40], [60, 90, 200]], dtype=np.int64)
#: 16-bit samples where the scalings disagree with each other and with clipping.
SAMPLES_16 = (0, 1, 127, 128, 200, 255, 256, 383, 32767, 32768, 65279, 65280, 65535)


def _rng(seed: int, *key) -> np.random.Generator:
    return registry.case_rng(seed, OP, *map(str, key))


def _colours(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return ref.robust_luma(rng, rng.integers(0, 256, shape + (3,)).astype(np.uint8))


def draw_source(rng: np.random.Generator, mode: str, content: str, size: tuple[int, int]) -> ref.Source:
    """The pixels of one source image of ``mode`` (``P+tRNS``: palette with a transparent
    index) and ``size`` (H, W): ``noise`` draws every sample independently (colours with a
    BT.601 luma away from rounding ties, :func:`conformance.reference.image.robust_luma`);
    ``blocks`` lays 4x4 blocks of :data:`BLOCK_COLOURS` with +-8 levels of noise (JPEG)."""
    h, w = size
    if "/" in mode:  # PNG sample depths below 8: grey levels v * 255 / (2**bits - 1), short palettes
        base, bits = mode.split("/")
        bits = int(bits)
        if base == "L":
            v = rng.integers(0, 2 ** bits, (h, w)) * (255 // (2 ** bits - 1))
            return ref.Source("L", v.astype(np.uint8), bits=bits)
        n = 2 ** bits
        return ref.Source("P", rng.integers(0, n, (h, w)).astype(np.uint8), _colours(rng, (n,)), bits=bits)
    if mode == "RGB" and content == "blocks":
        idx = rng.integers(0, len(BLOCK_COLOURS), ((h + 3) // 4, (w + 3) // 4))
        base = BLOCK_COLOURS[idx].repeat(4, 0).repeat(4, 1)[:h, :w]
        px = np.clip(base + rng.integers(-8, 9, base.shape), 0, 255).astype(np.uint8)
        return ref.Source("RGB", ref.robust_luma(rng, px))
    if mode == "RGB":
        return ref.Source("RGB", _colours(rng, (h, w)))
    if mode == "RGBA":
        alpha = rng.choice(np.array([0, 1, 128, 254, 255], dtype=np.uint8), (h, w, 1))
        return ref.Source("RGBA", np.concatenate([_colours(rng, (h, w)), alpha], axis=2))
    if mode == "L":
        return ref.Source("L", rng.integers(0, 256, (h, w)).astype(np.uint8))
    if mode == "LA":
        return ref.Source("LA", rng.integers(0, 256, (h, w, 2)).astype(np.uint8))
    if mode in ("P", "P+tRNS"):
        n = int(rng.integers(5, 17))
        palette = _colours(rng, (n,))
        px = rng.integers(0, n, (h, w)).astype(np.uint8)
        return ref.Source("P", px, palette, 0 if mode == "P+tRNS" else None)
    if mode == "1":
        return ref.Source("1", rng.random((h, w)) < 0.5)
    if mode == "I;16":
        v = rng.choice(np.array(SAMPLES_16 + tuple(rng.integers(0, 65536, 8)), dtype=np.uint16), (h, w))
        return ref.Source("I;16", v)
    raise ValueError(f"unknown source mode {mode!r}")


def _stream_input(stream: np.ndarray, type_name: str = "uint8") -> Input:
    return Input("encoded_stream", elem(type_name), (int(stream.size),))


def _image_output(tol: Tolerance) -> Output:
    return Output("image", elem("uint8"), tol, shape=(None, None, None))


def _pf_states(k: int) -> list[str | None]:
    """pixel_format states of the k-th source: RGB, BGR and Grayscale given; absent (the
    default, RGB) for every other source."""
    return ["RGB", "BGR", "Grayscale"] + ([None] if k % 2 == 0 else [])


def _judge(encoder: str, mode: str) -> str:
    if encoder == "jpeg-exif6":
        return "jpeg-orientation"
    if encoder.startswith("jpeg"):
        return "jpeg-bound"
    if encoder == "gif":
        return "empty-or-image"
    return "scaled-16" if mode == "I;16" else "exact"


_CHECKS = {"jpeg-bound": CHECK_JPEG, "jpeg-orientation": CHECK_JPEG_EXIF, "scaled-16": CHECK_16, "empty-or-image": CHECK_EMPTY_OR, "exact": None}


def _value_cases(seed: int, opsets: list[int]) -> list[Case]:
    out, k, n = [], 0, 0
    for encoder, mode, content, sizes in SOURCES:
        fmt = ref.format_of(encoder)
        for size in sizes:
            rng = _rng(seed, encoder, mode, content, *size)
            src = draw_source(rng, mode, content, size)
            stream = np.frombuffer(ref.encode(src, encoder), dtype=np.uint8).copy()
            while encoder.startswith("jpeg") and mode == "RGB" and not ref.inside_cube(stream):
                # a decode that clips separates the Y-plane and luma-of-RGB grayscale readings
                src = draw_source(rng, mode, content, size)
                stream = np.frombuffer(ref.encode(src, encoder), dtype=np.uint8).copy()
            judge = _judge(encoder, src.mode)
            for pf in _pf_states(k):
                pf_eff = pf or "RGB"
                if judge == "exact":
                    expected, tol = ref.expected_image(src, pf_eff), EXACT
                else:  # the check judges; the reference decode is stored for runners that read it
                    expected = ref.decode(stream, pf_eff)
                    tol = JPEG_TOL if judge.startswith("jpeg") else CHECKED
                attrs = {} if pf is None else {"pixel_format": pf}
                params = "default" if pf is None else ("explicit-default" if pf == "RGB" else "non-default")
                case = make_case(
                    OP, 20, opsets[n % len(opsets)], inputs=[_stream_input(stream)], outputs=[_image_output(tol)],
                    datasets=[DataSet({"encoded_stream": stream}, {"image": expected})], attrs=attrs,
                    tags={"dtype": "uint8", "format": fmt, "encoder": encoder, "source": mode,
                          "size": f"{size[0]}x{size[1]}", "pixel_format": pf or "default", "params": params,
                          "judge": judge},
                    label=f"{encoder}/{mode}/{size[0]}x{size[1]}/{pf or 'default'}")
                case.check = _CHECKS[judge]
                out.append(case)
                n += 1
            k += 1
    return out


def undecodable_streams(seed: int) -> dict[str, bytes]:
    """Streams no decoder can read (the text's "corrupted encoded stream, invalid format"),
    by name: ``empty`` (no byte), ``random`` (64 random bytes, no format's signature),
    ``png-truncated`` (a 16x16 PNG cut in the middle of its image data), ``png-signature``
    (the 8-byte signature alone), ``jpeg-no-frame`` (SOI, APP0 and EOI: no frame header),
    ``bmp-truncated`` (a BMP cut inside its info header)."""
    rng = _rng(seed, "undecodable")
    png = ref.encode(draw_source(rng, "RGB", "noise", (16, 16)), "png")
    idat = png.index(b"IDAT")
    jpeg = ref.encode(draw_source(rng, "RGB", "blocks", (8, 8)), "jpeg-444")
    app0_end = 2 + 2 + int.from_bytes(jpeg[4:6], "big")
    bmp = ref.encode(draw_source(rng, "RGB", "noise", (2, 3)), "bmp")
    random = bytes(rng.integers(0, 256, 64, dtype=np.uint8))
    while random[:2] in (b"BM", b"\xff\xd8", b"P1", b"P2", b"P3", b"P4", b"P5", b"P6", b"II", b"MM", b"\x89P", b"RI",
                         b"GI", b"\x00\x00", b"\xffO"):
        random = bytes([random[0] ^ 0x55]) + random[1:]
    return {
        "empty": b"",
        "random": random,
        "png-truncated": png[: idat + 4 + (len(png) - idat) // 2],
        "png-signature": png[:8],
        "jpeg-no-frame": jpeg[:app0_end] + b"\xff\xd9",
        "bmp-truncated": bmp[:20],
    }


def _undecodable_cases(seed: int, opsets: list[int]) -> list[Case]:
    out, n = [], 0
    for name, data in undecodable_streams(seed).items():
        stream = np.frombuffer(data, dtype=np.uint8).copy()
        for pf in ("RGB", "BGR", "Grayscale"):
            channels = 1 if pf == "Grayscale" else 3
            case = make_case(
                OP, 20, opsets[n % len(opsets)], inputs=[_stream_input(stream)], outputs=[_image_output(CHECKED)],
                datasets=[DataSet({"encoded_stream": stream}, {"image": np.zeros((0, 0, channels), np.uint8)})],
                attrs={"pixel_format": pf},
                tags={"dtype": "uint8", "format": "undecodable", "stream": name, "pixel_format": pf,
                      "params": "explicit-default" if pf == "RGB" else "non-default", "judge": "empty"},
                label=f"undecodable/{name}/{pf}")
            case.check = CHECK_EMPTY
            out.append(case)
            n += 1
    return out


def _error_cases(seed: int, opsets: list[int]) -> list[Case]:
    src = draw_source(_rng(seed, "errors"), "RGB", "noise", (2, 3))
    stream = np.frombuffer(ref.encode(src, "png"), dtype=np.uint8).copy()
    out = []
    for pf in ("RGBA", "rgb", ""):
        out.append(make_case(
            OP, 20, opsets[0], inputs=[_stream_input(stream)], outputs=[_image_output(None)],
            datasets=[DataSet({"encoded_stream": stream})], attrs={"pixel_format": pf},
            tags={"dtype": "uint8", "error": "pixel_format", "pixel_format": pf or "empty-string"},
            label=f"error/pixel_format={pf or 'empty'}",
            expect_error=f'ImageDecoder: pixel_format {pf!r} is not one of "RGB", "BGR", "Grayscale" '
                         '("Can be one of")'))
    for t, fill in (("int8", stream.view(np.int8)), ("float", stream.astype(np.float32))):
        out.append(make_case(
            OP, 20, opsets[-1], inputs=[_stream_input(fill, t)], outputs=[_image_output(None)],
            datasets=[DataSet({"encoded_stream": fill})], tags={"dtype": t, "error": "stream-type"},
            label=f"error/encoded_stream={t}",
            expect_error=f"ImageDecoder: encoded_stream is {t}; T1 allows tensor(uint8) only"))
    return out


def build(seed: int) -> list[Case]:
    """Every ImageDecoder case (module docstring), deterministic in ``seed`` (and the Pillow
    build that encodes the images)."""
    spec = op_spec(OP)
    out = []
    for v in spec.versions:
        opsets = schedule.opsets(spec, v)
        out += _value_cases(seed, opsets) + _undecodable_cases(seed, opsets) + _error_cases(seed, opsets)
    return out


def _extra_cases(seed: int, depth: str = "full") -> list[Case]:
    made = build(seed)
    return smoke(made) if depth == "smoke" else made


_extra_cases.__qualname__ = "value_cases_ImageDecoder"


def _oracle(ctx, encoded_stream, pixel_format="RGB", **attrs):
    return ref.image_decoder(np.asarray(encoded_stream, dtype=np.uint8), pixel_format)


def _no_filter(version, combo):
    return None


ENTRIES = [
    Entry(OP, _oracle, family="values", extra_cases=_extra_cases, type_filter=_no_filter,
          notes={20: "the text lists BMP, JPEG, JPEG2000, TIFF, PNG, WebP and PBM/PGM/PPM/PXM/PNM; undecodable "
                     "streams give an empty output; JPEG chroma upsampling is libjpeg-turbo's fancy upsampling"}),
]

register_entries(ENTRIES, "image")
