"""A noisy photo (a dim room, a cheap sensor) smoothed a little before the networks see it.

The networks were trained on photos with the renderer's sensor noise (sigma about 2, then JPEG), which
reads 0.25-1.0 here. At sigma 8 the refiner turned away 2.6 % of the held-out bases the detector had boxed,
and named sizes a step off; a 0.7 px blur first gives back nearly all of it (docs/vision.md, session 55).
Photos that read as clean are left exactly as they are.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from calibration.fiducials import to_gray

Image = npt.NDArray[np.uint8]

NOISY_SIGMA = 2.0  # noise_sigma above this: smoothed (rendered photos read 0.25-1.0, sigma 8 about 5.4)
SMOOTH_PX = 0.7  # the blur then (chosen on tuning 6200-6259 at sigma 8 among 0.5, 0.7, 1.0, 1.4)
_LAPLACE_3X3 = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
_SAMPLE_STEP = 3  # the median over every third row and column: the same reading, several times quicker


def noise_sigma(photo: Image) -> float:
    """The sensor noise's sigma in grey levels, from the median response to a mask that cancels smooth shading
    (Immerkaer's; the median, not the mean, so that edges and the mat's texture count little)."""
    grey = to_gray(photo).astype(np.int16)
    h, w = grey.shape
    if h < 3 or w < 3:
        return 0.0
    # the mask's response at every _SAMPLE_STEP-th pixel, from nine strided views (no full-size filtering)
    response = np.zeros(((h - 2 + _SAMPLE_STEP - 1) // _SAMPLE_STEP, (w - 2 + _SAMPLE_STEP - 1) // _SAMPLE_STEP))
    for dy in range(3):
        for dx in range(3):
            response += _LAPLACE_3X3[dy, dx] * grey[dy : h - 2 + dy : _SAMPLE_STEP, dx : w - 2 + dx : _SAMPLE_STEP]
    # |N(0, s)| has median 0.6745 s, and the mask's weights square-sum to 36
    return float(np.median(np.abs(response))) / (0.6745 * 6.0)


def for_networks(photo: Image) -> Image:
    """``photo`` as the networks should see it: smoothed by SMOOTH_PX when it reads noisy, else itself."""
    if noise_sigma(photo) <= NOISY_SIGMA:
        return photo
    smoothed: Image = cv2.GaussianBlur(photo, (0, 0), SMOOTH_PX)
    return smoothed
