"""The oval refiner (vision/oval_refiner.py): its turned crops, its errors, and what it measures on
held-out renders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.shapes import MM_PER_IN, base_semi_axes_in
from vision.analyze import ground_positions
from vision.detect_learned import CLASSES, DETECT_PX_PER_IN, LearnedDetector
from vision.evaluate import _match, analyze_rendered
from vision.oval_refiner import (
    DEFAULT_OVAL_REFINER,
    OVAL_CROP_PX,
    OVAL_PX_PER_IN,
    OvalRefiner,
    OvalRefinerError,
    oval_crop,
    to_table_offset,
)
from vision.synth.table import render_table


@pytest.fixture(scope="module")
def table_and_frame() -> tuple[object, object]:
    table = render_table(6, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    return table, calibrate(table.empty, table.layout, lens)


def test_an_unturned_crop_shows_the_rectified_view(table_and_frame: tuple[object, object]) -> None:
    """Facing 0: crop pixel (u, v) is the view's pixel (k + u, l + v) when the centre sits on a pixel corner."""
    table, frame = table_and_frame
    k, l = 300, 400  # noqa: E741 - the view's pixel column and row
    half = OVAL_CROP_PX / 2
    centre = ((k + half) / OVAL_PX_PER_IN, (l + half) / OVAL_PX_PER_IN)
    crop = oval_crop(table.image, frame, centre, 0.0)  # type: ignore[attr-defined]
    view = frame.rectify(table.image, OVAL_PX_PER_IN, (k, l, OVAL_CROP_PX, OVAL_CROP_PX))  # type: ignore[attr-defined]
    assert crop.shape == (OVAL_CROP_PX, OVAL_CROP_PX, 3)
    assert np.abs(crop.astype(int) - view.astype(int)).mean() < 1.0


def test_a_crop_turned_a_quarter_is_the_unturned_crop_turned(table_and_frame: tuple[object, object]) -> None:
    """Facing 90: the crop's u axis runs along the table's +y, so it is the facing-0 crop turned a quarter."""
    table, frame = table_and_frame
    centre = (10.37, 13.81)
    flat = oval_crop(table.image, frame, centre, 0.0)  # type: ignore[attr-defined]
    turned = oval_crop(table.image, frame, centre, 90.0)  # type: ignore[attr-defined]
    assert np.abs(turned.astype(int) - np.rot90(flat, 1).astype(int)).mean() < 1.0


def test_offsets_along_and_across_a_facing_turn_into_table_axes() -> None:
    dx, dy = to_table_offset(np.array([1.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), np.array([0.0, 90.0, 30.0]))
    assert np.allclose(dx, [1.0, 0.0, -0.5]) and np.allclose(dy, [0.0, 1.0, np.sqrt(3) / 2])


def test_a_missing_or_broken_oval_refiner_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(OvalRefinerError, match="none.onnx: no oval refiner model there"):
        OvalRefiner(tmp_path / "none.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(OvalRefinerError, match="broken.onnx: not a model"):
        OvalRefiner(broken)


def _oval_errors(detector: LearnedDetector) -> tuple[list[float], int, int, set[str]]:
    """Centre errors (mm), sizes right, ovals matched and how they were measured, pooled over held-out
    tables with ovals (seeds 5000+ are the evaluation set: never trained on)."""
    errors, right, matched, how = [], 0, 0, set()
    for seed, game in [(5000, "focal-point"), (5009, "grinding-annihilation"), (5022, "focal-point")]:
        table = render_table(seed, game)
        lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
        frame = calibrate(table.empty, table.layout, lens)
        found, _, _ = detector.detect(table.image, detector.prepare(table.empty, frame), frame)
        truth = table.scene["models"]
        # The product reports where a base stands, not where the view shows its top (vision.analyze).
        x_in, y_in, _ = ground_positions(found.x_in, found.y_in, frame, table.scene.get("terrain", []))
        seen = [
            {"x": x_in[j], "y": y_in[j], "base": str(found.size[j]), "how": str(found.measured_by[j])}
            for j in range(len(found))
            if found.kind[j] == 0
        ]
        for i, j, d in _match(truth, seen, lambda m: base_semi_axes_in(m["base"])[1]):
            if "x" in truth[i]["base"]:
                errors.append(d * MM_PER_IN)
                right += seen[j]["base"] == truth[i]["base"]
                matched += 1
                how.add(seen[j]["how"])
    return errors, right, matched, how


def test_the_shipped_oval_refiner_measures_held_out_ovals_better_than_their_boxes() -> None:
    """Guards round the measured figures (docs/detector.md, session 18; positions mapped from the bases' tops
    to their feet since session 22, as the product reports them)."""
    assert DEFAULT_OVAL_REFINER.is_file() and DEFAULT_OVAL_REFINER.with_suffix(".card.json").is_file()
    refined, right, matched, how = _oval_errors(LearnedDetector())
    boxed, _, _, box_how = _oval_errors(LearnedDetector(oval_refiner_path=None))
    assert how == {"oval refined"} and box_how == {"oval"}
    assert matched >= 6
    assert right >= matched - 1
    assert float(np.median(refined)) < 0.6 * float(np.median(boxed))
    assert max(refined) < 2.0 < max(boxed)


def test_cv2_dnn_runs_the_shipped_oval_refiner_as_onnxruntime_does() -> None:
    """Without onnxruntime the refiners fall back to cv2.dnn (vision/onnx_session.OnnxNetwork): same numbers."""
    import cv2

    refiner = OvalRefiner()
    assert refiner._network is not None
    blob = np.random.default_rng(0).random((3, 3, OVAL_CROP_PX, OVAL_CROP_PX), dtype=np.float32)
    first = refiner._network.raw(blob)
    refiner._network._session = None
    refiner._network._net = cv2.dnn.readNetFromONNX(str(DEFAULT_OVAL_REFINER))
    assert np.abs(refiner._network.raw(blob) - first).max() < 1e-4


@pytest.mark.parametrize(
    ("seed", "game"), [(5177, "grinding-annihilation"), (5267, "grinding-annihilation"), (5112, "focal-point")]
)
def test_ovals_go_to_their_player_read_round_their_measured_outline(seed: int, game: str) -> None:
    """Held-out tables whose ovals were given to the wrong player while their rims were sampled on the circle
    of the short semi-axis (docs/vision.md, session 23; on 05267 the oval's colour then pulled the learned
    colours so far that all seven bases found went to the wrong player). Sampled round the outline the oval
    refiner measures (its facing), every base found goes to its player. On 5112 the oval was still given to the
    wrong player until each base's colour was read from its nearest 15 % of samples, not 30 %
    (``vision.analyze.TEAM_CLOSEST_SHARE``): the rest fall on the bevel's shaded side, the mat or the figure."""
    table = render_table(seed, game)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    result = analyze_rendered(table, lens, LearnedDetector())
    truth, found = table.scene, result.scene
    owner = {u["id"]: u["player"] for u in truth["units"]}
    found_owner = {u["id"]: u["player"] for u in found["units"]}
    pairs = [
        (truth["models"][i], found["models"][j])
        for i, j, _ in _match(truth["models"], found["models"], lambda m: base_semi_axes_in(m["base"])[1])
    ]
    assert sum("x" in t["base"] for t, _ in pairs) >= 1 and len(pairs) >= 6
    assert [t["id"] for t, f in pairs if owner[t["unit"]] != found_owner[f["unit"]]] == []


@pytest.mark.parametrize(
    ("seed", "game", "oval_id", "boxed_as", "score"),
    [(6312, "focal-point", "u5m1", "oval", 0.10), (6293, "grinding-annihilation", "u1m1", "round", 0.70)],
)
def test_an_oval_boxed_faintly_or_as_a_round_base_is_found_where_the_oval_refiner_is_sure(
    seed: int, game: str, oval_id: str, boxed_as: str, score: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tuning tables (neither trained on nor held out) whose oval, under a large figure on a hill, the network
    shipped until session 39 boxed only faintly (6312: oval 0.10, round 0.08) or as a round base the base
    refiner turns away (6293: round 0.70). The network shipped since boxes both as ovals, surely; the box it
    drew is turned back into the old one here, so that the rescue is still what is checked. The oval refiner,
    trained with negatives since session 28, says an oval is centred there: it is found, named and measured,
    marked faint; without that word (no box passes) it is missed. Nothing false is added either way
    (docs/detector.md, session 28)."""
    import vision.detect_learned as detect_learned

    table = render_table(seed, game)
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    truth = table.scene["models"]
    oval = next(m for m in truth if m["id"] == oval_id)
    assert OvalRefiner(DEFAULT_OVAL_REFINER).says_if_oval

    def found_oval() -> tuple[dict[str, object] | None, float, int, int]:
        result = analyze_rendered(table, lens, LearnedDetector())
        bases = result.detections[result.detections.kind == 0]
        models = result.scene["models"]
        pairs = _match(truth, models, lambda m: base_semi_axes_in(m["base"])[1])
        for i, j, d in pairs:
            if truth[i]["id"] == oval_id:
                return {**models[j], "how": str(bases.measured_by[j])}, d * MM_PER_IN, len(pairs), len(models)
        return None, float("nan"), len(pairs), len(models)

    seen, error_mm, matched, found = found_oval()  # boxed surely by today's network
    assert seen is not None and seen["base"] == oval["base"] and seen["how"] == "oval refined"
    assert matched == found == len(truth)

    boxes = LearnedDetector.boxes

    def boxed_as_before(
        self: LearnedDetector, top: np.ndarray, threshold: float | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xyxy, cls, scores = boxes(self, top, threshold)
        centres_in = np.c_[xyxy[:, 0] + xyxy[:, 2], xyxy[:, 1] + xyxy[:, 3]] / 2 / DETECT_PX_PER_IN
        far = np.hypot(*(centres_in - [oval["x"], oval["y"]]).T)
        far[cls != CLASSES.index("oval")] = np.inf  # the hill's terrain box is nearer
        k = int(np.argmin(far)) if len(far) else -1
        if k < 0 or far[k] > 1.0:
            return xyxy, cls, scores  # the empty table, read at set-up
        cls, scores = cls.copy(), scores.copy()
        cls[k], scores[k] = CLASSES.index(boxed_as), score
        turned.append(k)
        return xyxy, cls, scores

    turned: list[int] = []
    monkeypatch.setattr(LearnedDetector, "boxes", boxed_as_before)
    seen, error_mm, matched, found = found_oval()
    assert len(turned) == 1  # the photo's box, once
    assert seen is not None and seen["base"] == oval["base"] and seen["how"] == "oval refined, faint"
    assert error_mm < 1.0
    assert matched == found == len(truth)

    monkeypatch.setattr(detect_learned, "OVAL_RESCUE_MIN_P", 1.01)  # the refiner's word never suffices
    seen, _, matched, found = found_oval()
    assert seen is None and matched == found == len(truth) - 1
