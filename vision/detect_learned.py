"""The learned detector at run time: an ONNX YOLO model run with onnxruntime or OpenCV's dnn (no torch).

The model looks at the rectified top-down view at ``DETECT_PX_PER_IN``, where a
base has a known size in pixels whatever the camera. Its boxes are proposals.
Each round one is then judged and measured by the base refiner
(vision/refiner.py): is a base centred there, which size, where exactly is its
centre. A faint box (the network is unsure of small bases under a leaning
figure) is a base only where the refiner is sure of one. Without a refiner, a round base is measured like the classical path
does it, in a small patch of the 40 px/in view: a robust circle fit of the
outline's edge points, or the box's centre where no outline fits (and says so
with a lower score). Ovals are named from their box, turned to the facing of
their blob; the oval refiner (vision/oval_refiner.py), where shipped, then
measures each one in a crop turned to that facing: its size, centre and facing.
It also says whether an oval is centred there, so a faint oval box, or a round
box the base refiner turns away (a figure over most of an oval), is an oval
where it is sure of one.
Objective markers go down before the models: they are read once, on the empty
table (``prepare``), and carried into every photo, where figures and hands may
hide them; a marker the empty table did not have is taken from a photo only
when the network is sure of it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table_frame import TableFrame
from geometry.distance import ellipse_gap_in
from geometry.shapes import BASE_HEIGHT_IN, KNOWN_BASES, MM_PER_IN, base_semi_axes_in
from vision.camera_quality import CameraQuality, camera_quality
from vision.colour import bgr_to_lab, colour_gain
from vision.detect_classical import MARKER_RADIUS_IN, OBJECTIVE_MM, ClassicalDetector, Reference
from vision.detections import RIM_SAMPLES, Detections, seen_share
from vision.onnx_session import onnxruntime_session, openvino_model
from vision.oval_refiner import DEFAULT_OVAL_REFINER, LEARNED_OVALS, OvalRefiner
from vision.photo_noise import for_networks
from vision.refiner import (
    DEFAULT_BLURRED_REFINER,
    DEFAULT_CAMERA_SIZE_READER,
    DEFAULT_REFINER,
    DEFAULT_SIZE_READER,
    BaseRefiner,
    Refined,
    companion_for,
)

Image = npt.NDArray[np.uint8]
CLASSES = ["round", "oval", "objective", "terrain"]
DETECT_PX_PER_IN = 12.8  # the top-down view the model sees: a 25 mm base is ~12.6 px across
TILE_PX = 320  # training tiles; at run time the whole view is padded to a multiple of 32
MODEL_DIR = Path(__file__).parent / "models"
DEFAULT_MODEL = MODEL_DIR / "bases-yolo11n.onnx"
ROUND = [b for b in KNOWN_BASES if "x" not in b]
OVALS = [b for b in KNOWN_BASES if "x" in b]
NO_SIZE_P = np.full(len(ROUND), np.nan)  # a row the base refiner did not read: no word on its size
REFINE_PX_PER_IN = 40.0  # the classical path's view, so the reference frame serves both
FITTED_SCORE_FLOOR = 0.5  # a fitted outline scores at least this; a box-only base at most below it
BASE_OVERLAP = 0.8  # two bases whose centres are closer than this x the larger short semi-axis are one base
MERGE_IOU = 0.6  # boxes of the plain and the mirrored view this alike are the same piece
STRONG_FIT_SCORE = 0.6  # box confidence x outline support above this: a centre 3x surer (vision/centre_sigma.py)
PLAIN_THRESHOLD = 0.25  # a box's score to be a piece (chosen on the held-out renders: recall and precision balanced)
REFINED_THRESHOLD = 0.15  # a round box's score to go to the refiner, which turns away what is no base
REFINED_MIN_P = 0.5  # the refiner's P(a round base is centred here) a round proposal needs
# The photo's light this far (any channel's gain) from the empty table's: the float refiners read, not their int8
# twins. Rendered photos read 0-0.5 %; tuning 6200-6259 tinted 12 % warm or cool, teams 2 fewer right with the twins
# (session 76).
LIGHT_DRIFT = 0.05
# A faint round box (under REFINED_THRESHOLD, from LOW_THRESHOLD) is a base only when the refiner is this sure.
# The network, at 12.8 px/in, scores a small base under a leaning figure low; the refiner, at 40 px/in, reads it
# well. Measured on the tuning tables (6200-6319 / 6040-6199 / 6320-6519): +3 / +11 / +11 bases, +1 / +0 / +3
# false (the last with INTO_SURER_BASE); at P >= 0.9, +4 / +13 bases and +4 / +5 false on the first two.
LOW_THRESHOLD = 0.02
LOW_MIN_P = 0.99
# The network boxes some ovals only faintly (under PLAIN_THRESHOLD), or as round bases the base refiner turns
# away (a figure over most of the oval). Where the oval refiner can say whether an oval is centred there
# (session 28), such a box is measured as an oval and kept when it is this sure. Tuning tables 6200-6319:
# bases found 97.98 -> 98.31 % (ovals 79 -> 82 of 87, and two more from round boxes under 0.15), precision
# 99.66 % either way, the same at P >= 0.5; at 0.99 one fewer. 6320-6399 (slim figures): no change.
OVAL_RESCUE_MIN_P = 0.9
# ...and an oval box of PLAIN_THRESHOLD or more needs this. Tuning tables 6320-6399: one oval dropped, sizes right
# 98.57 -> 98.67 %; 0.1 the same; 6200-6319 unchanged.
OVAL_MIN_P = 0.5
# An oval whose outline overlaps a round base's, or a surer oval's, by more than this is not there (two bases never
# overlap): two 25 mm bases in a row can read as a 60x35 oval (tuning table 06211).
OVAL_OVERLAP_IN = 0.1
# An oval box the oval refiner turns away at the facing of its blob is read again from that facing turned by 45,
# 90 and 135 degrees (OvalRefiner.measure_turned); what it finds so is measured by this, yields to any other base
# read at its place (_one_per_base), and is as unsure as a faint oval. Held-out 05160: a 60x35 oval, two thirds
# of its rim in view, read at P(oval) 0.04 from its blob's facing and 0.999 from a turned one. Tuning tables
# (6200-6259, 6400-6519, near-mat 13000-13039): +1 oval on the near-mat ones, nothing else changed.
TURNED_OVAL = "oval refined, turned"
# Two real bases never overlap. A faint base, or a round base beside a surer round one, whose disc reaches this far
# into the surer one's (centres closer than this x the sum of their short semi-axes) is something else read as a
# base: a figure's part, or on path-traced photos a tall figure's head over its own base (07701, 07718: 0.54-0.66;
# docs/vision.md, session 52). Reads of touching bases, one read a size large, stand at 0.88 or more; round bases
# found on the flat tuning tables and the held-out set never stood under 0.99. Faint bases: tuning 6320-6519, the
# two such were at 0.43 and 0.51, every true faint base at 1.02 or more. A round base under a surer oval is left
# to the oval rule (_one_per_base): the refiner reads round bases surer than the network boxes ovals (07616).
INTO_SURER_BASE = 0.75
# Readings too unsure to put another shape in doubt (_other_shapes): a faint box's. An oval read from a turned facing
# does since session 71: the network shipped then reads held-out 05204's oval so, where the round reading kept is
# 0.62" off its edge; on the tuning, near-mat and held-out sets (400 photos) that adds that one base and no other.
UNSURE_READINGS: tuple[str, ...] = ("faint",)
# A marker the set-up frame did not have must be this sure. Measured on the tuning tables (seeds 6200-6319):
# true markers seen in a photo score 0.85 or more in 99 % of cases; the photo-only false ones (a 40 mm base, a
# figure's shadow) scored 0.26-0.51.
NEW_MARKER_SCORE = 0.8
MARKER_ON_BASE = 0.5  # x a found base's short semi-axis: a new marker centred this close is that base
# A marker on the empty table (no model there to be taken for one). Tuning tables' empty frames (1123 markers):
# at 0.25, 1115 found; at 0.2, 1116 and no false one; at 0.15 a false one.
SETUP_MARKER_SCORE = 0.2
# ...and its box must be no longer than this x the marker's diameter: on 400 tuning tables' empty frames (seeds
# 6200-6399, 8000-8199) the true markers' boxes were 0.83-1.09 x, the one false set-up marker's 1.37 x (a woods'
# long flat patch).
MARKER_BOX_MAX = 1.25
MARKER_SHIFT = 0.25  # an outline fit may move a marker this x its radius from its box's centre, no more
MARKER_GONE_SHARE = 0.7  # a set-up marker whose disc now looks like the mat round it on this share is gone
# A refined base whose edge differs from the empty table at fewer than this share of the angles round it is
# measured from part of it only. Tuning tables 6040-6139: 13 of 1126 refined bases, centre errors median 1.2 mm
# (6 over 2 mm); the rest median 0.35 mm.
PARTIAL_SEEN_SHARE = 0.75
# ...and one that differs at fewer than this share is no base where the refiner put it (on those tables every
# refined true base differed at 0.2 of its angles or more; a base behind a building in the scripted live game,
# measured 0.42" off from what showed of it, at none).
MIN_SEEN_SHARE = 0.125
# A base read in part only, centred within this x a set-up marker's radius of it, is that marker with a hand or an
# arm over part of it: the rest of its edge looks as on the empty table. A base standing on a marker hides it, and
# its rim differs from the empty table all round. Tuning tables (6200-6259, near-mat 13000-13039): 3 of the 6 false
# bases were such markers (centres 0.03-0.08" from the marker's), and no base found was centred within 0.5" of one.
PARTIAL_ON_MARKER = 0.5
# A refined base whose box score x the refiner's P(base) is under this was read from a faint box or by an unsure
# refiner, and its centre is less sure too: on 200 tuning tables (seeds 6000-6139 blob, 6140-6199 varied with trees)
# the 53 of 2157 such bases needed a sigma of 1.37 mm for 95 % within 2 sigma, the rest 0.40 mm.
FAINT_REFINED = 0.4
# ...and such a base whose rim shows all round needs the refiner this sure: there the refiner has the whole base
# to read, and an unsure word on a faint box was, on the tuning tables (seeds 6200-6399 and 8000-8199), a hand, a
# big base read on an oval, a base read half a radius or more off: 6 of the 7 faint bases read at P < 0.7 were
# none, against 4 of 83 at P >= 0.7 (the same from 0.6; under 0.9: 7 of 12).
FAINT_MIN_P = 0.7
FAINT_HOW = "refined, faint"  # how a base read under FAINT_REFINED was measured
# An oval read from a faint box, or from a round box the base refiner turned away, whose rim differs from the empty
# table at fewer than this share of the angles round it is none: path-traced 07607's woods plate under its trees,
# read as a 90x52 oval at 0.17. Every oval found on the tuning, near-mat, flagstone and held-out sets (343) showed
# 0.79 or more, and none there was read so (docs/vision.md, session 79).
RESCUED_OVAL_SEEN_SHARE = PARTIAL_SEEN_SHARE
# A base read only in part, where the camera sees the top of another base's figure, is that figure's top: seen
# obliquely a tall figure leans away from the camera's foot, and its head, round from above with mat all round it,
# reads as a small base. Such a read whose ray passes within FIGURE_TOP_MISS_IN of a found base's centre at a
# figure's height over it (FIGURE_TOP_HEIGHTS_IN) is dropped. Path-traced slice 7600-7629 (figures 0.9-2.2" tall):
# 4 of the 5 false bases read in part lay 0.03-0.22" from such a ray, at 1.8-2.7" up; of the 63 true bases read
# in part on the flat tuning, near-mat and flagstone sets (6200-6259, 13000-13039, 77000-77039, 78000-78039), none
# lay within 0.4" (docs/vision.md, session 79).
FIGURE_TOP_HEIGHTS_IN = (0.5, 4.0)
FIGURE_TOP_MISS_IN = 0.25
PARTIAL_HOW = "refined, partial"  # how a base read under PARTIAL_SEEN_SHARE was measured


class ModelError(ValueError):
    """The detector's model file is missing or unreadable."""


RUNTIMES = ("auto", "onnxruntime", "cv2.dnn", "openvino")  # what runs the detector's network
RUNTIME_ENV = "TABLESIGHT_RUNTIME"  # names the runtime for every command (vision/analyze.py: make_detector)


@dataclass
class LearnedDetector:
    model_path: Path = DEFAULT_MODEL
    # the network's boxes this sure are proposals; None: LOW_THRESHOLD with the refiner (it turns away what is no
    # base; a round box under REFINED_THRESHOLD needs it sure, LOW_MIN_P), else PLAIN_THRESHOLD
    score_threshold: float | None = None
    nms_iou: float = 0.45
    mirror_test: bool = True  # run the view mirrored too and merge (measured: recall, precision and size up)
    px_per_in: float = REFINE_PX_PER_IN  # where positions are measured (as the classical detector)
    # "onnxruntime", "cv2.dnn", "openvino" (an optional extra, about twice as fast here; RUNTIMES), or "auto":
    # onnxruntime where installed (its network pass 1.2x as fast here, session 74), else cv2.dnn
    runtime: str = "auto"
    _net: Any = field(default=None, repr=False)
    _session: Any = field(default=None, repr=False)
    _openvino: Any = field(default=None, repr=False)
    # base size -> how much larger than the base the model boxes it (its card's "box_radius_scale", measured
    # by benchmarks/measure_box_scale.py); sizes are named from the box with this taken out
    box_scale: dict[str, float] = field(default_factory=dict)
    # the base refiner (vision/refiner.py): None, or a missing file, measures round bases by their outline
    refiner_path: Path | None = DEFAULT_REFINER
    # with the shipped refiner, the network that names sizes (vision/refiner.py: BaseRefiner.size_reader_path);
    # a refiner of the players' own (`tablesight adapt`) names its sizes itself
    size_reader_path: Path | None = DEFAULT_SIZE_READER
    # ...and the one whose size logits are averaged with it (BaseRefiner.camera_size_reader_path)
    camera_size_reader_path: Path | None = DEFAULT_CAMERA_SIZE_READER
    # ...and the refiner that reads a blurred photo's centres (BaseRefiner.blurred_model_path)
    blurred_refiner_path: Path | None = DEFAULT_BLURRED_REFINER
    # photos as the renderer's camera takes them read by the refiner's and size reader's int8 twins
    # (BaseRefiner.quantized)
    quantized_refiners: bool = True
    _refiner: BaseRefiner | None = field(default=None, repr=False)
    # the oval refiner (vision/oval_refiner.py): None, or a missing file, measures ovals by their box
    oval_refiner_path: Path | None = DEFAULT_OVAL_REFINER
    _oval_refiner: OvalRefiner | None = field(default=None, repr=False)
    _classical: ClassicalDetector = field(default_factory=ClassicalDetector, repr=False)  # shared measuring tools

    def __post_init__(self) -> None:
        path = Path(self.model_path)
        if not path.is_file():
            raise ModelError(f"{path}: no detector model there (train one with `tablesight train-detector`)")
        if self.runtime not in RUNTIMES:
            raise ValueError(f"runtime {self.runtime!r}: expected one of {', '.join(RUNTIMES)}")
        if self.runtime == "openvino":
            self._openvino = openvino_model(path, ModelError)
        elif self.runtime != "cv2.dnn":
            self._session = onnxruntime_session(path, self.runtime == "onnxruntime", ModelError)
        if self._session is None and self._openvino is None:
            try:
                self._net = cv2.dnn.readNetFromONNX(str(path))
            except cv2.error as error:
                raise ModelError(f"{path}: not a model cv2.dnn can read ({str(error).strip()[:200]})") from error
        self._classical = ClassicalDetector(self.px_per_in)
        card = path.with_suffix(".card.json")
        if not self.box_scale and card.is_file():
            try:
                scale = json.loads(card.read_text(encoding="utf-8")).get("box_radius_scale", {})
            except (OSError, ValueError) as error:
                raise ModelError(f"{card}: not a readable model card ({error})") from error
            self.box_scale = {str(k): float(v) for k, v in scale.items()}
        if self.refiner_path is not None and BaseRefiner.available(Path(self.refiner_path)):
            reader = companion_for(Path(self.refiner_path), self.size_reader_path)
            second = companion_for(Path(self.refiner_path), self.camera_size_reader_path) if reader else None
            blurred = companion_for(Path(self.refiner_path), self.blurred_refiner_path)
            self._refiner = BaseRefiner(Path(self.refiner_path), reader, second, blurred, self.quantized_refiners)
        if self.oval_refiner_path is not None and OvalRefiner.available(Path(self.oval_refiner_path)):
            self._oval_refiner = OvalRefiner(Path(self.oval_refiner_path))
        if self.score_threshold is None:
            self.score_threshold = PLAIN_THRESHOLD if self._refiner is None else LOW_THRESHOLD

    @property
    def setup_threshold(self) -> float:
        """The box score the empty table's pieces (markers, terrain) are read from. They were measured with boxes
        from REFINED_THRESHOLD; the fainter ones the refiner may confirm as bases split a marker in two."""
        return max(float(self.score_threshold or 0.0), REFINED_THRESHOLD)

    @staticmethod
    def available(model_path: Path = DEFAULT_MODEL) -> bool:
        return Path(model_path).is_file()

    def prepare(self, empty: Image, frame: TableFrame) -> Reference:
        """Set-up: the empty table rectified at the refinement scale, and the objective markers on it.

        Markers are put down before the models, so they are read here, where no figure, hand or base
        hides them; each photo then carries them (``detect``)."""
        boxes, cls, score = self.boxes(frame.rectify(empty, DETECT_PX_PER_IN), self.setup_threshold)
        rows = [
            self._measure(empty, None, frame, "objective", centre_in, size_in, s)
            for name, centre_in, size_in, s in _proposals(boxes, cls, score)
            if name == "objective" and s >= SETUP_MARKER_SCORE and _marker_sized(size_in)
        ]
        # measured with nothing over them
        rows = [(*r[:9], f"{r[9]}, reference", *r[10:]) for r in rows if r is not None]
        return Reference.set_up(frame.rectify(empty, self.px_per_in), _detections(rows), frame)

    # ---- the network ---------------------------------------------------------------------
    def boxes(
        self, top: Image, threshold: float | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Boxes (x0, y0, x1, y1 in ``top``'s pixels), classes and scores from ``threshold`` (default: the
        detector's ``score_threshold``), after per-class NMS.

        With ``mirror_test`` the view is also run mirrored left-right: each box kept is then the
        score-weighted mean of the boxes of its class that overlap it in either view, and its score is
        the mean of its best score in each view (a box one view does not see counts half)."""
        rows = [self._raw(top)]
        if self.mirror_test:
            mirrored = self._raw(cv2.flip(top, 1))
            mirrored[:, 0] = top.shape[1] - mirrored[:, 0]
            rows.append(mirrored)
        view = np.concatenate([np.full(len(r), k) for k, r in enumerate(rows)])
        out = np.concatenate(rows)
        scores_all = out[:, 4:]
        cls = scores_all.argmax(axis=1)
        score = scores_all[np.arange(len(out)), cls]
        # With two views a box needs its mean score over the threshold: let through what could get there.
        threshold = float(self.score_threshold or 0.0) if threshold is None else threshold
        floor = threshold if len(rows) == 1 else threshold * 0.4
        keep = score >= floor
        out, cls, score, view = out[keep], cls[keep], score[keep], view[keep]
        xywh = np.c_[out[:, 0] - out[:, 2] / 2, out[:, 1] - out[:, 3] / 2, out[:, 2], out[:, 3]]
        chosen = cv2.dnn.NMSBoxesBatched(xywh.tolist(), score.tolist(), cls.tolist(), floor, self.nms_iou)
        idx = np.asarray(chosen, dtype=np.int64).reshape(-1)
        if len(rows) > 1 and len(idx):
            merged, mean_score = [], []
            for i in idx:
                same = (_iou(xywh[i], xywh) > MERGE_IOU) & (cls == cls[i])
                merged.append((xywh[same] * score[same, None]).sum(axis=0) / score[same].sum())
                mean_score.append(np.mean([score[same & (view == k)].max(initial=0.0) for k in range(len(rows))]))
            xywh[idx], score[idx] = np.array(merged), np.array(mean_score)
            idx = idx[score[idx] >= threshold]
        boxes = np.c_[xywh[idx, 0], xywh[idx, 1], xywh[idx, 0] + xywh[idx, 2], xywh[idx, 1] + xywh[idx, 3]]
        return boxes.astype(np.float64), cls[idx].astype(np.int64), score[idx].astype(np.float64)

    def _raw(self, top: Image) -> npt.NDArray[np.float64]:
        """The network's raw rows for ``top``: (N, 4 + classes), cx, cy, w, h in its pixels, class scores."""
        h, w = top.shape[:2]
        ph, pw = -(-h // 32) * 32, -(-w // 32) * 32
        padded = np.zeros((ph, pw, 3), np.uint8)
        padded[:h, :w] = top
        blob = cv2.dnn.blobFromImage(padded, 1 / 255.0, (pw, ph), swapRB=True)
        if self._openvino is not None:
            out = self._openvino(blob)[0]
        elif self._session is not None:
            out = self._session.run(None, {self._session.get_inputs()[0].name: blob})[0]
        else:
            self._net.setInput(blob)
            out = self._net.forward()
        return np.asarray(out, dtype=np.float64)[0].T

    # ---- the whole frame ---------------------------------------------------------------------
    def detect(
        self, photo: Image, reference: Reference | None, frame: TableFrame, camera: CameraQuality | None = None
    ) -> tuple[Detections, dict[str, float], Image]:
        """Bases and objective markers in table inches; timings; the top-down view the model saw. ``camera``: how
        well the camera sees (read from ``photo`` where not given): past the renderer's camera, sizes are read by
        both size readers, and a blurred photo's centres by the refiner for blurred photos."""
        times = {}
        start = time.perf_counter()
        if camera is None and self._refiner is not None and self._refiner.reads_by_camera:
            camera = camera_quality(photo, frame)
        # A noisy photo is smoothed for the networks (vision/photo_noise.py); colours are still read from the photo.
        network_photo = for_networks(photo)
        top = frame.rectify(photo, DETECT_PX_PER_IN)
        network_top = top if network_photo is photo else frame.rectify(network_photo, DETECT_PX_PER_IN)
        times["rectify_ms"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        boxes, cls, score = self.boxes(network_top)
        times["network_ms"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        known = reference.objectives if reference is not None else Detections.empty()
        proposals = []
        asked: set[int] = set()  # round proposals made of new markers' boxes: a base there, or nothing
        boxed = _proposals(boxes, cls, score)
        rescue_ovals = self._oval_refiner is not None and self._oval_refiner.says_if_oval
        for name, centre_in, size_in, s in boxed:
            if name == "terrain" or (name not in ("round", "oval") and s < PLAIN_THRESHOLD):
                continue  # the refiners check bases only: the others keep the plain threshold
            if name == "oval" and s < PLAIN_THRESHOLD and not rescue_ovals:
                continue
            if name == "objective" and (
                _near(known, centre_in, OBJECTIVE_MM / MM_PER_IN)
                or s < NEW_MARKER_SCORE
                or not _marker_sized(size_in)
                or frame.layout.on_marker(*centre_in)[0]
            ):
                continue  # the set-up's marker stands for it; one it did not have must be sure, and disc-sized
            proposals.append((name, centre_in, size_in, s))
            if name == "objective" and self._refiner is not None:
                # A marker the set-up lacks may be a 40 mm base whose figure shows a plain disc from above (the
                # model boxed held-out 05212's as a marker only): the refiner is asked too, and where it finds
                # a base there, the marker goes (_no_marker_on_a_base).
                proposals.append(("round", centre_in, size_in, s))
                asked.add(len(proposals) - 1)
        # the refiners' int8 twins were calibrated in the set-up's light: a photo whose light has drifted from it
        # (a webcam's white balance) is read by the float networks
        drifted = reference is not None and _light_drifted(top, reference.rectified)
        rounds = [p[1] for p in proposals if p[0] == "round"]
        refined = self._refine(network_photo, frame, rounds, camera, drifted)
        rows, faint, k = [], [], 0
        for index, (name, centre_in, size_in, s) in enumerate(proposals):
            seen, rescued = None, False
            if name == "oval" and s < PLAIN_THRESHOLD:
                rescued = True  # a faint oval box: an oval only where the oval refiner is sure
            if name == "round" and refined is not None:
                seen = (
                    refined.x_in[k],
                    refined.y_in[k],
                    refined.size[k],
                    refined.p_base[k],
                    refined.p_sizes[k],
                    refined.views_sd_in[k],
                )
                k += 1
                if seen[3] < (REFINED_MIN_P if s >= REFINED_THRESHOLD else LOW_MIN_P):
                    if not rescue_ovals or index in asked:
                        continue
                    name, seen, rescued = "oval", None, True  # no round base: an oval under a figure?
                elif s < REFINED_THRESHOLD and _near(known, seen[:2], MARKER_RADIUS_IN):
                    continue  # a faint "base" on a marker: the marker's disc, part hidden, read as one
            row = self._measure(photo, reference, frame, name, centre_in, size_in, s, seen, rescued)
            if row is None:
                continue
            rows.append(row)
            faint.append(s < REFINED_THRESHOLD or rescued)
        kept_rows = _no_marker_on_a_base(_no_figure_tops(_one_per_base(rows, faint), frame.camera_centre_in()))
        found = _detections(kept_rows, _other_shapes(kept_rows, rows))
        # Markers can be taken away in play (Grinding-Annihilation's Exstintech Caches removes four).
        marker_boxes = [p[1] for p in boxed if p[0] == "objective"]
        kept = [
            k for k in range(len(known)) if self._still_there(photo, reference, frame, known[k], found, marker_boxes)
        ]
        times["refine_ms"] = (time.perf_counter() - start) * 1e3
        return Detections.concat([found, known[np.array(kept, np.int64)]]), times, top

    # ---- one piece -------------------------------------------------------------------------
    def _measure(
        self,
        photo: Image,
        reference: Reference | None,
        frame: TableFrame,
        name: str,
        centre_in: tuple[float, float],
        size_in: tuple[float, float],
        score: float,
        refined: tuple[float, float, str, float, npt.NDArray[np.float64], float] | None = None,
        rescued: bool = False,
    ) -> tuple[Any, ...] | None:
        """(x, y, a, b, facing, kind, size, score, colour, measured by, rim sample, the empty table's colours
        at the rim sample's points, the refiner's P of each round size, its views' spread) of one proposal, refined
        in a 40 px/in patch. ``refined``: the refiner's centre, size, P(base), P of each size and its views' spread
        (``Refined.views_sd_in``) for a round base; None where the photo shows no base at the refiner's place, or
        an oval the oval refiner says is none (``rescued``: a faint or round box tried as an oval, which needs it
        sure)."""
        ppi = self.px_per_in
        half_in = max(size_in) * 0.85 + 0.15
        x0 = int(np.floor((centre_in[0] - half_in) * ppi))
        y0 = int(np.floor((centre_in[1] - half_in) * ppi))
        side = int(np.ceil(2 * half_in * ppi))
        patch = frame.rectify(photo, ppi, (x0, y0, side, side))
        colour_of = self._classical._rim_colour

        def mat_at(
            cx: float, cy: float, r_px: float, r_across_px: float | None = None, facing_deg: float = 0.0
        ) -> npt.NDArray[np.float64]:
            """The empty table's colours where the rim samples are taken (what a thin rim blurs into)."""
            if reference is None:
                return np.full((RIM_SAMPLES, 3), np.nan)
            return ClassicalDetector.rim_sample(reference.rectified, cx + x0, cy + y0, r_px, r_across_px, facing_deg)

        if refined is not None:  # the refiner measured it: only its colours are left to sample
            a = base_semi_axes_in(refined[2])[0]
            cx, cy = refined[0] * ppi - x0, refined[1] * ppi - y0
            colour = colour_of(patch, cx, cy, a * ppi)
            rim = ClassicalDetector.rim_sample(patch, cx, cy, a * ppi)
            mat = mat_at(cx, cy, a * ppi)
            share = seen_share(rim[None], mat[None])[0]
            if share < MIN_SEEN_SHARE:
                return None  # the photo shows nothing round it the empty table did not have: no base there
            # Seen only in part (behind a wall, a tree), or read from a faint box: the centre is less sure
            # (vision/centre_sigma.py)
            sure = score * refined[3]
            how = "refined"
            if share < PARTIAL_SEEN_SHARE:
                if reference is not None and _near(
                    reference.objectives, refined[:2], PARTIAL_ON_MARKER * MARKER_RADIUS_IN
                ):
                    return None  # a set-up marker with a hand over part of it, the rest as on the empty table
                how = PARTIAL_HOW
            elif sure < FAINT_REFINED:
                if refined[3] < FAINT_MIN_P:
                    return None
                how = FAINT_HOW
            return (
                refined[0],
                refined[1],
                a,
                a,
                0.0,
                0,
                refined[2],
                sure,
                colour,
                how,
                rim,
                mat,
                refined[4],
                refined[5],
            )
        ref_patch = _slice(reference.rectified, x0, y0, side) if reference is not None else None
        edges, fg = _outline(patch, ref_patch)
        cx, cy = centre_in[0] * ppi - x0, centre_in[1] * ppi - y0
        if name == "objective":
            r = MARKER_RADIUS_IN * ppi
            fit = ClassicalDetector._fit_circle(edges, cx, cy, r)
            how = "marker box"
            # The shift guard: the outline points near a marker can be a neighbouring base's.
            if (
                fit is not None
                and abs(fit[2] - r) < 0.12 * r
                and math.hypot(fit[0] - cx, fit[1] - cy) < MARKER_SHIFT * r
            ):
                cx, cy, how = fit[0] + 0.5, fit[1] + 0.5, "marker outline"  # pixel k's centre: k + 0.5
            r_in = MARKER_RADIUS_IN
            no_rim = np.zeros((RIM_SAMPLES, 3))
            return (
                (cx + x0) / ppi,
                (cy + y0) / ppi,
                r_in,
                r_in,
                0.0,
                1,
                "",
                score,
                np.zeros(3),
                how,
                no_rim,
                no_rim,
                NO_SIZE_P,
                0.0,
            )
        if name == "oval":
            size, facing = _oval_shape(size_in, fg, cx, cy)
            how = "oval"
            if self._oval_refiner is not None and size in LEARNED_OVALS:
                turned = False
                if rescued:  # a faint or round box: the blob's facing only (turning it finds ovals that are not)
                    seen = self._oval_refiner.measure(photo, frame, [centre_in], [facing])
                else:
                    seen, turned = self._oval_refiner.measure_turned(photo, frame, centre_in, facing, OVAL_MIN_P)
                if seen.p_oval[0] < (OVAL_RESCUE_MIN_P if rescued else OVAL_MIN_P):
                    return None
                size, facing, how = seen.size[0], float(seen.facing_deg[0]), "oval refined"
                if rescued:
                    how = "oval refined, faint"  # a faint box, or a round one: less of the oval shows
                elif turned:
                    how = TURNED_OVAL
                cx, cy = seen.x_in[0] * ppi - x0, seen.y_in[0] * ppi - y0
            elif rescued:
                return None  # no refiner's word on it: a faint box alone is no oval
            a, b = base_semi_axes_in(size)
            colour = colour_of(patch, cx, cy, b * ppi)
            # Round its outline along the facing the refiner measured; the box's facing is rougher, so there
            # on the circle of its short semi-axis (the team read better so).
            ring = (a * ppi, b * ppi, facing) if how.startswith("oval refined") else (b * ppi, None, 0.0)
            rim, mat = ClassicalDetector.rim_sample(patch, cx, cy, *ring), mat_at(cx, cy, *ring)
            # The empty table looked the same there (a woods' oval plate): no base. An oval read from a faint box,
            # or from a round one, must show its rim as much as a base read whole (RESCUED_OVAL_SEEN_SHARE).
            if seen_share(rim[None], mat[None])[0] < (RESCUED_OVAL_SEEN_SHARE if rescued else MIN_SEEN_SHARE):
                return None
            return (
                (cx + x0) / ppi,
                (cy + y0) / ppi,
                a,
                b,
                facing,
                0,
                size,
                score,
                colour,
                how,
                rim,
                mat,
                NO_SIZE_P,
                0.0,
            )
        radius_guess_in = (size_in[0] + size_in[1]) / 4
        size = min(ROUND, key=lambda s: abs(base_semi_axes_in(s)[0] * self.box_scale.get(s, 1.0) - radius_guess_in))
        r_px = base_semi_axes_in(size)[0] * ppi
        fit = ClassicalDetector._fit_circle(edges, cx, cy, r_px)
        fitted, how = score * 0.5, "box"
        # The box decides the size (measured: it names the base better than the fitted radius, which
        # shadows and overhanging figures pull); the outline, when it agrees with that size, the centre.
        if fit is not None and fit[3] >= 0.35 and abs(r_px - fit[2]) < 0.12 * r_px:
            fitted = max(FITTED_SCORE_FLOOR, score * fit[3])
            cx, cy = fit[0] + 0.5, fit[1] + 0.5  # the fit is in pixel indices; pixel k's centre is k + 0.5
            how = "outline" if fitted >= STRONG_FIT_SCORE else "outline, weak"
        a = base_semi_axes_in(size)[0]
        colour = colour_of(patch, cx, cy, a * ppi)
        rim, mat = ClassicalDetector.rim_sample(patch, cx, cy, r_px), mat_at(cx, cy, r_px)
        return ((cx + x0) / ppi, (cy + y0) / ppi, a, a, 0.0, 0, size, fitted, colour, how, rim, mat, NO_SIZE_P, 0.0)

    def _still_there(
        self,
        photo: Image,
        reference: Reference | None,
        frame: TableFrame,
        marker: Detections,
        bases: Detections,
        marker_boxes: list[tuple[float, float]],
    ) -> bool:
        """Whether a marker of the set-up is still on the table in ``photo``. It is gone when the network boxes
        no marker there, no base found stands on it, and its disc has changed since the set-up into what looks
        like the mat round it (the empty table's ring just outside the marker), over MARKER_GONE_SHARE of it.
        A figure, a base or a hand over it keeps it, and so does a wall that hid it on the set-up too."""
        x_in, y_in = float(marker.x_in[0]), float(marker.y_in[0])
        r_in = MARKER_RADIUS_IN
        if reference is None or any(math.hypot(bx - x_in, by - y_in) < r_in for bx, by in marker_boxes):
            return True
        near = np.hypot(bases.x_in - x_in, bases.y_in - y_in) < r_in + bases.a_in
        if near[bases.kind == 0].any():
            return True
        ppi = self.px_per_in
        half = int(np.ceil(1.7 * r_in * ppi))
        x0, y0 = int(round(x_in * ppi)) - half, int(round(y_in * ppi)) - half
        seen = bgr_to_lab(frame.rectify(photo, ppi, (x0, y0, 2 * half, 2 * half)))
        empty = bgr_to_lab(_slice(reference.rectified, x0, y0, 2 * half))
        yy, xx = np.mgrid[0 : 2 * half, 0 : 2 * half] + 0.5
        d_px = np.hypot(xx - (x_in * ppi - x0), yy - (y_in * ppi - y0))
        disc, ring = d_px < 0.8 * r_in * ppi, (d_px > 1.2 * r_in * ppi) & (d_px < 1.6 * r_in * ppi)
        mat = np.median(empty[ring], axis=0)
        spread = np.median(np.linalg.norm(empty[ring] - mat, axis=1))
        tolerance = max(10.0, 3.0 * spread)
        like_mat = np.linalg.norm(seen[disc] - mat, axis=1) < tolerance
        changed = np.linalg.norm(seen[disc] - empty[disc], axis=1) >= tolerance  # a wall over it stays as it was
        return bool((like_mat & changed).mean() < MARKER_GONE_SHARE)

    def _refine(
        self,
        photo: Image,
        frame: TableFrame,
        centres_in: list[tuple[float, float]],
        camera: CameraQuality | None = None,
        drifted: bool = False,
    ) -> Refined | None:
        """The refiner's word on each round proposal; None without a refiner. Past the renderer's camera both size
        readers name the sizes; in a blurred photo the refiner for blurred photos reads the centres; in either, or
        in light ``drifted`` from the set-up's, the float networks read (not their int8 twins)."""
        if self._refiner is None:
            return None
        worse, blurred = (camera.worse_than_rendered, camera.blurred) if camera is not None else (False, False)
        return self._refiner.measure(photo, frame, centres_in, camera_sizes=worse, blurred=blurred, exact=drifted)


def _light_drifted(top: Image, empty_top: Image) -> bool:
    """Whether the photo's light (any channel) lies LIGHT_DRIFT or more from the empty table's (``colour_gain``)."""
    return bool(np.abs(colour_gain(top, empty_top) - 1.0).max() >= LIGHT_DRIFT)


def _proposals(
    boxes: npt.NDArray[np.float64], cls: npt.NDArray[np.int64], score: npt.NDArray[np.float64]
) -> list[tuple[str, tuple[float, float], tuple[float, float], float]]:
    """The network's boxes (in the DETECT_PX_PER_IN view) as (class, centre in, size in, score)."""
    out = []
    for box, c, s in zip(boxes, cls, score, strict=True):
        centre_in = ((box[0] + box[2]) / 2 / DETECT_PX_PER_IN, (box[1] + box[3]) / 2 / DETECT_PX_PER_IN)
        size_in = ((box[2] - box[0]) / DETECT_PX_PER_IN, (box[3] - box[1]) / DETECT_PX_PER_IN)
        out.append((CLASSES[int(c)], centre_in, size_in, float(s)))
    return out


def _marker_sized(size_in: tuple[float, float]) -> bool:
    """Whether a box is small enough to be an objective marker's disc (a larger one is something else)."""
    return max(size_in) <= MARKER_BOX_MAX * OBJECTIVE_MM / MM_PER_IN


def _near(found: Detections, centre_in: tuple[float, float], distance_in: float) -> bool:
    """Whether any of ``found`` lies within ``distance_in`` of ``centre_in``."""
    return bool(np.any(np.hypot(found.x_in - centre_in[0], found.y_in - centre_in[1]) < distance_in))


def _detections(rows: list[tuple[Any, ...]], other_shapes: list[tuple[str, float]] | None = None) -> Detections:
    """Rows of ``_measure`` as Detections; ``other_shapes``: each row's ``_other_shapes`` (none: no row's place
    was read as the other shape)."""
    if not rows:
        return Detections.empty()
    other = other_shapes or [("", 0.0)] * len(rows)
    return Detections(
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
        np.array([r[3] for r in rows]),
        np.array([r[4] for r in rows]),
        np.array([r[5] for r in rows], np.int8),
        np.array([r[6] for r in rows], dtype="<U8"),
        np.array([r[7] for r in rows]),
        np.array([r[8] for r in rows]),
        np.array([r[9] for r in rows], dtype="<U32"),
        np.array([r[10] for r in rows]),
        np.array([r[11] for r in rows]),
        np.array([r[12] for r in rows]),
        np.array([o[0] for o in other], dtype="<U8"),
        np.array([o[1] for o in other], np.float64),
        np.array([r[13] for r in rows], np.float64),
    )


def _other_shapes(kept: list[tuple[Any, ...]], rows: list[tuple[Any, ...]]) -> list[tuple[str, float]]:
    """For each kept row, the nearest reading of the other shape (an oval for a round base, a round base for an
    oval) that was made at its place and dropped for it, as (its size, how far its centre lies, inches); ("", 0)
    where there was none. At its place: the centres closer than the longer of the two long semi-axes. The network
    boxed both, and which one stays goes by how sure each reading is, which does not say which shape is there.
    On 732 tables (tuning 6200-6399, held-out 5000-5299, fresh 59000-59099 and 60000-60099, path-traced; session
    60) 9 bases kept had such a reading, not faint and not reaching into another base kept: 4 had the wrong shape
    (a 60x35 oval under its figure read as a 50 mm base), read 6.6-9.0 mm off with a clear base's sigma."""
    dropped = [r for r in rows if r[5] == 0 and not any(r is k for k in kept) and not r[9].endswith(UNSURE_READINGS)]
    out: list[tuple[str, float]] = []
    for row in kept:
        at_place = [
            (d, r)
            for r in dropped
            if row[5] == 0
            and _is_oval(r) != _is_oval(row)
            and (d := math.hypot(r[0] - row[0], r[1] - row[1])) < max(r[2], row[2])
        ]
        # A reading that reaches into another base kept too was of both (two 25 mm bases in a row read as one 60x35
        # oval), not another shape of this one.
        rest = [k for k in kept if k is not row]
        shapes = [(d, r) for d, r in at_place if not _overlaps(r, rest)]
        d, r = min(shapes, key=lambda dr: dr[0], default=(0.0, None))
        out.append(("", 0.0) if r is None else (str(r[6]), float(d)))
    return out


def _one_per_base(rows: list[tuple[Any, ...]], faint: list[bool]) -> list[tuple[Any, ...]]:
    """Bases measured onto one another (two proposals of one base, a round proposal on an oval), surest first:
    a base whose centre lies within BASE_OVERLAP of the larger short semi-axis of a surer one's is dropped.
    Two real bases never overlap, so their centres are at least the sum of their semi-axes apart; a ``faint``
    one (a box under REFINED_THRESHOLD), or a round one beside a surer round one (a figure's head over its own
    base), is dropped when it reaches into that base (INTO_SURER_BASE)."""
    kept: list[tuple[Any, ...]] = []
    # An oval read only from a turned facing is a second guess: it yields to every other reading of its place.
    for k in sorted(range(len(rows)), key=lambda k: (TURNED_OVAL in rows[k][9:10], -float(rows[k][7]))):
        row = rows[k]
        if row[5] == 0 and any(_lies_on(row, o, faint[k]) for o in kept if o[5] == 0):
            continue
        kept.append(row)
    # A round base read faintly yields to a surer oval it reaches into (held-out 05112 rendered: a 90x52 oval boxed
    # at 0.74, and a 40 mm base read at 0.33 off a round box on its edge).
    kept = [
        row
        for row in kept
        if not (
            row[9:10] == (FAINT_HOW,)
            and _overlaps(row, [o for o in kept if _is_oval(o) and float(o[7]) > float(row[7])])
        )
    ]
    # An oval whose outline reaches into a round base kept, or into a surer oval, is dropped: the base refiner
    # reads round bases surer than the network boxes ovals, and two round bases in a row can look like one.
    return [
        row
        for k, row in enumerate(kept)
        if not (_is_oval(row) and _overlaps(row, [o for j, o in enumerate(kept) if not _is_oval(o) or j < k]))
    ]


def _no_figure_tops(rows: list[tuple[Any, ...]], camera_in: npt.NDArray[np.float64] | None) -> list[tuple[Any, ...]]:
    """``rows`` without the bases read in part that are another base's figure top (FIGURE_TOP_HEIGHTS_IN). Places
    are in the view of the table's plane; the point of a place's ray ``h`` above the table lies ``h / height`` of
    the way to the camera (``camera_in``: its x, y and height; None without a pose, and then nothing is dropped).
    A base's place is its top's, ``BASE_HEIGHT_IN`` up; its figure stands over its centre, where that ray is."""
    if camera_in is None or camera_in[2] <= FIGURE_TOP_HEIGHTS_IN[1]:
        return rows
    foot, height = camera_in[:2], float(camera_in[2])
    whole = [r for r in rows if r[5] == 0 and r[9] != PARTIAL_HOW]
    if not whole:
        return rows
    centres = np.array([r[:2] for r in whole], np.float64)
    centres += (foot - centres) * BASE_HEIGHT_IN / height

    def figure_top(row: tuple[Any, ...]) -> bool:
        place = np.array(row[:2], np.float64)
        step = (foot - place) / height  # along the ray, per inch up
        up = np.clip((centres - place) @ step / max(float(step @ step), 1e-12), *FIGURE_TOP_HEIGHTS_IN)
        miss = np.hypot(*(place + up[:, None] * step - centres).T)
        return bool((miss < FIGURE_TOP_MISS_IN).any())

    return [r for r in rows if not (r[5] == 0 and r[9] == PARTIAL_HOW and figure_top(r))]


def _lies_on(row: tuple[Any, ...], surer: tuple[Any, ...], faint: bool) -> bool:
    """Whether base ``row`` was read onto the surer base ``surer``: centred within BASE_OVERLAP of the larger short
    semi-axis (one base read twice), or, ``faint`` or both round, reaching INTO_SURER_BASE into it."""
    d, b, other_b = math.hypot(row[0] - surer[0], row[1] - surer[1]), row[3], surer[3]
    if d < BASE_OVERLAP * max(b, other_b):
        return True
    held = faint or not (_is_oval(row) or _is_oval(surer))
    return held and d < INTO_SURER_BASE * (b + other_b)


def _is_oval(row: tuple[Any, ...]) -> bool:
    return bool(row[5] == 0 and row[2] != row[3])


def _overlaps(row: tuple[Any, ...], others: list[tuple[Any, ...]]) -> bool:
    """Whether the base ``row`` overlaps any base of ``others`` by more than OVAL_OVERLAP_IN.
    Rows: (x, y, a, b, facing in degrees, kind, ...)."""
    others = [o for o in others if o[5] == 0]
    if not others:
        return False
    o = np.array([o[:5] for o in others], np.float64)
    n = len(o)
    gap = ellipse_gap_in(
        o[:, 0] - row[0],
        o[:, 1] - row[1],
        np.full(n, row[2]),
        np.full(n, row[3]),
        np.full(n, math.radians(row[4])),
        o[:, 2],
        o[:, 3],
        np.radians(o[:, 4]),
    )
    return bool((gap < -OVAL_OVERLAP_IN).any())


def _no_marker_on_a_base(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A marker the set-up frame lacks (every marker among ``rows`` is one), centred within MARKER_ON_BASE of a
    base's short semi-axis from that base's centre, is the base read as a marker: a marker lying under a base
    so nearly centred would not show enough of its disc to be boxed. Held-out 05258: a 50 mm base two thirds
    under a hand, boxed "objective" at 0.8 or more, its centre 0.18" from the base found there."""
    bases = [row for row in rows if row[5] == 0]
    return [
        row
        for row in rows
        if row[5] == 0 or all(math.hypot(row[0] - b[0], row[1] - b[1]) >= MARKER_ON_BASE * b[3] for b in bases)
    ]


def _iou(box: npt.NDArray[np.float64], boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Intersection over union of one (x, y, w, h) box with each of ``boxes``."""
    ix = np.clip(np.minimum(box[0] + box[2], boxes[:, 0] + boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    iy = np.clip(np.minimum(box[1] + box[3], boxes[:, 1] + boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = ix * iy
    union = box[2] * box[3] + boxes[:, 2] * boxes[:, 3] - inter
    out: npt.NDArray[np.float64] = inter / np.maximum(union, 1e-9)
    return out


def _slice(image: Image, x0: int, y0: int, side: int) -> Image:
    """A square of ``image`` (zero outside it), for patches that reach past the table's edge."""
    out = np.zeros((side, side) + image.shape[2:], image.dtype)
    ys, xs = (
        slice(max(y0, 0), max(min(y0 + side, image.shape[0]), 0)),
        slice(max(x0, 0), max(min(x0 + side, image.shape[1]), 0)),
    )
    part = image[ys, xs]
    out[ys.start - y0 : ys.start - y0 + part.shape[0], xs.start - x0 : xs.start - x0 + part.shape[1]] = part
    return out


def _outline(patch: Image, ref_patch: Image | None) -> tuple[npt.NDArray[np.float64], Image | None]:
    """Outline points: where the photo differs from the empty table (with a reference; that mask is
    returned too), else the patch's edges."""
    if ref_patch is not None:
        fg = ClassicalDetector()._foreground(patch, ref_patch)
        return ClassicalDetector._edge_points(fg), fg
    gray = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (0, 0), 1.0), 30, 90)
    return np.argwhere(edges > 0)[:, ::-1].astype(np.float64), None


def _oval_shape(size_in: tuple[float, float], fg: Image | None, cx: float, cy: float) -> tuple[str, float]:
    """The standard oval whose box, turned to the facing measured on the blob (where one fits), is nearest the
    proposal's box; and that facing. The blob gives the facing only: it holds the figure and its shadow too,
    and named ovals a size too large (measured on 29 ovals of the tuning tables: 31 % right, by the box 90 %)."""
    facing = 0.0 if size_in[0] >= size_in[1] else 90.0
    if fg is not None:
        contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        inside = [c for c in contours if len(c) >= 20 and cv2.pointPolygonTest(c, (cx, cy), False) >= 0]
        if inside:
            (_, _), (w, h), angle = cv2.fitEllipse(max(inside, key=len))
            facing = (angle + (90.0 if w < h else 0.0)) % 180.0
    cos_f, sin_f = abs(np.cos(np.radians(facing))), abs(np.sin(np.radians(facing)))
    half_w_in, half_h_in = size_in[0] / 2, size_in[1] / 2

    def box_mismatch_in(size: str) -> float:
        a, b = base_semi_axes_in(size)
        return float(abs(np.hypot(a * cos_f, b * sin_f) - half_w_in) + abs(np.hypot(a * sin_f, b * cos_f) - half_h_in))

    return min(OVALS, key=box_mismatch_in), facing
