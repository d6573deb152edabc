from __future__ import annotations

import numpy as np
import pytest

from calibration.layout import Layout
from calibration.lens import LensModel, calibrate_lens
from vision.synth.camera import Camera, photo_effects
from vision.synth.charuco_views import charuco_views
from vision.synth.markers_table import table_texture

SIZE = (1920, 1080)
DISTORTION = (-0.10, 0.02, 0.0, 0.0, 0.0)
TABLE = (24.0, 24.0)
PPI = 160.0


@pytest.fixture(scope="session")
def true_camera() -> Camera:
    return Camera.looking_at_table(TABLE, SIZE, tilt_deg=18, yaw_deg=6, dist=DISTORTION)


@pytest.fixture(scope="session")
def estimated_lens(true_camera: Camera) -> LensModel:
    """The lens as a player would get it: from rendered photos of the kit's ChArUco board."""
    lens, notes = calibrate_lens(charuco_views(true_camera.K, DISTORTION, SIZE, 14, np.random.default_rng(11)))
    assert not notes
    return lens


@pytest.fixture(scope="session")
def texture() -> np.ndarray:
    return table_texture(Layout.default(*TABLE), PPI, np.random.default_rng(2))


def photograph(camera: Camera, texture: np.ndarray, seed: int = 0, **effects: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    defaults = {"noise": 2.0, "blur_px": 0.6, "jpeg_quality": 90, "light_gradient": 0.3}
    defaults.update(effects)
    return photo_effects(camera.render(texture, PPI, border_in=2.0), rng, **defaults)  # type: ignore[arg-type]
