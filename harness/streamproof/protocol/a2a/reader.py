"""Strict, typed reading of one JSON object, with the path of every problem.

:class:`WireFormatError` says what is wrong and where (``params.message.parts[0].kind``);
:class:`_Reader` is what the decoders read objects through, accepting a 1.0 peer's ProtoJSON
snake_case field names and string integers.
"""

from __future__ import annotations

from typing import Any

from streamproof.protocol.a2a.vocabulary import WireVersion


class WireFormatError(ValueError):
    """A JSON value that is not the A2A object it should be; ``path`` says where."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def _snake(camel: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in camel)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class _Reader:
    """Typed access to one JSON object, reporting problems with their path."""

    __slots__ = ("obj", "path", "version")

    def __init__(self, value: Any, path: str, version: WireVersion) -> None:
        if not isinstance(value, dict):
            raise WireFormatError(path, f"expected an object, got {_type_name(value)}")
        self.obj: dict[str, Any] = value
        self.path = path
        self.version = version

    def has(self, key: str) -> bool:
        return self._key(key) is not None

    def _key(self, key: str) -> str | None:
        if key in self.obj:
            return key
        if self.version == "1.0":  # ProtoJSON accepts the proto field name too
            snake = _snake(key)
            if snake in self.obj:
                return snake
        return None

    def raw(self, key: str) -> Any:
        found = self._key(key)
        return self.obj[found] if found is not None else None

    def at(self, key: str) -> str:
        return f"{self.path}.{key}"

    def string(self, key: str, *, required: bool = False, non_empty: bool = False) -> str | None:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return None
        if not isinstance(value, str):
            raise WireFormatError(self.at(key), f"must be a string, got {_type_name(value)}")
        if non_empty and not value:
            raise WireFormatError(self.at(key), "must not be empty")
        return value

    def required(self, key: str, *, non_empty: bool = False) -> str:
        value = self.string(key, required=True, non_empty=non_empty)
        assert value is not None
        return value

    def boolean(self, key: str, *, required: bool = False) -> bool | None:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return None
        if not isinstance(value, bool):
            raise WireFormatError(self.at(key), f"must be a boolean, got {_type_name(value)}")
        return value

    def integer(self, key: str) -> int | None:
        value = self.raw(key)
        if value is None:
            return None
        if self.version == "1.0" and isinstance(value, str):  # ProtoJSON allows "5"
            try:
                value = int(value)
            except ValueError:
                raise WireFormatError(self.at(key), "must be an integer") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise WireFormatError(self.at(key), f"must be an integer, got {_type_name(value)}")
        return value

    def array(self, key: str, *, required: bool = False) -> list[Any]:
        value = self.raw(key)
        if value is None:
            if required:
                raise WireFormatError(self.at(key), "is required")
            return []
        if not isinstance(value, list):
            raise WireFormatError(self.at(key), f"must be an array, got {_type_name(value)}")
        return value

    def kind(self, expected: str) -> None:
        value = self.raw("kind")
        if value != expected:
            got = "missing" if value is None else repr(value)
            raise WireFormatError(self.at("kind"), f"must be {expected!r}, got {got}")
