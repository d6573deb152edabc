"""The base refiner (vision/refiner.py): its crops, its errors, and what it measures on held-out renders."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.lens import LensModel
from calibration.table_frame import calibrate
from geometry.shapes import MM_PER_IN, base_semi_axes_in
from vision.analyze import analyze
from vision.centre_sigma import CENTRE_SIGMA_MM
from vision.detect_learned import DETECT_PX_PER_IN, LearnedDetector, _light_drifted
from vision.detections import RIM_SAMPLE_ANGLES, RIM_SAMPLE_RADII, RIM_SAMPLES, seen_share
from vision.evaluate import _match
from vision.refiner import (
    CROP_PX,
    DEFAULT_BLURRED_REFINER,
    DEFAULT_CAMERA_SIZE_READER,
    DEFAULT_REFINER,
    DEFAULT_SIZE_READER,
    OFFSET_SCALE_IN,
    REFINER_PX_PER_IN,
    SURE_BASE_P,
    SURE_SIZE_P,
    BaseRefiner,
    RefinerError,
    crop_centre_in,
    crop_origin_px,
    quantized_twin,
    to_blob,
)
from vision.synth.table import render_table


def size_reading(crops: list[np.ndarray], origins: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The size reader's P of each size and P(base) for ``crops``, read as the shipped refiner reads them: in the
    four mirror views where those are sure of both, else in all eight; and which crops were in doubt."""
    reader = BaseRefiner(DEFAULT_SIZE_READER)
    in_four, in_eight = (reader.run(crops, origins, transposes) for transposes in (False, True))
    doubt = (in_four.p_sizes.max(axis=1) < SURE_SIZE_P) | (np.minimum(in_four.p_base, 1 - in_four.p_base) > SURE_BASE_P)
    pick = doubt[:, None]
    return np.where(pick, in_eight.p_sizes, in_four.p_sizes), np.where(doubt, in_eight.p_base, in_four.p_base), doubt


def test_a_crop_is_centred_on_its_proposal_to_half_a_pixel() -> None:
    rng = np.random.default_rng(0)
    for centre in rng.uniform(0, 60, (200, 2)):
        middle = crop_centre_in(crop_origin_px((float(centre[0]), float(centre[1]))))
        assert np.all(np.abs(np.array(middle) - centre) <= 0.5 / REFINER_PX_PER_IN + 1e-9)


def test_crops_cut_from_the_whole_view_match_crops_made_alone() -> None:
    """Training cuts crops from one rectified view of the table; run time makes each crop through the
    calibration on its own. They must show the same pixels, or the refiner's offsets would be off."""
    table = render_table(6, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    whole = frame.rectify(table.image, REFINER_PX_PER_IN)
    m = table.scene["models"][0]
    x0, y0 = crop_origin_px((m["x"], m["y"]))
    assert x0 >= 0 and y0 >= 0  # a model is never within 1.5" of the table's edge on this table
    alone = frame.rectify(table.image, REFINER_PX_PER_IN, (x0, y0, CROP_PX, CROP_PX))
    cut = whole[y0 : y0 + CROP_PX, x0 : x0 + CROP_PX]
    assert alone.shape == cut.shape == (CROP_PX, CROP_PX, 3)
    assert np.abs(alone.astype(int) - cut.astype(int)).mean() < 1.0


def test_a_missing_or_broken_refiner_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(RefinerError, match="none.onnx: no refiner model there"):
        BaseRefiner(tmp_path / "none.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a network")
    with pytest.raises(RefinerError, match="broken.onnx: not a model"):
        BaseRefiner(broken)


def test_without_a_refiner_round_bases_are_measured_by_their_outline() -> None:
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    plain = LearnedDetector(refiner_path=None)
    found, _, _ = plain.detect(table.image, plain.prepare(table.empty, frame), frame)
    assert len(found) > 0
    assert set(found.measured_by[found.size != ""]) <= {"outline", "outline, weak", "box", "oval"}


@pytest.mark.parametrize(("seed", "game"), [(5003, "focal-point"), (5004, "grinding-annihilation")])
def test_the_shipped_refiner_measures_held_out_bases(seed: int, game: str) -> None:
    """Seeds 5000+ are the evaluation set: never trained on. Guards round the measured figures
    (docs/detector.md, session 17)."""
    assert DEFAULT_REFINER.is_file() and DEFAULT_REFINER.with_suffix(".card.json").is_file()
    table = render_table(seed, game)
    truth = table.scene
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    detector = LearnedDetector()
    result = analyze(table.image, table.layout, table.empty, lens=lens, terrain=truth["terrain"], detector=detector)
    rounds = result.detections[(result.detections.kind == 0) & np.char.isdigit(result.detections.size)]
    assert len(rounds) > 0 and set(rounds.measured_by) <= {"refined", "refined, faint", "refined, partial"}
    matches = _match(truth["models"], result.scene["models"], lambda m: base_semi_axes_in(m["base"])[1])
    round_matches = [(i, j, d) for i, j, d in matches if "x" not in truth["models"][i]["base"]]
    assert len(matches) >= 0.9 * len(truth["models"])
    assert len(matches) >= 0.9 * len(result.scene["models"])
    errors_mm = [d * MM_PER_IN for _, _, d in round_matches]
    assert float(np.median(errors_mm)) < 1.0
    right = sum(truth["models"][i]["base"] == result.scene["models"][j]["base"] for i, j, _ in round_matches)
    assert right >= 0.9 * len(round_matches)


def test_the_size_reader_names_base_and_size_and_leaves_the_centre_to_the_refiner() -> None:
    """The shipped pair (docs/detector.md, session 41): the final reading's base and size probabilities are the
    size reader's own, its centre the refiner's own, to the digit; the first reading, which only centres the
    crop, is the refiner's alone. The size reader reads a crop in four views where those are sure of it, else in
    eight (session 73)."""
    assert DEFAULT_SIZE_READER.is_file() and DEFAULT_SIZE_READER.with_suffix(".card.json").is_file()
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    centres = [(m["x"] + 0.05, m["y"] - 0.04) for m in table.scene["models"] if "x" not in m["base"]][:6]
    pair, alone, reader = (
        BaseRefiner(size_reader_path=DEFAULT_SIZE_READER),
        BaseRefiner(),
        BaseRefiner(DEFAULT_SIZE_READER),
    )
    both, centre_only, sizes_only = (r.measure(table.image, frame, centres) for r in (pair, alone, reader))
    np.testing.assert_array_equal(both.x_in, centre_only.x_in)
    np.testing.assert_array_equal(both.y_in, centre_only.y_in)
    # the final crops are cut where the refiner's first reading put each base; the reader names base and size there
    first = alone.run(alone.crops(table.image, frame, centres), [crop_origin_px(c) for c in centres], False)
    again = [(float(x), float(y)) for x, y in zip(first.x_in, first.y_in, strict=True)]
    p_sizes, p_base, doubt = size_reading(alone.crops(table.image, frame, again), [crop_origin_px(c) for c in again])
    assert not doubt.all()  # plain bases: the four views are sure of most
    np.testing.assert_allclose(both.p_sizes, p_sizes, atol=1e-6)
    np.testing.assert_allclose(both.p_base, p_base, atol=1e-6)
    assert both.size == sizes_only.size  # these crops sit on plain bases: the same sizes either way


def test_the_shipped_detector_reads_sizes_with_the_reader_and_a_players_refiner_alone(tmp_path: Path) -> None:
    """An adapted refiner (`tablesight adapt`) names its sizes itself: the reader goes with the shipped one only."""
    assert LearnedDetector()._refiner is not None and LearnedDetector()._refiner._size_reader is not None
    own = tmp_path / "adapted-refiner.onnx"
    own.write_bytes(DEFAULT_REFINER.read_bytes())
    refiner = LearnedDetector(refiner_path=own)._refiner
    assert refiner is not None and refiner._size_reader is None and refiner._camera_size_reader is None
    shipped = LearnedDetector()._refiner
    assert shipped is not None and shipped._camera_size_reader is not None
    with pytest.raises(RefinerError, match="none.onnx: no size-reading refiner there"):
        BaseRefiner(size_reader_path=tmp_path / "none.onnx")
    with pytest.raises(RefinerError, match="none.onnx: no size-reading refiner there"):
        BaseRefiner(size_reader_path=DEFAULT_SIZE_READER, camera_size_reader_path=tmp_path / "none.onnx")
    with pytest.raises(RefinerError, match="needs a first"):
        BaseRefiner(camera_size_reader_path=DEFAULT_CAMERA_SIZE_READER)
    assert shipped._blurred_network is not None and refiner._blurred_network is None
    with pytest.raises(RefinerError, match="none.onnx: no refiner for blurred photos there"):
        BaseRefiner(blurred_model_path=tmp_path / "none.onnx")


def test_in_a_blurred_photo_the_refiner_for_blurred_photos_reads_the_centres_and_nothing_else() -> None:
    """Its centres, in both readings, in the refiner's place; base and sizes stay the size readers' (docs/vision.md,
    session 57). Not blurred, the shipped refiner reads as before."""
    assert DEFAULT_BLURRED_REFINER.is_file() and DEFAULT_BLURRED_REFINER.with_suffix(".card.json").is_file()
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    photo = cv2.GaussianBlur(table.image, (0, 0), 1.5)
    centres = [(m["x"] + 0.05, m["y"] - 0.04) for m in table.scene["models"] if "x" not in m["base"]][:6]
    shipped = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER, blurred_model_path=DEFAULT_BLURRED_REFINER)
    sharp, blurred = (shipped.measure(photo, frame, centres, blurred=b) for b in (False, True))
    as_before = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER).measure(photo, frame, centres)
    alone = BaseRefiner(DEFAULT_BLURRED_REFINER).measure(photo, frame, centres)
    np.testing.assert_array_equal(sharp.x_in, as_before.x_in)
    np.testing.assert_array_equal(blurred.x_in, alone.x_in)
    np.testing.assert_array_equal(blurred.y_in, alone.y_in)
    assert not np.allclose(blurred.x_in, sharp.x_in)
    # the final crops sit where each refiner put the base: the size reader reads there
    first = BaseRefiner(DEFAULT_BLURRED_REFINER)
    read = first.run(first.crops(photo, frame, centres), [crop_origin_px(c) for c in centres], False)
    again = [(float(x), float(y)) for x, y in zip(read.x_in, read.y_in, strict=True)]
    p_sizes, p_base, _ = size_reading(first.crops(photo, frame, again), [crop_origin_px(c) for c in again])
    np.testing.assert_allclose(blurred.p_sizes, p_sizes, atol=1e-6)
    np.testing.assert_allclose(blurred.p_base, p_base, atol=1e-6)


def test_the_size_reader_reads_in_eight_views_only_the_crops_its_four_leave_in_doubt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the four mirror views leave a crop's size or its being a base in doubt, it is read in all eight,
    as before session 73; where they are sure, in those four only: a crop the size reader is sure of passes through
    the network four times, not eight."""
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    centres = [(m["x"] + 0.02, m["y"] - 0.02) for m in table.scene["models"] if "x" not in m["base"]][:6]
    centres.append((centres[0][0] + 0.6, centres[0][1]))  # a crop off its base's centre: in doubt, or sure of no base
    refiner = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER)
    crops, origins = refiner.crops(table.image, frame, centres), [crop_origin_px(c) for c in centres]
    p_sizes, p_base, doubt = size_reading(crops, origins)
    assert refiner._size_reader is not None
    network, read = refiner._size_reader, []
    counting = network.raw
    monkeypatch.setattr(network, "raw", lambda blob: read.append(len(blob)) or counting(blob))
    said = refiner.run(crops, origins, sizes_read=True)
    assert read == [4 * len(crops)] + ([4 * int(doubt.sum())] if doubt.any() else [])
    assert sum(read) < 8 * len(crops)
    np.testing.assert_allclose(said.p_sizes, p_sizes, atol=1e-6)
    np.testing.assert_allclose(said.p_base, p_base, atol=1e-6)
    # every crop in doubt: the eight views throughout, as before
    monkeypatch.setattr("vision.refiner.SURE_SIZE_P", 1.01)
    in_eight = BaseRefiner(DEFAULT_SIZE_READER).run(crops, origins)
    np.testing.assert_allclose(refiner.run(crops, origins, sizes_read=True).p_sizes, in_eight.p_sizes, atol=1e-6)
    # the centre stays the refiner's in eight views either way
    np.testing.assert_array_equal(said.x_in, BaseRefiner().run(crops, origins).x_in)


def test_the_camera_size_reader_has_half_the_say_in_sizes_and_none_in_base_or_centre() -> None:
    """Past the renderer's camera the size logits are the mean of the two size readers' (docs/vision.md, session
    57), both read in all eight views, as then; the base reading stays the first size reader's (in eight views) and
    the centre the refiner's."""
    assert DEFAULT_CAMERA_SIZE_READER.is_file() and DEFAULT_CAMERA_SIZE_READER.with_suffix(".card.json").is_file()
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    centres = [(m["x"], m["y"]) for m in table.scene["models"] if "x" not in m["base"]][:6]
    origins = [crop_origin_px(c) for c in centres]
    refiner = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER, camera_size_reader_path=DEFAULT_CAMERA_SIZE_READER)
    crops = refiner.crops(table.image, frame, centres)
    first, second = BaseRefiner(DEFAULT_SIZE_READER), BaseRefiner(DEFAULT_CAMERA_SIZE_READER)
    both = refiner.run(crops, origins, sizes_read=True, camera_sizes=True)
    one = refiner.run(crops, origins, sizes_read=True, camera_sizes=False)
    logits = (first.raw(to_blob(crops))[:, 1:7] + second.raw(to_blob(crops))[:, 1:7]) / 2
    mean = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(both.p_sizes, mean / mean.sum(axis=1, keepdims=True), atol=1e-6)
    np.testing.assert_allclose(one.p_sizes, size_reading(crops, origins)[0], atol=1e-6)  # the reader's, alone
    np.testing.assert_allclose(both.p_base, first.run(crops, origins).p_base, atol=1e-9)
    np.testing.assert_allclose(both.p_base, one.p_base, atol=1e-4)  # the size reader's in four views or eight
    np.testing.assert_array_equal(both.x_in, one.x_in)
    assert not np.allclose(both.p_sizes, one.p_sizes)  # the second reader does have its say


def test_photos_as_the_renderer_takes_them_are_read_by_the_int8_twins_and_read_alike() -> None:
    """The refiner and the size reader in int8 (vision/training/quantize.py) read a photo as the renderer's camera
    takes it, and read it as the float networks do: the same bases and sizes, centres within a fifth of a
    millimetre, half within a tenth (tuning tables' centre error, median 0.279 -> 0.283 mm; docs/vision.md, session 76). A worse camera's photo (past the
    renderer's, or blurred) is read by the float networks, to the digit: the twins were calibrated on the
    renderer's crops."""
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    centres = [(m["x"] + 0.05, m["y"] - 0.04) for m in table.scene["models"] if "x" not in m["base"]][:8]
    centres.append((centres[0][0] + 0.7, centres[0][1]))  # off every base: no base either way
    shipped = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER)
    exact = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER, quantized=False)
    assert shipped._int8_network is not None and shipped._int8_size_reader is not None
    assert exact._int8_network is None
    fast, plain = (r.measure(table.image, frame, centres, camera_sizes=False) for r in (shipped, exact))
    assert fast.size == plain.size
    np.testing.assert_array_equal(fast.p_base > 0.5, plain.p_base > 0.5)
    assert fast.p_base[-1] < 0.5 and (plain.p_base[:-1] > 0.5).all()
    apart_mm = np.hypot(fast.x_in - plain.x_in, fast.y_in - plain.y_in)[:-1] * MM_PER_IN
    assert apart_mm.max() < 0.2 and float(np.median(apart_mm)) < 0.1
    assert not np.array_equal(fast.x_in, plain.x_in)  # the twins did the reading
    for worse in ({"camera_sizes": True}, {"camera_sizes": False, "blurred": True}):
        said, float_said = (r.measure(table.image, frame, centres, **worse) for r in (shipped, exact))
        np.testing.assert_array_equal(said.x_in, float_said.x_in)
        np.testing.assert_array_equal(said.p_sizes, float_said.p_sizes)


def test_int8_twins_only_where_onnxruntime_runs_them_and_only_beside_the_shipped_networks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cv2.dnn is never handed an int8 twin: without onnxruntime the float networks read every photo. A players'
    own refiner (`tablesight adapt`) has no twin beside it, so it reads in float."""
    own = tmp_path / "adapted-refiner.onnx"
    own.write_bytes(DEFAULT_REFINER.read_bytes())
    assert quantized_twin(own) == tmp_path / "adapted-refiner.int8.onnx"
    assert BaseRefiner(own)._int8_network is None
    assert quantized_twin(DEFAULT_REFINER).is_file() and quantized_twin(DEFAULT_SIZE_READER).is_file()
    monkeypatch.setattr("vision.onnx_session.onnxruntime_session", lambda path, required, error: None)
    refiner = BaseRefiner(size_reader_path=DEFAULT_SIZE_READER)
    assert refiner._int8_network is None and refiner._int8_size_reader is None
    assert refiner._network is not None and refiner._network._net is not None  # cv2.dnn, on the float network
    table = render_table(5003, "focal-point")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    centres = [(m["x"], m["y"]) for m in table.scene["models"] if "x" not in m["base"]][:3]
    said = refiner.measure(table.image, frame, centres, camera_sizes=False)
    assert (said.p_base > 0.5).all()
    assert np.hypot(said.x_in - [c[0] for c in centres], said.y_in - [c[1] for c in centres]).max() * MM_PER_IN < 1.0


def test_a_photo_in_light_drifted_from_the_set_ups_is_read_by_the_float_refiners() -> None:
    """The twins were calibrated in the set-up's light. Tuning tables 6200-6259 tinted 12 % warm and 12 % cool: two
    teams fewer right each with the twins; with the float networks, every figure the float networks gave
    (docs/vision.md, session 76). A photo 12 % warmer than its empty table is read exactly as the float networks
    read it; the same photo in the set-up's light by the twins."""
    table = render_table(5003, "focal-point")
    frame = calibrate(table.empty, table.layout, LensModel(table.camera.K, table.camera.dist, table.camera.size))
    fast, exact = LearnedDetector(), LearnedDetector(quantized_refiners=False)
    reference = fast.prepare(table.empty, frame)
    warm = np.clip(table.image * np.array([0.88, 1.0, 1.12]), 0, 255).astype(np.uint8)
    top, empty_top = (frame.rectify(image, DETECT_PX_PER_IN) for image in (warm, table.empty))
    assert _light_drifted(top, empty_top) and not _light_drifted(
        frame.rectify(table.image, DETECT_PX_PER_IN), empty_top
    )
    said, float_said = (d.detect(warm, reference, frame)[0] for d in (fast, exact))
    np.testing.assert_array_equal(said.x_in, float_said.x_in)
    np.testing.assert_array_equal(said.size, float_said.size)
    plain, float_plain = (d.detect(table.image, reference, frame)[0] for d in (fast, exact))
    assert len(plain) == len(float_plain) and not np.array_equal(plain.x_in, float_plain.x_in)
    assert np.abs(plain.x_in - float_plain.x_in).max() * MM_PER_IN < 0.2


def test_the_refiner_reads_a_mirrored_crop_as_the_mirror_image_of_its_reading() -> None:
    """The refiner reads each crop with its mirror images and their transposes, so its reading of a mirrored
    or transposed crop is exactly the mirrored or transposed reading: the same base and size, the centre's
    offset mirrored or its x and y swapped (a base does not move when the camera's image is flipped)."""
    refiner = BaseRefiner()
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    centres = [(m["x"] + 0.05, m["y"] - 0.04) for m in table.scene["models"] if "x" not in m["base"]][:6]
    crops = np.stack(refiner.crops(table.image, frame, centres))
    blob = np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) / 255.0)
    plain = refiner.raw(blob)
    mirrored = refiner.raw(np.ascontiguousarray(blob[:, :, :, ::-1]))
    np.testing.assert_allclose(mirrored[:, :-2], plain[:, :-2], atol=1e-4)
    np.testing.assert_allclose(mirrored[:, -2], -plain[:, -2], atol=1e-4)
    np.testing.assert_allclose(mirrored[:, -1], plain[:, -1], atol=1e-4)
    transposed = refiner.raw(np.ascontiguousarray(blob.transpose(0, 1, 3, 2)))
    np.testing.assert_allclose(transposed[:, :-2], plain[:, :-2], atol=1e-4)
    np.testing.assert_allclose(transposed[:, -2:], plain[:, [-1, -2]], atol=1e-4)
    # ...and it reads the crops' bases where they are: within a fifth of an inch of the crop's middle.
    assert np.all(np.abs(plain[:, -2:]) * OFFSET_SCALE_IN < 0.2)


def test_seen_share_counts_the_angles_where_the_photo_differs_from_the_empty_table() -> None:
    mat = np.full((1, RIM_SAMPLES, 3), 100.0)
    rim = mat + 60.0  # a base all round
    assert seen_share(rim, mat)[0] == 1.0
    rings = rim.reshape(1, len(RIM_SAMPLE_RADII), RIM_SAMPLE_ANGLES, 3).copy()
    rings[:, :, : RIM_SAMPLE_ANGLES * 3 // 4] = 100.0 + 5.0  # three quarters look like the empty table (noise)
    assert seen_share(rings.reshape(1, RIM_SAMPLES, 3), mat)[0] == pytest.approx(0.25)
    assert seen_share(rim, np.full_like(mat, np.nan))[0] == 1.0  # no empty table: nothing to tell by


def test_a_base_seen_only_as_a_sliver_is_measured_as_unsure() -> None:
    """Pieces of the empty table (as a wall would) pasted over all but a sliver of a base: the refiner still
    reads a base there, but the scene must not claim it as surely as a clear one (centre_sigma.py)."""
    table = render_table(5003, "focal-point")
    lens = LensModel(table.camera.K, table.camera.dist, table.camera.size)
    frame = calibrate(table.empty, table.layout, lens)
    detector = LearnedDetector()
    truth = table.scene
    clear = CENTRE_SIGMA_MM["refined"] / MM_PER_IN
    partial = CENTRE_SIGMA_MM["refined, partial"] / MM_PER_IN
    for m in [m for m in truth["models"] if "x" not in m["base"]][:2]:
        r = base_semi_axes_in(m["base"])[0]
        ang = np.linspace(0, 2 * np.pi, 64)
        ring = np.c_[m["x"] + 2.5 * r * np.cos(ang), m["y"] + 2.5 * r * np.sin(ang)]
        ring = ring[ring[:, 0] > m["x"] - 0.5 * r]  # all but the sliver under x - r/2, figure and its lean too
        wall = np.r_[frame.table_to_image(ring), frame.table_to_image(ring, z_in=2.0)].astype(np.float32)
        mask = np.zeros(table.image.shape[:2], np.uint8)
        cv2.fillPoly(mask, [cv2.convexHull(wall).astype(np.int32)], 255)
        photo = table.image.copy()
        photo[mask > 0] = table.empty[mask > 0]
        result = analyze(photo, table.layout, table.empty, lens=lens, terrain=truth["terrain"], detector=detector)
        scene = result.scene["models"]
        how = result.detections.measured_by[result.detections.kind == 0]  # one row per model of the scene
        near = [k for k, s in enumerate(scene) if math.hypot(s["x"] - m["x"], s["y"] - m["y"]) < r]
        assert all(how[k] == "refined, partial" for k in near), m["id"]
        assert partial > 2 * clear and all(scene[k]["sigma_in"] >= 0.99 * partial for k in near)  # 5 decimals
        others = [k for k in range(len(scene)) if k not in near]
        assert others and all(how[k] in ("refined", "refined, faint") for k in others)
