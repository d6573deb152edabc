"""Grinding-Annihilation (../shared/rulebooks/grinding-annihilation.txt).

A unit is a formation; its models are troops. Profile: ``move``, ``vigour``,
``defence``, ``wounds``, ``heroism``, ``be``, optional ``invulnerable``,
``reinforced_health``, ``weapons``: ``[{"name", "range": inches or "melee",
"sw", "skill", "s", "ap", "d", "abilities": [...]}]``. Keywords: ``Infantry``,
``Monstrous``, ``Vehicle``, ``Fly``, ``Stealth``, ``Grenades``, ``Aircraft``,
``Infiltrators``, ``Deadly Demise X``. State: ``advanced``, ``retreated``,
``stationary``, ``battle_fatigued``, ``starting_strength``, ``reserve``.
Readings: docs/rules/grinding-annihilation.md.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import shapely

from geometry.coherency import coherency
from geometry.cover import within_verdict
from geometry.distance import cross_distance_in, pairwise_distance_in, polygon_distance_in, vertical_gap_in
from geometry.measure import Comparison, Verdict, combine_all, combine_any, compare_at_most
from geometry.paths import shortest_path
from geometry.shapes import Footprints, base_semi_axes_in
from geometry.sight import SIGHT_SIGMAS, Obstacle, SightLines, SightMode, envelopes
from rules import ga_scenarios
from rules.common import (
    UNSEEN_START_REASON,
    QuestionError,
    fmt_in,
    has_keyword,
    last_event,
    objective_or_error,
    profile_value,
    unit_or_error,
    unseen_starts,
)
from rules.dice import Dist
from rules.grinding_odds import Situation, Target, Weapon, attack_odds
from rules.profiles import profile_for
from rules.ruling import Ruling
from rules.table_facts import base_obstacles, sight_doubt, sight_verdict
from tablesight.scene import Model, Scene, Unit

GAME = "Grinding-Annihilation"
COHESION_IN, COHESION_V_IN = 2.0, 5.0
THREAT_IN, THREAT_V_IN = 1.0, 5.0
OBJECTIVE_IN, OBJECTIVE_V_IN = 3.0, 5.0
ASSAULT_IN = 12.0
DEADLY_DEMISE_IN = 6.0
GRENADES_IN = 8.0
OVERWATCH_IN = 24.0
RESERVE_ENEMY_IN = 12.0
TP_CAP_PER_ROUND = 3
SIGHT_MODES = profile_for("grinding-annihilation").sight_modes
IMPASSABLE = {"structure", "sealed-building", "armoured-container", "blocking"}


@dataclass(frozen=True)
class GrindingOptions:
    # Objective range: the text says "within 3" horizontally or 5" vertically"; we read "and", as for Threat Range.
    objective_range_needs_both: bool = True
    # Assault eligibility lists "not within the Threat Range of enemy troops" among the exclusions; we read it as
    # "a formation already within Threat Range cannot Assault" (the list says when a formation is NOT eligible).
    assault_excludes_engaged: bool = True
    # Removal search: give up exhaustive search above this many combinations per group and remove greedily.
    removal_search_limit: int = 20000


def _weapon(raw: dict[str, Any]) -> Weapon:
    rng = raw.get("range", "melee")
    return Weapon(
        str(raw.get("name", "weapon")),
        raw.get("sw", 1),
        None if raw.get("skill") in (None, "N/A") else int(raw["skill"]),
        int(raw.get("s", 4)),
        int(raw.get("ap", 0)),
        raw.get("d", 1),
        None if rng == "melee" else float(rng),
        tuple(str(a) for a in raw.get("abilities", [])),
    )


@dataclass
class Grinding:
    options: GrindingOptions = field(default_factory=GrindingOptions)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)  # per-scene results, reset for a new scene

    game = "grinding-annihilation"
    questions = (
        "coherent",
        "in-range",
        "can-see",
        "can-target",
        "cover",
        "controls",
        "move-ok",
        "can-assault",
        "assault-ok",
        "half-strength",
        "deadly-demise",
        "grenades",
        "overwatch",
        "arrival-ok",
        "setup-ok",
        "score",
    )

    # ---- helpers ---------------------------------------------------------------
    def _troops(self, scene: Scene, unit_id: str) -> tuple[Unit, tuple[Model, ...]]:
        unit = unit_or_error(scene, unit_id)
        troops = scene.models_of(unit.id)
        if not troops:
            raise QuestionError(f"{scene.source}: formation {unit_id!r} has no troops on the warfield")
        return unit, troops

    def _table(self, scene: Scene) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """All troops' pairwise distances, vertical gaps and sigmas, computed once per scene."""
        cached = self._cache.get("table")
        if cached is None or cached[0] is not scene:
            fp = scene.footprints()
            index = {m.id: k for k, m in enumerate(scene.models)}
            d = pairwise_distance_in(fp)
            cached = (scene, index, d, vertical_gap_in(fp, fp), np.hypot(fp.sigma_in[:, None], fp.sigma_in[None, :]))
            self._cache = {"table": cached}
        return cached[1], cached[2], cached[3], cached[4]

    def _threat(self, scene: Scene, a: tuple[Model, ...], b: tuple[Model, ...]) -> Comparison:
        index, dist, vert, sig = self._table(scene)
        key = ("threat", tuple(m.id for m in a), tuple(m.id for m in b))
        if key not in self._cache:
            self._cache[key] = self._threat_uncached(index, dist, vert, sig, a, b)
        cmp: Comparison = self._cache[key]
        return cmp

    @staticmethod
    def _threat_uncached(
        index: dict[str, int],
        dist: np.ndarray,
        vert: np.ndarray,
        sig: np.ndarray,
        a: tuple[Model, ...],
        b: tuple[Model, ...],
    ) -> Comparison:
        ia = [index[m.id] for m in a]
        ib = [index[m.id] for m in b]
        d = np.where(vert[np.ix_(ia, ib)] <= THREAT_V_IN + 1e-9, dist[np.ix_(ia, ib)], np.inf)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        if not np.isfinite(d[i, j]):
            return Comparison(f"{a[0].id}..{b[0].id}", float("inf"), THREAT_IN, 0.0, Verdict.NO)
        return compare_at_most(f"{a[i].id} to {b[j].id}", float(d[i, j]), THREAT_IN, float(sig[ia[i], ib[j]]))

    def _engaged(self, scene: Scene, unit: Unit, troops: tuple[Model, ...]) -> list[tuple[str, Comparison]]:
        """Enemy formations within Threat Range of this one."""
        out = []
        for other in scene.units:
            if other.player == unit.player or not scene.models_of(other.id):
                continue
            cmp = self._threat(scene, troops, scene.models_of(other.id))
            if cmp.verdict is not Verdict.NO:
                out.append((other.id, cmp))
        return out

    def _sight(self, scene: Scene, observer: Unit, target: Unit, quick: bool = False) -> SightLines:
        """Terrain per category; enemy troops block (friendly troops and the target formation do not)."""
        self._table(scene)  # resets the caches when the scene changes
        key = ("sight", observer.player, target.id, quick)
        if key not in self._cache:
            self._cache[key] = SightLines(self._obstacles(scene, observer, target), area_samples=0 if quick else 64)
        lines: SightLines = self._cache[key]
        return lines

    def _obstacles(self, scene: Scene, observer: Unit, target: Unit) -> list[Obstacle]:
        terrain, troops = self._all_obstacles(scene)
        return terrain + [
            troops[k]
            for k, m in enumerate(scene.models)
            if scene.player_of(m) != observer.player and m.unit != target.id
        ]

    def _all_obstacles(self, scene: Scene) -> tuple[list[Obstacle], list[Obstacle]]:
        """The terrain that blocks sight, and every troop's base (in ``scene.models``' order), built once per scene:
        each formation pair's sight lines take the enemy troops from it."""
        self._table(scene)  # resets the caches when the scene changes
        if "obstacles" not in self._cache:
            terrain = [Obstacle(t.id, t.shape, SIGHT_MODES[t.kind]) for t in scene.terrain if t.kind in SIGHT_MODES]
            self._cache["obstacles"] = (terrain, base_obstacles(scene, "troop"))
        cached: tuple[list[Obstacle], list[Obstacle]] = self._cache["obstacles"]
        return cached

    def _pairs(
        self, scene: Scene, a: tuple[Model, ...], b: tuple[Model, ...], lines: SightLines
    ) -> dict[tuple[str, str], Any]:
        fa, fb = scene.footprints(a), scene.footprints(b)
        i, j = (g.ravel() for g in np.meshgrid(np.arange(len(a)), np.arange(len(b)), indexing="ij"))
        results = lines.check(fa[i], fb[j], [a[k].id for k in i], [b[k].id for k in j])
        return {(a[x].id, b[y].id): r for x, y, r in zip(i, j, results, strict=True)}

    # ---- cohesion ----------------------------------------------------------------
    def _cohesive(self, d: np.ndarray, v: np.ndarray, sigma: np.ndarray, idx: list[int]) -> Verdict:
        if len(idx) <= 1:
            return Verdict.YES
        sub = np.ix_(idx, idx)
        need = 2 if len(idx) >= 7 else 1
        return coherency(d[sub], COHESION_IN, need, sigma[sub], v[sub], COHESION_V_IN).verdict

    def removals(self, scene: Scene, unit_id: str) -> list[str]:
        """Fewest troops to remove so that one cohesive group remains (Formation Cohesion, end of turn)."""
        _, troops = self._troops(scene, unit_id)
        fp = scene.footprints(troops)
        d, v = pairwise_distance_in(fp), vertical_gap_in(fp, fp)
        sigma = np.zeros_like(d)  # removal is decided on the measured positions
        n = len(troops)
        exhausted = False
        for k in range(n):
            for tried, removed in enumerate(itertools.combinations(range(n), k)):
                if tried >= self.options.removal_search_limit:
                    exhausted = True
                    break
                keep = [i for i in range(n) if i not in removed]
                if self._cohesive(d, v, sigma, keep) is Verdict.YES:
                    return [troops[i].id for i in removed]
            if exhausted:
                break
        # Greedy fallback for huge formations: drop the troop with the fewest links until cohesive.
        keep = list(range(n))
        removed_ids: list[str] = []
        while self._cohesive(d, v, sigma, keep) is not Verdict.YES and len(keep) > 1:
            links = [(int(((d[i, keep] <= COHESION_IN) & (v[i, keep] <= COHESION_V_IN)).sum()), i) for i in keep]
            worst = min(links)[1]
            keep.remove(worst)
            removed_ids.append(troops[worst].id)
        return removed_ids

    def coherent(self, scene: Scene, unit_id: str) -> Ruling:
        unit, troops = self._troops(scene, unit_id)
        fp = scene.footprints(troops)
        d, v = pairwise_distance_in(fp), vertical_gap_in(fp, fp)
        sigma = np.hypot(fp.sigma_in[:, None], fp.sigma_in[None, :])
        need = 2 if len(troops) >= 7 else 1
        report = coherency(d, COHESION_IN, need, sigma, v, COHESION_V_IN)
        ids = [m.id for m in troops]
        reasons = []
        if report.verdict is Verdict.YES:
            reasons.append(
                f'{unit.name} are in Formation Cohesion: every troop is within 2" horizontally and 5" vertically of {"two other troops" if need == 2 else "another troop"}, in one group.'
            )
        else:
            for k in report.lacking:
                reasons.append(
                    f'{ids[k]} has {report.possible_counts[k]} of the {need} troops it needs within 2" (and 5" vertically); nearest {fmt_in(report.nearest_distance_in[k])}.'
                )
            if len(report.groups) > 1:
                reasons.append(
                    f"{unit.name} are split into {len(report.groups)} groups: "
                    + "; ".join("(" + ", ".join(ids[i] for i in g) + ")" for g in report.groups)
                    + "."
                )
            if report.verdict is Verdict.TOO_CLOSE:
                reasons.append('Some links are within measuring error of 2": too close to call.')
            removal = self.removals(scene, unit_id)
            if removal:
                reasons.append(
                    f"At the end of the turn remove {len(removal)} troop(s) to leave one cohesive group: {', '.join(removal)}."
                )
        return Ruling(
            f"Is {unit.name} in Formation Cohesion?",
            report.verdict,
            tuple(reasons),
            (),
            f"{GAME} > Core Concepts > Formation Cohesion",
            (unit.id,),
        )

    # ---- ranges, sight, targets -----------------------------------------------------
    def _ranged_weapons(self, scene: Scene, unit: Unit) -> list[dict[str, Any]]:
        return [w for w in profile_value(scene, unit, "weapons") if w.get("range", "melee") != "melee"]

    def in_range(self, scene: Scene, a_id: str, b_id: str, range_in: float | None = None) -> Ruling:
        a, at = self._troops(scene, a_id)
        b, bt = self._troops(scene, b_id)
        if range_in is None:
            weapons = self._ranged_weapons(scene, a)
            if not weapons:
                raise QuestionError(f"{a.name} has no ranged weapon; give --range")
            range_in = max(float(w["range"]) for w in weapons)
        fa, fb = scene.footprints(at), scene.footprints(bt)
        d = cross_distance_in(fa, fb)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        cmp = compare_at_most(
            f"{at[i].id} to {bt[j].id}", float(d[i, j]), range_in, float(np.hypot(fa.sigma_in[i], fb.sigma_in[j]))
        )
        return Ruling(
            f"Is {b.name} within {fmt_in(range_in)} of {a.name}?",
            cmp.verdict,
            (f"Closest troops {at[i].id} and {bt[j].id}: {cmp.describe()}.",),
            (cmp,),
            f"{GAME} > Measuring Distance",
            (a.id, b.id),
        )

    def can_see(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, at = self._troops(scene, a_id)
        b, bt = self._troops(scene, b_id)
        pairs = self._pairs(scene, at, bt, self._sight(scene, a, b))
        visible = {k: r for k, r in pairs.items() if r.visible}
        woods = [t.shape for t in scene.terrain if t.kind == "woods"]
        fully = []
        for tm in bt:
            in_woods = any(polygon_distance_in(scene.footprints([tm]), w)[0] == 0 for w in woods)
            if not in_woods and any(pairs[(am.id, tm.id)].visible_fraction >= 1.0 for am in at):
                fully.append(tm.id)
        reasons = []
        verdict = sight_verdict(list(pairs.values()))
        if visible:
            sure = {k: r for k, r in visible.items() if not r.doubtful} or visible
            best = max(sure, key=lambda k: visible[k].visible_fraction)
            reasons.append(
                f"{b.name} is visible: {best[1]} can be seen from {best[0]} ({visible[best].visible_fraction:.0%} of its base)."
            )
            whole = len(fully) == len(bt)
            reasons.append(
                f"{b.name} is {'fully visible' if whole else 'not fully visible'} ({len(fully)} of {len(bt)} troops fully visible to some troop of {a.name})."
            )
        else:
            blocked = sorted({x for r in pairs.values() for x in r.blocked_by})
            reasons.append(
                f"No troop of {b.name} is visible from {a.name}"
                + (f" (blocked by {', '.join(blocked)})." if blocked else ".")
            )
        if verdict is Verdict.TOO_CLOSE:
            reasons.append(sight_doubt(bool(visible)))
        return Ruling(
            f"Is {b.name} visible to {a.name}?",
            verdict,
            tuple(reasons),
            (),
            f"{GAME} > Core Concepts > Visibility",
            (a.id, b.id),
        )

    def can_target(self, scene: Scene, a_id: str, b_id: str, weapon: str | None = None) -> Ruling:
        a, at = self._troops(scene, a_id)
        b, bt = self._troops(scene, b_id)
        if a.player == b.player:
            raise QuestionError(f"{a.id!r} and {b.id!r} are on the same side")
        weapons = profile_value(scene, a, "weapons")
        chosen = [w for w in weapons if weapon is None or str(w.get("name", "")).lower() == weapon.lower()]
        if not chosen:
            raise QuestionError(f"{a.name} has no weapon {weapon!r}")
        raw = chosen[0] if weapon else (self._ranged_weapons(scene, a) or chosen)[0]
        if raw.get("range", "melee") == "melee":
            cmp = self._threat(scene, at, bt)
            return Ruling(
                f"Can {a.name} fight {b.name} with {raw.get('name')}?",
                cmp.verdict,
                (f'Melee targets must be within Threat Range (1" horizontally, 5" vertically): {cmp.describe()}.',),
                (cmp,),
                f"{GAME} > Brawl Phase > Select Targets",
                (a.id, b.id),
            )
        reasons: list[str] = []
        verdicts: list[Verdict] = []
        monstrous = has_keyword(a, "Monstrous")
        if a.state.get("advanced") and "STORM" not in {x.upper() for x in raw.get("abilities", [])}:
            verdicts.append(Verdict.NO)
            reasons.append(f"{a.name} Advanced this round and cannot shoot.")
        if a.state.get("retreated"):
            verdicts.append(Verdict.NO)
            reasons.append(f"{a.name} Retreated this round and cannot shoot.")
        engaged = self._engaged(scene, a, at)
        sidearm = "SIDEARM" in {x.upper() for x in raw.get("abilities", [])}
        if engaged and not monstrous and not sidearm:
            verdicts.append(combine_any([c.verdict for _, c in engaged]) if True else Verdict.NO)
            verdicts[-1] = {Verdict.YES: Verdict.NO, Verdict.TOO_CLOSE: Verdict.TOO_CLOSE, Verdict.NO: Verdict.YES}[
                verdicts[-1]
            ]
            reasons.append(f"{a.name} is locked in combat (within Threat Range of {', '.join(e for e, _ in engaged)}).")
        if not has_keyword(b, "Monstrous"):
            for friend in scene.units:
                if friend.player == a.player and scene.models_of(friend.id):
                    cmp = self._threat(scene, scene.models_of(friend.id), bt)
                    if cmp.verdict is not Verdict.NO:
                        verdicts.append(Verdict.NO if cmp.verdict is Verdict.YES else Verdict.TOO_CLOSE)
                        reasons.append(
                            f"{b.name} is within Threat Range of {friend.name} ({cmp.describe()}), so it cannot be shot."
                        )
        rng = float(raw["range"])
        index, dist, _, sig = self._table(scene)
        ia, ib = [index[m.id] for m in at], [index[m.id] for m in bt]
        d = dist[np.ix_(ia, ib)]
        own = np.diag(sig) / np.sqrt(2)  # each troop's own sigma (sig holds pairs' hypot)
        # Only pairs that could be in range need a sight check; nearest first, stop at the first seen.
        near = [
            (float(d[x, y]), x, y)
            for x in range(len(at))
            for y in range(len(bt))
            if d[x, y] <= rng + 2 * sig[ia[x], ib[y]] + 1e-6
        ]
        near.sort()
        best: Comparison | None = None
        maybe: tuple[Comparison, bool] | None = None  # the nearest pair in range whose sight is doubtful; seen?
        lines = self._sight(scene, a, b, quick=True) if near else None  # "visible?", not "how much?"
        bounds = [0, 8, len(near)]  # the nearest few first: most shots are decided there
        for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
            chunk = near[start:stop]
            if not chunk:
                continue
            assert lines is not None
            # Fast proof: a clear line between the two bases' centres is a sight line.
            centres_a = np.array([(at[x].x, at[x].y) for _, x, _ in chunk])
            centres_b = np.array([(bt[y].x, bt[y].y) for _, _, y in chunk])
            # Clear by the most the ends and the blocking troops may move: still clear wherever they stand.
            moves = [max(own[ia[x]], own[ib[y]]) for _, x, y in chunk]
            clear = lines.clear_lines(
                centres_a, centres_b, clearance_in=SIGHT_SIGMAS * (max(moves) + lines.max_obstacle_sigma_in)
            )
            if clear.any():
                value, x, y = chunk[int(np.argmax(clear))]
                proof = compare_at_most(f"{at[x].id} to {bt[y].id}", value, rng, float(sig[ia[x], ib[y]]))
                if proof.verdict is Verdict.YES:  # a nearer visible pair could only confirm it
                    best = proof
                    break
            seen = lines.check(
                scene.footprints([at[x] for _, x, _ in chunk]),
                scene.footprints([bt[y] for _, _, y in chunk]),
                [at[x].id for _, x, _ in chunk],
                [bt[y].id for _, _, y in chunk],
                with_blockers=False,  # only whether it is seen is ruled on
            )
            for (value, x, y), result in zip(chunk, seen, strict=True):
                if not (result.visible or result.doubtful):
                    continue
                cmp = compare_at_most(f"{at[x].id} to {bt[y].id}", value, rng, float(sig[ia[x], ib[y]]))
                if not result.doubtful:
                    best = cmp
                    break
                if maybe is None and cmp.verdict is not Verdict.NO:
                    maybe = (cmp, result.visible)
            if best is not None:
                break
        doubt = maybe is not None and (best is None or best.verdict is not Verdict.YES)
        if maybe is not None and doubt:
            best = maybe[0]  # a shot the measurement can neither grant nor deny
        if best is None and not near:
            verdicts.append(Verdict.NO)
            reasons.append(f'No troop of {b.name} is within {rng:g}" of {a.name}.')
            measurements: tuple[Comparison, ...] = ()
        elif best is None:
            verdicts.append(Verdict.NO)
            reasons.append(f"No troop of {b.name} within range is visible to {a.name}.")
            measurements = ()
        else:
            verdicts.append(Verdict.TOO_CLOSE if doubt else best.verdict)
            shown = "visible" if maybe is None or not doubt or maybe[1] else "hidden"
            reasons.append(f'{best.name}: {shown}, {best.describe()} for the {raw.get("name")} (range {rng:g}").')
            if maybe is not None and doubt:
                reasons.append(sight_doubt(maybe[1]))
            measurements = (best,)
            half = compare_at_most("half range", best.value_in, rng / 2, best.sigma_in)
            bonuses = [a for a in raw.get("abilities", []) if a.upper().startswith(("RAPID FIRE", "INFERNO"))]
            if bonuses:
                state = {Verdict.YES: "within", Verdict.NO: "beyond", Verdict.TOO_CLOSE: "too close to call for"}[
                    half.verdict
                ]
                reasons.append(
                    f'The target is {state} half range ({rng / 2:g}") for {", ".join(bonuses)}: {half.describe()}.'
                )
                measurements = (best, half)
        verdict = combine_all(verdicts)
        return Ruling(
            f"Can {a.name} shoot {b.name} with {raw.get('name')}?",
            verdict,
            tuple(reasons),
            measurements,
            f"{GAME} > Shooting Phase (Select Targets; Locked in combat)",
            (a.id, b.id),
        )

    # ---- cover -----------------------------------------------------------------------
    def cover(self, scene: Scene, target_id: str, attacker_id: str) -> Ruling:
        a, at = self._troops(scene, attacker_id)
        t, tt = self._troops(scene, target_id)
        covered: dict[str, str] = {}
        doubtful: dict[str, str] = {}  # troops whose cover the models' sigma could flip
        infantry = has_keyword(t, "Infantry")
        fa = scene.footprints(at)
        for tm in tt:
            fp = scene.footprints([tm])
            for piece in scene.terrain:
                kind = piece.kind
                wholly = Verdict.NO
                if kind in ("woods", "ruins") or (kind in ("craters", "barricade", "barricades") and infantry):
                    wholly = within_verdict(fp, piece.shape)
                if wholly is Verdict.YES:
                    covered[tm.id] = f"wholly within {piece.id} ({kind})"
                elif wholly is Verdict.TOO_CLOSE:
                    doubtful[tm.id] = (
                        f"its base is at the edge of {piece.id} ({kind}): wholly within it is too close to call"
                    )
                if wholly is not Verdict.YES and kind in (
                    "debris",
                    "statuary",
                    "hill",
                    "structure",
                    "sealed-building",
                    "armoured-container",
                    "woods",
                    "ruins",
                ):
                    hidden = self._partly_hidden(piece, fa, scene.footprints([tm] * len(at)), t)
                    if hidden is Verdict.YES:
                        covered[tm.id] = f"not fully visible to every troop of {a.name} because of {piece.id} ({kind})"
                    elif hidden is Verdict.TOO_CLOSE:
                        doubtful[tm.id] = f"whether {piece.id} ({kind}) hides part of it is too close to call"
                if tm.id in covered:
                    doubtful.pop(tm.id, None)
                    break
        # Cover is per troop; the formation "has cover" when every troop an attack could be allocated to has it.
        verdict = combine_all(
            [Verdict.YES if m.id in covered else Verdict.TOO_CLOSE if m.id in doubtful else Verdict.NO for m in tt]
        )
        surely = " surely" if doubtful else ""
        reasons = [f"{m}: Benefit of Cover, {why}." for m, why in covered.items()] or [
            f"No troop of {t.name}{surely} has the Benefit of Cover against {a.name}."
        ]
        reasons += [f"{m}: {why}." for m, why in doubtful.items()]
        bare = len(tt) - len(covered) - len(doubtful)
        if covered and bare:
            reasons.append(f"{bare} troop(s) of {t.name} have no cover: attacks allocated to them get none.")
        return Ruling(
            f"Does {t.name} have the Benefit of Cover against {a.name}?",
            verdict,
            tuple(reasons),
            (),
            f"{GAME} > The Warfield > Benefit of Cover",
            (t.id, a.id),
        )

    @staticmethod
    def _partly_hidden(piece: Any, observers: Footprints, targets: Footprints, target: Unit) -> Verdict:
        """Does ``piece`` keep some attacker from seeing all of the target troop (half of a Vehicle)? Too close to
        call where the models' sigma could flip it: a troop surely seen whole is seen whole grown by its margin
        from attackers shrunk by theirs, and one surely not so is not, shrunk, from attackers grown."""
        lines = SightLines([Obstacle(piece.id, piece.shape, SightMode.OPAQUE)])
        need = 0.5 if has_keyword(target, "Vehicle") else 1.0

        def hidden(obs: Footprints, tgt: Footprints) -> bool:
            return any(s.visible_fraction < need for s in lines.check(obs, tgt, with_blockers=False))

        if not (observers.sigma_in.any() or targets.sigma_in.any()):
            return Verdict.YES if hidden(observers, targets) else Verdict.NO
        (small_o, big_o), (small_t, big_t) = envelopes(observers), envelopes(targets)
        if hidden(big_o, small_t):
            return Verdict.YES
        return Verdict.TOO_CLOSE if hidden(small_o, big_t) else Verdict.NO

    # ---- objectives and scoring -----------------------------------------------------------
    def _control(self, scene: Scene, objective_id: str) -> tuple[dict[str, int], list[str]]:
        obj = objective_or_error(scene, objective_id)
        marker = scene.objective_footprints([obj])
        levels: dict[str, int] = {}
        uncertain = []
        for unit in scene.units:
            troops = scene.models_of(unit.id)
            if not troops:
                continue
            fp = scene.footprints(troops)
            d = cross_distance_in(fp, marker)[:, 0]
            v = np.maximum(fp.z_in - 0.0, 0.0)  # markers sit on the table
            for k, troop in enumerate(troops):
                h = compare_at_most("objective", float(d[k]), OBJECTIVE_IN, float(fp.sigma_in[k]))
                vertical_ok = v[k] <= OBJECTIVE_V_IN + 1e-9
                inside = (
                    (h.verdict is not Verdict.NO and vertical_ok)
                    if self.options.objective_range_needs_both
                    else (h.verdict is not Verdict.NO or vertical_ok)
                )
                if not inside:
                    continue
                if h.verdict is Verdict.TOO_CLOSE:
                    uncertain.append(troop.id)
                be = 0 if unit.state.get("battle_fatigued") else int(troop.state.get("be", unit.profile.get("be", 1)))
                levels[unit.player] = levels.get(unit.player, 0) + be
        return levels, uncertain

    def controls(self, scene: Scene, objective_id: str) -> Ruling:
        if ga_scenarios.scenario_of(scene).name == "break-through":
            return self._break_through_control(scene, objective_id)
        obj = objective_or_error(scene, objective_id)
        levels, uncertain = self._control(scene, objective_id)
        ranked = sorted(levels.items(), key=lambda kv: kv[1], reverse=True)
        if ranked and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]) and ranked[0][1] > 0:
            holder = ranked[0][0]
            reason = (
                f"{holder} controls objective {obj.id}: Level of Control "
                + ", ".join(f"{p} {v}" for p, v in ranked)
                + "."
            )
        else:
            holder = obj.controlled_by or "nobody"
            reason = (
                "Levels of Control are equal ("
                + (", ".join(f"{p} {v}" for p, v in ranked) or "no troops in range")
                + f"): control does not change ({holder})."
            )
        reasons = [reason]
        verdict = Verdict.YES if holder != "nobody" else Verdict.NO
        if uncertain:
            verdict = Verdict.TOO_CLOSE
            reasons.append(f'Within measuring error of 3": {", ".join(uncertain)}.')
        return Ruling(
            f"Who controls objective {obj.id}? {holder}",
            verdict,
            tuple(reasons),
            (),
            f"{GAME} > Warfield Scenarios > Objective Markers",
            (obj.id, holder),
        )

    def _break_through_control(self, scene: Scene, objective_id: str) -> Ruling:
        """Break the Line: markers are the defender's (as if BE 1 on them) until the attacker has dominion
        in a Manoeuvres phase; captured markers stay the attacker's; the second only after the first."""
        obj = objective_or_error(scene, objective_id)
        players = [p.id for p in scene.players]
        attacker = scene.extra("scenario", {}).get("attacker", players[0] if players else "")
        defender = next((p for p in players if p != attacker), "")
        rule = f"{GAME} > Break Through > Break the Line"
        if obj.controlled_by == attacker:
            return Ruling(
                f"Who controls objective {obj.id}? {attacker}",
                Verdict.YES,
                (f"{attacker} captured objective {obj.id}; it stays theirs.",),
                (),
                rule,
                (obj.id, attacker),
            )
        ordered = sorted(
            scene.objectives, key=lambda o: shapely.Point(o.x, o.y).distance(self.deployment_zones(scene)[attacker])
        )
        if obj.id != ordered[0].id and ordered[0].controlled_by != attacker:
            reason = f"{defender} holds objective {obj.id}: the attacker cannot take the Second Defence Line's marker before the First's."
            return Ruling(
                f"Who controls objective {obj.id}? {defender}", Verdict.YES, (reason,), (), rule, (obj.id, defender)
            )
        levels, _ = self._control(scene, objective_id)
        defence = max(levels.get(defender, 0), 1)
        attack = levels.get(attacker, 0)
        if attack > defence:
            reason = f"{attacker} has dominion of objective {obj.id} ({attack} against {defence}); it becomes theirs in the next Manoeuvres phase if they keep it."
        else:
            reason = f"{defender} holds objective {obj.id} (Level of Control {attacker} {attack}, {defender} {defence}, at least 1 by default)."
        return Ruling(
            f"Who controls objective {obj.id}? {defender}", Verdict.YES, (reason,), (), rule, (obj.id, defender)
        )

    def score(self, scene: Scene) -> dict[str, Any]:
        """Tactical Points by the scenario's rules: what the player(s) score now, plus ``tactical_points`` so far."""
        spec = ga_scenarios.scenario_of(scene)
        players = [p.id for p in scene.players] or sorted({u.player for u in scene.units})
        held = {p: 0 for p in players}
        evidence = []
        for obj in scene.objectives:
            ruling = self.controls(scene, obj.id)
            holder = ruling.subject[1]
            if holder in held and ruling.verdict is Verdict.YES:
                held[holder] += 1
            evidence.append(ruling.reasons[0])
        rnd = int(scene.round or 0)
        now = {p: 0 for p in players}
        if spec.name == "break-through":
            if rnd >= 5:
                now = {p: 3 * n for p, n in held.items()}
                evidence.append("End of the battle: +3 TP per objective controlled.")
        elif rnd >= spec.first_scoring_round:
            cap = spec.tp_cap_per_round
            now = {p: (min(cap, n) if cap is not None else n) for p, n in held.items()}
        if spec.name == "scientist-capture":
            for unit in scene.units:
                if (
                    has_keyword(unit, "Scientist")
                    and scene.models_of(unit.id)
                    and self._wholly_in_own_zone(scene, unit)
                ):
                    now[unit.player] = now.get(unit.player, 0) + 1
                    evidence.append(f"{unit.name} has brought its Scientist home: 1 TP.")
        if spec.name == "no-mans-land" and rnd >= 5:
            for p in players:
                if self._blitzkrieg(scene, p):
                    now[p] += 1
                    evidence.append(f"Blitzkrieg: {p} has a formation in the enemy deployment zone: 1 TP.")
        totals = dict(scene.extra("tactical_points", {}))
        vp = {p: int(totals.get(p, 0)) + now[p] for p in players}
        top = max(vp.values()) if vp else 0
        leaders = [p for p, v in vp.items() if v == top]
        return {
            "game": self.game,
            "scenario": spec.name,
            "round": scene.round,
            "objectives_held": held,
            "tp_this_turn": now,
            "vp": vp,
            "winner": leaders[0] if len(leaders) == 1 else None,
            "tie_break": None,
            "final": rnd >= 5,
            "evidence": evidence,
            "rule": f"{GAME} > {spec.rule}",
        }

    def _wholly_in_own_zone(self, scene: Scene, unit: Unit) -> bool:
        zone = self.deployment_zones(scene).get(unit.player)
        if zone is None:
            return False
        pts = scene.footprints(scene.models_of(unit.id)).boundary_points(32).reshape(-1, 2)
        return bool(np.all(shapely.contains_xy(zone.buffer(1e-9), pts[:, 0], pts[:, 1])))

    def _blitzkrieg(self, scene: Scene, player: str) -> bool:
        """No Man's Land: a formation (not one that arrived from Reserves) inside the enemy deployment zone."""
        zones = self.deployment_zones(scene)
        for unit in scene.units:
            if unit.player != player or unit.state.get("from_reserves") or not scene.models_of(unit.id):
                continue
            fp = scene.footprints(scene.models_of(unit.id))
            for enemy, zone in zones.items():
                if enemy != player and float(polygon_distance_in(fp, zone).min()) <= 0.0:
                    return True
        return False

    # ---- moves -------------------------------------------------------------------------
    def move_ok(self, scene: Scene, unit_id: str) -> Ruling:
        unit, troops = self._troops(scene, unit_id)
        record = last_event(scene, unit_id, ("move", "advance", "retreat"))
        if record is None:
            raise QuestionError(f"{scene.source}: history has no move, advance or retreat of {unit_id!r}")
        kind = record["event"]
        allowance = float(profile_value(scene, unit, "move")) + (
            float(record.get("advance_roll", 0)) if kind == "advance" else 0.0
        )
        if kind == "advance" and "advance_roll" not in record:
            raise QuestionError(f"{scene.source}: the advance of {unit_id!r} needs its advance_roll")
        fly = has_keyword(unit, "Fly")
        enemies = [m for m in scene.models if scene.player_of(m) != unit.player]
        impassable = [t.shape for t in scene.terrain if t.kind in IMPASSABLE]
        table = shapely.box(0, 0, scene.width_in, scene.depth_in)
        verdicts, measurements, reasons = [], [], []
        enemy_fp = scene.footprints(enemies) if enemies else None
        unseen = unseen_starts(record)
        for troop in troops:
            start = record.get("from", {}).get(troop.id)
            if start is None:
                raise QuestionError(f"{scene.source}: the {kind} of {unit_id!r} has no start position for {troop.id!r}")
            if troop.id in unseen:
                verdicts.append(Verdict.TOO_CLOSE)
                reasons.append(UNSEEN_START_REASON.format(model=troop.id))
                continue
            blocking = list(impassable)
            if enemy_fp is not None and not fly:
                # Normal and Advance moves may not pass within Threat Range; Retreats may (but not cross bases).
                grow = THREAT_IN if kind in ("move", "advance") else 0.0
                blocking += [p.buffer(grow) for p in enemy_fp.polygons(32)]
            path = shortest_path(
                (float(start[0]), float(start[1])),
                (troop.x, troop.y),
                base_semi_axes_in(troop.base)[1],
                blocking,
                bounds=table,
            )
            if not path.reachable:
                verdicts.append(Verdict.NO)
                reasons.append(f"{troop.id}: no legal path ({path.reason}).")
                continue
            cmp = compare_at_most(f"{troop.id} path", path.length_in, allowance, 2**0.5 * troop.sigma_in)
            verdicts.append(cmp.verdict)
            measurements.append(cmp)
            if cmp.verdict is not Verdict.YES:
                reasons.append(f"{troop.id} moved {cmp.describe()}.")
        engaged = self._engaged(scene, unit, troops)
        if engaged:
            verdicts.append(Verdict.NO if any(c.verdict is Verdict.YES for _, c in engaged) else Verdict.TOO_CLOSE)
            reasons.append(
                f"It ends within Threat Range of {', '.join(e for e, _ in engaged)}, which a {kind} may not."
            )
        cohesion = self.coherent(scene, unit_id)
        verdicts.append(cohesion.verdict)
        if cohesion.verdict is not Verdict.YES:
            reasons.append("It does not end in Formation Cohesion.")
        verdict = combine_all(verdicts)
        if verdict is Verdict.YES:
            reasons.insert(
                0, f"Every troop moved at most {fmt_in(allowance)} by a legal path, outside Threat Range, in cohesion."
            )
        return Ruling(
            f"Was the {kind} of {unit.name} legal?",
            verdict,
            tuple(reasons),
            tuple(measurements),
            f"{GAME} > Move Phase ({kind.capitalize()} Moves)",
            (unit.id,),
        )

    # ---- other range questions ------------------------------------------------------------
    def can_assault(self, scene: Scene, unit_id: str) -> Ruling:
        unit, troops = self._troops(scene, unit_id)
        reasons, verdicts = [], []
        if unit.state.get("advanced") or unit.state.get("retreated"):
            verdicts.append(Verdict.NO)
            reasons.append(f"{unit.name} Advanced or Retreated this round.")
        if has_keyword(unit, "Aircraft"):
            verdicts.append(Verdict.NO)
            reasons.append("Aircraft cannot Assault.")
        engaged = self._engaged(scene, unit, troops)
        if engaged and self.options.assault_excludes_engaged:
            verdicts.append(Verdict.NO)
            reasons.append(f"{unit.name} is already within Threat Range of {', '.join(e for e, _ in engaged)}.")
        near = []
        for other in scene.units:
            if other.player != unit.player and scene.models_of(other.id):
                gap = self._gap(scene, troops, scene.models_of(other.id))
                cmp = compare_at_most(f"to {other.id}", gap[0], ASSAULT_IN, gap[1])
                if cmp.verdict is not Verdict.NO:
                    near.append((other.name, cmp))
        verdicts.append(combine_any([c.verdict for _, c in near]) if near else Verdict.NO)
        reasons.append(
            'Enemy formations within 12": '
            + (", ".join(f"{n} ({c.describe()})" for n, c in near) if near else "none")
            + "."
        )
        return Ruling(
            f"Can {unit.name} Assault?",
            combine_all(verdicts),
            tuple(reasons),
            tuple(c for _, c in near),
            f"{GAME} > Assault Phase",
            (unit.id,),
        )

    def _gap(self, scene: Scene, a: tuple[Model, ...], b: tuple[Model, ...]) -> tuple[float, float]:
        fa, fb = scene.footprints(a), scene.footprints(b)
        d = cross_distance_in(fa, fb)
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        return float(d[i, j]), float(np.hypot(fa.sigma_in[i], fb.sigma_in[j]))

    def half_strength(self, scene: Scene, unit_id: str) -> Ruling:
        unit, troops = self._troops(scene, unit_id)
        start = int(unit.state.get("starting_strength", len(troops)))
        if start == 1:
            wounds = int(profile_value(scene, unit, "wounds"))
            left = wounds - int(troops[0].state.get("wounds_lost", 0))
            below = 2 * left < wounds
            detail = f"{left} of {wounds} wounds left"
        else:
            below = 2 * len(troops) < start
            detail = f"{len(troops)} of {start} troops left"
        heroism = min(int(m.state.get("heroism", unit.profile.get("heroism", 7))) for m in troops)
        two_d6 = Dist.from_pairs((a + b, Fraction(1, 36)) for a in range(1, 7) for b in range(1, 7))
        p_pass = two_d6.at_least(heroism)
        reasons = [f"{unit.name}: {detail}: {'below' if below else 'not below'} Half-Strength."]
        if below:
            reasons.append(f"Battle-Fatigue test: 2D6 >= {heroism} (best Heroism) passes {float(p_pass):.1%}.")
        return Ruling(
            f"Is {unit.name} below Half-Strength?",
            Verdict.YES if below else Verdict.NO,
            tuple(reasons),
            (),
            f"{GAME} > Formation Strength > Below Half-Strength; Battle-Fatigue",
            (unit.id,),
        )

    def deadly_demise(self, scene: Scene, troop_id: str) -> Ruling:
        try:
            troop = scene.model(troop_id)
        except KeyError:
            raise QuestionError(f"{scene.source}: no troop {troop_id!r}") from None
        fp = scene.footprints([troop])
        hit = []
        for unit in scene.units:
            others = tuple(m for m in scene.models_of(unit.id) if m.id != troop.id)
            if not others:
                continue
            d = cross_distance_in(fp, scene.footprints(others))
            cmp = compare_at_most(unit.id, float(d.min()), DEADLY_DEMISE_IN, float(troop.sigma_in))
            if cmp.verdict is not Verdict.NO:
                hit.append((unit.name, cmp))
        reasons = (
            f'On a 6 when {troop.id} is destroyed, these formations within 6" suffer its mortal wounds: '
            + (", ".join(f"{n} ({c.describe()})" for n, c in hit) or "none")
            + ".",
        )
        return Ruling(
            f'Who is within 6" of {troop.id} (Deadly Demise)?',
            Verdict.YES if hit else Verdict.NO,
            reasons,
            tuple(c for _, c in hit),
            f"{GAME} > Deadly Demise",
            (troop.id,),
        )

    def grenades(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, at = self._troops(scene, a_id)
        b, bt = self._troops(scene, b_id)
        reasons, verdicts = [], []
        if not has_keyword(a, "Grenades"):
            raise QuestionError(f"{a.name} is not a Grenades formation")
        if self._engaged(scene, a, at):
            verdicts.append(Verdict.NO)
            reasons.append(f"{a.name} is within Threat Range of an enemy formation.")
        for friend in scene.units:
            if (
                friend.player == a.player
                and scene.models_of(friend.id)
                and self._threat(scene, scene.models_of(friend.id), bt).verdict is not Verdict.NO
            ):
                verdicts.append(Verdict.NO)
                reasons.append(f"{b.name} is within Threat Range of {friend.name}.")
        d, s = self._gap(scene, at, bt)
        cmp = compare_at_most("distance", d, GRENADES_IN, s)
        verdicts.append(cmp.verdict)
        reasons.append(f"{b.name} is {cmp.describe()} away.")
        sight = self.can_see(scene, a_id, b_id)
        verdicts.append(sight.verdict)
        reasons.append(sight.reasons[0])
        p = Dist.binomial(6, Fraction(1, 2))
        reasons.append(f"Six D6, 4+ each: {float(p.mean()):.1f} mortal wounds on average.")
        return Ruling(
            f"Can {a.name} throw Grenades at {b.name}?",
            combine_all(verdicts),
            tuple(reasons),
            (cmp,),
            f"{GAME} > Battle-Manoeuvres > GRENADES",
            (a.id, b.id),
        )

    def overwatch(self, scene: Scene, a_id: str, b_id: str) -> Ruling:
        a, at = self._troops(scene, a_id)
        b, bt = self._troops(scene, b_id)
        d, s = self._gap(scene, at, bt)
        cmp = compare_at_most("distance", d, OVERWATCH_IN, s)
        eligible = not (a.state.get("advanced") or a.state.get("retreated")) and (
            not self._engaged(scene, a, at) or has_keyword(a, "Monstrous")
        )
        verdict = combine_all([cmp.verdict, Verdict.YES if eligible else Verdict.NO])
        reasons = (
            f"{b.name} is {cmp.describe()} from {a.name}.",
            f"{a.name} {'would' if eligible else 'would not'} be eligible to shoot.",
            "Only unmodified 6s hit.",
        )
        return Ruling(
            f"Can {a.name} fire Onslaught Overwatch at {b.name}?",
            verdict,
            reasons,
            (cmp,),
            f"{GAME} > Battle-Manoeuvres > ONSLAUGHT OVERWATCH",
            (a.id, b.id),
        )

    # ---- set-up -----------------------------------------------------------------------------
    def deployment_zones(self, scene: Scene) -> dict[str, shapely.Polygon]:
        """The scenario's deployment zones (or the scene's own, from scenario.deployment_zones)."""
        return ga_scenarios.deployment_zones(scene)

    def setup_ok(self, scene: Scene, thing_id: str) -> Ruling:
        """An objective marker's placement (War of Control), or an Infiltrators formation's set-up."""
        if any(o.id == thing_id for o in scene.objectives):
            return self._objective_setup(scene, thing_id)
        unit, troops = self._troops(scene, thing_id)
        if not has_keyword(unit, "Infiltrators"):
            raise QuestionError(f"{unit.name} has no Infiltrators ability; setup-ok checks objectives and Infiltrators")
        zones = self.deployment_zones(scene)
        enemy = [p for p in zones if p != unit.player]
        checks = []
        fp = scene.footprints(troops)
        for p in enemy:
            d = float(polygon_distance_in(fp, zones[p]).min())
            checks.append(
                Comparison(f"to {p}'s deployment zone", d, 9.0, 0.0, Verdict.YES if d > 9.0 else Verdict.NO, ">")
            )
        others = [m for m in scene.models if scene.player_of(m) != unit.player]
        if others:
            d = float(cross_distance_in(fp, scene.footprints(others)).min())
            checks.append(Comparison("to enemy troops", d, 9.0, 0.0, Verdict.YES if d > 9.0 else Verdict.NO, ">"))
        verdict = combine_all([c.verdict for c in checks])
        reasons = tuple(f'{c.name}: {fmt_in(c.value_in)} (needs more than 9")' for c in checks)
        return Ruling(
            f"Is {unit.name} set up legally (Infiltrators)?",
            verdict,
            reasons,
            tuple(checks),
            f"{GAME} > Deployment Abilities > Infiltrators",
            (unit.id,),
        )

    def _objective_setup(self, scene: Scene, objective_id: str) -> Ruling:
        obj = objective_or_error(scene, objective_id)
        spec = ga_scenarios.scenario_of(scene)
        marker = scene.objective_footprints([obj])
        r = float(marker.a_in[0])
        checks: list[Comparison] = []
        short, long = sorted((scene.width_in, scene.depth_in))
        need_short, need_long = spec.min_table_in
        table_ok = short >= need_short and long >= need_long
        checks.append(
            Comparison(
                f'warfield at least {need_short:g}" x {need_long:g}"',
                short,
                need_short,
                0.0,
                Verdict.YES if table_ok else Verdict.NO,
                ">=",
            )
        )
        if spec.spots is not None:
            spots = spec.spots(scene)
            off = min(float(np.hypot(obj.x - x, obj.y - y)) for x, y in spots)
            checks.append(
                Comparison(
                    "from the nearest place the scenario sets",
                    off,
                    ga_scenarios.PLACEMENT_TOLERANCE_IN,
                    0.0,
                    Verdict.YES if off <= ga_scenarios.PLACEMENT_TOLERANCE_IN else Verdict.NO,
                )
            )
        elif spec.name == "break-through":
            checks += self._break_through_marker(scene, obj, marker)
        else:
            edge = min(obj.x, obj.y, scene.width_in - obj.x, scene.depth_in - obj.y) - r
            checks.append(
                Comparison("to the warfield edge", edge, 6.0, 0.0, Verdict.YES if edge >= 6.0 else Verdict.NO, ">=")
            )
            for p, zone in self.deployment_zones(scene).items():
                d = float(polygon_distance_in(marker, zone)[0])
                checks.append(
                    Comparison(f"to {p}'s deployment zone", d, 3.0, 0.0, Verdict.YES if d > 3.0 else Verdict.NO, ">")
                )
            for other in scene.objectives:
                if other.id != obj.id:
                    d = float(cross_distance_in(marker, scene.objective_footprints([other]))[0, 0])
                    checks.append(
                        Comparison(f"to objective {other.id}", d, 9.0, 0.0, Verdict.YES if d > 9.0 else Verdict.NO, ">")
                    )
        verdict = combine_all([c.verdict for c in checks])
        reasons = tuple(
            f"{c.name}: {fmt_in(c.value_in)} (needs {c.relation} {fmt_in(c.threshold_in)})"
            + ("" if c.verdict is Verdict.YES else " - not allowed")
            for c in checks
        )
        return Ruling(
            f"Is objective {obj.id} placed legally ({spec.title})?",
            verdict,
            reasons,
            tuple(checks),
            f"{GAME} > {spec.rule}",
            (obj.id,),
        )

    def _break_through_marker(self, scene: Scene, obj: Any, marker: Footprints) -> list[Comparison]:
        """First marker in the defender's zone (First Defence Line) at least 10" from neutral territory;
        second in the Second Defence Line at least 10" from the First."""
        attacker = scene.extra("scenario", {}).get("attacker", scene.players[0].id if scene.players else "")
        zones = self.deployment_zones(scene)
        first = next(z for p, z in zones.items() if p != attacker)
        second = ga_scenarios.second_defence_line(scene)
        point = shapely.Point(obj.x, obj.y)
        if first.contains(point):
            # Neutral territory lies on the attacker's side: the First Defence Line's edge facing it.
            facing = min(
                _edges(first),
                key=lambda e: shapely.Point((e[0][0] + e[1][0]) / 2, (e[0][1] + e[1][1]) / 2).distance(zones[attacker]),
            )
            front = float(shapely.LineString(facing).distance(point))
            return [
                Comparison(
                    "into the First Defence Line from neutral territory",
                    front,
                    10.0,
                    0.0,
                    Verdict.YES if front >= 10.0 else Verdict.NO,
                    ">=",
                )
            ]
        if second.contains(point):
            d = float(point.distance(first))
            return [
                Comparison(
                    "into the Second Defence Line from the First",
                    d,
                    10.0,
                    0.0,
                    Verdict.YES if d >= 10.0 else Verdict.NO,
                    ">=",
                )
            ]
        return [Comparison("inside a defence line", 0.0, 1.0, 0.0, Verdict.NO, "=")]

    def arrival_ok(self, scene: Scene, unit_id: str) -> Ruling:
        """A Strategic Reserve formation set up this round: edge distance, 12" from enemies, enemy zone in round 2."""
        unit, troops = self._troops(scene, unit_id)
        rnd = int(scene.round or 0)
        checks: list[Comparison] = []
        reasons: list[str] = []
        if rnd < 2:
            return Ruling(
                f"May {unit.name} arrive from Strategic Reserves?",
                Verdict.NO,
                ("Strategic Reserves cannot arrive in the first round.",),
                (),
                f"{GAME} > Strategic Reserves",
                (unit.id,),
            )
        edge_limit = 6.0 if rnd == 2 else 9.0
        fp = scene.footprints(troops)
        far = 0.0
        for pts in fp.boundary_points(64):
            # How far the troop's base reaches from each edge; it must lie wholly within X" of one of them.
            reach = [
                pts[:, 0].max(),
                pts[:, 1].max(),
                scene.width_in - pts[:, 0].min(),
                scene.depth_in - pts[:, 1].min(),
            ]
            far = max(far, float(min(reach)))
        checks.append(
            Comparison(
                "deepest troop's reach from its nearest warfield edge",
                far,
                edge_limit,
                0.0,
                Verdict.YES if far <= edge_limit + 1e-9 else Verdict.NO,
            )
        )
        enemies = [m for m in scene.models if scene.player_of(m) != unit.player]
        if enemies:
            ef = scene.footprints(enemies)
            # "Whenever such a distance is specified, it always applies to the horizontal distance."
            d = float(cross_distance_in(fp, ef).min())
            checks.append(
                Comparison(
                    "to the nearest enemy troop",
                    d,
                    RESERVE_ENEMY_IN,
                    0.0,
                    Verdict.YES if d >= RESERVE_ENEMY_IN - 1e-9 else Verdict.NO,
                    ">=",
                )
            )
        if rnd == 2:
            for p, zone in self.deployment_zones(scene).items():
                if p != unit.player:
                    inside = float(polygon_distance_in(fp, zone).min()) <= 0.0
                    checks.append(
                        Comparison(
                            f"troops in {p}'s deployment zone",
                            1.0 if inside else 0.0,
                            0.0,
                            0.0,
                            Verdict.NO if inside else Verdict.YES,
                            "=",
                        )
                    )
        reasons.extend(
            f"{c.name}: {c.value_in:.2f} ({'ok' if c.verdict is Verdict.YES else 'not allowed'})" for c in checks
        )
        return Ruling(
            f"May {unit.name} arrive here from Strategic Reserves (round {rnd})?",
            combine_all([c.verdict for c in checks]),
            tuple(reasons),
            tuple(checks),
            f"{GAME} > Strategic Reserves > Setting up Strategic Reserve Formations",
            (unit.id,),
        )

    def assault_ok(self, scene: Scene, unit_id: str, roll: int, targets: list[str]) -> Ruling:
        return _assault_ok(self, scene, unit_id, roll, targets)

    # ---- everything -------------------------------------------------------------------------
    def rulings(self, scene: Scene) -> list[Ruling]:
        out = [self.coherent(scene, u.id) for u in scene.units if scene.models_of(u.id)]
        units = [u for u in scene.units if scene.models_of(u.id)]
        for a in units:
            for b in units:
                if a.player != b.player and a.id < b.id:
                    cmp = self._threat(scene, scene.models_of(a.id), scene.models_of(b.id))
                    if cmp.verdict is not Verdict.NO:
                        out.append(
                            Ruling(
                                f"Are {a.name} and {b.name} within Threat Range?",
                                cmp.verdict,
                                (cmp.describe(),),
                                (cmp,),
                                f"{GAME} > Threat Range",
                                (a.id, b.id),
                            )
                        )
        for obj in scene.objectives:
            out.append(self.controls(scene, obj.id))
        return out

    def attack(
        self, scene: Scene, a_id: str, b_id: str, weapon: str | None = None, situation: Situation | None = None
    ) -> Any:
        a = unit_or_error(scene, a_id)
        b, bt = self._troops(scene, b_id)
        weapons = profile_value(scene, a, "weapons")
        raw = next((w for w in weapons if weapon is None or str(w.get("name", "")).lower() == weapon.lower()), None)
        if raw is None:
            raise QuestionError(f"{a.name} has no weapon {weapon!r}")
        prof = b.profile
        target = Target(
            vigour=int(profile_value(scene, b, "vigour")),
            defence=int(profile_value(scene, b, "defence")),
            wounds=int(profile_value(scene, b, "wounds")),
            models=len(bt),
            invulnerable=prof.get("invulnerable"),
            reinforced_health=prof.get("reinforced_health"),
            keywords=tuple(k.upper() for k in b.keywords),
            stealth=has_keyword(b, "Stealth"),
        )
        return attack_odds(_weapon(raw), target, situation or Situation())


# ---- assault success ------------------------------------------------------------------------
ASSAULT_SPOTS = 24  # candidate end positions around each target troop
ASSAULT_GAP_IN = 0.02  # end a hair off base-to-base contact (well inside Threat Range)


def _assault_ok(self: Grinding, scene: Scene, unit_id: str, roll: int, target_ids: list[str]) -> Ruling:
    """Can this Assault roll succeed: every target within Threat Range, no other enemy formation
    within it, the formation in cohesion, each troop moving at most the roll around enemy bases?

    A placement is searched for (each troop to the nearest free spot by a target troop, the others
    closing up behind them); found -> yes. If some target is out of every troop's reach -> no.
    Otherwise the search could not decide: too close to call, and it says so.
    """
    unit, troops = self._troops(scene, unit_id)
    if not target_ids:
        raise QuestionError("assault-ok needs --targets (the enemy formations declared as targets)")
    targets = [self._troops(scene, t) for t in target_ids]
    for t_unit, _ in targets:
        if t_unit.player == unit.player:
            raise QuestionError(f"{t_unit.id!r} is not an enemy formation")
    fly = has_keyword(unit, "Fly")
    enemies = [m for m in scene.models if scene.player_of(m) != unit.player]
    target_models = [m for _, ms in targets for m in ms]
    others = [m for m in enemies if m.unit not in target_ids]
    impassable = [t.shape for t in scene.terrain if t.kind in IMPASSABLE]
    table = shapely.box(0, 0, scene.width_in, scene.depth_in)
    efp = scene.footprints(enemies)
    enemy_polys = list(efp.polygons(32))
    other_fp = scene.footprints(others) if others else None

    def radius(m: Model) -> float:
        return base_semi_axes_in(m.base)[0]

    def reach(troop: Model, spot: tuple[float, float]) -> float:
        r = base_semi_axes_in(troop.base)[1]
        line = shapely.LineString([(troop.x, troop.y), spot])
        blockers = impassable + ([] if fly else enemy_polys)
        if not any(line.distance(b) < r - 1e-9 for b in blockers):
            return float(line.length)
        path = shortest_path((troop.x, troop.y), spot, r, blockers, bounds=table)
        return path.length_in if path.reachable else float("inf")

    def spot_ok(spot: tuple[float, float], r: float, placed: list[tuple[float, float, float]]) -> bool:
        x, y = spot
        if not (r <= x <= scene.width_in - r and r <= y <= scene.depth_in - r):
            return False
        if any(shapely.Point(spot).distance(b) < r for b in impassable):
            return False
        if any(np.hypot(x - px, y - py) < r + pr - 1e-9 for px, py, pr in placed):
            return False
        if np.min(np.hypot(efp.x_in - x, efp.y_in - y) - efp.a_in) < r - 1e-9:  # on top of an enemy troop
            return False
        if other_fp is not None:
            probe = _disc_at(x, y, r)
            if float(cross_distance_in(probe, other_fp).min()) <= THREAT_IN + 1e-6:
                return False
        return True

    # Candidate spots by each target troop, for each attacking troop, nearest first.
    placed: list[tuple[float, float, float]] = []
    ends: dict[str, tuple[float, float]] = {}
    options = []
    for troop in troops:
        r = radius(troop)
        cands = []
        for t in target_models:
            rt = base_semi_axes_in(t.base)[0]
            for k in range(ASSAULT_SPOTS):
                a = 2 * np.pi * k / ASSAULT_SPOTS
                spot = (t.x + (r + rt + ASSAULT_GAP_IN) * np.cos(a), t.y + (r + rt + ASSAULT_GAP_IN) * np.sin(a))
                cands.append((float(np.hypot(spot[0] - troop.x, spot[1] - troop.y)), spot, str(t.unit)))
        cands.sort()
        options.append((cands[0][0] if cands else np.inf, troop, cands))
    reachable_targets: set[str] = set()

    def take(troop: Model, cands: list[tuple[float, tuple[float, float], str]], wanted: str | None) -> bool:
        r = radius(troop)
        for straight, spot, target_unit_id in cands:
            if straight > roll:
                return False
            if wanted is not None and target_unit_id != wanted:
                continue
            if spot_ok(spot, r, placed) and reach(troop, spot) <= roll + 1e-9:
                reachable_targets.add(target_unit_id)
                ends[troop.id] = spot
                placed.append((spot[0], spot[1], r))
                return True
        return False

    # First one troop for each target (nearest troop first), then the rest to their nearest spots.
    for target_unit_id in target_ids:
        for _, troop, cands in sorted(options, key=lambda o: o[0]):
            if troop.id not in ends and take(troop, cands, target_unit_id):
                break
    for _, troop, cands in sorted(options, key=lambda o: o[0]):
        if troop.id not in ends:
            take(troop, cands, None)
    # Troops that found no spot close up behind the engaged ones, or stay where they are.
    for troop in troops:
        if troop.id in ends:
            continue
        r = radius(troop)
        choices = [(0.0, (troop.x, troop.y))]
        for px, py, pr in placed:
            for k in range(ASSAULT_SPOTS):
                a = 2 * np.pi * k / ASSAULT_SPOTS
                spot = (px + (r + pr + 1.0) * np.cos(a), py + (r + pr + 1.0) * np.sin(a))
                choices.append((float(np.hypot(spot[0] - troop.x, spot[1] - troop.y)), spot))
        choices.sort()
        for straight, spot in choices:
            if straight > roll:
                break
            if spot_ok(spot, r, placed) and (straight == 0.0 or reach(troop, spot) <= roll + 1e-9):
                ends[troop.id] = spot
                placed.append((spot[0], spot[1], r))
                break
    rule = f"{GAME} > Assault Phase > Assaulting with a Formation"
    question = f'Can {unit.name} complete an Assault of {roll}" on {", ".join(t.name for t, _ in targets)}?'
    if len(ends) == len(troops):
        moved = [replace_model(m, ends[m.id]) for m in troops]
        fp = scene.footprints(moved)
        d, v = pairwise_distance_in(fp), vertical_gap_in(fp, fp)
        cohesive = self._cohesive(d, v, np.zeros_like(d), list(range(len(moved)))) is Verdict.YES
        engaged_all = all(
            float(cross_distance_in(fp, scene.footprints(list(ms))).min()) <= THREAT_IN for _, ms in targets
        )
        if cohesive and engaged_all:
            placement = "; ".join(f"{m.id} to ({ends[m.id][0]:.1f}, {ends[m.id][1]:.1f})" for m in troops)
            return Ruling(
                question, Verdict.YES, (f"A legal end position exists: {placement}.",), (), rule, (unit.id, *target_ids)
            )
    # Necessary condition: every target must be reachable by some troop at all.
    unreachable = []
    for t_unit, ms in targets:
        best = min(
            max(0.0, float(np.hypot(t.x - troop.x, t.y - troop.y)) - radius(t) - radius(troop))
            for troop in troops
            for t in ms
        )
        if best > roll + THREAT_IN:
            unreachable.append(f"{t_unit.name} ({fmt_in(best)} away)")
    if unreachable:
        return Ruling(
            question,
            Verdict.NO,
            (f"No troop can end within Threat Range of {', '.join(unreachable)} with a roll of {roll}.",),
            (),
            rule,
            (unit.id, *target_ids),
        )
    missing = [t.name for t, _ in targets if t.id not in reachable_targets]
    why = (
        f"no free spot within reach by {', '.join(missing)}"
        if missing
        else "the troops could not all be placed in cohesion"
    )
    return Ruling(
        question,
        Verdict.TOO_CLOSE,
        (
            f"Every target is within reach, but the search found no legal end position ({why}); it may still be possible.",
        ),
        (),
        rule,
        (unit.id, *target_ids),
    )


def _disc_at(x: float, y: float, r: float) -> Footprints:
    return Footprints.build([x], [y], r)


def replace_model(model: Model, spot: tuple[float, float]) -> Model:
    return replace(model, x=float(spot[0]), y=float(spot[1]))


def _edges(polygon: shapely.Polygon) -> list[list[tuple[float, float]]]:
    ring = list(polygon.exterior.coords)
    return [[ring[k], ring[k + 1]] for k in range(len(ring) - 1)]
