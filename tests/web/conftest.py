"""A rendered Flux table with its registered designs, shared by the Flux-mode API and browser tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import pytest

from calibration.layout import Layout
from calibration.table_frame import calibrate
from vision.flux.layout import FluxLayout
from vision.flux.read import register_designs
from vision.synth.flux_table import render_flux_table
from vision.synth.table import webcam_lens


@dataclass(frozen=True)
class FluxFiles:
    photo: Path  # the registration photo: each pool holds only its owner's cards
    designs: Path
    lens: Path
    pool_cards: dict[str, int]  # cards in each player's pool (truth)
    layout: Layout
    flux_layout: FluxLayout


@pytest.fixture(scope="session")
def flux_files(tmp_path_factory: pytest.TempPathFactory) -> FluxFiles:
    folder = tmp_path_factory.mktemp("flux")
    lens = webcam_lens(0)
    photo = render_flux_table(3, 0)
    assert photo.layout.markers == Layout.default(24, 24).markers  # what `serve --table 24x24` assumes
    designs = register_designs(photo.image, calibrate(photo.image, photo.layout, lens), photo.flux_layout)
    files = FluxFiles(
        folder / "table.png",
        folder / "designs.json",
        folder / "lens.json",
        {p: len(cards) for p, cards in photo.truth["pools"].items()},
        photo.layout,
        photo.flux_layout,
    )
    cv2.imwrite(str(files.photo), photo.image)
    designs.save(files.designs)
    lens.save(files.lens)
    return files
