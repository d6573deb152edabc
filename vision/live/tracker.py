"""Identity across frames: each model keeps its id, unit and player as pieces are moved.

New detections are matched to the known models by position. Base size, team
colour and the figure's look (its colour from above, where the caller gives it:
vision/live/appearance.py), as the camera reads them, are evidence, not gates: the
detector names a base's size or rim colour wrongly now and then, so a mismatch
costs distance instead of forbidding the match (a round base is never matched to
an oval of a very different size). A look costs only where it differs from the
model's by more than a figure's looks differ from frame to frame, so the alike
models of a unit painted alike are matched by place alone; a piece on a model's
spot that surely shows a unit-mate's figure, not its own, is that mate, come
down there. Pieces that stayed put are matched first; when the players
say which unit is activated, or the frame shows it (the rules move one unit at a
time: ``update`` tries each unit a model has left and keeps the reading that
accounts for the most), every other model keeps any piece within its own
base, however badly that piece was measured (bases cannot overlap). A player's
models not yet assigned to units (one lump) have no unit to read: the models
among them that moved together (``moved_blocks``) are tried as one instead. The
activated unit is then matched as a group. Players move a unit's models by about
one common shift, each put down a little off it: the likeliest guesses at that
shift (those a model and a piece make, and each re-estimated from the models it
brings within reach) are played out, each model paired to a free piece near where
the shift puts it, or to one still where it stood, with the least cost in all
(size and colour read differently cost distance), and the reading that leaves
the fewest models without a piece, at the least cost, is taken. A model with no piece there (hidden behind terrain,
say) is reported not seen; the scene shows it where the translation put it,
with that guess's uncertainty, and the history records the move as estimated.
When it is seen again, its unit's last move is matched again from where the
unit stood (the first match had a model missing and may have guessed wrong),
and the history is corrected; seen where the guess put it, the estimated move
is confirmed. When two models could take the same piece the scene says
the identity is uncertain instead of guessing; a model that vanished, or a
piece nobody can account for, is a desync that asks the players for a
correction; a model picked up with nothing to say where (a casualty) is asked about once, and a piece later
where it stood is first a model's that moved there. Besides the history of every model's moves (for replaying the
game), each unit's latest activation is kept as the rules read a move: where
each of its models stood when it began (``activations``).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from geometry.shapes import base_semi_axes_in
from vision.live.assignment import min_cost_assignment

STAY_IN = 0.25  # a model within this of where it was has not moved (measurement jitter)...
# ...unless it is read further than this off where it stood, and surely (beyond NUDGE_SIGMAS of both reads): a still
# base is read again within 0.003" (median), 0.02-0.04" (p99) over the recorded games (docs/live.md, session 70)
NUDGE_IN = 0.1
NUDGE_SIGMAS = 3.0
SAME_PLACE_IN = 0.001  # a place this close to one held before is that one, kept (rounded to 4 places in a record)
SIZE_STEP_COST_IN = 0.15  # a detection read one size off costs this much distance
TEAM_COST_IN = 0.3  # a detection read in the other team's colour
SIZE_RATIO_MAX = 1.35  # beyond this ratio of semi-axes a piece is a different piece, whatever else agrees...
# ...unless it is read this close to where a model stands: a base does not change size, and no other can be put down
# on its spot while it stands there. A still 28.5 mm base was read as 40 mm once, 0.006" from where it stood (Onefinity
# table 47, a model at a time: the page took it for a new piece, and the model for picked up; docs/live.md, session 88)
SAME_SPOT_IN = 0.1
GROUP_TOLERANCE_IN = 0.5  # a unit's model lands within about this of where the unit's common shift puts it
GROUP_REACH_IN = 0.9  # ...and its piece, measured badly in a crowd, may be read this far from there
MAX_MOVE_IN = 16.0  # no activation moves a model further (the longest moves plus a charge)
REACQUIRE_IN = 3.0  # a model lost in its unit's move is picked up again this close to a unit-mate
MAX_SPARE_TRIES = 20  # sets of pieces left over tried as a unit's models left without one
MAX_TRIED_UNITS = 3  # units tried as the one that moved, when not told which (each tried twice, on a copy)
# A player's models not yet assigned to units (one lump): those within this of each other, edge to edge, are tried
# as one unit that moved (every game's coherency is 2": Focal Point, Coherency; Grinding-Annihilation, Formation
# Cohesion)
BLOCK_GAP_IN = 2.0
# A model lost in its unit's move is picked up again on a piece within coherency of a unit-mate, edge to edge, give
# or take how far off the unit's move each of the two is put down
REACQUIRE_GAP_IN = BLOCK_GAP_IN + 2 * GROUP_TOLERANCE_IN
AMBIGUOUS_IN = 0.2  # two candidate pieces this close in cost: the identity is uncertain
NO_PIECE_COST_IN = 10.0  # a unit's model left without a piece costs more than any piece it could take
# ...and one picked up before (a casualty, say) half that: a piece a unit-mate seen standing could have made is
# that mate's, and the model picked up takes only a piece none of them can (as ``_complete_by_shift`` deals them)
PICKED_UP_NO_PIECE_COST_IN = NO_PIECE_COST_IN / 2
FORBIDDEN_COST = 1e6  # a pairing no pairing of finite cost can be dearer than (a size the model cannot be)
SURE_ODDS = 20.0  # a pairing of a unit's alike models is sure when this many times likelier than any other...
PLACE_SIGMA_MIN_IN = 0.1  # ...its models' offsets from their move taken as at least this spread (each axis)
STAY_PENALTY_IN = AMBIGUOUS_IN  # a unit's model read as still where it stood, when its unit moved: a little dearer
# ...and how far it is read from where it stood counts this many times over: a still model is read again within
# 0.04" (p99 over the recorded games), a model put down strays ~0.4" off its unit's shift
STAY_WEIGHT = 4.0
# A model put down on the very spot (within ``STAY_IN``) a unit-mate stood, that mate then seen nowhere, is a
# coincidence: likelier the mate is still there and the model came down out of sight. A reading that says so pays
# this (more than the few stay penalties its mates read still save it).
COINCIDENCE_IN = 1.0
NO_SHIFT = (0.0, 0.0)  # a unit matched with none of its models seen moving, none before this activation either
PLAYED_OUT = 12  # guesses at a unit's common shift played out in full (the likeliest first)
# ...each at least this far from the others: guesses nearer than that settle on the same shift, and a dozen of them
# (the models of a crowded unit each made one) crowded out the one true guess of a unit moved a model at a time
SAME_GUESS_IN = 0.2
# A model not seen after its unit moved is guessed to have moved with it. Players put a unit's models down about
# GROUP_TOLERANCE_IN off the unit's common shift, so the guess is taken to be as unsure (1 sigma).
LOST_SIGMA_IN = GROUP_TOLERANCE_IN
# A base partly hidden (under a hand left on the table, behind a wall) is read as a smaller base that fits inside it
# (a 60 mm round one as a 60x35 oval). Such a piece no model explains is taken, as a last resort, for the model of
# its player no piece explains, if it covers at least this share of that model's base.
PARTIAL_AREA_MIN = 0.4
# An oval partly hidden may be read as the round size next above its width: a 60x35 mm oval put down behind a tall
# building's roof (camera's view), its far half hidden, was read as a 40 mm round base, wider than the oval by 14 %
# (page game focal-point seed 107: its model shown nowhere, and a casualty of the other player's taken back onto the
# piece 3.3" from where it fell). As a last resort (``_match_partly_hidden``) a piece may be this much wider.
PARTIAL_ACROSS_SLACK = 1.2
# A piece whose figure looks unlike a model's (vision/live/appearance.py: median Lab colour) costs up to this much
# distance: two alike models of a unit spread as they come down are told apart by their figures, where those differ.
# Looks within LOOK_SAME_LAB cost nothing (a still figure is read again within 2 (median), 6 (max) on rendered
# frames; a webcam's exposure wanders more), so a unit painted alike is matched by place alone; the full cost from
# LOOK_SAME_LAB + LOOK_SPAN_LAB on.
LOOK_COST_IN = 0.5
LOOK_SAME_LAB = 10.0
LOOK_SPAN_LAB = 20.0
LOOK_LEARN = 0.3  # a model's look follows each read of it, surely matched, by this share (light differs over a table)


# What a tracked model holds of the piece it stands on, not of the model itself (id, unit, player, base): where the
# players say two models stand on each other's pieces, these go with the pieces (``IdentityTracker.take_identities``).
PIECE_FIELDS = ("x", "y", "look", "measured_sigma_in", "lost", "guessed", "gone", "gone_now", "placed")


@dataclass
class Tracked:
    id: str
    unit: str
    player: str
    base: str
    x: float
    y: float
    uncertain: bool = False
    lost: bool = False  # not seen when its unit last moved: may turn up again beside its unit
    guessed: bool = False  # x, y: not seen there, but where its unit's moves since it was seen put it
    # Not seen, with nothing to say where (picked up: a casualty, say). It is not matched where it stood before
    # the models on the table are; a reading that has it seen again counts that against itself (``update``).
    gone: bool = False
    gone_now: bool = False  # gone since the last update only: one frame's miss, as likely as a model picked up
    placed: bool = False  # added by the players where the camera saw none, and not seen since
    measured_sigma_in: float = 0.0  # 1-sigma of the measurement that put it at x, y (0: not given)
    look: tuple[float, float, float] | None = None  # its figure's look as seen so far (None: not seen, or no photo)

    @property
    def unseen(self) -> bool:
        """Where it stands now was not seen (lost, guessed, or picked up)."""
        return self.lost or self.guessed or self.gone

    @property
    def sigma_in(self) -> float:
        """How unsure x, y are beyond the measurement itself: 0 for a model seen where it is."""
        return LOST_SIGMA_IN if self.guessed else 0.0

    @property
    def place_sigma_in(self) -> float:
        """How unsure x, y are in all: the measurement's sigma and, when guessed, the guess's."""
        return math.hypot(self.measured_sigma_in, self.sigma_in)


@dataclass(frozen=True)
class Move:
    model: str
    unit: str
    start: tuple[float, float]
    end: tuple[float, float]
    sigma_in: float = 0.0  # 1-sigma of the length: how unsure both ends were measured

    @property
    def length_in(self) -> float:
        return math.hypot(self.end[0] - self.start[0], self.end[1] - self.start[1])


@dataclass(frozen=True)
class TrackUpdate:
    moves: tuple[Move, ...]
    uncertain: tuple[str, ...]  # models whose identity could not be decided
    vanished: tuple[str, ...]  # known models not seen (picked up? hidden?)
    unexplained: tuple[int, ...]  # detections that match no known model
    desync: bool
    messages: tuple[str, ...]
    returned: tuple[str, ...] = ()  # models picked up earlier, seen again where they stood


@dataclass
class IdentityTracker:
    models: dict[str, Tracked] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    # unit -> where its models stood before its last move, and the history entries of that move: a model
    # not seen then and seen later may show the move was matched wrongly, and it is matched again.
    last_move: dict[str, tuple[dict[str, tuple[float, float]], list[dict[str, Any]]]] = field(
        default_factory=dict, repr=False
    )
    # model -> the history entry of the move it was guessed to make with its unit, while not seen since, and
    # how unsure its start was
    guessed_moves: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict, repr=False)
    # unit -> its latest activation as the rules read it: {"event": "move", "unit", "from": {model: [x, y]}}
    activations: dict[str, dict[str, Any]] = field(default_factory=dict)
    moving_unit: str | None = None  # the unit that moved last, alone: its activation may go on
    # unit -> its models picked up (casualties, say) before its latest activation began: not of its formation
    absent_at_activation: dict[str, set[str]] = field(default_factory=dict, repr=False)
    # Units that are no unit of the game: all of one player's models the players have not assigned yet
    # (vision/analyze.py: PLAYERS_MODELS). The rules move one unit at a time; such a "unit" is not one.
    placeholder_units: set[str] = field(default_factory=set)
    # Models whose place was last read off a piece smaller than their base (``_match_partly_hidden``): the players
    # are asked once to confirm, not again at every update that reads them the same way.
    partly_seen: set[str] = field(default_factory=set, repr=False)
    # The unit the players named as activated at the last update (None: not named): a model of it the camera missed
    # then may show up where its move took it in the next frame, whichever unit is named then.
    told_unit: str | None = None
    # Models whose place was mapped to a better map (``remap_places``): read again through it at the next update,
    # still, that reading is their place (a place read through a map from three markers and mapped again stayed
    # 0.053" off, and was a move's start later: page game GA seed 115, a card lifted off a marker)
    remapped: set[str] = field(default_factory=set, repr=False)
    # Where each piece no model accounted for at the last update stood, and the models seen on other pieces at any
    # update since it stood there: none of them is that piece (``_onto_pieces_standing_before``).
    unexplained_at: list[tuple[float, float, frozenset[str]]] = field(default_factory=list, repr=False)

    @classmethod
    def from_scene(cls, scene: dict[str, Any]) -> IdentityTracker:
        """Start from a scene the players confirmed (units assigned at deployment)."""
        owner = {u["id"]: u["player"] for u in scene["units"]}
        tracked = {
            m["id"]: Tracked(
                m["id"],
                m["unit"],
                owner[m["unit"]],
                str(m["base"]),
                float(m["x"]),
                float(m["y"]),
                measured_sigma_in=float(m.get("sigma_in", 0.0)),
                look=_kept_look(m.get("figure_lab")),
            )
            for m in scene["models"]
        }
        return cls(tracked)

    def update(
        self, detections: list[dict[str, Any]], active_unit: str | None = None, hidden: set[str] | None = None
    ) -> TrackUpdate:
        """``detections``: [{"x", "y", "base", "player"}, optionally "sigma_in"] from the latest settled frame.

        ``active_unit``: the unit the players activated; None: read from the frame (``moved_units``)."""
        hidden = hidden or set()
        if active_unit is not None:
            return self._update(detections, active_unit, hidden, moving_stays=False, told=True)
        # Not told which unit moved, nor how: each unit the frame shows moved (a model's piece gone from under
        # it: the activated unit, or a model the detector missed this frame) is tried, moved as one block (its
        # models matched together, so one landing where a mate stood is not taken for that mate) or a model at
        # a time (those still where they stood kept there), and so is any unit moving. Each trial runs on a
        # copy. The reading taken leaves the fewest models and pieces unaccounted for, then (where it sees a guessed
        # model again) loses the fewest models seen until now, and of those moves the models least (the sum of
        # squared move lengths: a unit slid along its own line 1.4" is not its rear model leapfrogging 6" while the
        # rest stayed in their mates' places).
        # A player's models not assigned to units yet are no unit to read: the models that moved together among
        # them (``moved_blocks``) are tried as one instead.
        movers: list[tuple[str, frozenset[str] | None]] = [
            (unit, None) for unit in self.moved_units(detections, hidden)[:MAX_TRIED_UNITS]
        ]
        movers += self.moved_blocks(detections, hidden)[:MAX_TRIED_UNITS]
        readings: list[tuple[str | None, frozenset[str] | None, bool]] = [
            (unit, block, stays) for unit, block in movers for stays in (True, False)
        ]
        if not readings:
            return self._update(detections, None, hidden, moving_stays=True)
        readings.append((None, None, True))
        scores = []
        for k, (unit, block, stays) in enumerate(readings):
            # (the history of the whole game left out of the copy: a trial only adds to it)
            tried = copy.deepcopy(self, {id(self.history): []})
            trial = tried._update(detections, unit, hidden, stays, block)
            # (each move measured from where the model was shown before this update: a move matched again from
            # where its unit stood, its earlier move taken back, is not counted twice)
            moved_sq_in2 = sum(
                math.dist((self.models[move.model].x, self.models[move.model].y), move.end) ** 2 for move in trial.moves
            )
            moved_now = {move.model for move in trial.moves}
            # ...and each model it keeps where it stood, seen, by how far off there its nearest piece is read,
            # STAY_WEIGHT times over (a still model is read again within hundredths of an inch)
            for mid, m in tried.models.items():
                if mid not in moved_now and mid not in trial.vanished and not m.unseen and detections:
                    off_in = min(math.hypot(d["x"] - m.x, d["y"] - m.y) for d in detections)
                    moved_sq_in2 += (STAY_WEIGHT * off_in) ** 2
            # A model shown where its unit's shift guessed it, seen now, while a model seen until now is lost: a new
            # piece beside that guess is no likelier it than the model that just left its place (for it).
            # (a unit's: another unit's model missed now says nothing of that piece)
            seen_again = {m.unit for mid, m in self.models.items() if m.guessed and not tried.models[mid].unseen}
            newly_lost = sum(
                not self.models[mid].unseen and self.models[mid].unit in seen_again for mid in trial.vanished
            )
            # a model picked up earlier counts as put back only where no model on the table accounts for the piece,
            # unless it came down with its unit-mates, on their shift (seen again as its unit moved on)
            returned = set(trial.returned) - _came_down_with_mates(trial.moves, trial.returned)
            # ...or where it stood, not seen for one update only, while its unit stood still and a model seen until
            # now, of a unit that stood still too (a unit-mate, say), is not: the detector missed them in turn. Counted
            # put back, it lost its piece to that model, moved onto it. (A model moved where a casualty taken off just
            # now stood is of a unit that moves in that reading: the casualty is still counted against it.)
            returned -= {mid for mid in returned if _missed_in_turn(self.models, mid, trial, moved_now)}
            unaccounted = len(trial.vanished) + len(trial.unexplained) + len(returned)
            # Then, the fewest units moving: the players activate one unit at a time, and "any unit moved" may
            # otherwise move a model of a unit standing still, missed now, onto the piece of a model of the unit that
            # moved, and leave that one behind (its guessed move not counted in the move lengths).
            units_moved = len({move.unit for move in trial.moves})
            scores.append((unaccounted, newly_lost, units_moved, round(moved_sq_in2, 3), k))
        unit, block, stays = readings[min(scores)[-1]]
        return self._update(detections, unit, hidden, stays, block)

    def _update(
        self,
        detections: list[dict[str, Any]],
        moving: str | None,
        hidden: set[str],
        moving_stays: bool,
        block: frozenset[str] | None = None,
        told: bool = False,
    ) -> TrackUpdate:
        """``moving``: the unit that moves (None: any may); every other model is still where it was.
        ``moving_stays``: its models within jitter of where they stood are matched there first. ``block``: the
        models of ``moving`` that move (a player's lump: ``moved_blocks``); None: all of them. ``told``: the players
        named ``moving`` as the unit activated."""

        def moves_now(m: Tracked) -> bool:
            return m.unit == moving and (block is None or m.id in block)

        gone_before = {mid for mid, m in self.models.items() if m.gone}
        # (a model the players placed stood where they put it: its place is their word, not unseen)
        unseen_before = {mid for mid, m in self.models.items() if m.gone and not m.placed}
        lost_before = {mid for mid, m in self.models.items() if m.lost}
        # where seen last: a model picked up since (or missed) was seen there too, unless lost or guessed before
        seen_standing = {mid for mid, m in self.models.items() if not (m.lost or m.guessed or m.placed)}
        matched: dict[str, int] = {}
        used: set[int] = set()
        held: set[str] = set()  # models the rules keep in place this update (not the moving unit)
        # Pieces that stayed put first: cheapest pairs within jitter (the team colour is not needed here).
        # A unit moved as a block is left to the group match: a short move puts its models near each other's
        # places. Any other model is still where it was, so any piece within its own base of it is that model
        # (bases cannot overlap), however badly the piece was measured.
        stay = []
        for m in self.models.values():
            if (moves_now(m) and not moving_stays) or m.gone:
                continue
            reach = _still_in(m) if moves_now(m) or moving is None else _own_base_in(m)
            # (a model that may have moved: not a piece whose figure is a unit-mate's, come down on its spot)
            others = self.models if moves_now(m) or moving is None else None
            stay += [(cost, m.id, j) for cost, j in _pieces_within(m, detections, reach, others)]
        for _, mid, j in sorted(stay):
            if mid not in matched and j not in used:
                matched[mid] = j
                used.add(j)
                if moving is not None and not moves_now(self.models[mid]):
                    held.add(mid)
        # Units with a model seen still where it stood (within jitter) while others of it moved: moved a model at a
        # time, so a model of theirs not seen did not move with the rest either.
        stayed = {self.models[mid].unit for mid in matched if mid not in held}
        # Then the units that moved, as groups: the activated unit first, or any unit with a model not found.
        uncertain: list[str] = []
        starts: dict[str, dict[str, tuple[float, float]]] = {}  # units matched as groups now: where they stood
        guesses: dict[str, dict[str, tuple[float, float]]] = {}  # ...and where their unseen models moved to
        just_lost: set[str] = set()  # models seen where they stood that their unit's match left without a piece
        unmatched = [m for m in self.models.values() if m.id not in matched]
        # (after the activated unit, one whose activation is going on: a piece put down now is likelier its model's
        # than that of a model of another unit picked up earlier)
        units = sorted(
            {m.unit for m in unmatched},
            key=lambda u: (u != moving, u != self.moving_unit, -sum(m.unit == u for m in unmatched), u),
        )
        for unit in units:
            if moving is not None and unit != moving:
                continue  # only the activated unit should have moved
            members = [
                m for m in unmatched if m.unit == unit and m.id not in matched and (block is None or moves_now(m))
            ]
            starts[unit] = {m.id: (m.x, m.y) for m in members}
            shift = self._activation_shift(unit)
            guessed = self._match_group(members, detections, matched, used, uncertain, shift)
            if unit in self.placeholder_units:
                _unpair_lump_casualties(self.models, members, detections, matched, used, uncertain)
            # how far each member paired to a piece now was read from where it stood
            read_off_in = [
                math.hypot(detections[matched[m.id]]["x"] - m.x, detections[matched[m.id]]["y"] - m.y)
                for m in members
                if m.id in matched
            ]
            # A mate read still where it stood: the unit moved part of itself (a model at a time), so a model not
            # seen where it stood before now is not known to have moved with this part.
            partly = any(off <= STAY_IN for off in read_off_in)
            # A player's lump of models moved one block, none of it read still: a model of it seen where it stood
            # until now, beside a model that moved (its chain's gap), moved with them, as a unit's would.
            movers = [m for m in members if m.id in matched] if block is not None and not partly else []
            beside_movers = {
                m.id
                for m in members
                if m.id not in matched
                and not m.unseen
                and any(
                    math.dist((m.x, m.y), (o.x, o.y)) - _radius_in(m) - _radius_in(o) <= BLOCK_GAP_IN for o in movers
                )
            }
            # Its unit moving a model at a time (its mates moved earlier in this activation, none now), a model seen
            # until now where it stood when the activation began, gone from there: its turn, put down out of sight,
            # on its mates' shift. (One that moved already in this activation is not moved again: missed, rather.)
            began = self.activations.get(unit, {}).get("from", {})
            mate_moves_now = any(off > STAY_IN for off in read_off_in)
            its_turn = {
                m.id
                for m in members
                if shift is not None
                and not mate_moves_now
                and m.id not in matched
                and not (m.unseen or m.placed)
                and m.id in began
                and math.dist(began[m.id], (m.x, m.y)) <= STAY_IN
            }
            # A player's whole army moves no model it did not see move; a model picked up before its unit moved (a
            # casualty) did not move with it; one the players placed and the camera has not seen yet did.
            guesses[unit] = {
                mid: xy
                for mid, xy in guessed.items()
                if (unit not in self.placeholder_units or mid in beside_movers)
                and (unit not in stayed or mid in its_turn)
                and (not self.models[mid].gone or self.models[mid].placed)
                and not (self.models[mid].unseen and partly)
            }
            for m in members:
                if m.id not in matched and m.id not in hidden and not (m.unseen or m.placed):
                    just_lost.add(m.id)
                m.lost = m.id not in matched and m.id not in hidden
        # Models lost in an earlier move (or by their unit's match just now), seen again where their unit's move
        # should have put them.
        lost = [m for m in self.models.values() if m.lost and m.id not in matched]
        now_shift = {}  # units matched as groups now: the median move of their models paired to a piece
        for unit, start in starts.items():
            shifts = [
                (detections[matched[mid]]["x"] - x, detections[matched[mid]]["y"] - y)
                for mid, (x, y) in start.items()
                if mid in matched
            ]
            if len(shifts) >= 2:
                now_shift[unit] = tuple(np.median(np.array(shifts, dtype=float), axis=0))
        options = []
        # Where each was seen, or where its unit's moves since put it; left behind by a unit moving a model at a
        # time, where the shift its unit-mates made this activation puts it; and, its unit moved now, where that
        # move's shift puts it (a model picked up earlier put down with them, while the detector missed a mate: the
        # piece is the one on the shift, not the mate's a gap off it).
        # (one picked up earlier is put back where it stood within its own base, below: nearer only on a shift)
        expected_at: dict[str, list[tuple[float, float]]] = {}
        for m in lost:
            expected = [] if m.gone else [(m.x, m.y)]
            shift = self._activation_shift(m.unit)
            if shift is not None and not m.guessed:
                expected.append((m.x + shift[0], m.y + shift[1]))
            if m.unit in now_shift:
                expected.append((m.x + now_shift[m.unit][0], m.y + now_shift[m.unit][1]))
            expected_at[m.id] = expected

        def a_mate_left_could_be(m: Tracked, d: dict[str, Any]) -> bool:
            """A unit-mate of ``m`` seen until now, left without a piece by its unit's match just now, could have come
            down on ``d`` (within REACQUIRE_IN of where that move put it, of its size)."""
            return any(
                self.models[o].unit == m.unit
                and o != m.id
                and _size_cost(self.models[o].base, str(d["base"])) is not None
                and any(math.hypot(d["x"] - x, d["y"] - y) <= REACQUIRE_IN for x, y in expected_at.get(o, []))
                for o in just_lost
            )

        for m in lost:
            expected = expected_at[m.id]
            if not expected:
                continue
            # (beside where its unit-mates stood, or stand now: on their pieces when matched in this update; within
            # coherency of one, edge to edge, give or take how far off its unit's move a model is put down)
            mates = [
                (o.x, o.y, _radius_in(o))
                for o in self.models.values()
                if o.unit == m.unit and o.id != m.id and not o.lost
            ]
            mates += [
                (detections[matched[o.id]]["x"], detections[matched[o.id]]["y"], _radius_in(o))
                for o in self.models.values()
                if o.unit == m.unit and o.id != m.id and o.id in matched
            ]
            # (one its unit's match left without a piece just now: only near where that move put it, not anywhere
            # beside its unit-mates)
            reach_in = REACQUIRE_IN if m.id in just_lost else math.inf
            own_radius_in = _radius_in(m)
            for j, d in enumerate(detections):
                gap_in = min((math.hypot(d["x"] - x, d["y"] - y) - r for x, y, r in mates), default=math.inf)
                if j in used or gap_in - own_radius_in > REACQUIRE_GAP_IN:
                    continue
                cost = min(_cost(m, d, ex, ey) for ex, ey in expected)
                # (one picked up earlier, far off its unit's move, not on a piece a mate just left without one could
                # be: a casualty put back 5" off its mates' move, on the piece of a mate seen until now, page game
                # seed 144)
                if m.gone and cost > REACQUIRE_IN and a_mate_left_could_be(m, d):
                    continue
                if _a_mates_figure(m, d, self.models):  # (a mate's figure stands on it: the mate's piece)
                    continue
                if math.isfinite(cost) and cost <= reach_in:
                    options.append((cost, m.id, j))
        reacquired = {self.models[mid].unit for mid in _take_cheapest(options, matched, used, uncertain)}
        for unit in sorted(reacquired - set(starts)):
            guesses[unit] = self._rematch_last_move(unit, detections, matched, used, held, uncertain, starts)
        # A unit whose group match now held only models its last move lost, each paired to a piece (not told, any
        # unit may have moved: they are matched as a unit moving): they are seen again, as those reacquired above.
        # Its last move is matched again: the match that lost them had a piece missing, and may have paired their
        # alike mates one place along their line.
        for unit in sorted(set(starts) - reacquired):
            if starts[unit] and all(mid in lost_before and mid in matched for mid in starts[unit]):
                guesses[unit].update(self._rematch_last_move(unit, detections, matched, used, held, uncertain, starts))
        for unit in starts:
            if unit == self.moving_unit and unit in self.activations and unit not in self.placeholder_units:
                self._rematch_activation(unit, detections, matched, used, uncertain, hidden, guesses)
        for unit, start in starts.items():
            self.last_move[unit] = (start, [])
        # Models picked up earlier, put back where they stood (or seen again once a hand held still has gone):
        # the pieces no model on the table accounted for.
        back = [
            (cost, m.id, j)
            for m in self.models.values()
            if m.gone
            for cost, j in _pieces_within(m, detections, _own_base_in(m))
            if j not in used
        ]
        for _, mid, j in sorted(back):
            if mid not in matched and j not in used:
                matched[mid] = j
                used.add(j)
                held.add(mid)
        # (not told, any unit may have moved last: the camera missing a lone model moved shows no unit moving)
        if moving is not None and (self.told_unit not in (None, moving) or not told):
            late = self._match_seen_late(moving, detections, matched, used, hidden, uncertain, told)
            # With its late model back, the unit's last move is matched again from where it stood: a match made
            # with that model missing may have paired its alike mates one place along their line.
            for unit in sorted(late - set(starts)):
                guesses[unit] = self._rematch_last_move(unit, detections, matched, used, held, uncertain, starts)
        partial = self._match_partly_hidden(detections, matched, used, held, starts, hidden, now_shift)
        recoloured = self._match_in_other_colour(detections, matched, used, held, starts, hidden)
        uncertain += sorted(set(recoloured) - set(uncertain))
        whole = {unit for unit in starts if unit not in stayed}
        kept = held | set(partial)
        candidates = (seen_standing | gone_before) - hidden
        unsure, dropped = _complete_by_shift(
            self.models, detections, matched, used, starts, whole, kept, seen_standing, candidates
        )
        for mid, xy in dropped.items():  # (not seen now: reported so, not as uncertain)
            guesses.setdefault(self.models[mid].unit, {})[mid] = xy
            if mid in uncertain:
                uncertain.remove(mid)
        # (a model the players placed stood where they put it: its offset from the move says as much as one seen)
        placed = {mid for mid, m in self.models.items() if m.placed}
        unsure |= _pair_alike_by_shift(self.models, detections, matched, starts, kept, seen_standing | placed)
        unsure |= _nudged_beside_mates_moved(self.models, detections, matched, seen_standing - held)
        uncertain += sorted(unsure - set(uncertain))
        _swap_by_figures(self.models, detections, matched, uncertain)
        # A model picked up earlier comes back only on a piece with room for its base: one overlapping the piece of a
        # model on the table is that model's base read twice (in part, beside its figure), not a casualty put back.
        for mid in _crowded_returns(self.models, detections, matched):
            used.discard(matched.pop(mid))
            if mid in uncertain:
                uncertain.remove(mid)
        # A model seen on a piece while another piece stood, no model's, elsewhere is not that piece: both were on the
        # table at once (scripted skirmish seed 140, blurred: a casualty taken off, moved by its lump's match, and an
        # update later put back, 9.3" onto a hidden oval's end read as a piece of another size, that stood there).
        for mid in _onto_pieces_standing_before(self.models, detections, matched, self.unexplained_at):
            used.discard(matched.pop(mid))
            self.models[mid].lost = True
            if mid in uncertain:
                uncertain.remove(mid)
        returned = sorted(mid for mid in matched if self.models[mid].gone)  # by any match: counted in readings
        for mid in returned:
            self.models[mid].gone = False
        moves = []
        for mid, j in matched.items():
            m = self.models[mid]
            d = detections[j]
            guess, from_sigma = self.guessed_moves.pop(mid, (None, 0.0))
            seen_sigma = math.hypot(float(d.get("sigma_in", 0.0)), partial.get(mid, 0.0))
            if guess is not None and math.dist(guess["from"], (d["x"], d["y"])) <= STAY_IN:
                # Seen again where it stood before that guess (missed there, not moved): the guessed move is no move.
                self.history[:] = [e for e in self.history if e is not guess]
                for _, entries in self.last_move.values():
                    entries[:] = [e for e in entries if e is not guess]
                m.x, m.y, m.measured_sigma_in = float(d["x"]), float(d["y"]), seen_sigma
            elif guess is not None and (
                m.unit not in starts or math.dist((m.x, m.y), (d["x"], d["y"])) <= 2 * LOST_SIGMA_IN
            ):
                # Seen again while its unit stood still, or within the guess's 2 sigma as its unit moves on: it is
                # where that guessed move ended, give or take (not a move of its own now, as long as the guess was off).
                guess["to"] = [float(d["x"]), float(d["y"])]
                guess["length_in"] = round(math.dist(guess["from"], guess["to"]), 4)
                guess["length_sigma_in"] = round(math.hypot(from_sigma, seen_sigma), 4)
                del guess["estimated"]
                m.x, m.y, m.measured_sigma_in = float(d["x"]), float(d["y"]), seen_sigma
            elif mid not in held and _moved(m, math.hypot(d["x"] - m.x, d["y"] - m.y), seen_sigma):
                sigma = math.hypot(m.place_sigma_in, seen_sigma)
                moves.append(Move(mid, m.unit, (m.x, m.y), (float(d["x"]), float(d["y"])), sigma))
                m.x, m.y, m.measured_sigma_in = float(d["x"]), float(d["y"]), seen_sigma
            elif seen_sigma < m.measured_sigma_in / 2 or (mid in self.remapped and mid not in partial):
                # Still, and read far surer than where it was put (its base partly hidden then, in full view now), or
                # read through a better map than the one its place came through: the same place, better measured; no
                # move.
                m.x, m.y, m.measured_sigma_in = float(d["x"]), float(d["y"]), seen_sigma
            m.lost = m.guessed = m.placed = False
            m.uncertain = mid in uncertain
            if d.get("look") is not None and not m.uncertain and mid not in partial:
                m.look = _learnt_look(m.look, d["look"])
        self.remapped.clear()  # (read again through the better map now, or not seen: kept as mapped)
        moved_from: dict[str, dict[str, tuple[float, float]]] = {}  # unit -> where its models moved from now
        for move in moves:
            moved_from.setdefault(move.unit, {})[move.model] = move.start
        for unit, guessed in guesses.items():  # models not seen: moved with their unit, as far as anyone can tell
            for mid, (x, y) in guessed.items():
                # under a hand, the caller says: not a model left behind by its unit; or picked up again beside its
                # unit-mates after the unit's match (put down beyond the reach of the unit's shift)
                if mid in hidden or mid in matched:
                    continue
                m = self.models[mid]
                entry = {
                    "event": "move",
                    "unit": unit,
                    "model": mid,
                    "from": [m.x, m.y],
                    "to": [x, y],
                    "length_in": round(math.hypot(x - m.x, y - m.y), 4),
                    "length_sigma_in": round(math.hypot(m.place_sigma_in, LOST_SIGMA_IN), 4),
                    "estimated": True,  # not seen at its end: corrected if it is seen there later
                }
                self.history.append(entry)
                self.last_move[unit][1].append(entry)
                self.guessed_moves[mid] = (entry, m.place_sigma_in)
                moved_from.setdefault(unit, {})[mid] = (m.x, m.y)
                m.x, m.y, m.guessed, m.lost = x, y, True, True
        vanished = tuple(sorted(mid for mid in self.models if mid not in matched and mid not in hidden))
        # (a piece overlapping a model's piece is that model's base read twice: no piece for the players to place)
        doubles = _second_reads(self.models, detections, matched, used)
        unexplained = tuple(j for j in range(len(detections)) if j not in used and j not in doubles)
        self.unexplained_at = _unexplained_standing(self.unexplained_at, detections, unexplained, set(matched))
        messages = []
        newly = [mid for mid in vanished if not self.models[mid].gone]  # the players are asked once
        if newly:
            messages.append(f"not seen: {', '.join(newly)} (picked up or hidden?) - confirm or correct")
        for mid, m in self.models.items():
            was_gone = m.gone
            if mid in vanished:  # (one under a hand keeps what it was)
                m.gone = not m.guessed
            m.gone_now = m.gone and not was_gone
        if unexplained:
            messages.append(f"{len(unexplained)} piece(s) on the table match no known model - assign or remove them")
        for mid, player in sorted(recoloured.items()):
            messages.append(
                f"{mid}: seen again on a piece read in {player}'s colour (its size and figure are its own, and no "
                f"model of {player}'s can be it) - confirm"
            )
        if uncertain:
            messages.append(f"identity uncertain for {', '.join(uncertain)} - confirm which is which")
        for mid, sigma in sorted(partial.items()):
            if mid in self.partly_seen:
                continue
            messages.append(
                f"{mid}: its {self.models[mid].base} base read as a {detections[matched[mid]]['base']} piece (partly "
                f'hidden?), its place unsure by {sigma:.2f}" - confirm'
            )
        for move in moves:
            entry = {
                "event": "move",
                "unit": move.unit,
                "model": move.model,
                "from": list(move.start),
                "to": list(move.end),
                "length_in": round(move.length_in, 4),
                "length_sigma_in": round(move.sigma_in, 4),
            }
            self.history.append(entry)
            if move.unit in starts:
                self.last_move.setdefault(move.unit, (starts[move.unit], []))[1].append(entry)
            elif move.unit in self.last_move:
                self.last_move[move.unit][1].append(entry)
        self.partly_seen = set(partial)
        self.told_unit = moving if told else None
        self._note_activations(moved_from, gone_before, unseen_before)
        return TrackUpdate(
            tuple(moves),
            tuple(uncertain),
            vanished,
            unexplained,
            bool(vanished or unexplained),
            tuple(messages),
            tuple(returned),
        )

    def _match_seen_late(
        self,
        moving: str,
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        hidden: set[str],
        uncertain: list[str],
        told: bool,
    ) -> set[str]:
        """Models of the unit named at the last update (``told``; not told: of any unit but ``moving``), not seen
        since (missed in the frame after their move), take the pieces no model explains now, where their move could
        have taken them: the rules move only the unit named now (or tried as moving now), but a move already made
        shows late. Each takes the cheapest such piece (``_cost`` from where it stood); a rival piece within
        ``AMBIGUOUS_IN`` of that makes it uncertain. A model under a hand is left. Returns the units of the models
        that took a piece."""
        late = [
            m
            for m in self.models.values()
            if (m.unit == self.told_unit if told else m.unit != moving)
            and m.gone_now
            and m.id not in matched
            and m.id not in hidden
        ]
        options = [
            (_cost(m, d, m.x, m.y), m.id, j)
            for m in late
            for j, d in enumerate(detections)
            if j not in used and math.hypot(d["x"] - m.x, d["y"] - m.y) <= MAX_MOVE_IN
        ]
        taken = _take_cheapest([o for o in options if math.isfinite(o[0])], matched, used, uncertain)
        return {self.models[mid].unit for mid in taken}

    def _match_partly_hidden(
        self,
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        held: set[str],
        starts: dict[str, dict[str, tuple[float, float]]],
        hidden: set[str],
        now_shift: dict[str, tuple[float, float]],
    ) -> dict[str, float]:
        """The last resort: a model no piece explains takes a piece no model explains, of its player, that could be
        its base partly hidden (``_partial_sigma_in``), the nearest to where it should be first. A model of a unit
        that moved now looks beside its unit-mates' pieces (anywhere its move could take it, if none has one);
        any other stayed, and looks within its own base. Adds to ``matched``, ``used`` and ``held``; returns each
        model so matched and how unsure the piece's centre puts its own (1 sigma, inches)."""
        options = []
        for m in self.models.values():
            if m.id in matched or m.id in hidden:
                continue
            moved_now = m.unit in starts
            expected = [(m.x, m.y)]
            for shift in (self._activation_shift(m.unit), now_shift.get(m.unit)):
                if moved_now and shift is not None:
                    expected.append((m.x + shift[0], m.y + shift[1]))
            mates = (
                [
                    (detections[j]["x"], detections[j]["y"])
                    for mid, j in matched.items()
                    if self.models[mid].unit == m.unit
                ]
                if moved_now
                else []
            )
            for j, d in enumerate(detections):
                sigma = _partial_sigma_in(m.base, str(d["base"]), PARTIAL_ACROSS_SLACK)
                if j in used or sigma is None or d.get("player", m.player) != m.player:
                    continue
                dist = min(math.hypot(d["x"] - x, d["y"] - y) for x, y in expected)
                if not moved_now:
                    reach_ok = dist <= _own_base_in(m)
                elif mates:
                    reach_ok = min(math.hypot(d["x"] - x, d["y"] - y) for x, y in mates) <= REACQUIRE_IN
                else:
                    reach_ok = dist <= MAX_MOVE_IN
                if reach_ok:
                    options.append((dist, m.id, j, sigma, moved_now))
        partial = {}
        for _, mid, j, sigma, moved_now in sorted(options):
            if mid not in matched and j not in used:
                matched[mid] = j
                used.add(j)
                partial[mid] = sigma
                if not moved_now:
                    held.add(mid)
        return partial

    def _match_in_other_colour(
        self,
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        held: set[str],
        starts: dict[str, dict[str, tuple[float, float]]],
        hidden: set[str],
    ) -> dict[str, str]:
        """The last resort for a piece read in the other player's colour (a figure painted in that player's colour
        over much of a thin rim: page game focal-point seed 131): a model no piece explains takes a piece no model
        explains when no model of the piece's player can be it (each has a piece, is under a hand, or was picked up
        earlier and stood elsewhere), the piece is read the model's own size, its figure looks like the model's (both
        looks known), and neither could be paired otherwise. A model of a unit that moved now takes it anywhere its
        move could take it; any other, only within its own base. Adds to ``matched``, ``used`` and ``held``; returns
        each model so matched, and the player whose colour its piece was read in (the players are asked to confirm)."""
        without = [m for m in self.models.values() if m.id not in matched and m.id not in hidden]

        def theirs(d: dict[str, Any]) -> bool:
            """A model of the piece's player without a piece may be it (one picked up, only where it stood)."""
            return any(
                o.player == d.get("player")
                and (not o.gone or math.hypot(d["x"] - o.x, d["y"] - o.y) <= _own_base_in(o))
                for o in without
            )

        free = [j for j, d in enumerate(detections) if j not in used and d.get("look") is not None and not theirs(d)]
        pairs = []
        for m in self.models.values():
            if m.id in matched or m.id in hidden or m.look is None:
                continue
            moved_now = m.unit in starts
            for j in free:
                d = detections[j]
                if d.get("player", m.player) == m.player:
                    continue
                if _size_cost(m.base, str(d["base"])) != 0.0 or math.dist(m.look, d["look"]) > LOOK_SAME_LAB:
                    continue
                if math.hypot(d["x"] - m.x, d["y"] - m.y) <= (MAX_MOVE_IN if moved_now else _own_base_in(m)):
                    pairs.append((m.id, j, moved_now))
        recoloured = {}
        for mid, j, moved_now in pairs:
            if sum(p[0] == mid for p in pairs) == 1 and sum(p[1] == j for p in pairs) == 1:
                matched[mid] = j
                used.add(j)
                recoloured[mid] = str(detections[j]["player"])
                if not moved_now:
                    held.add(mid)
        return recoloured

    def places(self) -> dict[str, tuple[float, float]]:
        """Where each model is shown now."""
        return {mid: (m.x, m.y) for mid, m in self.models.items()}

    def held_places(self) -> npt.NDArray[np.float64]:
        """Every place the tracker holds (models, where activations and the moves still open to be matched again
        began and ended), as rows of x, y."""
        rows = [(m.x, m.y) for m in self.models.values()]
        rows += [tuple(xy) for a in self.activations.values() for xy in a["from"].values()]
        rows += [xy for start, _ in self.last_move.values() for xy in start.values()]
        rows += [tuple(e[k]) for e in self._open_entries() for k in ("from", "to")]
        return np.array(rows, float).reshape(-1, 2)

    def remap_places(
        self, to_new: Callable[[tuple[float, float]], tuple[float, float]], held_before: npt.NDArray[np.float64]
    ) -> int:
        """The table is mapped better from now on (the calibration's missing markers back in view, the camera still:
        calibration/monitor.py, "refined"): every place the tracker holds that was read through the map before is
        mapped by ``to_new``, so a still model read through the new map is not taken as nudged, and a move begun
        before is measured in one map. A place among ``held_before`` (``held_places`` when that map came in: read
        through the map before it, right) is kept. Returns how many models' places were remapped."""

        def mapped(xy: Sequence[float]) -> tuple[float, float]:
            x, y = float(xy[0]), float(xy[1])
            if len(held_before) and np.min(np.hypot(held_before[:, 0] - x, held_before[:, 1] - y)) <= SAME_PLACE_IN:
                return x, y
            return to_new((x, y))

        remapped = 0
        for m in self.models.values():
            x, y = mapped((m.x, m.y))
            if (x, y) != (m.x, m.y):
                remapped += 1
                self.remapped.add(m.id)
            m.x, m.y = x, y
        for activation in self.activations.values():
            activation["from"] = {mid: [round(v, 4) for v in mapped(xy)] for mid, xy in activation["from"].items()}
        for unit, (start, entries) in self.last_move.items():
            self.last_move[unit] = ({mid: mapped(xy) for mid, xy in start.items()}, entries)
        for entry in self._open_entries():
            entry["from"], entry["to"] = list(mapped(entry["from"])), list(mapped(entry["to"]))
            entry["length_in"] = round(math.dist(entry["from"], entry["to"]), 4)
        return remapped

    def _open_entries(self) -> list[dict[str, Any]]:
        """The history's moves still open to be matched again: each unit's last, and those guessed."""
        entries = {id(e): e for _, made in self.last_move.values() for e in made}
        entries.update({id(e): e for e, _ in self.guessed_moves.values()})
        return list(entries.values())

    def moved_units(self, detections: list[dict[str, Any]], hidden: set[str] | None = None) -> list[str]:
        """The units the frame shows moved, the most models moved first: each has a model that no piece of its
        size stands under any more (bases cannot overlap, so a model still in place has a piece within its own
        base, however badly it was measured). The rules activate one unit at a time (Focal Point, Turn
        Structure: "one formation at a time"; Grinding-Annihilation, Move Phase: "select one formation ...
        After you have finished moving that formation, select another"), and the page and ``watch`` are not
        told which; a unit with a model the detector missed this frame shows up here too."""
        hidden = hidden or set()
        moved: dict[str, int] = {}
        for m in self.models.values():
            if m.unseen or m.id in hidden:  # where it is was not seen: no evidence either way
                continue
            if m.unit in self.placeholder_units:  # no unit the players activate
                continue
            if not _pieces_within(m, detections, _own_base_in(m), self.models):
                moved[m.unit] = moved.get(m.unit, 0) + 1
        return sorted(moved, key=lambda u: (-moved[u], u))

    def moved_blocks(
        self, detections: list[dict[str, Any]], hidden: set[str] | None = None
    ) -> list[tuple[str, frozenset[str]]]:
        """In each player's lump of models not assigned to units yet (``placeholder_units``), the models that may
        have moved as one unit: each group of them within ``BLOCK_GAP_IN`` of one another (edge to edge, a chain
        as coherency is) that holds a model no piece stands under any more, the most such models first. Moved as
        one, a unit sliding along its own line keeps its ids; matched model by model, each model took the place
        its neighbour had left (the trials in ``update`` weigh the block against that)."""
        hidden = hidden or set()
        seen = [
            m for m in self.models.values() if m.unit in self.placeholder_units and not (m.unseen or m.id in hidden)
        ]
        left = {m.id for m in seen if not _pieces_within(m, detections, _own_base_in(m), self.models)}
        if not left:
            return []
        group = {m.id: m.id for m in seen}  # union-find: each model's group

        def root(mid: str) -> str:
            while group[mid] != mid:
                group[mid] = group[group[mid]]
                mid = group[mid]
            return mid

        for k, a in enumerate(seen):
            for b in seen[k + 1 :]:
                gap_in = math.hypot(a.x - b.x, a.y - b.y) - _radius_in(a) - _radius_in(b)
                if a.unit == b.unit and gap_in <= BLOCK_GAP_IN:
                    group[root(a.id)] = root(b.id)
        blocks: dict[str, set[str]] = {}
        for m in seen:
            blocks.setdefault(root(m.id), set()).add(m.id)
        moved = [ids for ids in blocks.values() if ids & left]
        unit_of = {m.id: m.unit for m in seen}
        # A unit out of coherency (or spread wider than the chain) moved: all of its lump's groups that moved, as one.
        for lump in sorted({unit_of[mid] for mid in left}):
            parts = [ids for ids in moved if unit_of[next(iter(ids))] == lump]
            if len(parts) > 1:
                moved.append(set().union(*parts))
        ranked = sorted(moved, key=lambda ids: (-len(ids & left), len(ids), sorted(ids)))
        return [(unit_of[next(iter(ids))], frozenset(ids)) for ids in ranked]

    def take_units(self, units: dict[str, tuple[str, str, str]], placeholders: set[str]) -> None:
        """The players' word on the models: id -> (unit, player, base), as they assigned them on the page.
        Models are matched and their moves recorded by these units from the next update on; a unit left with
        no model (a placeholder the players split into their units) is forgotten. ``placeholders``: the units
        still lumping a player's unassigned models (``placeholder_units``)."""
        self.placeholder_units = set(placeholders)
        changed = False
        for mid, (unit, player, base) in units.items():
            m = self.models.get(mid)
            if m is not None and (m.unit, m.player, m.base) != (unit, player, base):
                m.unit, m.player, m.base = unit, player, base
                changed = True
        if not changed:
            return
        held = {m.unit for m in self.models.values()}
        self.activations = {u: a for u, a in self.activations.items() if u in held}
        self.last_move = {u: move for u, move in self.last_move.items() if u in held}
        self.moving_unit = None  # an activation goes on only within one unit as the players name it

    def take_identities(self, said_at: dict[str, tuple[float, float]]) -> dict[str, str]:
        """The players' word on which piece is which model (``said_at``: the page's places, their corrections
        applied). A model they put on another model's piece (within its own base, of their player and base size)
        names that piece as its own; where the models so named take each other's pieces (two swapped, or round a
        ring), each takes the piece the other had: its place, its figure's look and how it was seen. Where each
        stood before (its unit's move records) stays its own: the camera had those right, and took the wrong pieces
        only as they came down. Returns {model: the model whose piece it took}; empty where the players' places
        name no whole exchange (a model dragged onto another's piece alone is left to the page's correction).

        Why: the page asks the players which is which where the camera is unsure, and their answer (each model
        dragged onto its own piece) was a correction replayed over the camera's places; once the unit moved on, the
        camera's swapped ids were back (web/corrections.py: MOVED_AWAY_IN)."""
        onto: dict[str, str] = {}
        for mid, (x, y) in said_at.items():
            m = self.models.get(mid)
            if m is None or m.gone or math.hypot(x - m.x, y - m.y) <= _own_base_in(m):
                continue  # (where the camera has it, give or take a nudge)
            pieces = [
                o.id
                for o in self.models.values()
                if o.id != mid
                and not o.gone
                and (o.player, o.base) == (m.player, m.base)
                and math.hypot(x - o.x, y - o.y) <= _own_base_in(o)
            ]
            if len(pieces) == 1:
                onto[mid] = pieces[0]
        # (only an exchange: each model whose piece is taken takes one, no piece taken twice)
        while True:
            taken = [onto[mid] for mid in onto]
            whole = {mid: o for mid, o in onto.items() if o in onto and taken.count(o) == 1}
            if whole == onto:
                break
            onto = whole
        pieces_of = {mid: copy.copy(self.models[o]) for mid, o in onto.items()}
        sets = (self.partly_seen, self.remapped)
        was_in = [{mid for mid, o in onto.items() if o in group} for group in sets]
        for mid, piece in pieces_of.items():
            for name in PIECE_FIELDS:
                setattr(self.models[mid], name, getattr(piece, name))
            self.models[mid].uncertain = False  # the players said which it is
        for group, members in zip(sets, was_in, strict=True):
            group -= set(onto)
            group |= members
        return onto

    def take_off(self, ids: set[str] | frozenset[str]) -> list[str]:
        """The players' word that these models left the table (casualties: the page's delete): those the camera
        does not see now (picked up, or shown only where their unit's move would have put them) are forgotten, so
        no piece is ever taken for one of them again. One still seen on a piece stays tracked (the players' delete
        hides it on the page) until it is picked up. Returns the models forgotten.

        Why: a casualty lifted off the table was held as picked up for the rest of the game, and a piece of a model
        lost from view later was taken for it (page game skirmish seed 165: a casualty shown on a unit-mate's
        piece), while the players had no way to tell the camera that it was gone."""
        gone = sorted(mid for mid in ids if mid in self.models and self.models[mid].unseen)
        for mid in gone:
            del self.models[mid]
            self.guessed_moves.pop(mid, None)
        for group in (self.partly_seen, self.remapped, *self.absent_at_activation.values()):
            group.difference_update(gone)
        for unit, (start, entries) in self.last_move.items():  # (its unit's move is matched again without them)
            self.last_move[unit] = ({k: xy for k, xy in start.items() if k not in gone}, entries)
        return gone

    def _note_activations(
        self, moved_from: dict[str, dict[str, tuple[float, float]]], gone_before: set[str], unseen_before: set[str]
    ) -> None:
        """The rules judge a move from where each of the unit's models stood when it was activated. A unit
        moved over several settled frames (one model at a time, say), with no other unit moving between, is
        one activation: it keeps the places it started from. A model picked up (or hidden whole) before it moved
        now moved from where it was last seen, which need not be where it stood when its unit was activated: it is
        named in ``unseen_from``, and the rules do not judge its move by that place (page game focal-point seed 131:
        a model put down out of sight in one activation, seen again in the next, 6.4" from where it was last seen
        after a 4.7" move). One the players placed (the camera had missed it) stood where they put it."""
        for unit, moved in moved_from.items():
            if unit != self.moving_unit or unit not in self.activations:
                start = {m.id: moved.get(m.id, (m.x, m.y)) for m in self.models.values() if m.unit == unit}
                self.activations.pop(unit, None)  # (kept in the order they began: a restart reads the last as going on)
                self.activations[unit] = {
                    "event": "move",
                    "unit": unit,
                    "from": {mid: [round(x, 4), round(y, 4)] for mid, (x, y) in start.items()},
                    "source": "camera",
                }
                self.absent_at_activation[unit] = gone_before & set(start)
            unseen = {mid for mid in moved if mid in unseen_before}
            if unseen:
                record = self.activations[unit]
                record["unseen_from"] = sorted(unseen | set(record.get("unseen_from", [])))
        if moved_from:
            self.moving_unit = next(iter(moved_from)) if len(moved_from) == 1 else None

    def _activation_shift(self, unit: str) -> tuple[float, float] | None:
        """The shift the models of ``unit`` seen moving so far in its activation made (the median), when the unit
        is moving over several updates (a model at a time); None otherwise. Players move a unit keeping its
        formation, near enough, so a model of it whose piece cannot be told from a unit-mate's by the photo
        (two alike models out of sight, say) is more likely the one this shift puts there."""
        if unit != self.moving_unit or unit not in self.activations:
            return None
        start = self.activations[unit]["from"]
        shifts = [
            (m.x - start[m.id][0], m.y - start[m.id][1])
            for m in self.models.values()
            if m.unit == unit and m.id in start and not m.unseen
        ]
        shift = _median_move(shifts)
        return None if shift is None else (float(shift[0]), float(shift[1]))

    def moved_in_activation(self) -> set[str]:
        """The models that moved in the activation going on (``moving_unit``'s, over several updates: a model at a
        time), from where they stood when it began."""
        if self.moving_unit is None or self.moving_unit not in self.activations:
            return set()
        start = self.activations[self.moving_unit]["from"]
        return {
            mid
            for mid, (x, y) in start.items()
            if mid in self.models and math.hypot(self.models[mid].x - x, self.models[mid].y - y) > STAY_IN
        }

    def _rematch_last_move(
        self,
        unit: str,
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        held: set[str],
        uncertain: list[str],
        starts: dict[str, dict[str, tuple[float, float]]],
    ) -> dict[str, tuple[float, float]]:
        """A model of ``unit`` lost in its last move is seen again: match that move again from where the
        unit stood, on the pieces its models hold now and the free ones (a model still lost may be on one:
        the first match had models missing, guessed the translation wrongly, and so guessed their places
        wrongly too). If it comes out otherwise, the wrong moves are taken back out of the history and made
        again. Returns where the new translation puts the models still not seen."""
        if unit not in self.last_move:
            return {}
        start, entries = self.last_move[unit]
        ids = [mid for mid in start if mid in matched]
        if len(ids) < 2:
            return {}
        unseen = [mid for mid in start if mid not in matched]  # not seen now, or placed by the wrong guess
        before = [
            Tracked(
                **{**vars(self.models[mid]), "x": start[mid][0], "y": start[mid][1], "lost": False, "guessed": False}
            )
            for mid in ids + unseen
        ]
        held_now = [matched[mid] for mid in ids]
        free = held_now + [j for j in range(len(detections)) if j not in used]
        assignment, unsure, (dx, dy) = _group_assignment(before, detections, free)
        if any(mid not in assignment for mid in ids) and not unseen:
            # Every model seen again, but some further off the move they share than the group match reaches (a
            # player spreading the unit): its alike models that moved are paired again on the pieces they hold,
            # with the least offsets from that move, as within an update (_pair_alike_by_shift).
            assignment = dict(matched)
            movers = _moved_now(start, detections, assignment, set(), set(start))
            unsure = _least_offset_pairing(self.models, detections, assignment, start, movers)
            assignment = {mid: assignment[mid] for mid in start}
            dx, dy = NO_SHIFT
        if any(mid not in assignment for mid in ids) or all(assignment.get(mid) == matched.get(mid) for mid in start):
            return {}
        wrong = {id(e) for e in entries}
        self.history[:] = [e for e in self.history if id(e) not in wrong]
        used.difference_update(held_now)
        for mid in assignment:
            self._back_to_start(mid, start[mid])
            matched[mid] = assignment[mid]
            used.add(assignment[mid])
            held.discard(mid)
            if mid in uncertain:
                uncertain.remove(mid)
            if mid in unsure:
                uncertain.append(mid)
        starts[unit] = start
        guesses = {}
        for mid in unseen:
            if mid not in assignment:  # its guessed move went out with the wrong ones: guessed again
                self._back_to_start(mid, start[mid])
                if (dx, dy) != NO_SHIFT:
                    guesses[mid] = (start[mid][0] + dx, start[mid][1] + dy)
        return guesses

    def _back_to_start(self, mid: str, start: tuple[float, float]) -> None:
        """Put ``mid`` back where its unit's move began, to be matched again. A guess that it moved from there is
        taken back with that move: it is as sure of its place as it was there (seen, mostly), not as a guess."""
        m = self.models[mid]
        guess = self.guessed_moves.pop(mid, None)
        if guess is not None and math.dist(guess[0]["from"], start) < 1e-9:
            m.guessed = False
            m.measured_sigma_in = guess[1]  # (a guess's place sigma, where it was guessed there too)
        m.x, m.y = start

    def _rematch_activation(
        self,
        unit: str,
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        uncertain: list[str],
        hidden: set[str],
        guesses: dict[str, dict[str, tuple[float, float]]],
    ) -> None:
        """``unit``, moved a model at a time over several updates, has a model not seen now. Which model made a piece
        may have been a coin toss in an earlier update (two alike models left their places in one settled frame, one
        piece seen), and the shift the models seen since have made settles it. Match the whole activation again,
        from where its models stood when it began, on the pieces they hold now and the free ones. Taken when that
        holds every piece they hold now and pairs them otherwise, sure of each model it pairs otherwise (no reading
        as good gives it another piece: a coin toss is not tossed again), and when the moves as made so far are no
        one formation's (a model put down beyond reach of the shift the others made) while its are. The moves of
        the models it pairs, and of those it leaves without a piece, are then taken out of the history and made
        again from where the activation began (one move each); a model left without a piece is guessed on its
        shift."""
        start = {
            mid: (float(x), float(y))
            for mid, (x, y) in self.activations[unit]["from"].items()
            if mid in self.models and (mid in matched or mid not in self.absent_at_activation.get(unit, set()))
        }
        held_now = {mid: matched[mid] for mid in start if mid in matched}
        if len(held_now) < 2 or all(mid in held_now or mid in hidden for mid in start):
            return
        members = [
            Tracked(**{**vars(self.models[mid]), "x": x, "y": y, "lost": False, "guessed": False})
            for mid, (x, y) in start.items()
        ]
        free = list(held_now.values()) + [j for j in range(len(detections)) if j not in used]
        assignment, unsure, (dx, dy) = _group_assignment(members, detections, free)
        changed = {mid for mid in start if assignment.get(mid) != held_now.get(mid)}
        if not changed or changed & unsure or not set(held_now.values()) <= set(assignment.values()):
            return
        # (nor where it gives a model a piece whose figure is surely not its own but a mate's: the activation's start
        # may be a guess, its places shifted by a move the camera saw in part; page game focal-point seed 158, a unit
        # moved while the page was down: a model was taken off the piece its figure stood on, for a mate picked up)
        if any(
            mid in assignment and _a_mates_figure(self.models[mid], detections[assignment[mid]], self.models)
            for mid in changed
        ):
            return
        if _off_formation_in(start, detections, held_now) <= GROUP_REACH_IN:
            return  # the moves as made so far are one formation's: the updates that made them saw more
        if _off_formation_in(start, detections, assignment) > GROUP_REACH_IN:
            return
        redo = set(assignment) | changed
        made = set()  # their moves in this activation: this unit's latest in the history, since another unit's
        for entry in reversed(self.history):
            if entry.get("event") != "move" or entry.get("unit") != unit:
                break
            if entry.get("model") in redo:
                made.add(id(entry))
        self.history[:] = [e for e in self.history if id(e) not in made]
        used.difference_update(held_now.values())
        guessed = guesses.setdefault(unit, {})
        for mid in redo:
            m = self.models[mid]
            self._back_to_start(mid, start[mid])
            guessed.pop(mid, None)
            matched.pop(mid, None)
            if mid in uncertain:
                uncertain.remove(mid)
            if mid in assignment:
                matched[mid] = assignment[mid]
                used.add(assignment[mid])
                if mid in unsure:
                    uncertain.append(mid)
            else:
                m.lost = mid not in hidden
                if (dx, dy) != NO_SHIFT:
                    guessed[mid] = (m.x + dx, m.y + dy)

    def _match_group(
        self,
        members: list[Tracked],
        detections: list[dict[str, Any]],
        matched: dict[str, int],
        used: set[int],
        uncertain: list[str],
        shift: tuple[float, float] | None = None,
    ) -> dict[str, tuple[float, float]]:
        """Match the models of one unit that moved to the free pieces (``shift``: what its unit-mates moved so far
        this activation, ``_activation_shift``). Returns where the unit's translation puts each model left
        without one (none when no model of it moved, now or earlier in its activation: no translation to go by)."""
        free = [j for j in range(len(detections)) if j not in used]
        assignment, unsure, (dx, dy) = _group_assignment(
            members, detections, free, shift, seen_where_they_stand=True, mates=self.models
        )
        guesses = {}
        for m in members:
            if m.id in assignment:
                matched[m.id] = assignment[m.id]
                used.add(assignment[m.id])
                if m.id in unsure:
                    uncertain.append(m.id)
            elif (dx, dy) != NO_SHIFT:
                guesses[m.id] = (m.x + dx, m.y + dy)
        return guesses


def _group_assignment(
    members: list[Tracked],
    detections: list[dict[str, Any]],
    free: list[int],
    prior_shift: tuple[float, float] | None = None,
    seen_where_they_stand: bool = False,
    mates: dict[str, Tracked] | None = None,
) -> tuple[dict[str, int], set[str], tuple[float, float]]:
    """The models of one unit that moved, matched to pieces among ``free``. Players move a unit's models by about
    one common shift, each put down a little off it, and may leave some where they stood (a model at a time). Each
    translation a model and a piece make is a guess at that shift, and so is each such guess re-estimated from the
    models it brings within reach. The likeliest guesses are played out: each model paired to a piece near where
    the translation puts it, or to one still where it stood, with the least cost in all, and the translation
    re-estimated from the models it moved, until it settles. The reading that leaves the fewest models without a
    piece, at the least cost, is taken. Returns {model: piece}, the models whose piece could be another's, and the
    translation. ``prior_shift``: what the unit's models moved so far in this activation, if any.
    ``seen_where_they_stand``: the members stand where the last update saw them (not rebuilt where their unit's
    last move began): a piece on the spot of one seen there last is likelier that model still (``COINCIDENCE_IN``)."""
    # models whose leaving the camera did not see (not seen where they stood, or added by the players)
    not_seen_leaving = [m.unseen or m.placed for m in members]
    hypotheses = [
        (
            detections[j]["x"] - m.x,
            detections[j]["y"] - m.y,
            float(not_seen_leaving[i]),
            float(all(math.hypot(detections[j]["x"] - o.x, detections[j]["y"] - o.y) > STAY_IN for o in members)),
        )
        for i, m in enumerate(members)
        for j in free
        if math.hypot(detections[j]["x"] - m.x, detections[j]["y"] - m.y) <= MAX_MOVE_IN
        and _size_cost(m.base, str(detections[j]["base"])) is not None
    ]
    if not hypotheses:  # no piece any of them could have come down on: they moved as their mates did, if any did
        return {}, set(), prior_shift if prior_shift is not None else NO_SHIFT
    table = np.array(hypotheses)
    shifts = table[:, :2]  # (H, 2)
    unseen_leaving = table[:, 2]  # a translation made by a model whose leaving the camera did not see
    onto_new = table[:, 3] > 0  # ...made by a piece standing where no model of the unit stood (put down now)
    at = np.array([[m.x, m.y] for m in members])  # (M, 2)
    pieces = np.array([[detections[j]["x"], detections[j]["y"]] for j in free])  # (F, 2)
    # what each piece's size and colour, read against each model's, cost (inf: a size it cannot be)
    # ...and a piece whose figure is surely not a model's but a unit-mate's (among ``mates``: the table's models, the
    # members by default) is that mate's (``_a_mates_figure``)
    mates = mates if mates is not None else {m.id: m for m in members}
    extra = np.array(
        [
            [
                math.inf
                if _a_mates_figure(m, detections[j], mates)
                else _cost(m, detections[j], detections[j]["x"], detections[j]["y"])
                for j in free
            ]
            for m in members
        ]
    )
    reach = _group_reach_in(members, [detections[j] for j in free])
    # A model may also be paired to a piece still where it stood (moved a model at a time, the rest wait), at a
    # little more than moving with its unit: a unit slid along its own line by one gap is all moved, not its rear
    # model leapfrogged to the front. (Its distance from where it stood weighs ``STAY_WEIGHT`` times: still, it is
    # read again within hundredths of an inch.)
    at_dist = np.linalg.norm(at[:, None, :] - pieces[None, :, :], axis=2)  # (M, F)
    stay_cost = np.where(at_dist <= STAY_IN, STAY_WEIGHT * at_dist + extra + STAY_PENALTY_IN, np.inf)

    def move_dist(shift: np.ndarray) -> np.ndarray:
        """(H, M, F): how far each piece is from where each translation puts each model."""
        predicted = at[None, :, :] + shift[:, None, :]
        return np.linalg.norm(predicted[:, :, None, :] - pieces[None, None, :, :], axis=3)

    # Each translation a model and a piece make carries that model's offset from the common shift: re-estimated
    # from the models it brings within reach, and within twice that (two models put down off it either way).
    # (a piece of a size the model cannot be is no piece of its: a model with none is in no re-estimate)
    dist = np.where(np.isfinite(extra)[None], move_dist(shifts), np.inf)
    near = dist.argmin(axis=2)  # (H, M)
    nearest = np.take_along_axis(dist, near[:, :, None], axis=2)[:, :, 0]
    offsets = pieces[near] - at[None, :, :]  # (H, M, 2)
    refined = [
        (np.median(offsets[h][nearest[h] <= reach], axis=0), unseen_leaving[h])
        for reach in (GROUP_REACH_IN, 2 * GROUP_REACH_IN)
        for h in range(len(shifts))
        if (nearest[h] <= reach).sum() >= 2
    ]
    # ...and, where two models' nearest pieces are one, re-estimated from the models within twice that paired one
    # piece each, the nearest pairs first (a unit of two spread as it comes down: both models' nearest piece to the
    # shift one of them made is the same, so the median above is halfway to another, and no guess pairs them both)
    for h in range(len(shifts)):
        close = nearest[h] <= 2 * GROUP_REACH_IN
        if close.sum() < 2 or len(set(near[h][close].tolist())) == close.sum():
            continue
        pairs = _one_piece_each(dist[h], 2 * GROUP_REACH_IN)
        if len(pairs) >= 2:
            moved_by = np.array([pieces[k] - at[i] for i, k in pairs])
            refined.append((np.median(moved_by, axis=0), unseen_leaving[h]))
    if refined:
        shifts = np.vstack([shifts, np.array([s for s, _ in refined])])
        unseen_leaving = np.concatenate([unseen_leaving, np.array([u for _, u in refined])])
    # The likeliest guesses, by what each model would cost with no piece shared out (a lower bound), to play out
    dist = move_dist(shifts)
    move_cost = np.where(dist <= reach[None], dist + extra[None], np.inf)
    # (a model picked up before, not just missed or placed by the players, is likelier still off the table)
    no_piece = np.array(
        [PICKED_UP_NO_PIECE_COST_IN if m.gone and not (m.gone_now or m.placed) else NO_PIECE_COST_IN for m in members]
    )
    bound = np.minimum(np.minimum(move_cost.min(axis=2), stay_cost.min(axis=1)[None]), no_piece[None]).sum(axis=1)

    def off_prior(xy: np.ndarray) -> np.ndarray:
        """How far each shift (N, 2) is from the one its unit-mates made this activation (0: none made)."""
        if prior_shift is None:
            return np.zeros(len(xy))
        return np.hypot(xy[:, 0] - prior_shift[0], xy[:, 1] - prior_shift[1])

    def made_shift(column: list[int]) -> np.ndarray | None:
        """The median of the moves a reading makes (models paired to a piece further than ``STAY_IN`` away), None
        when it moves no model: then its settled translation says nothing, and is not weighed against the prior."""
        return _median_move([pieces[c] - at[i] for i, c in enumerate(column) if c < len(free)])

    # (among guesses as likely, those made by a model seen to leave its place, then those nearest the shift its
    # unit-mates made this activation, first: the preferences between readings as good, below)
    # ...and more, until half as many are made by a piece put down now: the bound lets two models share a piece,
    # and a unit's formation maps many of its models onto mates' places, whose guesses looked likeliest and crowded
    # out the one true guess (a unit of six moved a model at a time, its one piece put down now played out by none).
    order = np.lexsort((off_prior(shifts), unseen_leaving, np.round(bound, 3)))
    put_down_now = [int(h) for h in order if h < len(onto_new) and onto_new[h]]
    candidates: list[int] = []
    for pool, enough in ((order, PLAYED_OUT), (put_down_now, PLAYED_OUT // 2)):
        members_of_pool = set(int(h) for h in pool)
        for h in pool:
            if sum(k in members_of_pool for k in candidates) >= enough:
                break
            if all(math.dist(shifts[h], shifts[k]) > SAME_GUESS_IN for k in candidates):
                candidates.append(int(h))
    readings = [_play_out(shifts[h], at, pieces, extra, stay_cost, no_piece, reach) for h in candidates]
    # (only a model seen where it stands: one not seen since its unit's last move was not seen to stay either)
    seen_still = np.array([seen_where_they_stand and not flag for flag in not_seen_leaving])
    totals = np.array([r[0] + COINCIDENCE_IN * _coincidences(r[2], at_dist, stay_cost, seen_still) for r in readings])
    best = int(np.argmin(totals))
    # Readings as good (one piece, two alike models that could have made it): the one giving pieces to fewer models
    # not seen where they stood (the camera saw the other leave its place), then the one nearest the shift its
    # unit-mates made this activation, is the better guess. It is still reported unsure below.
    tied = np.flatnonzero(totals - totals[best] < AMBIGUOUS_IN)
    if len(tied) > 1:
        made = [made_shift(readings[k][2]) for k in tied]  # (a reading moving no model is off no shift)
        settled = np.array([(prior_shift or (0.0, 0.0)) if xy is None else xy for xy in made])
        unseen = [i for i, flag in enumerate(not_seen_leaving) if flag]
        leaving = np.array([sum(readings[k][2][i] < len(free) for i in unseen) for k in tied])
        best = int(tied[np.lexsort((totals[tied], off_prior(settled), leaving))[0]])
    _, (dx, dy), column, padded = readings[best]
    if made_shift(column) is None:
        # No model seen moving now: those not seen moved as their unit-mates did this activation, or, none having
        # moved, by no translation anyone made (the reading's guess at it is any pairing's, and says nothing).
        dx, dy = prior_shift if prior_shift is not None else NO_SHIFT
    paired = [(i, int(column[i])) for i in range(len(members)) if column[i] < len(free)]
    assignment = {members[i].id: free[k] for i, k in paired}
    # A model is unsure when the unit's pieces fit nearly as well with its piece given to a unit-mate (swapped, or
    # to a mate left without one), or when another reading as good gives it another piece.
    own = [padded[i, column[i]] for i in range(len(members))]
    unsure: set[str] = set()
    for i, k in paired:
        for i2 in range(len(members)):
            # (a mate left without a piece, moved onto where model i stands read still: a coincidence, above)
            onto = COINCIDENCE_IN if seen_still[i] and column[i2] >= len(free) and at_dist[i, k] <= STAY_IN else 0.0
            if i2 != i and padded[i2, k] + padded[i, column[i2]] + onto - own[i] - own[i2] < AMBIGUOUS_IN:
                unsure.add(members[i].id)
    for k in tied:
        other = readings[k][2]
        unsure |= {members[i].id for i, c in paired if other[i] != c}
    return assignment, unsure, (dx, dy)


def _one_piece_each(dist: np.ndarray, reach_in: float) -> list[tuple[int, int]]:
    """Models (rows of ``dist``) paired to pieces (its columns) one each, the nearest pairs first, each within
    ``reach_in``."""
    rows, cols = np.nonzero(dist <= reach_in)
    pairs: list[tuple[int, int]] = []
    rows_used: set[int] = set()
    cols_used: set[int] = set()
    for k in np.argsort(dist[rows, cols], kind="stable"):
        i, j = int(rows[k]), int(cols[k])
        if i not in rows_used and j not in cols_used:
            pairs.append((i, j))
            rows_used.add(i)
            cols_used.add(j)
    return pairs


def _complete_by_shift(
    models: dict[str, Tracked],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    used: set[int],
    starts: dict[str, dict[str, tuple[float, float]]],
    whole: set[str],
    kept: set[str],
    seen_standing: set[str],
    candidates: set[str],
) -> tuple[set[str], dict[str, tuple[float, float]]]:
    """A unit that moved whole (``whole``: none of it read still) with models left without a piece, and pieces no
    model took within a move's reach (MAX_MOVE_IN) of them, of a size and colour they could be: its pieces that
    moved and as many of those pieces as it has such models, paired again to as many of its models that moved or
    were left without one, with the least total offset from the move they share (``matched`` and ``used`` changed
    in place). Only models in ``candidates`` may take a piece left over (seen where they stood, or picked up earlier
    and put down with their unit; not under a hand). Of the models that moved, those in ``kept`` (held in place by
    the rules, or read in part) and those not in ``seen_standing`` (where they stood was a guess) keep their pieces,
    as in ``_pair_alike_by_shift``.

    Why: a unit moved along its own line, its models put down a little off the shift, can be read as moved one
    place short: each model paired to its neighbour's piece, the last left without one and its piece left over (the
    group match pairs as many models either way). With a model the camera missed, it can be read so with no piece
    left over either: the missed model's mate's piece goes to the missed model and the pieces after it each one
    place along, so one of those models may give its piece back for one left without. Paired with the same pieces,
    the mean move is the same for any pairing, so the pairing with the least offsets from it is the likeliest one;
    and of the models that could take the pieces left over, those the move puts nearest them. Returns the models
    so paired whose piece a unit-mate could have made nearly as well (``_swappable``, or another set of models
    paired as well), and the models that moved that are left without a piece now, each where the move puts it."""
    unsure: set[str] = set()
    dropped: dict[str, tuple[float, float]] = {}
    for unit in sorted(whole):
        start = starts[unit]
        movers = _moved_now(start, detections, matched, kept, seen_standing)
        # (a model of the unit picked up earlier is not among those its match moved when moved as a lump: where it
        # was picked up stands for where it stood; one seen standing that was not among them did not move)
        lost = [
            mid
            for mid, m in models.items()
            if m.unit == unit and mid not in matched and mid in candidates and (mid in start or m.gone)
        ]
        if not movers or not lost:
            continue
        # A model picked up before (a casualty, say) that the match put back on a piece while a unit-mate seen
        # standing was left without one: its piece is dealt again with those left over, which it takes only where no
        # mate can (skirmish seed 122: a unit spread as it came down, past the match's reach, and its casualty shown
        # on a mate's piece, the mate not seen).
        put_back = {
            mid: matched[mid]
            for mid, m in models.items()
            if m.unit == unit
            and mid in matched
            and mid in start
            and mid not in kept
            and m.gone
            and not (m.gone_now or m.placed)
        }
        if any(not models[mid].gone for mid in lost):
            for mid, j in put_back.items():
                del matched[mid]
                used.discard(j)
                lost.append(mid)
        else:
            put_back = {}
        start = {**{mid: (models[mid].x, models[mid].y) for mid in lost}, **start}
        # (nearest the unit's pieces first: only the first MAX_SPARE_TRIES sets are tried)
        pieces = [detections[matched[mid]] for mid in movers]
        spare = sorted(
            (
                j
                for j, d in enumerate(detections)
                if j not in used
                and any(
                    _size_cost(models[mid].base, str(d["base"])) is not None
                    and d.get("player", models[mid].player) == models[mid].player
                    and math.hypot(d["x"] - start[mid][0], d["y"] - start[mid][1]) <= MAX_MOVE_IN
                    for mid in lost
                )
            ),
            key=lambda j: min(math.hypot(detections[j]["x"] - o["x"], detections[j]["y"] - o["y"]) for o in pieces),
        )
        # as many models as pieces: every mover and as many lost models as spare pieces (k), or, with fewer spare
        # pieces than lost models, a mover left out for a lost model seen where it stood until now (the sets keeping
        # every mover first; one picked up earlier, a casualty say, takes only a piece left over)
        k = min(len(lost), len(spare))
        id_sets = [
            ids
            for ids in itertools.combinations(movers + lost, len(movers) + k)
            if sum(mid not in ids for mid in movers) <= sum(mid in ids and not models[mid].gone for mid in lost)
        ]
        tried = []
        tries = itertools.product(itertools.combinations(spare, k), id_sets)
        for chosen, ids in itertools.islice(tries, MAX_SPARE_TRIES * len(id_sets)):
            columns = [matched[mid] for mid in movers] + list(chosen)
            froms = np.array([start[mid] for mid in ids], dtype=float)
            at = np.array([[detections[j]["x"], detections[j]["y"]] for j in columns], dtype=float)
            shift = at.mean(axis=0) - froms.mean(axis=0)
            cost = np.array(
                [[_cost(models[mid], detections[j], *(np.add(start[mid], shift))) for j in columns] for mid in ids]
            )
            pairing = min_cost_assignment(np.where(np.isfinite(cost), cost, FORBIDDEN_COST))
            offsets = [cost[i, c] for i, c in enumerate(pairing)]
            # (a model further off the unit's move than any put down with it: not this unit's piece)
            if max(offsets) <= 2 * GROUP_REACH_IN:
                tried.append((sum(offsets), list(ids), columns, cost, pairing, shift))
        if not tried:
            for mid, j in put_back.items():  # (as the match had it)
                matched[mid] = j
                used.add(j)
            continue  # none of the pieces left over is the unit's: the players are asked
        best = min(tried, key=lambda t: t[0])
        _, chosen_ids, columns, cost, pairing, shift = best
        for mid in movers:
            if mid not in chosen_ids:  # gave its piece back: not seen, moved as its unit did
                del matched[mid]
                dropped[mid] = (start[mid][0] + float(shift[0]), start[mid][1] + float(shift[1]))
        for mid, c in zip(chosen_ids, pairing, strict=True):
            matched[mid] = columns[c]
            used.add(columns[c])
        unsure |= _swappable(chosen_ids, cost, pairing) | _likely_otherwise(chosen_ids, cost, pairing)
        # (another set of models paired nearly as well, or as likely for the unit's spread: which model the camera
        # missed is a guess, and a model given a piece here may be the one; one left without a piece is reported not
        # seen. Replays with pieces missed, 0.3" off: a unit of three, one missed, read one place along its line.)
        mine = dict(zip(chosen_ids, (columns[c] for c in pairing), strict=True))
        squared = _squared_total(cost, pairing)
        for total, other_ids, other_columns, other_cost, other_pairing, _ in tried:
            as_likely = _as_likely(squared, _squared_total(other_cost, other_pairing), len(chosen_ids))
            if other_ids != chosen_ids and (total - best[0] < AMBIGUOUS_IN or as_likely):
                theirs = dict(zip(other_ids, (other_columns[c] for c in other_pairing), strict=True))
                unsure |= {mid for mid in mine if mine[mid] != theirs.get(mid)}
    return unsure, dropped


def _pair_alike_by_shift(
    models: dict[str, Tracked],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    starts: dict[str, dict[str, tuple[float, float]]],
    kept: set[str],
    seen_standing: set[str],
) -> set[str]:
    """A unit's alike models (one base size) that moved in this update, paired again to the pieces they came down
    on with the least total offset from the move they share (``matched`` changed in place). Left out: ``kept``
    (held in place by the rules, or read in part) and models not in ``seen_standing`` (where they stood was a
    guess, so their offsets say little).

    Why: the group match reaches only GROUP_REACH_IN from its guess at the unit's shift. Two models put down farther
    off it than that (a player spreading the unit) are then paired one within reach and one picked up again beside
    its mates (REACQUIRE_IN), which could give each the other's piece. Every pairing of the same models and pieces
    makes the same mean move, so the least offsets from it are the likeliest pairing. Returns the models whose piece
    a unit-mate could have made nearly as well (``_swappable``)."""
    unsure: set[str] = set()
    for start in starts.values():
        movers = _moved_now(start, detections, matched, kept, seen_standing)
        unsure |= _least_offset_pairing(models, detections, matched, start, movers)
    return unsure


def _least_offset_pairing(
    models: dict[str, Tracked],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    start: dict[str, tuple[float, float]],
    movers: list[str],
) -> set[str]:
    """``movers`` (models of one unit that moved from ``start``), paired again, alike ones (one base size) among
    themselves, to the pieces they hold with the least sum of squared offsets from the move they share (``matched``
    changed in place). Returns the models whose piece an alike mate could have made nearly as well (``_swappable``,
    ``_likely_otherwise``)."""
    unsure: set[str] = set()
    by_base: dict[str, list[str]] = {}
    for mid in movers:
        by_base.setdefault(models[mid].base, []).append(mid)
    for ids in by_base.values():
        if len(ids) < 2:
            continue
        froms = np.array([start[mid] for mid in ids], dtype=float)
        pieces = np.array([[detections[matched[mid]]["x"], detections[matched[mid]]["y"]] for mid in ids], float)
        shift = pieces.mean(axis=0) - froms.mean(axis=0)
        taken = [matched[mid] for mid in ids]
        looks = np.array([[_look_cost(models[mid], detections[j]) for j in taken] for mid in ids])
        cost = np.linalg.norm(froms[:, None, :] + shift - pieces[None, :, :], axis=2) + looks
        # (by the squares of the offsets: players put each model down off the shift by about a normal error, so the
        # likeliest pairing has the least sum of squares; the least sum of offsets would rather move three models
        # round a ring, each a little off, than leave one 2" off: skirmish seed 122's spread unit)
        pairing = min_cost_assignment(cost**2)
        for mid, column in zip(ids, pairing, strict=True):
            matched[mid] = taken[column]
        unsure |= _swappable(ids, cost, pairing) | _likely_otherwise(ids, cost, pairing)
    return unsure


def _likely_otherwise(ids: list[str], cost: np.ndarray, pairing: list[int]) -> set[str]:
    """The models (``ids``, the rows of ``cost``: offsets from a move they share) that another pairing
    gives another piece and that is not ``SURE_ODDS`` times less likely than ``pairing``, the offsets taken as
    normal with the spread the pairing itself shows (each axis; at least ``PLACE_SIGMA_MIN_IN``). A unit put down
    neatly is sure of pairings a swap would put 0.3" off; one spread as it came down (0.5" off its move, each axis)
    is not of pairings 1" off: which is which is a guess there, and the players are asked (``_swappable`` asks
    only where the offsets differ by AMBIGUOUS_IN in all)."""
    total = _squared_total(cost, pairing)
    out: set[str] = set()
    for other, gap in _denied_pairings(cost**2, pairing):
        if _as_likely(total, total + gap, len(ids)):
            out |= {ids[i] for i, c in enumerate(other) if c != pairing[i]}
    return out


def _as_likely(squared_in2: float, other_squared_in2: float, n_models: int) -> bool:
    """Whether a reading whose models' squared offsets from their move sum to ``other_squared_in2`` is not
    ``SURE_ODDS`` times less likely than the one whose sum to ``squared_in2`` (``n_models`` models), the offsets taken
    as normal with the spread the latter shows (each axis; at least ``PLACE_SIGMA_MIN_IN``)."""
    variance = max(squared_in2 / (2 * n_models), PLACE_SIGMA_MIN_IN**2)
    return (other_squared_in2 - squared_in2) / (2 * variance) < math.log(SURE_ODDS)


def _squared_total(cost: np.ndarray, pairing: list[int]) -> float:
    """The sum of the squares of a pairing's costs (offsets from a move, in inches)."""
    return float(sum(cost[i, c] ** 2 for i, c in enumerate(pairing)))


def _denied_pairings(cost: np.ndarray, pairing: list[int]) -> Iterator[tuple[list[int], float]]:
    """For each row of ``cost`` (a model), the least-cost pairing that denies it its column in ``pairing`` (its
    piece), and how much more that pairing costs in all: two models swapped, or three or more round a ring."""
    finite = np.where(np.isfinite(cost), cost, FORBIDDEN_COST)
    total = float(sum(finite[i, c] for i, c in enumerate(pairing)))
    for a in range(len(pairing)):
        denied = finite.copy()
        denied[a, pairing[a]] = FORBIDDEN_COST
        other = min_cost_assignment(denied)
        yield other, float(sum(denied[i, c] for i, c in enumerate(other))) - total


def _nudged_beside_mates_moved(
    models: dict[str, Tracked], detections: list[dict[str, Any]], matched: dict[str, int], seen_standing: set[str]
) -> set[str]:
    """Models seen where they stood (``seen_standing``) read surely off there but within reach of it (nudged, by
    ``_moved``), while alike unit-mates (one base size) moved further, and those mates: a mate put down on the spot
    such a model left reads as that model nudged, and which of them moved where is a guess between them (a unit
    spread as it came down, a mate's true shift past the match's reach: replays, 0.5" off, three ids swapped so)."""
    off_in = {
        mid: math.hypot(detections[j]["x"] - models[mid].x, detections[j]["y"] - models[mid].y)
        for mid, j in matched.items()
    }
    went = [mid for mid, off in off_in.items() if off > _still_in(models[mid])]
    out: set[str] = set()
    for mid, off in off_in.items():
        m = models[mid]
        seen_sigma_in = float(detections[matched[mid]].get("sigma_in", 0.0))
        if mid not in seen_standing or off > _still_in(m) or not _moved(m, off, seen_sigma_in):
            continue
        mates = {o for o in went if models[o].unit == m.unit and models[o].base == m.base}
        if mates:
            out |= {mid} | mates
    return out


def _moved_now(
    start: dict[str, tuple[float, float]],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    kept: set[str],
    seen_standing: set[str],
) -> list[str]:
    """The models of ``start`` (where a unit's models stood) paired to a piece read more than STAY_IN from there:
    moved in this update. Left out: ``kept`` (held in place by the rules, or read in part) and models not in
    ``seen_standing`` (where they stood was a guess, so their offsets say little)."""
    return [
        mid
        for mid, (x, y) in start.items()
        if mid in matched
        and mid not in kept
        and mid in seen_standing
        and math.hypot(detections[matched[mid]]["x"] - x, detections[matched[mid]]["y"] - y) > STAY_IN
    ]


def _swappable(ids: list[str], cost: np.ndarray, pairing: list[int]) -> set[str]:
    """The models (``ids``, the rows of ``cost``: offsets from a move they share) that another pairing of the same
    pieces, costing less than AMBIGUOUS_IN more than ``pairing`` does, gives another piece, as the group match judges
    its own pairs (``_group_assignment``): which is which is a guess, and the players are asked. The other pairing
    may swap two models or move three or more round a ring (alike models spread as they come down: skirmish seed
    122's unit of five)."""
    out: set[str] = set()
    for other, gap in _denied_pairings(cost, pairing):
        if gap < AMBIGUOUS_IN:
            out |= {ids[i] for i, c in enumerate(other) if c != pairing[i]}
    return out


def _coincidences(column: list[int], at_dist: np.ndarray, stay_cost: np.ndarray, seen_still: np.ndarray) -> int:
    """How many models seen where they stand (``seen_still``) a reading (``column``: each model's piece, beyond the
    pieces none) leaves without a piece while a unit-mate moved onto that spot (within ``STAY_IN``: their own piece,
    read still)."""
    n_models, n_pieces = at_dist.shape
    pieceless = [i for i in range(n_models) if column[i] >= n_pieces and seen_still[i]]
    moved_onto = [
        k
        for i, k in enumerate(column)
        if k < n_pieces and not (np.isfinite(stay_cost[i, k]) and at_dist[i, k] <= STAY_IN)
    ]
    return sum(any(at_dist[i, k] <= STAY_IN for k in moved_onto) for i in pieceless)


def _group_reach_in(members: list[Tracked], pieces: list[dict[str, Any]]) -> np.ndarray:
    """(M, F): how far from where a unit's shift puts each model its piece may be: ``GROUP_REACH_IN``, or twice that
    where the piece's figure looks like that model's (within ``LOOK_SAME_LAB``) and like no other's of the unit. Each
    model is moved on its own, up to its Move: a unit's models put down 0.6" off their shift either way are spread
    past one reach of any shift, and the pairing that reached them all gave two models each other's piece, their
    figures plain to tell apart (page game skirmish seed 149: one model left 0.248" from where it stood, read still)."""
    alike = np.array(
        [
            [
                m.look is not None and d.get("look") is not None and math.dist(m.look, d["look"]) <= LOOK_SAME_LAB
                for d in pieces
            ]
            for m in members
        ],
        dtype=bool,
    ).reshape(len(members), len(pieces))
    own = alike & (alike.sum(axis=0, keepdims=True) == 1)
    return np.where(own, 2 * GROUP_REACH_IN, GROUP_REACH_IN)


def _play_out(
    shift: np.ndarray,
    at: np.ndarray,
    pieces: np.ndarray,
    extra: np.ndarray,
    stay_cost: np.ndarray,
    no_piece: np.ndarray,
    reach: np.ndarray,
) -> tuple[float, tuple[float, float], list[int], np.ndarray]:
    """A guess at a unit's common shift played out: each model (``at``) paired to a piece near where the shift puts
    it (within ``reach``, ``_group_reach_in``) or still where it stood (``stay_cost``), the pairing with the least cost
    in all,
    a model left without one at its ``no_piece`` cost; the shift again from the models it moved, until it settles.
    Returns the total cost, the shift, each model's column (beyond the pieces: none) and the cost matrix."""
    n_models, n_pieces = extra.shape
    dx, dy = float(shift[0]), float(shift[1])
    for _ in range(4):
        dist = np.linalg.norm(at[:, None, :] + np.array([dx, dy]) - pieces[None, :, :], axis=2)
        moved = np.where(dist <= reach, dist + extra, np.inf)
        cost = np.minimum(moved, stay_cost)
        # out of reach or of a size it cannot be: dearer than no piece at all
        cost = np.where(np.isfinite(cost), cost, 2 * NO_PIECE_COST_IN)
        padded = np.hstack([cost, np.repeat(no_piece[:, None], n_models, axis=1)])
        column = min_cost_assignment(padded)
        went = [
            (i, column[i])
            for i in range(n_models)
            if column[i] < n_pieces and moved[i, column[i]] <= cost[i, column[i]]
        ]
        if not went:
            break
        new = np.median(np.array([pieces[k] - at[i] for i, k in went]), axis=0)
        settled = math.hypot(float(new[0]) - dx, float(new[1]) - dy) < 0.01
        dx, dy = float(new[0]), float(new[1])
        if settled:
            break
    total = float(sum(padded[i, column[i]] for i in range(n_models)))
    return total, (dx, dy), column, padded


def _off_formation_in(
    start: dict[str, tuple[float, float]], detections: list[dict[str, Any]], pairing: dict[str, int]
) -> float:
    """How far the furthest model that moved (paired to a piece beyond ``STAY_IN`` of where it stood) is from where
    the median of their moves puts it: a unit keeps its formation, each model a little off one common shift."""
    moves = [(detections[j]["x"] - start[mid][0], detections[j]["y"] - start[mid][1]) for mid, j in pairing.items()]
    shift = _median_move(moves)
    if shift is None:
        return 0.0
    return max(math.hypot(x - shift[0], y - shift[1]) for x, y in moves if math.hypot(x, y) > STAY_IN)


def _median_move(moves: Sequence[Sequence[float]]) -> np.ndarray | None:
    """The median of the moves beyond ``STAY_IN`` (models read still where they stood made none); None: none."""
    moved = [xy for xy in moves if math.hypot(xy[0], xy[1]) > STAY_IN]
    return np.median(np.array(moved, dtype=float), axis=0) if moved else None


def _came_down_with_mates(moves: tuple[Move, ...], returned: tuple[str, ...]) -> set[str]:
    """The ``returned`` models (picked up earlier) whose move is within twice ``GROUP_REACH_IN`` of the median move of
    at least two of their unit-mates that were on the table: put down with their unit as it moved, not put back.
    (Twice: the model and its mates are each put down off the move they share, either way.)"""
    with_mates: set[str] = set()
    for mid in returned:
        own = next((mv for mv in moves if mv.model == mid), None)  # none: put back where it stood
        if own is None:
            continue
        mates = [np.subtract(mv.end, mv.start) for mv in moves if mv.unit == own.unit and mv.model not in returned]
        if _on_mates_shift(np.subtract(own.end, own.start), mates):
            with_mates.add(mid)
    return with_mates


def _on_mates_shift(own: npt.NDArray[np.float64], mates: Sequence[npt.NDArray[np.float64]]) -> bool:
    """Whether a model that moved by ``own`` came down with two or more mates that moved by ``mates``: within twice
    ``GROUP_REACH_IN`` of their median move (the model and its mates are each put down off the move they share)."""
    return len(mates) >= 2 and math.dist(own, np.median(np.array(mates), axis=0)) <= 2 * GROUP_REACH_IN


def _unpair_lump_casualties(
    models: dict[str, Tracked],
    members: list[Tracked],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    used: set[int],
    uncertain: list[str],
) -> None:
    """A player's lump (models not assigned to units) is no unit that moves together: a model of it picked up earlier
    that its group match paired comes down with it only beside two or more of its models that moved now, on their
    shift (as ``_came_down_with_mates`` asks of a unit's). Else it is un-paired: alone, its pairing sets the group's
    shift by itself, and a 40 mm casualty was taken back onto a piece 15.7" from where it fell (scripted skirmish
    seed 140, the lump with casualties, a blurred camera: a mostly hidden oval's piece read 50 mm)."""
    moves = {
        m.id: np.subtract((detections[matched[m.id]]["x"], detections[matched[m.id]]["y"]), (m.x, m.y))
        for m in members
        if m.id in matched
    }
    moved = [v for mid, v in moves.items() if not models[mid].gone and float(np.hypot(*v)) > STAY_IN]
    for m in members:
        if m.id in moves and m.gone and not m.placed and not _on_mates_shift(moves[m.id], moved):
            used.discard(matched.pop(m.id))
            if m.id in uncertain:
                uncertain.remove(m.id)


def _overlapping(a: dict[str, Any], base_a: str, b: dict[str, Any], base_b: str) -> bool:
    """Whether pieces ``a`` and ``b``, on bases ``base_a`` and ``base_b``, overlap by more than ``STAY_IN``, as their
    bases' narrow semi-axes tell: two bases cannot overlap, and a crowded piece is read off by less."""
    room_in = min(base_semi_axes_in(base_a)) + min(base_semi_axes_in(base_b)) - STAY_IN
    return math.hypot(a["x"] - b["x"], a["y"] - b["y"]) < room_in


def _crowded_returns(models: dict[str, Tracked], detections: list[dict[str, Any]], matched: dict[str, int]) -> set[str]:
    """The models picked up earlier (``gone``) matched to a piece that overlaps (``_overlapping``, by their known
    bases) the piece of a model on the table."""
    return {
        mid
        for mid, j in matched.items()
        if models[mid].gone
        and any(
            oid != mid
            and not models[oid].gone
            and _overlapping(detections[j], models[mid].base, detections[k], models[oid].base)
            for oid, k in matched.items()
        )
    }


def _unexplained_standing(
    before: list[tuple[float, float, frozenset[str]]],
    detections: list[dict[str, Any]],
    unexplained: tuple[int, ...],
    matched: set[str],
) -> list[tuple[float, float, frozenset[str]]]:
    """Each piece no model accounts for now, and the models seen on another piece while it stood there: those
    matched now, and those so noted for it at the last update (a piece read still, within ``STAY_IN``)."""
    standing = []
    for j in unexplained:
        x, y = float(detections[j]["x"]), float(detections[j]["y"])
        seen = set(matched)
        for x0, y0, seen_then in before:
            if math.hypot(x - x0, y - y0) <= STAY_IN:
                seen |= seen_then
        standing.append((x, y, frozenset(seen)))
    return standing


def _onto_pieces_standing_before(
    models: dict[str, Tracked],
    detections: list[dict[str, Any]],
    matched: dict[str, int],
    unexplained_at: list[tuple[float, float, frozenset[str]]],
) -> set[str]:
    """The models matched now, beyond their own base from where they were, to a piece read still (within
    ``STAY_IN``) where a piece no model accounted for stood at the last update, that were seen on another piece
    while it stood there (``unexplained_at``)."""
    return {
        mid
        for mid, j in matched.items()
        if math.hypot(detections[j]["x"] - models[mid].x, detections[j]["y"] - models[mid].y)
        > _own_base_in(models[mid])
        and any(
            mid in seen and math.hypot(detections[j]["x"] - x, detections[j]["y"] - y) <= STAY_IN
            for x, y, seen in unexplained_at
        )
    }


def _second_reads(
    models: dict[str, Tracked], detections: list[dict[str, Any]], matched: dict[str, int], used: set[int]
) -> set[int]:
    """The pieces no model took that overlap (``_overlapping``: that model's known base, the piece's size as read)
    the piece of a model on the table: the model's base read twice, a part of it or of its figure read as a base
    beside it, not a new model. Seen in a rendered game (seed 90): a 32 mm base read as two 25 mm pieces 0.85" apart,
    the second one in every frame after."""
    return {
        j
        for j, d in enumerate(detections)
        if j not in used
        and any(
            not models[mid].gone and _overlapping(d, str(d["base"]), detections[k], models[mid].base)
            for mid, k in matched.items()
        )
    }


def _take_cheapest(
    options: list[tuple[float, str, int]], matched: dict[str, int], used: set[int], uncertain: list[str]
) -> list[str]:
    """Models paired to pieces, cheapest (cost, model, piece) option first, each model and piece once; a model whose
    next best option, or a rival model's for its piece, costs less than ``AMBIGUOUS_IN`` more is uncertain. Returns
    the models paired."""
    taken = []
    options = sorted(options)
    for cost, mid, j in options:
        if mid in matched or j in used:
            continue
        rivals = [c for c, other, k in options if other == mid and k != j and k not in used]
        rivals += [c for c, other, k in options if k == j and other != mid and other not in matched]
        if rivals and min(rivals) - cost < AMBIGUOUS_IN:
            uncertain.append(mid)
        matched[mid] = j
        used.add(j)
        taken.append(mid)
    return taken


def _missed_in_turn(models: dict[str, Tracked], mid: str, trial: TrackUpdate, moved_now: set[str]) -> bool:
    """Whether ``mid``, seen again in ``trial`` where it stood after one update unseen, was missed rather than picked
    up: no model of its unit moved, and a model seen until now is not seen in ``trial``, a unit-mate or one whose
    unit did not move either (the detector missed two standing models in turn)."""
    unit = models[mid].unit
    moved_units = {models[m].unit for m in moved_now}
    return (
        models[mid].gone_now
        and unit not in moved_units
        and any(
            (models[m].unit == unit or models[m].unit not in moved_units) and not models[m].unseen
            for m in trial.vanished
        )
    )


def _radius_in(m: Tracked) -> float:
    """The mean of the base's semi-axes: near enough for how far apart two bases stand."""
    return sum(base_semi_axes_in(m.base)) / 2


def _moved(m: Tracked, off_in: float, seen_sigma_in: float) -> bool:
    """Whether a model read ``off_in`` from where it stood moved: beyond ``_still_in``, or within it but surely further
    off than a still base's re-read ever strays (``NUDGE_IN``; nudged into coherency, say). Players nudge a model a
    tenth or two of an inch to reach 1" or 2"; kept where it stood, its rulings would be off by that, and sure of it.
    A model the players placed by hand is not nudged: its first read is where it stands, not a move."""
    if off_in > _still_in(m):
        return True
    return not m.placed and off_in > NUDGE_IN and off_in > NUDGE_SIGMAS * math.hypot(m.place_sigma_in, seen_sigma_in)


def _still_in(m: Tracked) -> float:
    """How far a piece may be read from a model and the model not have moved: the jitter, or twice how unsure its
    place was measured where that is more (read off its base partly hidden: ``_match_partly_hidden``)."""
    return max(STAY_IN, 2 * m.measured_sigma_in)


def _own_base_in(m: Tracked) -> float:
    """How far a piece may be read from a model still in place and be that model: within its own base (bases
    cannot overlap), and never less than the jitter."""
    return max(STAY_IN, min(base_semi_axes_in(m.base)))


def _pieces_within(
    m: Tracked, detections: list[dict[str, Any]], reach_in: float, mates: dict[str, Tracked] | None = None
) -> list[tuple[float, int]]:
    """(cost, index) of each detection within ``reach_in`` of where ``m`` is and of a size it could be: the
    distance plus what its size read differently costs. ``mates``: the models, where ``m`` may have moved: a piece
    whose figure is a unit-mate's, not ``m``'s (``_a_mates_figure``), is left out."""
    out = []
    for j, d in enumerate(detections):
        dist = math.hypot(d["x"] - m.x, d["y"] - m.y)
        # (a smaller piece that could be the base partly hidden is left to _match_partly_hidden, which says how unsure)
        same_spot = dist <= SAME_SPOT_IN and _partial_sigma_in(m.base, str(d["base"])) is None
        size = _size_cost(m.base, str(d["base"]), same_spot)
        if dist <= reach_in and size is not None and not (mates and _a_mates_figure(m, d, mates)):
            out.append((dist + size, j))
    return out


def _a_mates_figure(m: Tracked, d: dict[str, Any], models: dict[str, Tracked]) -> bool:
    """``d``'s figure is surely not ``m``'s (LOOK_SAME_LAB + LOOK_SPAN_LAB apart, the full cost) and looks like
    that of a unit-mate of ``m``'s base (within LOOK_SAME_LAB): the mate came down on ``m``'s spot, so ``m`` moved
    (a model still in place stands under its own figure). Both are needed: a figure read unlike its own (a
    neighbour's arm over it) is no sign alone."""
    look = d.get("look")
    if m.look is None or look is None or math.dist(m.look, look) < LOOK_SAME_LAB + LOOK_SPAN_LAB:
        return False
    return any(
        o.id != m.id and o.unit == m.unit and o.base == m.base and o.look and math.dist(o.look, look) < LOOK_SAME_LAB
        for o in models.values()
    )


def _swap_by_figures(
    models: dict[str, Tracked], detections: list[dict[str, Any]], matched: dict[str, int], uncertain: list[str]
) -> None:
    """Two alike unit-mates (one base size) whose pieces their places could not tell apart (both ``uncertain``),
    each on a piece whose figure is surely not its own but looks like the other's (``_a_mates_figure`` both ways),
    swap pieces (``matched`` changed in place; they stay uncertain: the players are still asked).

    Why: a figure's look costs at most LOOK_COST_IN, so two models put down far off their unit's shift, each nearer
    where the shift puts the other, are paired by place however plainly their figures differ (page game skirmish
    seed 162: two models 90 apart in look, each piece within 6 of the other's figure, swapped for the game). Only
    where places cannot decide, and both figures say the same, do the figures decide."""
    unsure = [mid for mid in uncertain if mid in matched]
    swapped = True
    while swapped:  # (each swap puts two more models on their own figures: it ends)
        swapped = False
        for k, a in enumerate(unsure):
            for b in unsure[k + 1 :]:
                ma, mb = models[a], models[b]
                if ma.unit != mb.unit or ma.base != mb.base:
                    continue
                da, db = detections[matched[a]], detections[matched[b]]
                if _a_mates_figure(ma, da, {b: mb}) and _a_mates_figure(mb, db, {a: ma}):
                    matched[a], matched[b] = matched[b], matched[a]
                    swapped = True


def _size_cost(known: str, seen: str, same_spot: bool = False) -> float | None:
    """What a size read differently costs (inches of distance); None: too different to be the same piece, unless
    read on the model's ``same_spot`` (``SAME_SPOT_IN``)."""
    if known == seen:
        return 0.0
    a = base_semi_axes_in(known)
    b = base_semi_axes_in(seen)
    ratio = max(a[0] / b[0], b[0] / a[0], a[1] / b[1], b[1] / a[1])
    if ratio > SIZE_RATIO_MAX and not same_spot:
        return None
    return SIZE_STEP_COST_IN * (1 + (ratio - 1) * 4)


def _partial_sigma_in(known: str, seen: str, across_slack: float = 1.05) -> float | None:
    """A piece read as ``seen`` that could be a base of size ``known`` partly hidden: a smaller base that fits
    inside it (each semi-axis no longer, give or take a read's 5 %; the shorter up to ``across_slack`` longer),
    covering ``PARTIAL_AREA_MIN`` of it at least, and too far off to be the same base misread (``_size_cost``).
    Returns how unsure its centre puts the base's (1 sigma: the true centre lies up to the difference of the two
    across-semi-axes off it, either way); None: it could not."""
    if _size_cost(known, seen) is not None:
        return None
    big, small = base_semi_axes_in(known), base_semi_axes_in(seen)
    fits = max(small) <= max(big) * 1.05 and min(small) <= min(big) * across_slack
    if not fits or small[0] * small[1] < PARTIAL_AREA_MIN * big[0] * big[1]:
        return None
    return (max(big) - min(small)) / math.sqrt(3)


def _cost(m: Tracked, d: dict[str, Any], x: float, y: float) -> float:
    """Distance from where ``m`` is expected, plus what its size, team and figure read differently cost (inf: a
    piece it cannot be)."""
    size = _size_cost(m.base, str(d["base"]))
    team = TEAM_COST_IN if d.get("player", m.player) != m.player else 0.0
    # A model picked up earlier (a casualty, say) comes back off its own spot only on a piece in its own player's
    # colour: a piece no model on the table explains is asked about, not filled with the other side's dead.
    if team and m.gone and math.hypot(d["x"] - m.x, d["y"] - m.y) > _radius_in(m):
        return math.inf
    return math.hypot(d["x"] - x, d["y"] - y) + (size if size is not None else math.inf) + team + _look_cost(m, d)


def _kept_look(value: Any) -> tuple[float, float, float] | None:
    """A model's look as a scene keeps it (``figure_lab``: L, a, b); None where it keeps none (or not three numbers:
    a scene written by hand), and the model is matched by place until the camera sees it."""
    if not isinstance(value, list | tuple) or len(value) != 3:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value):
        return None
    return (float(value[0]), float(value[1]), float(value[2]))


def _look_cost(m: Tracked, d: dict[str, Any]) -> float:
    """What a piece whose figure looks unlike ``m``'s costs (0 where either look is unknown, or they are alike)."""
    look = d.get("look")
    if m.look is None or look is None:
        return 0.0
    beyond = (math.dist(m.look, look) - LOOK_SAME_LAB) / LOOK_SPAN_LAB
    return LOOK_COST_IN * min(max(beyond, 0.0), 1.0)


def _learnt_look(known: tuple[float, float, float] | None, seen: Sequence[float]) -> tuple[float, float, float]:
    """``known`` moved by LOOK_LEARN towards ``seen`` (``seen`` itself when nothing is known)."""
    if known is None:
        return (float(seen[0]), float(seen[1]), float(seen[2]))
    a, b, c = (k + LOOK_LEARN * (float(v) - k) for k, v in zip(known, seen, strict=True))
    return (a, b, c)
