"""The training path end to end, small: render, train one epoch from scratch, export ONNX, run it with
cv2.dnn; then adapt the result to one confirmed frame. Needs the train extra (``make test`` installs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import shapely

from calibration.table_frame import calibrate
from vision.detect_learned import LearnedDetector
from vision.flux.cards_learned import CARD_PX_PER_IN, LearnedCardFinder
from vision.flux.layout import CARD_H_IN, CARD_W_IN
from vision.synth.flux_table import render_flux_table
from vision.synth.table import render_table, webcam_lens

TABLESIGHT = str(Path(sys.executable).parent / "tablesight")


def run(*args: str, cwd: Path) -> str:
    env = {**os.environ, "YOLO_OFFLINE": "1"}
    done = subprocess.run([TABLESIGHT, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_train_export_run_with_cv2_dnn_then_adapt(tmp_path: Path) -> None:
    out = run("train-detector", str(tmp_path / "det"), "--tables", "2", "--epochs", "1", "--batch", "4", cwd=tmp_path)
    onnx = tmp_path / "det" / "bases-yolo11n.onnx"
    assert "model" in out and onnx.is_file() and onnx.with_suffix(".pt").is_file()
    card = json.loads(onnx.with_suffix(".card.json").read_text())
    assert card["data"]["tables"] == 2 and card["settings"]["epochs"] == 1 and card["validation"]["epoch"] == 1
    assert json.loads((tmp_path / "det" / "train-config.json").read_text())["amp"] is False  # recorded config

    # Run time: OpenCV's dnn only, on a whole rectified table of any size.
    detector = LearnedDetector(onnx)
    table = render_table(7, "grinding-annihilation")
    frame = calibrate(table.empty, table.layout, webcam_lens(100_000))
    found, times, top = detector.detect(table.image, detector.prepare(table.empty, frame), frame)
    assert top.shape[:2] == (768, 563) and times["network_ms"] > 0
    assert len(found.x_in) == len(found.size)  # an untrained model may find nothing, but runs
    boxes, classes, scores = detector.boxes(top)
    assert boxes.shape == (len(classes), 4) and np.all((scores >= 0) & (scores <= 1))

    # One confirmed frame (photo + the scene the players agreed) is enough to adapt on.
    confirmed = tmp_path / "confirmed"
    confirmed.mkdir()
    cv2.imwrite(str(confirmed / "round1.jpg"), table.image)
    (confirmed / "round1.scene.json").write_text(json.dumps(table.scene))
    (confirmed / "broken.jpg").write_bytes(b"no image")
    (confirmed / "broken.scene.json").write_text(json.dumps(table.scene))
    webcam_lens(100_000).save(confirmed / "lens.json")
    adapted = tmp_path / "adapted"
    out = run("adapt", str(confirmed), "--out", str(adapted), "--epochs", "1", cwd=tmp_path)
    assert "adapted the detector on 1 confirmed frames" in out
    assert "skipped broken.jpg: not an image tablesight can read" in out
    assert f"--model {adapted / 'adapted.onnx'} (or watch" in out
    # the refiner waits for 20 confirmed frames (docs/detector.md, session 37: on fewer it read sizes no better)
    assert "the refiner was left as shipped: 1 confirmed frames, it takes 20" in out
    assert not (adapted / "adapted-refiner.onnx").exists()
    LearnedDetector(adapted / "adapted.onnx").boxes(top)


def test_kept_frames_are_calibrated_with_their_tables_own_layout(tmp_path: Path) -> None:
    """A table with the kit's side markers (Layout.default's side_markers): the page keeps its layout beside its
    confirmed frames, and adapt calibrates them with all six markers, not the default four."""
    from calibration.layout import Layout
    from vision.training.adapt import confirmed_frames

    table = render_table(50_010, "grinding-annihilation", side_markers=True)
    assert len(table.layout.markers) == 6
    cv2.imwrite(str(tmp_path / "f0.jpg"), table.image)
    (tmp_path / "f0.scene.json").write_text(json.dumps(table.scene))
    ((_, _, frame, _),), _ = confirmed_frames(tmp_path)
    assert frame.layout == Layout.default(44, 60)  # no layout kept: the kit's four corners
    (tmp_path / "layout.json").write_text(json.dumps(table.layout.to_json()))
    ((_, _, frame, _),), _ = confirmed_frames(tmp_path)
    assert frame.layout == table.layout
    # a frame whose scene was cut short, or whose photo was, is skipped saying why; the others are still used
    (tmp_path / "f1.scene.json").write_text(json.dumps(table.scene)[:200])
    cv2.imwrite(str(tmp_path / "f1.jpg"), table.image)
    (tmp_path / "f2.scene.json").write_text(json.dumps(table.scene))
    (tmp_path / "f2.jpg").write_bytes((tmp_path / "f0.jpg").read_bytes()[:20000])
    (used,), skipped = confirmed_frames(tmp_path)
    assert used[0] == "f0.jpg" and len(skipped) == 2
    assert skipped[0].startswith("f1.scene.json: not valid JSON") and skipped[1].startswith(
        "f2.jpg: the JPEG is cut short"
    )


def test_adapting_the_refiner_is_checked_on_the_last_confirmed_frames(tmp_path: Path) -> None:
    """Issue 6: adapt to the players' table. From 4 confirmed frames of one group's table on, the base refiner
    is first adapted on the first three and scored, beside the shipped one, on the last; then on all four."""
    from vision.refiner import DEFAULT_REFINER, DEFAULT_SIZE_READER, ROUND_SIZES
    from vision.training.adapt import confirmed_frames
    from vision.training.refiner import photo_samples, score_refiner

    confirmed = tmp_path / "confirmed"
    confirmed.mkdir()
    webcam_lens(100_000).save(confirmed / "lens.json")
    for k in range(4):
        table = render_table(50_000 + k, "focal-point", rims="near-mat", group=5)
        cv2.imwrite(str(confirmed / f"f{k}.jpg"), table.image)
        (confirmed / f"f{k}.scene.json").write_text(json.dumps(table.scene))
    adapted = tmp_path / "adapted"
    args = ("--part", "refiner", "--refiner-epochs", "1", "--json")
    result = json.loads(run("adapt", str(confirmed), "--out", str(adapted), *args, cwd=tmp_path))["refiner"]
    check = result["check"]
    assert check["frames_held_back"] == 1 and result["frames"] == ["f0.jpg", "f1.jpg", "f2.jpg", "f3.jpg"]
    for figures in (check["base"], check["adapted"]):
        assert 0.0 <= figures["size_right"] <= 1.0 and figures["centre_mm_median"] <= figures["centre_mm_p95"]
    # the shipped refiner, scored on the last frame's crops (cut as adapt cuts them) as the check scored it
    frames, _ = confirmed_frames(confirmed)
    name, photo, frame, scene = frames[3]
    # ...read as the page reads it: the shipped refiner's centres, its size reader's base and size
    samples = photo_samples(photo, frame, scene, 3)
    assert name == "f3.jpg" and score_refiner(DEFAULT_REFINER, samples, DEFAULT_SIZE_READER) == check["base"]
    pair, reader, centres = (
        score_refiner(DEFAULT_REFINER, samples, DEFAULT_SIZE_READER),
        score_refiner(DEFAULT_SIZE_READER, samples),
        score_refiner(DEFAULT_REFINER, samples),
    )
    assert (pair["base_right"], pair["size_right"]) == (reader["base_right"], reader["size_right"])
    assert (pair["centre_mm_median"], pair["centre_mm_p95"]) == (centres["centre_mm_median"], centres["centre_mm_p95"])
    assert sorted(p.name for p in adapted.iterdir()) == [
        "adapted-refiner.card.json",
        "adapted-refiner.onnx",
        "adapted-refiner.pt",
    ]
    assert check["base"]["size_right"] > 0.5  # the shipped refiner reads most of them
    text = run(
        "adapt", str(confirmed), "--out", str(adapted), "--part", "refiner", "--refiner-epochs", "1", cwd=tmp_path
    )
    assert "refiner checked on the last 1 frames, adapted on the others: size right" in text
    assert "warning: the refiner adapted on 4 frames; on fewer than 20 it read sizes no better" in text
    # The product runs the adapted refiner (analyze --refiner), and its card says what it learnt from.
    card = json.loads((adapted / "adapted-refiner.card.json").read_text())
    rounds = sum(m["base"] in ROUND_SIZES for m in table.scene["models"])
    assert card["positives"] >= rounds > 0 and set(card["check"]) == {"frames_held_back", "base", "adapted"}
    assert set(card["fit"]) == {"base_right", "size_right", "centre_mm_median", "centre_mm_p95"}
    photo, lens, refiner = (
        str(confirmed / "f3.jpg"),
        str(confirmed / "lens.json"),
        str(adapted / "adapted-refiner.onnx"),
    )
    scene = run("analyze", photo, "--lens", lens, "--refiner", refiner, "--json", cwd=tmp_path)
    assert len(json.loads(scene)["scene"]["models"]) > 0.5 * len(table.scene["models"])


def cv2_dnn_outputs(onnx: Path, blob: np.ndarray) -> np.ndarray:
    """A network's raw outputs through cv2.dnn (a runtime apart from the torch the training code scores with)."""
    net = cv2.dnn.readNetFromONNX(str(onnx))
    net.setInput(blob)
    return np.asarray(net.forward())


def test_a_refiner_stored_as_float16_loads_in_its_own_shape_and_computes_what_it_did(tmp_path: Path) -> None:
    """A refiner's weights kept as float16 (vision/training/refiner.py: store_half): half the file, the same
    outputs within float16's rounding; network_shape reads its widths from the weights, and load_onnx_weights
    loads it into a network of that shape to go on training, computing what cv2.dnn computes."""
    import torch

    from vision.refiner import DEFAULT_REFINER, DEFAULT_SIZE_READER
    from vision.training.refiner import load_onnx_weights, make_network, network_shape, store_half

    for shipped in (DEFAULT_REFINER, DEFAULT_SIZE_READER):
        assert network_shape(shipped) == {"widths": (16, 24, 32, 48, 64), "dense": 128}
    blob = np.random.default_rng(0).random((8, 3, 96, 96), dtype=np.float32)
    net = make_network(widths=(8, 8, 12, 12, 16), dense=24)
    net.eval()
    full, half = tmp_path / "full.onnx", tmp_path / "half.onnx"
    torch.onnx.export(net, (torch.from_numpy(blob),), str(full), input_names=["crops"], opset_version=17, dynamo=False)
    store_half(full, half)
    assert half.stat().st_size < 0.6 * full.stat().st_size
    assert network_shape(half) == network_shape(full) == {"widths": (8, 8, 12, 12, 16), "dense": 24}
    assert np.allclose(cv2_dnn_outputs(half, blob), cv2_dnn_outputs(full, blob), atol=0.02)
    loaded = make_network(**network_shape(half))
    load_onnx_weights(loaded, half)
    loaded.eval()
    with torch.no_grad():
        read = loaded(torch.from_numpy(blob)).numpy()
    assert np.allclose(read, cv2_dnn_outputs(half, blob), atol=1e-3)


def test_train_card_finder_export_and_run_with_cv2_dnn(tmp_path: Path) -> None:
    """The Flux card finder's training path, small: render 2 sessions, one epoch, ONNX, cv2.dnn, read."""
    out = run(
        "train-card-finder", str(tmp_path / "cards"), "--sessions", "2", "--epochs", "1", "--batch", "4", cwd=tmp_path
    )
    onnx = tmp_path / "cards" / "cards-yolo11n-obb.onnx"
    assert "card model" in out and onnx.is_file() and onnx.with_suffix(".pt").is_file()
    card = json.loads(onnx.with_suffix(".card.json").read_text())
    assert card["data"]["sessions"] == 2 and card["data"]["photos"] == 5 and card["settings"]["degrees"] == 180.0
    labels = sorted((tmp_path / "cards" / "data" / "train" / "labels").glob("*.txt"))
    rows = [line.split() for line in labels[0].read_text().splitlines()]
    assert rows and all(len(r) == 9 and r[0] == "0" for r in rows)  # class + 4 corners, normalised
    assert all(0.0 <= float(v) <= 1.0 for r in rows for v in r[1:])

    photo = render_flux_table(3, 1)
    view = calibrate(photo.image, photo.layout, webcam_lens(0)).rectify(photo.image, CARD_PX_PER_IN * 2)
    finder = LearnedCardFinder(onnx, score_threshold=0.0)
    poses, scores = finder.proposals(view, CARD_PX_PER_IN * 2)
    assert poses.shape == (len(scores), 3) and np.all((poses[:, 2] >= 0) & (poses[:, 2] < 180))
    found = finder.find(view, CARD_W_IN, CARD_H_IN, CARD_PX_PER_IN * 2)  # an untrained model's cards, in order
    assert all(0 <= c.visible_area <= 1 and c.corners_in.shape == (4, 2) for c in found)


def test_train_refiner_export_and_run(tmp_path: Path) -> None:
    """The base refiner's training path, small: render 2 tables, cut samples, one epoch, ONNX, run."""
    from vision.refiner import ROUND_SIZES, BaseRefiner, crop_origin_px

    out = run(
        "train-refiner", str(tmp_path / "ref"), "--sets", "600000:2,620000:1:onefinity", "--epochs", "1", cwd=tmp_path
    )
    onnx = tmp_path / "ref" / "base-refiner.onnx"
    assert "refiner" in out and onnx.is_file()
    card = json.loads(onnx.with_suffix(".card.json").read_text())
    assert card["data"]["tables"] == 3 and card["data"]["positives"] > 0 and card["settings"]["epochs"] == 1
    assert card["settings"]["device"] == "cpu"  # the default; --device cuda trains on a GPU
    assert [s["games"] for s in card["data"]["sets"]] == [["focal-point", "grinding-annihilation"], ["onefinity"]]
    assert set(card["validation"]) == {"base_right", "size_right", "centre_mm_median", "centre_mm_p95"}

    table = render_table(7, "focal-point")
    frame = calibrate(table.empty, table.layout, webcam_lens(100_000))
    refiner = BaseRefiner(onnx)
    centres = [(m["x"], m["y"]) for m in table.scene["models"][:5]]
    said = refiner.run(refiner.crops(table.image, frame, centres), [crop_origin_px(c) for c in centres])
    assert len(said.p_base) == len(centres) and np.all((said.p_base >= 0) & (said.p_base <= 1))
    assert set(said.size) <= set(ROUND_SIZES)
    # each size's probability (unit_agreement weighs unsure reads with them), the named size the likeliest
    assert said.p_sizes.shape == (len(centres), len(ROUND_SIZES)) and np.allclose(said.p_sizes.sum(axis=1), 1.0)
    assert [ROUND_SIZES[k] for k in said.p_sizes.argmax(axis=1)] == said.size
    assert np.all(np.abs(said.x_in - np.array(centres)[:, 0]) < 3.0)  # an untrained network, but a crop's worth


def test_train_oval_refiner_export_and_run(tmp_path: Path) -> None:
    """The oval refiner's training path, small: render 2 tables (their ovals), cut samples, one epoch, ONNX, run."""
    from vision.oval_refiner import OVAL_SIZES, OvalRefiner

    out = run(
        "train-refiner",
        str(tmp_path / "ref"),
        "--ovals",
        "--sets",
        "600000:2",
        "--epochs",
        "1",
        "--device",
        "cpu",
        cwd=tmp_path,
    )
    onnx = tmp_path / "ref" / "oval-refiner.onnx"
    assert "refiner" in out and onnx.is_file()
    card = json.loads(onnx.with_suffix(".card.json").read_text())
    ovals = sum(
        "x" in m["base"]
        for truth in (tmp_path / "ref" / "tables-600000-varied").glob("*.truth.json")  # the default figures
        for m in json.loads(truth.read_text())["scene"]["models"]
    )
    assert ovals >= 1 and card["data"]["tables"] == 2 and card["data"]["positives"] == 24 * ovals
    # negatives too (round bases, the detector's proposals, random points), so it can say "no oval here"
    assert card["data"]["samples"] > card["data"]["positives"]
    assert card["settings"]["epochs"] == 1 and card["settings"]["device"] == "cpu"
    assert card["classes"] == OVAL_SIZES
    assert {"oval_right", "not_oval_right", "size_right", "centre_mm_median", "facing_deg_median"} <= set(
        card["validation"]
    )

    table = render_table(7, "focal-point")
    frame = calibrate(table.empty, table.layout, webcam_lens(100_000))
    centres = [(m["x"], m["y"]) for m in table.scene["models"][:3]]
    refiner = OvalRefiner(onnx)
    said = refiner.measure(table.image, frame, centres, [0.0, 45.0, 170.0])
    assert refiner.says_if_oval and np.all((said.p_oval >= 0) & (said.p_oval <= 1))
    assert set(said.size) <= set(OVAL_SIZES) and len(said.size) == 3
    assert np.all((said.facing_deg >= 0) & (said.facing_deg < 180))
    assert np.all(np.abs(said.x_in - np.array(centres)[:, 0]) < 3.0)  # an untrained network, but a crop's worth


def test_train_terrain_segmenter_export_and_run(tmp_path: Path) -> None:
    """The terrain segmenter's training path, small: render 2 tables, cut patches, one epoch, ONNX, run."""
    from vision.terrain import SEGMENTER_INPUT_PX, TerrainSegmenter, segmenter_input, terrain_patches

    out = run("train-terrain", str(tmp_path / "seg"), "--sets", "30000:2", "--epochs", "1", cwd=tmp_path)
    onnx = tmp_path / "seg" / "terrain-segmenter.onnx"
    assert "terrain segmenter" in out and onnx.is_file()
    card = json.loads(onnx.with_suffix(".card.json").read_text())
    assert card["data"]["sets"][0]["tables"] == 2 and card["data"]["patches"] >= 3 and card["settings"]["epochs"] == 1
    assert set(card["validation"]) == {"iou_median", "iou_at_least_0.9", "iou_p10"}
    # each box's patch, its two jittered framings: three times the boxes
    assert card["data"]["patches"] % 3 == 0

    table = render_table(30000, "focal-point")
    frame = calibrate(table.empty, table.layout, webcam_lens(30000))
    patches = terrain_patches(LearnedDetector(refiner_path=None), table.empty, frame)
    assert patches
    segmenter = TerrainSegmenter(onnx)
    for patch in patches:
        assert segmenter_input(patch).shape == (4, SEGMENTER_INPUT_PX, SEGMENTER_INPUT_PX)
        outline = segmenter.outline_px(patch)  # an untrained network: any outline, or none, inside the patch
        h_px, w_px = patch.image.shape[:2]
        assert outline is None or outline.within(shapely.box(0, 0, w_px, h_px).buffer(1))


def test_a_worse_cameras_photo_keeps_the_tables_labels() -> None:
    """The refiner's samples from a worse camera (--worse-camera, docs/detector.md session 55): the photo is
    changed, seeded, and each base's crops keep the size and offset that the truth gives them."""
    from vision.refiner import ROUND_SIZES
    from vision.training.refiner import JITTERS_PER_BASE, photo_samples, worse_camera

    table = render_table(6_201, "focal-point")
    frame = calibrate(table.empty, table.layout, webcam_lens(100_000))
    worse = [worse_camera(table.image, np.random.default_rng(seed)) for seed in (1, 1, 2)]
    assert np.array_equal(worse[0], worse[1]) and not np.array_equal(worse[0], worse[2])
    for photo in worse:
        assert photo.shape == table.image.shape and photo.dtype == np.uint8
        assert 0.5 < float(np.abs(photo.astype(np.int16) - table.image).mean()) < 30.0
    clean, seen_worse = (
        photo_samples(table.image, frame, table.scene, 5),
        photo_samples(worse[0], frame, table.scene, 5),
    )
    # each round base's crops come first, labelled from the truth: the same whatever the camera
    first = JITTERS_PER_BASE * sum(m["base"] in ROUND_SIZES for m in table.scene["models"])
    assert first > 0 and (clean["is_base"][:first] == 1).all()
    for key in ("is_base", "size", "offset"):
        assert np.array_equal(clean[key][:first], seen_worse[key][:first])
    assert not np.array_equal(clean["crops"][:first], seen_worse["crops"][:first])
