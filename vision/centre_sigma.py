"""How far off a measured centre may be, by how it was measured: the per-axis 1-sigma of the measuring alone.

The figures are measured, not assumed: ``python benchmarks/measure_sigma.py
--tables 40 --seed 6000 [--detector classical]`` renders tables that are neither
trained on nor in the held-out evaluation set, matches what was found to the
truth, and reports for each way of measuring the sigma that puts the truth
within 2 sigma along each axis for 95 % of the pieces (errors have heavy tails:
a figure leaning over its base pulls the outline, so the RMS alone would
understate them). A ruling combines this with the calibration's own sigma.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from geometry.shapes import MM_PER_IN

# measured_by -> per-axis 1-sigma in mm (see the module docstring for the command and docs/vision.md).
CENTRE_SIGMA_MM = {
    # learned detector with the base refiner (2026-11-23, on the renderer mended that day): 40 tables, seed 6000
    # (pieces: 434, 28, 3, 155)
    "refined": 0.45,  # a round base measured by the base refiner (vision/refiner.py); with the camera's pose, by
    # how obliquely it was seen (SLOPE_SIGMA, below)
    # ...read from a faint box or by an unsure refiner (vision/detect_learned.py: FAINT_REFINED). Session 26, the
    # same tables: 53 pieces, radial median 0.69 mm, p95 5.3 mm; 1.37 puts 95 % within 2 sigma
    "refined, faint": 1.4,
    # ...seen only in part (a sliver behind a wall or a tree; vision/detect_learned.py: PARTIAL_SEEN_SHARE).
    # 2026-11-25, session 26: 140 tables seed 6000 and 60 tables seed 6140 with --figures varied --trees: 28
    # pieces, radial median 1.09 mm, p95 5.87 mm; 1.55 puts 95 % within 2 sigma, 2.0 puts 96 % (few pieces, and
    # a piece read further off than half its radius is not matched to its model at all: kept on the safe side)
    "refined, partial": 2.0,
    # (2026-11-23, session 18, same tables: 28 ovals)
    "oval refined": 0.8,  # an oval measured by the oval refiner (by slope with a pose: SLOPE_SIGMA): its centre
    # needs 0.63 for 95 %; its facing
    # (median 0.6 degrees off, at most 4.9) moves the tips of a long oval a little more
    "oval refined, faint": 1.6,  # ...from a faint oval box or a round box the base refiner turned away (session 28)
    "oval refined, turned": 1.6,  # ...from its box's facing turned (session 40): as unsure; too few to measure apart
    "oval": 1.6,  # an oval's box: its centre needs 1.35 for 95 %, but its edge moves with its facing too
    "marker outline": 3.2,  # an objective marker's circle fitted in the photo (few: 3; a figure's edge can pull it)
    "marker box": 0.4,  # a marker's box only (a flat disc: its box is tight; most markers are measured so)
    # learned detector without a refiner (the model of 2026-11-22; the renderer before its mending)
    # (pieces: 162, 199, 71)
    "outline": 0.75,  # the base's outline fitted around the network's box, with strong support
    "outline, weak": 1.8,  # fitted, but on little of the outline (figures hide it): heavy tails
    "box": 1.35,  # the network's box only (the outline disagreed or was hidden)
    # classical detector: 40 tables, seed 6000 (pieces: 57, 219, 74, 143)
    "circle": 0.55,  # a circle fitted on 90 % or more of the outline
    "circle, weak": 2.35,  # on less of it (a figure or a neighbour hides the rest)
    "ellipse": 10.8,  # an oval from a blob's ellipse: blobs merge with figures and neighbours
    # objective markers read on the empty table (nothing covers them), both detectors; learned (2026-11-24,
    # session 20, 40 tables seed 6000: 161 markers, radial median 0.09 mm, p95 0.87 mm, 0.31 needed for 95 %)
    "marker outline, reference": 0.35,
    "marker box, reference": 0.4,  # a marker's box on the empty table (no outline fitted: a wall hides part of it)
}


# A base measured by a refiner is measured worse the more obliquely the camera sees it: its figure hides the
# far side of its rim, and the error lies along the line from the camera's foot. Per-axis 1-sigma in mm
# = hypot(AT_FOOT, PER_SLOPE * max(0, slope - FROM_SLOPE)), slope the tangent of the view's angle from the vertical
# (TableFrame.view_slope). Fitted on tuning tables so that the truth lies within 2 sigma along each axis for 95 % of
# the pieces at every slope (docs/vision.md, session 33):
# - round bases (seeds 6200-6319, 1335 bases): 0.34 mm needed below slope 0.2, 0.45 at 0.4-0.5, 0.67 beyond 0.6;
#   the one sigma of 0.45 held only 87 % of the bases there;
# - ovals (seeds 6200-6319 and 6500-6619, 160 ovals): 0.42 mm needed below 0.2, 1.0 at 0.4-0.5, 2.6 beyond 0.5
#   (20 ovals: the facing of a long oval seen obliquely); 0.8 held 80 % of those.
SLOPE_SIGMA = {  # measured by -> (AT_FOOT mm, PER_SLOPE mm, FROM_SLOPE)
    "refined": (0.33, 0.9, 0.0),
    "oval refined": (0.46, 7.75, 0.3),
}


# The base refiner reads each crop in eight views (its mirror images and transposes) and takes their median; how far
# the views' centres lie from their mean (root-mean-square, Detections.views_sd_in) says how surely that base was
# read. Bases whose views disagree are read further off, on every set looked at (session 80; Spearman's rank
# correlation of the error with the spread: tuning 6200-6259 0.31, path-traced 7600-7629 0.38, 79100-79111 0.57):
# the tenth with the widest spread had median errors of 0.47, 0.91 and 1.57 mm against 0.26-0.34 mm for the rest.
# With the spread known, a refined centre's sigma is hypot(VIEWS_KEEP * its sigma by how it was measured,
# VIEWS_SD_SIGMAS * the spread); one seen in part or read from a faint box keeps all of its class's sigma and adds
# the spread's share. Fitted on the tuning tables 6200-6259: their share within 2 sigma as before (98.6 %) with a
# narrower median sigma (0.417 against 0.433 mm), and even over the spread: 93-100 % in every bin of it, where it
# was 89 % in the widest and 99-100 % in the narrowest (docs/vision.md, session 80).
VIEWS_KEEP = 0.6
VIEWS_SD_SIGMAS = 1.5


def centre_sigma_in(
    measured_by: npt.NDArray[np.str_],
    view_slope: npt.NDArray[np.float64] | None = None,
    views_sd_in: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Per-axis 1-sigma (inches) of each centre, from how it was measured and, given ``view_slope`` (each
    centre's, from ``TableFrame.view_slope``), how obliquely the camera saw it. Without it (no camera pose),
    the one sigma measured over all slopes. ``views_sd_in``: how far the base refiner's views read each centre
    from their mean (``Detections.views_sd_in``; 0 where not read so), which widens or narrows the sigma of the
    centres the refiner read (VIEWS_SD_SIGMAS)."""
    unknown = sorted(set(measured_by.tolist()) - set(CENTRE_SIGMA_MM))
    if unknown:
        raise ValueError(f"no measured sigma for centres measured by {', '.join(map(repr, unknown))}")
    sigma_mm = np.array([CENTRE_SIGMA_MM[str(m)] for m in measured_by], dtype=np.float64)
    if view_slope is not None:
        slope = np.asarray(view_slope, np.float64)
        for how, (at_foot, per_slope, from_slope) in SLOPE_SIGMA.items():
            mine = measured_by == how
            sigma_mm[mine] = np.hypot(at_foot, per_slope * np.maximum(0.0, slope[mine] - from_slope))
    if views_sd_in is not None:
        spread_mm = np.asarray(views_sd_in, np.float64) * MM_PER_IN
        read = (spread_mm > 0) & np.char.startswith(measured_by.astype(str), "refined")
        # A base seen in part or read from a faint box keeps all of its class's sigma (too few to fit it on).
        keep = np.where(measured_by == "refined", VIEWS_KEEP, 1.0)
        sigma_mm[read] = np.hypot(keep[read] * sigma_mm[read], VIEWS_SD_SIGMAS * spread_mm[read])
    out: npt.NDArray[np.float64] = sigma_mm / MM_PER_IN
    return out
