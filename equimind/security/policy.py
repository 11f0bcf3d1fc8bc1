"""The tool policy: which tools may be called with which arguments (default deny). Loaded from a JSON file.

Format (unknown keys anywhere are an error, so a misspelt constraint can never silently widen the policy)::

    {"version": 1,
     "tools": {"search_filings": {"args": {"query": {"type": "string", "max_length": 500},
                                           "ticker": {"type": "string", "pattern": "^[A-Z]{1,10}$", "required": false},
                                           "k": {"type": "integer", "min": 1, "max": 50, "required": false}}},
               "get_passage": {"args": {...}, "ranges": [{"low": "start", "high": "end", "strict": true,
                                                           "max_span": 20000}]}}}

Types: string (min_length, max_length, pattern [full match], enum), integer / number (min, max; integer also enum),
boolean, date (a real calendar date written YYYY-MM-DD), array (``items``: the spec every element must meet;
``max_items`` is required, so no list is unbounded; ``min_items``) and object (``properties``: its keys, checked as
arguments are: unknown keys denied, ``required`` per key; ``ranges`` between its keys). An element or property is
named in a denial by its path, e.g. ``citations[3].start``. ``required`` defaults to true; an optional argument may
be absent or null (an array element may not be null). Arguments not listed are denied. The gate passes the values
through unchanged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from equimind.core.errors import ConfigError
from equimind.security.chain import canonical_json

logger = logging.getLogger(__name__)

ArgType = Literal["string", "integer", "number", "boolean", "date", "array", "object"]
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


# ---------------------------------------------------------------------------------------------------------------
# The policy file (a boundary: Pydantic, unknown keys rejected so a typo never silently drops a constraint)


class RangeSpec(BaseModel):
    """A cross-argument rule: ``low <= high`` (``<`` when strict) and, for integers, ``high - low <= max_span``."""

    model_config = _STRICT

    low: str
    high: str
    strict: bool = False
    max_span: int | None = Field(default=None, ge=1)


def _check_range_specs(ranges: list[RangeSpec], fields: Mapping[str, ArgSpec]) -> None:
    """ValueError unless each range names two fields of the same integer or date type."""
    for r in ranges:
        lo, hi = fields.get(r.low), fields.get(r.high)
        if lo is None or hi is None or lo.type != hi.type or lo.type not in ("integer", "date"):
            raise ValueError(f"range {r.low}..{r.high} must name two arguments of the same integer or date type")
        if r.max_span is not None and lo.type != "integer":
            raise ValueError(f"max_span applies to integer ranges only ({r.low}..{r.high})")


class ArgSpec(BaseModel):
    """One allowed argument. Constraints must fit the type; ``pattern`` must match the whole value."""

    model_config = _STRICT

    type: ArgType
    required: bool = True
    description: str = ""
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=0)
    pattern: str | None = None
    enum: list[str | int] | None = None
    min: int | float | None = None
    max: int | float | None = None
    min_items: int | None = Field(default=None, ge=0)
    max_items: int | None = Field(default=None, ge=1)
    items: ArgSpec | None = None
    properties: dict[str, ArgSpec] | None = None
    ranges: list[RangeSpec] | None = None

    @model_validator(mode="after")
    def _fits_container(self) -> ArgSpec:
        if self.type != "array" and (self.items, self.min_items, self.max_items) != (None, None, None):
            raise ValueError(f"items/min_items/max_items apply to arrays only, not {self.type}")
        if self.type != "object" and (self.properties, self.ranges) != (None, None):
            raise ValueError(f"properties/ranges apply to objects only, not {self.type}")
        if self.type == "array":
            if self.items is None or self.max_items is None:
                raise ValueError("an array needs items (the element spec) and max_items (no unbounded lists)")
            if self.min_items is not None and self.min_items > self.max_items:
                raise ValueError(f"min_items ({self.min_items}) is greater than max_items ({self.max_items})")
        if self.type == "object":
            if not self.properties:
                raise ValueError("an object needs properties (its allowed keys)")
            bad = [n for n in self.properties if not n.isidentifier()]
            if bad:
                raise ValueError(f"property names must be Python identifiers: {bad}")
            _check_range_specs(self.ranges or [], self.properties)
        return self

    @model_validator(mode="after")
    def _fits_type(self) -> ArgSpec:
        if self.type != "string" and (self.min_length, self.max_length, self.pattern) != (None, None, None):
            raise ValueError(f"min_length/max_length/pattern apply to strings only, not {self.type}")
        if self.type not in ("integer", "number") and (self.min, self.max) != (None, None):
            raise ValueError(f"min/max apply to integer and number only, not {self.type}")
        if self.enum is not None:
            want: type = str if self.type == "string" else int
            if self.type not in ("string", "integer") or not all(type(v) is want for v in self.enum):
                raise ValueError("enum applies to string (all str values) or integer (all int values) only")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        if self.min_length is not None and self.max_length is not None and self.min_length > self.max_length:
            raise ValueError(f"min_length ({self.min_length}) is greater than max_length ({self.max_length})")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern {self.pattern!r} is not a valid regular expression: {exc}") from exc
        return self


class ToolSpec(BaseModel):
    model_config = _STRICT

    description: str = ""
    args: dict[str, ArgSpec]
    ranges: list[RangeSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names(self) -> ToolSpec:
        bad = [n for n in self.args if not n.isidentifier()]
        if bad:
            raise ValueError(f"argument names must be Python identifiers: {bad}")
        _check_range_specs(self.ranges, self.args)
        return self


class PolicySpec(BaseModel):
    model_config = _STRICT

    version: Literal[1]
    description: str = ""
    tools: dict[str, ToolSpec]


# ---------------------------------------------------------------------------------------------------------------
# Checking (pure functions: a reason to deny, or None)


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _check_size(name: str, n: int, unit: str, least: int | None, most: int | None) -> str | None:
    """A string's or a list's length against its bounds (``unit``: characters | items)."""
    if most is not None and n > most:
        return f"argument '{name}' has {n} {unit}; at most {most} allowed"
    if least is not None and n < least:
        return f"argument '{name}' has {n} {unit}; at least {least} required"
    return None


def _check_string(name: str, spec: ArgSpec, v: object) -> str | None:
    if not isinstance(v, str):
        return f"argument '{name}' must be a string, got {_type_name(v)}"
    if (why := _check_size(name, len(v), "characters", spec.min_length, spec.max_length)) is not None:
        return why
    if spec.pattern is not None and re.fullmatch(spec.pattern, v) is None:
        return f"argument '{name}' must match {spec.pattern}"
    if spec.enum is not None and v not in spec.enum:
        return f"argument '{name}' must be one of {', '.join(map(str, spec.enum))}"
    return None


def _check_number(name: str, spec: ArgSpec, v: object) -> str | None:
    want_int = spec.type == "integer"
    if isinstance(v, bool) or not isinstance(v, int if want_int else int | float):
        return f"argument '{name}' must be {'an integer' if want_int else 'a number'}, got {_type_name(v)}"
    if not math.isfinite(v):
        return f"argument '{name}' must be a finite number, got {v}"
    if (spec.min is not None and v < spec.min) or (spec.max is not None and v > spec.max):
        return f"argument '{name}' must be between {spec.min} and {spec.max}, got {v}"
    if spec.enum is not None and v not in spec.enum:
        return f"argument '{name}' must be one of {', '.join(map(str, spec.enum))}"
    return None


def _check_boolean(name: str, spec: ArgSpec, v: object) -> str | None:
    return None if isinstance(v, bool) else f"argument '{name}' must be true or false, got {_type_name(v)}"


def _check_date(name: str, spec: ArgSpec, v: object) -> str | None:
    if isinstance(v, str) and _ISO_DATE.fullmatch(v):
        try:
            date.fromisoformat(v)
            return None
        except ValueError:
            pass
    return f"argument '{name}' must be a date written YYYY-MM-DD"


def _check_array(name: str, spec: ArgSpec, v: object) -> str | None:
    if not isinstance(v, list):
        return f"argument '{name}' must be a list, got {_type_name(v)}"
    if (why := _check_size(name, len(v), "items", spec.min_items, spec.max_items)) is not None:
        return why
    item = spec.items
    if item is None:  # excluded by ArgSpec's validator; deny rather than assume
        return f"argument '{name}' has no element spec in the policy"
    for i, element in enumerate(v):
        path = f"{name}[{i}]"
        reason = f"argument '{path}' must not be null" if element is None else _CHECKERS[item.type](path, item, element)
        if reason is not None:
            return reason
    return None


def _check_object(name: str, spec: ArgSpec, v: object) -> str | None:
    if not isinstance(v, Mapping) or not all(isinstance(k, str) for k in v):
        return f"argument '{name}' must be an object with string keys, got {_type_name(v)}"
    return _check_fields(spec.properties or {}, spec.ranges or [], v, owner=name, prefix=f"{name}.")


_CHECKERS: dict[str, Callable[[str, ArgSpec, object], str | None]] = {
    "string": _check_string,
    "integer": _check_number,
    "number": _check_number,
    "boolean": _check_boolean,
    "date": _check_date,
    "array": _check_array,
    "object": _check_object,
}


def _check_range(r: RangeSpec, args: Mapping[str, Any], prefix: str = "") -> str | None:
    lo, hi = args.get(r.low), args.get(r.high)
    if lo is None or hi is None:
        return None
    low, high = f"{prefix}{r.low}", f"{prefix}{r.high}"
    if (hi <= lo) if r.strict else (hi < lo):  # ints compare as ints, ISO dates compare as strings
        return f"'{high}' must be {'greater than' if r.strict else 'at least'} '{low}'"
    if r.max_span is not None and hi - lo > r.max_span:
        return f"'{high}' - '{low}' must be at most {r.max_span}, got {hi - lo}"
    return None


def _check_fields(fields: Mapping[str, ArgSpec], ranges: list[RangeSpec], args: Mapping[str, Any], *,
                  owner: str, prefix: str = "") -> str | None:
    """Why ``args`` do not meet ``fields`` and ``ranges`` (a tool's arguments, or an object's keys), or None."""
    extra = sorted(set(args) - set(fields))
    if extra:
        names = ", ".join(repr(f"{prefix}{e[:100]}") for e in extra[:10])
        return f"unexpected argument(s) {names}; '{owner}' accepts: {', '.join(fields) or 'none'}"
    for name, arg in fields.items():
        value = args.get(name)
        if value is None:
            if arg.required:
                return f"missing required argument '{prefix}{name}'"
            continue
        reason = _CHECKERS[arg.type](f"{prefix}{name}", arg, value)
        if reason is not None:
            return reason
    for r in ranges:
        reason = _check_range(r, args, prefix)
        if reason is not None:
            return reason
    return None


def check_call(spec: PolicySpec, tool: object, args: object) -> str | None:
    """Why ``tool(**args)`` is not allowed by ``spec``, or None when it is."""
    if not isinstance(tool, str) or tool not in spec.tools:
        return f"unknown tool {str(tool)[:100]!r}; the policy allows: {', '.join(sorted(spec.tools)) or 'nothing'}"
    if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
        return "arguments must be an object with string keys"
    tool_spec = spec.tools[tool]
    return _check_fields(tool_spec.args, tool_spec.ranges, args, owner=tool)


# ---------------------------------------------------------------------------------------------------------------
# ToolPolicy and the gate


class Decision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"


@dataclass(frozen=True)
class Verdict:
    tool: str
    decision: Decision
    reason: str

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW


class ToolPolicy:
    """Which tools may be called with which arguments. Unknown = denied; a policy that failed to load denies all."""

    def __init__(self, spec: PolicySpec | None, *, source: str, digest: str, error: str | None = None) -> None:
        if spec is None and error is None:
            raise ValueError("a ToolPolicy without a spec needs the error that explains why")
        self._spec = spec
        self.source = source
        self.digest = digest
        self.error = error

    @classmethod
    def from_dict(cls, data: object, *, source: str = "<dict>", digest: str | None = None) -> ToolPolicy:
        """Validate a parsed policy; ConfigError naming the problem when it is not valid."""
        try:
            spec = PolicySpec.model_validate(data)
            digest = digest or hashlib.sha256(canonical_json(spec.model_dump())).hexdigest()
        except ValidationError as exc:
            raise ConfigError(f"invalid tool policy {source}: {_summarise(exc)}; see equimind/policy/"
                              "default_policy.json for the format") from exc
        return cls(spec, source=source, digest=digest)

    @classmethod
    def from_bytes(cls, raw: bytes, *, source: str) -> ToolPolicy:
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"tool policy {source} is not valid JSON: {exc}") from exc
        return cls.from_dict(data, source=source, digest=hashlib.sha256(raw).hexdigest())

    @classmethod
    def from_file(cls, path: Path) -> ToolPolicy:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read tool policy {path}: {exc}; fix EQUIMIND_GATE_POLICY") from exc
        return cls.from_bytes(raw, source=str(path))

    @classmethod
    def default(cls) -> ToolPolicy:
        """The policy shipped in the package (equimind/policy/default_policy.json)."""
        res = resources.files("equimind").joinpath("policy", "default_policy.json")
        try:
            raw = res.read_bytes()
        except OSError as exc:
            raise ConfigError(f"the packaged default tool policy is missing ({exc}); reinstall equimind") from exc
        return cls.from_bytes(raw, source="equimind/policy/default_policy.json")

    @classmethod
    def load(cls, path: Path | None) -> ToolPolicy:
        """The policy at ``path`` (None: the packaged default). Never raises: an unusable file yields deny-all."""
        try:
            return cls.default() if path is None else cls.from_file(path)
        except ConfigError as exc:
            logger.error("tool policy unusable, every tool call will be denied: %s", exc)
            return cls.deny_all(str(exc), source="<packaged default>" if path is None else str(path))

    @classmethod
    def deny_all(cls, reason: str, *, source: str = "<deny-all>") -> ToolPolicy:
        return cls(None, source=source, digest="deny-all", error=reason)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(sorted(self._spec.tools)) if self._spec else ()

    def tool_spec(self, tool: str) -> ToolSpec | None:
        return self._spec.tools.get(tool) if self._spec else None

    def check(self, tool: object, args: object) -> Verdict:
        name = str(tool)[:200]
        if self._spec is None:
            return Verdict(name, Decision.DENY, f"tool policy unusable, all calls denied: {self.error}")
        reason = check_call(self._spec, tool, args)
        if reason is None:
            return Verdict(name, Decision.ALLOW, "allowed by policy")
        return Verdict(name, Decision.DENY, reason)


def _summarise(exc: ValidationError) -> str:
    errs = exc.errors()
    parts = [f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in errs[:5]]
    return "; ".join(parts) + (f" (+{len(errs) - 5} more)" if len(errs) > 5 else "")
