"""The base refiner: a small network that looks closely at each round base the detector proposes.

The detector sees the table at 12.8 px/in, where a 25 mm base is 12 px across:
enough to find it, not to measure it. The refiner looks at a crop of the
rectified view at ``REFINER_PX_PER_IN`` centred on the proposal and says, in one
pass: whether a round base is centred there, which standard size it is, and
where its centre lies (an offset from the crop's centre). It learned this from
rendered tables, where figures lean over their bases, shadows fall and hands
pass, so it measures the base itself, not the figure on it.

Run time needs only onnxruntime (or OpenCV's dnn); training is
``vision/training/refiner.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from vision.detections import ROUND_SIZES as SIZE_COLUMNS
from vision.onnx_session import OnnxNetwork, int8_network, views_mean

Image = npt.NDArray[np.uint8]
REFINER_PX_PER_IN = 32.0  # a 25 mm base is 31 px across; 1 mm is 1.26 px
CROP_PX = 96  # 3" square: a 60 mm base (2.36") and the proposal's error fit in it
ROUND_SIZES = list(SIZE_COLUMNS)  # the network's size classes, in this order: Detections.size_p's columns
OFFSET_SCALE_IN = 0.25  # the network's offsets are in units of this
DEFAULT_REFINER = Path(__file__).parent / "models" / "base-refiner.onnx"
# The same network gone on with on path-traced tables too (sessions 41-42): it names sizes on photos closer to real
# ones far better, and reads centres a little worse, so the shipped pair takes each from the one that reads it best.
DEFAULT_SIZE_READER = Path(__file__).parent / "models" / "base-refiner-sizes.onnx"
# The size reader gone on with on photos as worse cameras take them (JPEG 35-75, blur, noise, a small sensor;
# session 56). Alone it names sizes worse on blurred photos and makes more false bases on path-traced ones; its
# size logits averaged with DEFAULT_SIZE_READER's name sizes better on every set measured, sharp or not
# (docs/vision.md, session 57).
DEFAULT_CAMERA_SIZE_READER = Path(__file__).parent / "models" / "base-refiner-sizes-camera.onnx"
# The refiner gone on with on the same worse-camera photos (session 56): it reads blurred centres better (tuning
# blurred 1.5 px: p95 2.28 -> 2.01 mm) and sharp ones worse (0.958 -> 1.049 mm), so it measures the centres of a
# blurred photo only (docs/vision.md, session 57).
DEFAULT_BLURRED_REFINER = Path(__file__).parent / "models" / "base-refiner-blurred.onnx"
# The size reader reads a crop in its four mirror views, and in their four transposes too only where the four leave
# its size (no size this likely) or whether it is a base (P(base) between this and 1 - this) in doubt. Held-out 300:
# every figure the same as eight views for all (19 % of crops read in eight), the refining 13 % faster (session 73).
SURE_SIZE_P = 0.99
SURE_BASE_P = 0.001
OFFSET_COLUMNS = (-2, -1)  # the outputs a mirror negates (x left-right, y up-down) and a transpose swaps


def quantized_twin(path: Path) -> Path:
    """Where the int8 twin of the network at ``path`` lies (vision/training/quantize.py): NAME.int8.onnx beside it."""
    return Path(path).with_name(Path(path).stem + ".int8.onnx")


def companion_for(refiner_path: Path, reader: Path | None = DEFAULT_SIZE_READER) -> Path | None:
    """The network ``reader`` (a size reader, or the refiner for blurred photos) that goes with ``refiner_path``:
    ``reader`` with the shipped refiner, where it is there; None with a refiner of the players' own (``tablesight
    adapt``), which reads sizes and centres itself, on every photo."""
    if reader is None or not Path(reader).is_file():
        return None
    return reader if Path(refiner_path).resolve() == DEFAULT_REFINER.resolve() else None


class RefinerError(ValueError):
    """The refiner's model file is missing or unreadable."""


@dataclass(frozen=True)
class Refined:
    """The refiner's word on each crop: P(a round base is centred there), its size and its centre (inches)."""

    p_base: npt.NDArray[np.float64]
    size: list[str]
    x_in: npt.NDArray[np.float64]
    y_in: npt.NDArray[np.float64]
    p_sizes: npt.NDArray[np.float64]  # (N, len(ROUND_SIZES)) probability of each size (``size``: the likeliest)
    # (N,) how far the centre network's views (the crop's mirror images, and their transposes) read the centre from
    # their mean, root-mean-square (inches); zeros where not given. Views that disagree mark a base read unsurely
    # (vision/centre_sigma.py: VIEWS_SD_SIGMAS).
    views_sd_in: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if len(self.views_sd_in) == 0 and len(self.x_in):
            object.__setattr__(self, "views_sd_in", np.zeros(len(self.x_in)))


def crop_origin_px(centre_in: tuple[float, float]) -> tuple[int, int]:
    """The top-left pixel of the crop round ``centre_in`` in the view at REFINER_PX_PER_IN (whole pixels, so
    crops cut from a whole view and crops made on their own agree)."""
    half = CROP_PX // 2
    return int(round(centre_in[0] * REFINER_PX_PER_IN)) - half, int(round(centre_in[1] * REFINER_PX_PER_IN)) - half


def crop_centre_in(origin_px: tuple[int, int]) -> tuple[float, float]:
    """The table point at the middle of the crop whose top-left pixel is ``origin_px`` (pixel k's centre is
    table (k + 0.5) / px_per_in, as TableFrame.rectify makes it)."""
    half = CROP_PX // 2
    return (origin_px[0] + half) / REFINER_PX_PER_IN, (origin_px[1] + half) / REFINER_PX_PER_IN


def to_blob(crops: list[Image]) -> npt.NDArray[np.float32]:
    """BGR uint8 crops -> the network's input: (N, 3, CROP_PX, CROP_PX), RGB, 0..1."""
    stack = np.stack(crops).astype(np.float32) / 255.0
    return np.ascontiguousarray(stack[..., ::-1].transpose(0, 3, 1, 2))


def _companion(path: Path | None, missing: str) -> OnnxNetwork | None:
    """The network at ``path`` (None: none); a missing file is a RefinerError that says ``missing``."""
    if path is None:
        return None
    if not Path(path).is_file():
        raise RefinerError(f"{path}: {missing}")
    return OnnxNetwork(Path(path), RefinerError)


@dataclass
class BaseRefiner:
    """``size_reader_path``: a second network of the same kind whose base and size readings replace
    ``model_path``'s in the final reading (the centre stays ``model_path``'s); None: ``model_path`` reads all.
    What it gains on path-traced and flat tables: docs/detector.md, sessions 41 and 42; about 20 ms more a photo.
    ``camera_size_reader_path``: a third, whose size logits are averaged with the size reader's (the base
    reading stays the size reader's); about 20 ms more a photo (in the four mirror views alone it named 1-4 more
    sizes wrong on each tuning set, session 57). ``blurred_model_path``: a refiner that reads the centres in
    ``model_path``'s place where the photo is blurred (``measure``'s ``blurred``)."""

    model_path: Path = DEFAULT_REFINER
    size_reader_path: Path | None = None
    camera_size_reader_path: Path | None = None
    blurred_model_path: Path | None = None
    # Where onnxruntime runs: the refiner's and the size reader's int8 twins (``quantized_twin``, where they are
    # there) read photos as the renderer's camera takes them; a worse camera's photos are read by the float ones
    # (the twins were calibrated on the renderer's crops). The refining stage about twice as fast (session 76).
    quantized: bool = True
    _network: OnnxNetwork | None = field(default=None, repr=False)
    _size_reader: OnnxNetwork | None = field(default=None, repr=False)
    _camera_size_reader: OnnxNetwork | None = field(default=None, repr=False)
    _blurred_network: OnnxNetwork | None = field(default=None, repr=False)
    _int8_network: OnnxNetwork | None = field(default=None, repr=False)
    _int8_size_reader: OnnxNetwork | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        path = Path(self.model_path)
        if not path.is_file():
            raise RefinerError(f"{path}: no refiner model there (train one with vision/training/refiner.py)")
        self._network = OnnxNetwork(path, RefinerError)
        if self.camera_size_reader_path is not None and self.size_reader_path is None:
            raise RefinerError("a second size reader needs a first (size_reader_path)")
        self._size_reader = _companion(self.size_reader_path, "no size-reading refiner there")
        self._camera_size_reader = _companion(self.camera_size_reader_path, "no size-reading refiner there")
        self._blurred_network = _companion(self.blurred_model_path, "no refiner for blurred photos there")
        if self.quantized:
            self._int8_network = int8_network(quantized_twin(path), RefinerError)
            if self.size_reader_path is not None:
                self._int8_size_reader = int8_network(quantized_twin(Path(self.size_reader_path)), RefinerError)

    @property
    def reads_by_camera(self) -> bool:
        """Whether how the camera sees changes what this refiner reads (a camera size reader, or a refiner for
        blurred photos)."""
        return self._camera_size_reader is not None or self._blurred_network is not None

    @staticmethod
    def available(model_path: Path = DEFAULT_REFINER) -> bool:
        return Path(model_path).is_file()

    def crops(self, photo: Image, frame: TableFrame, centres_in: list[tuple[float, float]]) -> list[Image]:
        """The crop round each centre, cut from the photo through the calibration."""
        regions = [(*crop_origin_px(centre), CROP_PX, CROP_PX) for centre in centres_in]
        return frame.rectify_regions(photo, REFINER_PX_PER_IN, regions)

    def measure(
        self,
        photo: Image,
        frame: TableFrame,
        centres_in: list[tuple[float, float]],
        camera_sizes: bool = True,
        blurred: bool = False,
        exact: bool = False,
    ) -> Refined:
        """Each round proposal measured: read once, then again on a crop centred where the first reading put
        the base. The network was trained on crops within about 0.06" of the base's centre and reads those
        best, while a proposal may be 0.3" off. Tuning tables (seeds 6200-6319): centre p95 1.74 -> 1.46 mm,
        median 0.27 -> 0.24 mm (a third reading: 1.45 mm). The first reading, which only centres the second
        crop, is read in four views, the second in eight (``raw``; the size reader's in four where those are
        sure, ``_size_reading``): eight in both cost a third more time for 1.17 -> 1.16 mm of p95 on the tuning
        tables; one view first, 1.18 mm (docs/vision.md, session 32).
        ``camera_sizes``: the camera size reader, where there is one, has its say in the sizes; ``blurred``: the
        refiner for blurred photos, where there is one, reads the centres (in both readings). With neither, and not
        ``exact``, the int8 twins read where there are some (``quantized``)."""
        origins = [crop_origin_px(c) for c in centres_in]
        fast = not (camera_sizes or blurred or exact)
        first = self.run(self.crops(photo, frame, centres_in), origins, False, blurred=blurred, fast=fast)
        again = [(float(x), float(y)) for x, y in zip(first.x_in, first.y_in, strict=True)]
        crops = self.crops(photo, frame, again)
        return self.run(
            crops,
            [crop_origin_px(c) for c in again],
            sizes_read=True,
            camera_sizes=camera_sizes,
            blurred=blurred,
            fast=fast,
        )

    def run(
        self,
        crops: list[Image],
        origins_px: list[tuple[int, int]],
        transposes: bool = True,
        sizes_read: bool = False,
        camera_sizes: bool = False,
        blurred: bool = False,
        fast: bool = False,
    ) -> Refined:
        """The network on the crops whose top-left pixels are ``origins_px`` (``transposes``: see ``raw``);
        ``sizes_read``: the base and size readings from the size reader, where there is one; ``camera_sizes``:
        with them, the size logits averaged with the camera size reader's, where there is one; ``blurred``: the
        refiner for blurred photos reads in the refiner's place, where there is one; ``fast``: the refiner's and
        the size reader's int8 twins read in their place, where there are some."""
        if not crops:
            empty = np.zeros(0)
            return Refined(empty, [], empty, empty, np.zeros((0, len(ROUND_SIZES))), empty)
        blob = to_blob(crops)
        refiner = self._int8_network if fast and self._int8_network is not None else self._network
        raw, views_sd = self._centre_reading(blob, transposes, self._blurred_network if blurred else refiner)
        sizes = slice(1, 1 + len(ROUND_SIZES))
        if sizes_read and self._size_reader is not None:
            reader = self._int8_size_reader if fast and self._int8_size_reader is not None else self._size_reader
            # with the camera size reader, both read in eight views, as its share was measured (session 57)
            in_four_first = transposes and not (camera_sizes and self._camera_size_reader is not None)
            read = self._size_reading(blob, reader) if in_four_first else self.raw(blob, transposes, reader)
            raw[:, : sizes.stop] = read[:, : sizes.stop]
        if sizes_read and camera_sizes and self._camera_size_reader is not None:
            raw[:, sizes] = (raw[:, sizes] + self.raw(blob, transposes, self._camera_size_reader)[:, sizes]) / 2
        p_base, probs = _probabilities(raw)
        best = probs.argmax(axis=1)
        centres = np.array([crop_centre_in(o) for o in origins_px])
        offset_in = raw[:, 1 + len(ROUND_SIZES) :] * OFFSET_SCALE_IN
        return Refined(
            p_base,
            [ROUND_SIZES[k] for k in best],
            centres[:, 0] + offset_in[:, 0],
            centres[:, 1] + offset_in[:, 1],
            probs,
            views_sd,
        )

    def raw(
        self, blob: npt.NDArray[np.float32], transposes: bool = True, network: OnnxNetwork | None = None
    ) -> npt.NDArray[np.float64]:
        """(N, 1 + sizes + 2): base logit, size logits, offset (x, y) in OFFSET_SCALE_IN, read on the crop and its
        mirror images (``OnnxNetwork.raw_mirrored``, about 1 ms per base), and with ``transposes`` on their
        transposes too (twice the time): the mean logits and the median offset. Measured on the tuning tables
        (seeds 6200-6319, docs/vision.md, session 32) against the four mirror views' mean in both readings:
        refined bases over 1 mm off 75 -> 69 of 1335, sizes right 98.63 -> 98.76 %."""
        network = network or self._network
        assert network is not None
        offset = OFFSET_COLUMNS
        return network.raw_mirrored(
            blob,
            x_flip_negates=offset[:1],
            y_flip_negates=offset[1:],
            transpose_swaps=offset if transposes else None,
            median_of=offset if transposes else (),
        )

    def _centre_reading(
        self, blob: npt.NDArray[np.float32], transposes: bool, network: OnnxNetwork | None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``raw`` of the network that reads the centres, and how far its views' centres lie from their mean
        (root-mean-square, inches: ``Refined.views_sd_in``)."""
        network = network or self._network
        assert network is not None
        offset = OFFSET_COLUMNS
        views = network.all_views(blob, offset[:1], offset[1:], offset if transposes else None)
        centres_in = views[:, :, list(offset)] * OFFSET_SCALE_IN
        spread = centres_in - centres_in.mean(axis=0)
        views_sd = np.sqrt(np.mean(np.sum(spread**2, axis=2), axis=0))
        return views_mean(views, offset if transposes else ()), views_sd

    def _size_reading(self, blob: npt.NDArray[np.float32], reader: OnnxNetwork) -> npt.NDArray[np.float64]:
        """The size reader's (``reader``: it or its int8 twin) ``raw`` reading of each crop: in its four mirror
        views, and in all eight where those leave its size or its being a base in doubt (``SURE_SIZE_P``,
        ``SURE_BASE_P``)."""
        offset = OFFSET_COLUMNS
        straight = reader.mirror_views(blob, offset[:1], offset[1:])
        raw = views_mean(straight)
        p_base, probs = _probabilities(raw)
        doubt = (probs.max(axis=1) < SURE_SIZE_P) | ((p_base > SURE_BASE_P) & (p_base < 1.0 - SURE_BASE_P))
        if doubt.any():
            transposed = reader.mirror_views(np.ascontiguousarray(blob[doubt]), offset[:1], offset[1:], offset)
            raw[doubt] = views_mean(np.concatenate([straight[:, doubt], transposed]), offset)
        return raw


def _probabilities(raw: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """P(a base is centred there) and P of each size, (N,) and (N, sizes), from ``raw``'s logits."""
    p_base = 1.0 / (1.0 + np.exp(-raw[:, 0]))
    logits = raw[:, 1 : 1 + len(ROUND_SIZES)]
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return p_base, probs
