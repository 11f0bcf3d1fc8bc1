"""What was unavailable in a run: ``Degradation`` (capability, reason), the ordered collector ``Degradations`` and
``DegradationNote`` (one that travels as its "capability: reason" text). Imports nothing of ours.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, PlainSerializer


class Degradation(BaseModel):
    model_config = ConfigDict(frozen=True)
    capability: str
    reason: str

    def __str__(self) -> str:
        return f"{self.capability}: {self.reason}"


class Degradations:
    """The one collector of what was unavailable in a run: ordered, each (capability, reason) once."""
    def __init__(self) -> None:
        self._items: list[Degradation] = []

    def add(self, capability: str, reason: str) -> None:
        self.extend([Degradation(capability=capability, reason=reason)])

    def extend(self, items: Iterable[Degradation]) -> None:
        for d in items:
            if d not in self._items:
                self._items.append(d)

    def items(self) -> list[Degradation]:
        return list(self._items)


# A Degradation that travels as its "capability: reason" text (SearchResult and Health print it so; read back too).
DegradationNote = Annotated[Degradation, PlainSerializer(str, return_type=str), BeforeValidator(
    lambda v: dict(zip(("capability", "reason"), v.split(": ", 1), strict=False)) if isinstance(v, str) else v)]
