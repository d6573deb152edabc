"""Game systems by name, and answering one question from the command line or the page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rules.common import QuestionError
from rules.focal_point import FocalPoint
from rules.grinding import Grinding
from rules.onefinity import Onefinity
from rules.ruling import Ruling
from rules.skirmish import Skirmish
from tablesight.scene import Scene


class GameSystem(Protocol):
    game: str
    questions: tuple[str, ...]

    def rulings(self, scene: Scene) -> list[Ruling]: ...

    def score(self, scene: Scene) -> dict[str, Any]: ...


SYSTEMS: dict[str, Callable[[], Any]] = {
    "focal-point": FocalPoint,
    "grinding-annihilation": Grinding,
    "miniature-skirmish": Skirmish,
    "onefinity": Onefinity,
}

# question -> (method name, positional argument names)
QUESTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "coherent": ("coherent", ("UNIT",)),
    "in-range": ("in_range", ("A", "B")),
    "can-see": ("can_see", ("A", "B")),
    "can-target": ("can_target", ("ATTACKER", "TARGET")),
    "can-claim": ("can_claim", ("UNIT", "OBJECTIVE")),
    "controls": ("controls", ("OBJECTIVE",)),
    "cover": ("cover", ("TARGET",)),
    "move-ok": ("move_ok", ("UNIT",)),
    "resolve": ("resolve", ("UNIT",)),
    "hidden": ("hidden", ("TARGET",)),
    "redirect": ("redirect", ("ATTACKER", "DOWNED", "NEW_TARGET")),
    "cards": ("cards", ("ATTACKER", "TARGET")),
    "can-assault": ("can_assault", ("UNIT",)),
    "assault-ok": ("assault_ok", ("UNIT",)),
    "half-strength": ("half_strength", ("UNIT",)),
    "deadly-demise": ("deadly_demise", ("TROOP",)),
    "grenades": ("grenades", ("ATTACKER", "TARGET")),
    "overwatch": ("overwatch", ("ATTACKER", "TARGET")),
    "arrival-ok": ("arrival_ok", ("UNIT",)),
    "setup-ok": ("setup_ok", ("UNIT_OR_OBJECTIVE",)),
    "activation-order": ("activation_order", ()),
    "score": ("score", ()),
}


def system_for(game: str) -> Any:
    if game not in SYSTEMS:
        raise QuestionError(f"tablesight does not referee {game!r} yet (it does: {', '.join(SYSTEMS)})")
    return SYSTEMS[game]()


def ask(scene: Scene, question: str, args: list[str], options: dict[str, Any]) -> Ruling | dict[str, Any]:
    """Answer one named question about a scene."""
    system = system_for(scene.game)
    if question not in QUESTIONS:
        raise QuestionError(f"unknown question {question!r} (questions: {', '.join(QUESTIONS)})")
    if question not in system.questions:
        raise QuestionError(f"{question!r} is not a question in {scene.game} (it has: {', '.join(system.questions)})")
    method, names = QUESTIONS[question]
    if len(args) != len(names):
        raise QuestionError(f"{question} takes {' '.join(names) or 'no arguments'}, got {len(args)} argument(s)")
    fn = getattr(system, method)
    if question == "in-range":
        return fn(scene, *args, range_in=options.get("range"))  # type: ignore[no-any-return]
    if question == "can-target":
        return fn(scene, *args, weapon=options.get("weapon"))  # type: ignore[no-any-return]
    if question == "assault-ok":
        if options.get("roll") is None or not options.get("targets"):
            raise QuestionError("assault-ok needs --roll N (the 2D6 Assault roll) and --targets A,B")
        return fn(scene, args[0], int(options["roll"]), [t for t in str(options["targets"]).split(",") if t])  # type: ignore[no-any-return]
    if question in ("cover", "hidden"):
        if not options.get("from"):
            raise QuestionError(f"{question} needs --from ATTACKER")
        return fn(scene, args[0], options["from"])  # type: ignore[no-any-return]
    return fn(scene, *args)  # type: ignore[no-any-return]
