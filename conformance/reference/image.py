"""Oracle, encoders and output checks of ImageDecoder (ai.onnx 20).

The text (``onnx.defs``, ImageDecoder-20): the operator "loads and decodes an image"; the
``encoded_stream`` (uint8) holds the bytes of an image file in one of the formats it lists --
BMP, JPEG (lossless JPEG optional), JPEG2000, TIFF, PNG, WebP, the portable formats (PBM, PGM,
PPM, PXM, PNM) -- and the ``image`` output (uint8) is channel-last ``(Height, Width,
Channels)``, in ``pixel_format`` "RGB", "BGR" or "Grayscale" (one channel).  "If it can't
decode for any reason (e.g. corrupted encoded stream, invalid format), it will return an empty
matrix."  For JPEG it fixes the chroma upsampling (libjpeg-turbo's "fancy" triangular filter)
and nothing else.

What the text leaves open and how this module reads it (docs/tolerance.md, "Image decoding"):

* **alpha**: an RGB/BGR/Grayscale output has no alpha channel; a source's alpha is dropped,
  not composited (what both libraries the text's format list comes from do: OpenCV's
  ``IMREAD_COLOR`` and Pillow's ``convert("RGB")``).  Palette images are expanded; grayscale
  and bilevel sources are replicated into three channels for RGB/BGR (bilevel 1 -> 255).
* **Grayscale of a colour source**: the text names no weights.  The reading is ITU-R BT.601
  luma ``0.299 R + 0.587 G + 0.114 B`` rounded to nearest, which onnx's reference
  implementation (Pillow's ``convert("L")``), OpenCV (``cvtColor`` / ``IMREAD_GRAYSCALE``)
  and libjpeg all use; their fixed-point weights (16-bit in Pillow, 14-bit in OpenCV) differ
  from the real ones by at most 0.013 levels over 0..255, so the generator keeps every pixel's
  luma at least :data:`LUMA_MARGIN` away from a ``.5`` tie and the expected value is the same
  for every one of them (:func:`robust_luma`).
* **16-bit samples** (PNG, TIFF, PGM with 16-bit samples): the output is uint8, so they are
  scaled; the text does not say how.  Both scalings decoders use are accepted: the high byte
  ``v >> 8`` (libpng's ``png_set_strip_16``, OpenCV) and ``round(v / 257)`` (libpng's
  ``png_set_scale_16``) (:func:`check_scaled_16`).  Clipping to 255 (Pillow's ``I;16 -> L``)
  is not a scaling and fails.
* **JPEG** is lossy and the text fixes neither the IDCT nor the colour conversion's
  arithmetic: the output is judged against a reference decode (libjpeg-turbo through Pillow:
  accurate integer IDCT, fancy upsampling, JFIF colour conversion) within
  :data:`JPEG_LEVELS` (:func:`check_jpeg`; the bound's derivation is in its docstring).
* **undecodable streams** (empty, random bytes, a truncated or damaged file): the output is
  empty, any shape with no element (:func:`check_empty`); raising is not what the text says.
* formats the text does not list (GIF): either an empty output or the right image
  (:func:`check_empty_or_image`): the list says what is supported, not what must fail.

The expected outputs of lossless formats do not come from a decoder: they are the pixels the
generator drew (:func:`expected_image` of the source), so the oracle is independent of the
decoders under test.  :func:`decode` (Pillow plus the conversions above) is the reference
decoder the JPEG and GIF checks use, and a second opinion the tests compare with.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

#: pixel_format values the text allows ("Can be one of ...").
PIXEL_FORMATS = ("RGB", "BGR", "Grayscale")
#: BT.601 luma weights (ITU-R BT.601-7, section 2.5.1: E'Y = 0.299 E'R + 0.587 E'G + 0.114 E'B).
BT601 = (0.299, 0.587, 0.114)
#: Distance every generated luma keeps from a ``.5`` tie (levels): the fixed-point weights of
#: Pillow (16 bits) and OpenCV (14 bits) are within 0.013 levels of the real ones.
LUMA_MARGIN = 0.06
#: Largest accepted |output - reference decode| of a JPEG, per output channel (levels):
#: colour JPEG RGB order ``(R, G, B)`` and its luma; grayscale JPEG (:func:`check_jpeg`).
JPEG_LEVELS = {"R": 5, "G": 5, "B": 6, "luma": 3, "gray": 2}


# ----------------------------------------------------------------------------- sources
@dataclass(frozen=True)
class Source:
    """An image as the generator draws it, before encoding.

    Attributes:
        mode: Pillow mode of the pixels: ``RGB`` (H, W, 3), ``RGBA`` (H, W, 4), ``L`` (H, W),
            ``LA`` (H, W, 2), ``P`` (H, W) palette indices with ``palette`` (N, 3), ``1``
            (H, W) bool, ``I;16`` (H, W) uint16.
        pixels: the samples, uint8 (uint16 for ``I;16``, bool for ``1``).
        palette: ``P`` only: (N, 3) uint8 colours.
        transparency: ``P`` only: palette index written as transparent (tRNS), or ``None``.
        bits: the sample depth the encoder stores (PNG grey and palette: 1, 2, 4 or 8); grey
            ``pixels`` are the 8-bit values the samples stand for (``v * 255 / (2**bits - 1)``,
            PNG's scaling, exact for these depths), palette indices stay below ``2**bits``.
    """

    mode: str
    pixels: np.ndarray
    palette: np.ndarray | None = None
    transparency: int | None = None
    bits: int = 8

    @property
    def shape(self) -> tuple[int, int]:
        """(Height, Width)."""
        return tuple(self.pixels.shape[:2])

    def pil(self):
        """The Pillow image of the source."""
        from PIL import Image

        if self.mode == "P":
            im = Image.fromarray(self.pixels, "P")
            im.putpalette(self.palette.astype(np.uint8).ravel().tolist())
            if self.transparency is not None:
                im.info["transparency"] = int(self.transparency)
            return im
        if self.mode == "1":
            return Image.fromarray(self.pixels.astype(bool))
        if self.mode == "LA":
            return Image.fromarray(self.pixels, "LA")
        return Image.fromarray(self.pixels)


def rgb_of(src: Source) -> np.ndarray:
    """The colour every pixel of ``src`` stands for, uint8 (H, W, 3): alpha dropped, palette
    expanded, grey replicated, bilevel 0/255.  16-bit sources are refused (their 8-bit value is
    not unique: :func:`scaled_16`).

    Raises:
        ValueError: an ``I;16`` source or an unknown mode.
    """
    p = src.pixels
    if src.mode == "RGB":
        return p.copy()
    if src.mode == "RGBA":
        return p[..., :3].copy()
    if src.mode == "L":
        return np.repeat(p[..., None], 3, axis=2)
    if src.mode == "LA":
        return np.repeat(p[..., :1], 3, axis=2)
    if src.mode == "P":
        return src.palette[p].astype(np.uint8)
    if src.mode == "1":
        return np.repeat(np.where(p, 255, 0).astype(np.uint8)[..., None], 3, axis=2)
    raise ValueError(f"no unique 8-bit colour for mode {src.mode!r}")


def luma(rgb: np.ndarray) -> np.ndarray:
    """BT.601 luma of ``rgb`` (..., 3) in float64 (levels, unrounded)."""
    rgb = np.asarray(rgb, dtype=np.float64)
    return BT601[0] * rgb[..., 0] + BT601[1] * rgb[..., 1] + BT601[2] * rgb[..., 2]


def round_half_up(x: np.ndarray) -> np.ndarray:
    """``floor(x + 1/2)``: the rounding of Pillow's, OpenCV's and libjpeg's fixed-point luma."""
    return np.floor(np.asarray(x, dtype=np.float64) + 0.5)


def gray_of(src: Source) -> np.ndarray:
    """The Grayscale value of every pixel of ``src``, uint8 (H, W): a grey source's own
    samples, a colour source's rounded BT.601 luma (module docstring)."""
    if src.mode in ("L", "LA"):
        return src.pixels[..., 0].copy() if src.mode == "LA" else src.pixels.copy()
    if src.mode == "1":
        return np.where(src.pixels, 255, 0).astype(np.uint8)
    return np.clip(round_half_up(luma(rgb_of(src))), 0, 255).astype(np.uint8)


def to_pixel_format(rgb: np.ndarray, gray: np.ndarray, pixel_format: str) -> np.ndarray:
    """The output of ``pixel_format`` from the colour ``rgb`` (H, W, 3) and grey ``gray``
    (H, W) of an image: RGB as is, BGR the channels reversed, Grayscale (H, W, 1).

    Raises:
        ValueError: a pixel_format the text does not allow.
    """
    if pixel_format == "RGB":
        return np.ascontiguousarray(rgb, dtype=np.uint8)
    if pixel_format == "BGR":
        return np.ascontiguousarray(rgb[..., ::-1], dtype=np.uint8)
    if pixel_format == "Grayscale":
        return np.ascontiguousarray(gray[..., None], dtype=np.uint8)
    raise ValueError(f"pixel_format {pixel_format!r} is not one of {PIXEL_FORMATS}")


def expected_image(src: Source, pixel_format: str) -> np.ndarray:
    """ImageDecoder's exact output for a losslessly encoded ``src``: uint8 (H, W, 3) for RGB
    and BGR, (H, W, 1) for Grayscale (module docstring: alpha dropped, palette expanded, grey
    replicated, BT.601 luma).

    Raises:
        ValueError: an ``I;16`` source (two scalings are accepted: :func:`check_scaled_16`) or
            an unknown pixel_format.
    """
    return to_pixel_format(rgb_of(src), gray_of(src), pixel_format)


def scaled_16(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two accepted 8-bit values of 16-bit samples ``v``: ``(v >> 8, round(v / 257))``
    (libpng's strip_16 and scale_16), uint8 each; they differ by at most one level."""
    v = np.asarray(v, dtype=np.int64)
    return (v >> 8).astype(np.uint8), ((v * 2 + 257) // 514).astype(np.uint8)


def robust_luma(rng: np.random.Generator, rgb: np.ndarray) -> np.ndarray:
    """``rgb`` (..., 3) uint8 with every colour whose luma lies within :data:`LUMA_MARGIN` of a
    ``.5`` tie moved off it by changing G by one level (luma moves by 0.587: out of the
    window), so that every rounding of every fixed-point luma gives the same integer."""
    out = np.array(rgb, dtype=np.int64)
    frac = luma(out) - np.floor(luma(out))
    near = np.abs(frac - 0.5) < LUMA_MARGIN
    g = out[..., 1]
    out[..., 1] = np.where(near, np.where(g < 255, g + 1, g - 1), g)
    assert not (np.abs(luma(out) - np.floor(luma(out)) - 0.5) < LUMA_MARGIN).any()
    return out.astype(np.uint8)


# ----------------------------------------------------------------------------- encoders
#: Encoders: name -> (Pillow format, save keywords, the text's format name).  Every keyword is
#: fixed, so the same pixels give the same bytes with the same Pillow build.
ENCODERS: dict[str, tuple[str, dict[str, Any], str]] = {
    "png": ("PNG", {"compress_level": 6}, "PNG"),
    "png-stored": ("PNG", {"compress_level": 0}, "PNG"),
    "bmp": ("BMP", {}, "BMP"),
    "tiff": ("TIFF", {}, "TIFF"),
    "tiff-lzw": ("TIFF", {"compression": "tiff_lzw"}, "TIFF"),
    "tiff-deflate": ("TIFF", {"compression": "tiff_adobe_deflate"}, "TIFF"),
    "webp-lossless": ("WEBP", {"lossless": True, "exact": True, "quality": 80, "method": 4}, "WebP"),
    "jp2": ("JPEG2000", {"irreversible": False}, "JPEG2000"),
    "j2k": ("JPEG2000", {"irreversible": False, "no_jp2": True}, "JPEG2000"),
    "pnm": ("PPM", {}, "PNM"),
    "jpeg-444": ("JPEG", {"quality": 90, "subsampling": 0}, "JPEG"),
    "jpeg-422": ("JPEG", {"quality": 90, "subsampling": 1}, "JPEG"),
    "jpeg-420": ("JPEG", {"quality": 90, "subsampling": 2}, "JPEG"),
    "jpeg-progressive": ("JPEG", {"quality": 85, "subsampling": 2, "progressive": True}, "JPEG"),
    "jpeg-optimized": ("JPEG", {"quality": 75, "subsampling": 2, "optimize": True}, "JPEG"),
    "jpeg-exif6": ("JPEG", {"quality": 90, "subsampling": 2}, "JPEG"),
    "gif": ("GIF", {}, "GIF"),
}


#: Encoders written here, name -> the text's format name: ``pnm-plain`` (P1/P2/P3 ASCII with a
#: comment line), ``pnm-16`` (binary P5 with maxval 65535, big-endian samples: Netpbm's
#: definition; Pillow before 10.1 cannot write it), ``png-filters`` / ``png-adam7`` (every
#: scanline filter, sample depths 1-4, Adam7: Pillow writes neither on request), and
#: ``bmp-top-down`` (a negative height).
OWN_ENCODERS = {"pnm-plain": "PNM", "pnm-16": "PNM", "png-filters": "PNG", "png-adam7": "PNG", "bmp-top-down": "BMP"}


def format_of(encoder: str) -> str:
    """The text's name of the format an encoder writes (``PNG``, ``JPEG``, ``PNM``...)."""
    return OWN_ENCODERS[encoder] if encoder in OWN_ENCODERS else ENCODERS[encoder][2]


def encode_pnm(src: Source, plain: bool) -> bytes:
    """A Netpbm file of ``src`` (netpbm.sourceforge.net: pbm(5), pgm(5), ppm(5)): bilevel as
    P1/P4 (1 = black), grey as P2/P5, RGB as P3/P6; ``plain`` writes the ASCII forms with a
    ``#`` comment line in the header; 16-bit grey (``I;16``) as P5/P2 with maxval 65535
    (binary samples big-endian).

    Raises:
        ValueError: a mode with alpha or a palette (Netpbm has none).
    """
    h, w = src.shape
    if src.mode == "1":
        bits = (~src.pixels.astype(bool)).astype(np.uint8)  # PBM: 1 is black
        if plain:
            body = "\n".join(" ".join(map(str, row)) for row in bits).encode() + b"\n"
            return b"P1\n# onnx-conformance\n%d %d\n" % (w, h) + body
        return b"P4\n%d %d\n" % (w, h) + np.packbits(bits, axis=1).tobytes()
    if src.mode in ("L", "I;16"):
        magic, maxval = ("P2" if plain else "P5"), (65535 if src.mode == "I;16" else 255)
        data = src.pixels
    elif src.mode == "RGB":
        magic, maxval, data = ("P3" if plain else "P6"), 255, src.pixels
    else:
        raise ValueError(f"Netpbm has no mode {src.mode!r}")
    head = (f"{magic}\n" + ("# onnx-conformance\n" if plain else "") + f"{w} {h}\n{maxval}\n").encode()
    if plain:
        rows = data.reshape(h, -1).astype(np.int64)
        return head + "\n".join(" ".join(map(str, r)) for r in rows).encode() + b"\n"
    return head + data.astype(">u2" if maxval > 255 else np.uint8).tobytes()


#: Adam7 passes (PNG specification, section 8.2): (x start, y start, x step, y step).
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
_PNG_COLOUR = {"L": 0, "RGB": 2, "P": 3, "LA": 4, "RGBA": 6}


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    import zlib

    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


def _png_filter(rows: np.ndarray, bpp: int, first: int) -> bytes:
    """Scanlines ``rows`` (n, L) uint8 filtered with types ``(first + i) % 5`` for row i (PNG
    specification, section 9: None, Sub, Up, Average, Paeth), each row prefixed by its type."""
    out = bytearray()
    prev = np.zeros(rows.shape[1], dtype=np.int64)
    for i, row in enumerate(rows.astype(np.int64)):
        kind = (first + i) % 5
        a = np.concatenate([np.zeros(bpp, np.int64), row[:-bpp]]) if bpp < row.size else np.zeros_like(row)
        c = np.concatenate([np.zeros(bpp, np.int64), prev[:-bpp]]) if bpp < row.size else np.zeros_like(row)
        b = prev
        if kind == 0:
            f = row
        elif kind == 1:
            f = row - a
        elif kind == 2:
            f = row - b
        elif kind == 3:
            f = row - (a + b) // 2
        else:
            p = a + b - c
            pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
            f = row - np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        out.append(kind)
        out += (f % 256).astype(np.uint8).tobytes()
        prev = row
    return bytes(out)


def _png_rows(src: Source, y0: int, x0: int, dy: int, dx: int) -> np.ndarray:
    """The packed scanlines of the sub-image ``pixels[y0::dy, x0::dx]`` (bytes, (n, L))."""
    p = src.pixels[y0::dy, x0::dx]
    if src.mode == "L":
        samples = (p.astype(np.int64) // (255 // (2 ** src.bits - 1))).astype(np.uint8)
    else:
        samples = p.astype(np.uint8)
    if src.bits < 8:
        per = 8 // src.bits
        h, w = samples.shape
        pad = np.zeros((h, -(-w // per) * per), dtype=np.uint8)
        pad[:, :w] = samples
        groups = pad.reshape(h, -1, per).astype(np.int64)
        shifts = np.array([8 - src.bits * (k + 1) for k in range(per)])
        return (groups << shifts).sum(axis=2).astype(np.uint8)
    return samples.reshape(samples.shape[0], -1)


def encode_png(src: Source, interlace: bool) -> bytes:
    """A PNG file of ``src`` written here (PNG specification, ISO/IEC 15948): colour types 0, 2,
    3 (with PLTE, and tRNS for a transparent index), 4, 6 at ``src.bits`` (1, 2, 4, 8); every
    scanline filter type in turn (row i of a pass takes type ``(pass + i) % 5``), Adam7 when
    ``interlace`` (empty passes have no scanlines); one IDAT compressed by zlib at level 9.

    Raises:
        KeyError: a mode PNG has no colour type for here (``1``, ``I;16``: Pillow writes them).
    """
    import zlib

    h, w = src.shape
    colour = _PNG_COLOUR[src.mode]
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    bpp = max(1, channels * src.bits // 8)
    passes = ADAM7 if interlace else ((0, 0, 1, 1),)
    raw = b""
    for k, (x0, y0, dx, dy) in enumerate(passes):
        if x0 >= w or y0 >= h:
            continue
        raw += _png_filter(_png_rows(src, y0, x0, dy, dx), bpp, k)
    head = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([src.bits, colour, 0, 0, int(interlace)])
    body = _png_chunk(b"IHDR", head)
    if colour == 3:
        body += _png_chunk(b"PLTE", src.palette.astype(np.uint8).tobytes())
        if src.transparency is not None:
            body += _png_chunk(b"tRNS", bytes([255] * src.transparency + [0]))
    body += _png_chunk(b"IDAT", zlib.compress(raw, 9)) + _png_chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def bmp_top_down(data: bytes) -> bytes:
    """A bottom-up uncompressed BMP (Pillow's) rewritten top-down: rows reversed and the
    BITMAPINFOHEADER's height negated (Microsoft, "BITMAPINFOHEADER": "If biHeight is negative,
    the bitmap is a top-down DIB and its origin is the upper-left corner")."""
    off = int.from_bytes(data[10:14], "little")
    w = int.from_bytes(data[18:22], "little", signed=True)
    h = int.from_bytes(data[22:26], "little", signed=True)
    bits = int.from_bytes(data[28:30], "little")
    stride = (w * bits + 31) // 32 * 4
    rows = [data[off + i * stride: off + (i + 1) * stride] for i in range(h)]
    return data[:22] + (-h).to_bytes(4, "little", signed=True) + data[26:off] + b"".join(rows[::-1]) + \
        data[off + h * stride:]


def encode(src: Source, encoder: str) -> bytes:
    """The bytes of ``src`` written by Pillow with :data:`ENCODERS`' ``encoder`` settings, or by
    :func:`encode_pnm` for :data:`OWN_ENCODERS`.

    Raises:
        KeyError: an unknown encoder; OSError: Pillow cannot write the mode in the format.
    """
    if encoder in ("png-filters", "png-adam7"):
        return encode_png(src, interlace=encoder == "png-adam7")
    if encoder == "bmp-top-down":
        return bmp_top_down(encode(src, "bmp"))
    if encoder in OWN_ENCODERS:
        return encode_pnm(src, plain=encoder == "pnm-plain")
    from PIL import Image

    fmt, kw, _ = ENCODERS[encoder]
    buf = io.BytesIO()
    im = src.pil()
    if encoder == "jpeg-exif6":  # EXIF Orientation 6: display rotated 90 degrees clockwise
        exif = Image.Exif()
        exif[0x0112] = 6
        kw = dict(kw, exif=exif.tobytes())
    if fmt == "PNG" and src.mode == "P" and src.transparency is not None:
        kw = dict(kw, transparency=int(src.transparency))
    im.save(buf, fmt, **kw)
    return buf.getvalue()


# ----------------------------------------------------------------------------- reference decode
def decode(stream: np.ndarray | bytes, pixel_format: str = "RGB") -> np.ndarray:
    """The reference decoder: Pillow (libjpeg-turbo, libpng, libtiff, libwebp, OpenJPEG) with
    this module's readings (module docstring): uint8 (H, W, 3) or (H, W, 1); an undecodable
    stream gives an empty ``(0, 0, C)`` output; 16-bit samples take the high byte.

    Raises:
        ValueError: a pixel_format the text does not allow.
    """
    from PIL import Image

    if pixel_format not in PIXEL_FORMATS:
        raise ValueError(f"pixel_format {pixel_format!r} is not one of {PIXEL_FORMATS}")
    data = bytes(np.asarray(stream, dtype=np.uint8).tobytes()) if not isinstance(stream, bytes) else stream
    try:
        im = Image.open(io.BytesIO(data))
        im.load()
    except Exception:  # noqa: BLE001 - any failure to decode is the text's empty matrix
        return np.zeros((0, 0, 1 if pixel_format == "Grayscale" else 3), dtype=np.uint8)
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        hi = scaled_16(np.clip(np.asarray(im, dtype=np.int64), 0, 65535))[0]
        rgb, gray = np.repeat(hi[..., None], 3, axis=2), hi
    elif im.mode in ("L", "LA", "1"):
        gray = np.asarray(im.convert("L"), dtype=np.uint8)
        rgb = np.repeat(gray[..., None], 3, axis=2)
    else:
        rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
        gray = np.clip(round_half_up(luma(rgb)), 0, 255).astype(np.uint8)
    return to_pixel_format(rgb, gray, pixel_format)


def inside_cube(stream: np.ndarray | bytes, margin: float = 8.0) -> bool:
    """Whether a colour JPEG's decoded Y, Cb, Cr converts (JFIF, unclipped, float64) to colours
    at least ``margin`` levels inside the RGB cube [0, 255]^3.  The generator keeps its JPEG
    images so: where a decode clips, the luma of the clipped colour leaves the Y plane (a
    channel cut by 15 levels moves the luma by up to 0.299 * 15), and the two grayscale
    readings (:func:`check_jpeg`) would no longer agree within the bound."""
    from PIL import Image

    data = bytes(np.asarray(stream, dtype=np.uint8).tobytes()) if not isinstance(stream, bytes) else stream
    im = Image.open(io.BytesIO(data))
    im.draft("YCbCr", im.size)
    ycc = np.asarray(im, dtype=np.float64)
    y, cb, cr = ycc[..., 0], ycc[..., 1] - 128, ycc[..., 2] - 128
    rgb = np.stack([y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb], axis=-1)
    return bool(((rgb >= margin) & (rgb <= 255 - margin)).all())


def image_decoder(encoded_stream: np.ndarray, pixel_format: str = "RGB") -> np.ndarray:
    """ImageDecoder-20 (the oracle's calling convention): ``encoded_stream`` uint8 (N,) ->
    ``image`` uint8 (H, W, C) (:func:`decode`)."""
    return decode(encoded_stream, pixel_format)


# ----------------------------------------------------------------------------- checks
def _pixel_format(attrs: dict) -> str:
    pf = attrs.get("pixel_format", "RGB")
    return pf.decode() if isinstance(pf, bytes) else str(pf)


def _image_output(outputs: dict, channels: int) -> tuple[np.ndarray | None, str]:
    got = np.asarray(outputs["image"])
    if got.dtype != np.uint8:
        return None, f"image is {got.dtype}, not uint8"
    if got.ndim != 3 or got.shape[2] != channels:
        return None, f"image has shape {list(got.shape)}, not (H, W, {channels})"
    return got, ""


def check_jpeg(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge a decoded JPEG against the reference decode (:func:`decode`) within
    :data:`JPEG_LEVELS`.  Returns ``(passed, message)``.

    The bound (ITU-T T.81 / ISO/IEC 10918-1 leaves the IDCT's arithmetic to the decoder; its
    accuracy test, ISO/IEC 10918-2 with IEEE 1180-1990, allows a peak error of 1 level per
    sample against the exact IDCT rounded; the upsampling is fixed by the operator text):

    * two conforming decoders' Y, Cb and Cr samples differ by at most 2 levels (each is
      within 1 of the exact IDCT); the text's fancy upsampling is a weighted average with
      fixed rounding offsets, which keeps a difference of at most 2;
    * JFIF colour conversion (ITU-T T.871 section 7): ``R = Y + 1.402 Cr'``,
      ``G = Y - 0.344136 Cb' - 0.714136 Cr'``, ``B = Y + 1.772 Cb'``; with 2-level input
      differences and each side's rounding (1/2 level each, fixed-point or float):
      ``|dR| <= 2 + 1.402 * 2 + 1 = 5.80``, ``|dG| <= 2 + 1.058 * 2 + 1 = 5.12``,
      ``|dB| <= 2 + 1.772 * 2 + 1 = 6.54``: integer differences of 5, 5 and 6 levels;
      clipping to [0, 255] does not widen them;
    * Grayscale: the luma of the converted colour is ``Y`` (the conversion's inverse), so a
      decoder that takes the Y plane and one that takes the luma of its RGB both stay within
      ``2 + 1/2 + 1/2 = 3`` levels of the reference's rounded luma;
    * a grayscale JPEG has no conversion: 2 levels.

    A decoder with the wrong colour matrix (BT.709: up to 17 levels on the suite's coloured
    blocks), Cb and Cr swapped, or no conversion at all is far outside.
    """
    pf = _pixel_format(attrs)
    ref = decode(inputs["encoded_stream"], pf)
    got, why = _image_output(outputs, ref.shape[2])
    if got is None:
        return False, why
    return _jpeg_within(got, ref, inputs, pf)


def _jpeg_within(got: np.ndarray, ref: np.ndarray, inputs: dict, pf: str) -> tuple[bool, str]:
    if got.shape != ref.shape:
        return False, f"image has shape {list(got.shape)}, the stream's image is {list(ref.shape)}"
    from PIL import Image

    gray_jpeg = Image.open(io.BytesIO(bytes(np.asarray(inputs["encoded_stream"]).tobytes()))).mode == "L"
    if gray_jpeg:
        bound = np.full(ref.shape[2], JPEG_LEVELS["gray"])
    elif pf == "Grayscale":
        bound = np.array([JPEG_LEVELS["luma"]])
    else:
        bound = np.array([JPEG_LEVELS[c] for c in ("RGB" if pf == "RGB" else "BGR")])
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64))
    worst = diff.reshape(-1, ref.shape[2]).max(axis=0) if diff.size else np.zeros(ref.shape[2], np.int64)
    if (worst > bound).any():
        idx = np.unravel_index(int(np.argmax(diff - bound)), diff.shape)
        return False, (f"{int((diff > bound).sum())} sample(s) beyond the JPEG bound {bound.tolist()} levels; "
                       f"first at {list(map(int, idx))}: reference {int(ref[idx])}, got {int(got[idx])}")
    return True, f"within {worst.tolist()} levels of the reference decode (bound {bound.tolist()})"


#: EXIF Orientation (TIFF/EXIF tag 0x0112) values and the ``numpy.rot90``/flip that displays the
#: stored image (EXIF 2.32, section 4.6.4 A): 6 = the 0th row is the visual right side.
ORIENTATIONS = {3: lambda a: a[::-1, ::-1], 6: lambda a: np.rot90(a, k=-1), 8: lambda a: np.rot90(a, k=1)}


def exif_orientation(stream: np.ndarray | bytes) -> int:
    """The EXIF Orientation of a JPEG stream (1 when absent or unreadable)."""
    from PIL import Image

    data = bytes(np.asarray(stream, dtype=np.uint8).tobytes()) if not isinstance(stream, bytes) else stream
    try:
        return int(Image.open(io.BytesIO(data)).getexif().get(0x0112, 1))
    except Exception:  # noqa: BLE001
        return 1


def check_jpeg_either_orientation(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """:func:`check_jpeg` of a JPEG carrying an EXIF Orientation, accepting the image as stored
    or as displayed (the orientation applied: OpenCV's ``IMREAD_COLOR`` does, Pillow's decode and
    libjpeg do not; the operator text does not say).  Returns ``(passed, message)``."""
    pf = _pixel_format(attrs)
    ref = decode(inputs["encoded_stream"], pf)
    got, why = _image_output(outputs, ref.shape[2])
    if got is None:
        return False, why
    ok, msg = _jpeg_within(got, ref, inputs, pf)
    if ok:
        return True, "as stored: " + msg
    turn = ORIENTATIONS.get(exif_orientation(inputs["encoded_stream"]))
    if turn is None:
        return False, msg
    ok2, msg2 = _jpeg_within(got, np.ascontiguousarray(turn(ref)), inputs, pf)
    return (True, "as displayed: " + msg2) if ok2 else (False, f"as stored: {msg}; as displayed: {msg2}")


def check_scaled_16(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge the decode of an image with 16-bit grey samples: every output sample is one of
    :func:`scaled_16`'s two values of its source sample (read back losslessly by Pillow), the
    same in every channel.  Returns ``(passed, message)``."""
    from PIL import Image

    pf = _pixel_format(attrs)
    im = Image.open(io.BytesIO(bytes(np.asarray(inputs["encoded_stream"]).tobytes())))
    v = np.asarray(im, dtype=np.int64)
    lo, hi = scaled_16(v)
    got, why = _image_output(outputs, 1 if pf == "Grayscale" else 3)
    if got is None:
        return False, why
    if got.shape[:2] != v.shape:
        return False, f"image has shape {list(got.shape)}, the stream's image is {list(v.shape)} (H, W)"
    a, b = lo[..., None], hi[..., None]
    ok = (got == a) | (got == b)
    if not ok.all():
        idx = np.unravel_index(int(np.argmin(ok)), ok.shape)
        return False, (f"{int((~ok).sum())} sample(s) are neither v >> 8 nor round(v / 257); first at "
                       f"{list(map(int, idx))}: 16-bit {int(v[idx[:2]])}, got {int(got[idx])}, accepted "
                       f"{sorted({int(a[idx]), int(b[idx])})}")
    return True, "every sample is a scaling of its 16-bit value"


def check_empty(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge the decode of a stream no decoder can read: the text's "empty matrix", a uint8
    output with no element (any shape).  Returns ``(passed, message)``."""
    got = np.asarray(outputs["image"])
    if got.dtype != np.uint8:
        return False, f"image is {got.dtype}, not uint8"
    if got.size:
        return False, f"image has shape {list(got.shape)}, not empty"
    return True, f"empty ({list(got.shape)})"


def check_empty_or_image(inputs: dict, outputs: dict, attrs: dict) -> tuple[bool, str]:
    """Judge the decode of a format the text does not list (GIF, lossless): empty (the format
    is not supported) or exactly the reference decode (:func:`decode`).  Returns
    ``(passed, message)``."""
    ok, msg = check_empty(inputs, outputs, attrs)
    if ok:
        return True, "empty: the format is not supported"
    ref = decode(inputs["encoded_stream"], _pixel_format(attrs))
    got = np.asarray(outputs["image"])
    if got.dtype == np.uint8 and got.shape == ref.shape and np.array_equal(got, ref):
        return True, "decoded exactly"
    return False, f"neither empty nor the image ({msg}; reference shape {list(ref.shape)})"
