"""Photo files: a JPEG cut short is refused by name, not read as a table half covered in grey."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tablesight.cli import main
from vision.image_file import ImageFileError, read_image
from vision.live.sources import FolderSource, StillSource

SAMPLES = Path(__file__).parents[2] / "sample_images" / "games"


def _jpeg_bytes() -> bytes:
    photo = cv2.imread(str(SAMPLES / "focal-point-900.jpg"))
    ok, data = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return data.tobytes()


def test_a_jpeg_cut_short_is_refused_and_a_whole_one_reads_with_or_without_its_end_marker(tmp_path: Path) -> None:
    whole = _jpeg_bytes()
    (tmp_path / "whole.jpg").write_bytes(whole)
    photo = read_image(tmp_path / "whole.jpg")
    assert photo.shape == (1080, 1920, 3)
    # OpenCV reads a JPEG cut part way without an error, the rows it lacks grey (128): refused, saying so.
    for share in (0.1, 0.5, 0.9, 0.99):
        cut = tmp_path / f"cut{share}.jpg"
        cut.write_bytes(whole[: int(len(whole) * share)])
        grey_filled = cv2.imread(str(cut))
        assert grey_filled is not None and np.all(grey_filled[-1] == 128)  # what OpenCV alone would give
        with pytest.raises(ImageFileError, match=rf"cut{share}.jpg: the JPEG is cut short"):
            read_image(cut)
    # Whole photos still read: one whose writer left out the end marker, one with data a camera appended after it,
    # and one whose last row is grey.
    (tmp_path / "no_end.jpg").write_bytes(whole[:-2])
    (tmp_path / "appended.jpg").write_bytes(whole + b"\x00" * 5000)
    assert np.array_equal(read_image(tmp_path / "no_end.jpg"), photo)
    assert np.array_equal(read_image(tmp_path / "appended.jpg"), photo)
    grey_edge = photo.copy()
    grey_edge[-16:] = 128
    cv2.imwrite(str(tmp_path / "grey_edge.jpg"), grey_edge)
    assert read_image(tmp_path / "grey_edge.jpg").shape == photo.shape
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "empty.jpg").write_bytes(b"")
    (tmp_path / "photos").mkdir()
    for name, why in (
        ("notes.txt", r" \(not PNG/JPEG"),
        ("missing.jpg", ": no such file"),
        ("photos", ": it is a folder"),  # analyze given the folder, not the photo in it
        ("empty.jpg", ": the file is empty"),
    ):
        with pytest.raises(ImageFileError, match=f"{name}: not an image tablesight can read{why}"):
            read_image(tmp_path / name)


def test_a_missing_photo_is_told_once_without_opencvs_own_warning(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """OpenCV warns of a missing file on stderr itself ("[ WARN:0@0.169] ... can't open/read file"), above the
    players' error: the file is looked for first, so the one message they read is tablesight's."""
    with pytest.raises(ImageFileError, match="missing.jpg: not an image tablesight can read: no such file"):
        read_image(tmp_path / "missing.jpg")
    assert "WARN" not in capfd.readouterr().err


def test_a_progressive_jpeg_cut_short_is_refused_though_it_reads_whole_and_blurred(tmp_path: Path) -> None:
    """A progressive JPEG (as web tools save them) draws the whole photo coarsely first and sharpens it scan by scan,
    so cut short, OpenCV reads it whole but blurred, with no grey row to tell it by: it was read as the table (the
    gap session 74 left). Its missing end marker refuses it now."""
    photo = cv2.imread(str(SAMPLES / "focal-point-900.jpg"))
    ok, data = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    assert ok
    whole = data.tobytes()
    (tmp_path / "whole.jpg").write_bytes(whole)
    (tmp_path / "appended.jpg").write_bytes(whole + b"\x00" * 3000)
    decoded = cv2.imdecode(data, cv2.IMREAD_COLOR)
    assert np.array_equal(read_image(tmp_path / "whole.jpg"), decoded)
    assert np.array_equal(read_image(tmp_path / "appended.jpg"), decoded)
    for share in (0.3, 0.9):
        cut = tmp_path / f"cut{share}.jpg"
        cut.write_bytes(whole[: int(len(whole) * share)])
        blurred = cv2.imread(str(cut))
        assert blurred is not None and not np.all(blurred[-1] == 128)  # what OpenCV alone gives: a whole photo
        with pytest.raises(ImageFileError, match=rf"cut{share}.jpg: the JPEG is cut short"):
            read_image(cut)
    # Cut before the first scan: OpenCV reads nothing at all, and that is named as the JPEG cut short too.
    (tmp_path / "head.jpg").write_bytes(whole[:200])
    assert cv2.imread(str(tmp_path / "head.jpg")) is None
    with pytest.raises(ImageFileError, match=r"head.jpg: not an image .*: the JPEG is cut short"):
        read_image(tmp_path / "head.jpg")


def test_a_cut_short_frame_in_a_recording_is_a_broken_frame_and_analyze_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = _jpeg_bytes()
    (tmp_path / "000.jpg").write_bytes(whole)
    (tmp_path / "001.jpg").write_bytes(whole[: len(whole) // 2])  # the recorder stopped mid-write
    (tmp_path / "002.jpg").write_bytes(whole)
    source = FolderSource(tmp_path)
    frames = [source.read() for _ in range(4)]
    assert [None if f is None else f.shape for f in frames] == [(1080, 1920, 3), (0, 0, 3), (1080, 1920, 3), None]
    assert StillSource(tmp_path / "001.jpg").read() is None and StillSource(tmp_path / "000.jpg").read() is not None
    empty = str(SAMPLES / "focal-point-900.empty.jpg")
    code = main(["analyze", str(tmp_path / "001.jpg"), "--empty", empty, "--game", "focal-point"])
    err = capsys.readouterr().err
    assert code == 2 and "001.jpg: the JPEG is cut short" in err, err
