"""A faster ``__init__`` for the frozen, slotted dataclasses the historian builds by the million.

A run decodes every message of a session into :class:`~karni_historian.model.Message`
and part records and condenses them into compartments. A frozen dataclass's
generated ``__init__`` sets each field through ``object.__setattr__``, which
finds the field's slot on the class again on every call; the slot's own
descriptor sets it directly in about half the time. :func:`slot_init` gives
such a class an ``__init__`` that calls each field's descriptor, with the
dataclass's parameters and defaults, made from the class's fields (so a field
added later is set as well); everything else the dataclass made (equality,
hashing, ``repr``, the ``__setattr__`` that refuses changes) stays.
"""

from __future__ import annotations

from dataclasses import MISSING, fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _Class = TypeVar("_Class", bound=type)

__all__ = ["slot_init"]


def slot_init(cls: _Class) -> _Class:
    """Replace the ``__init__`` of a frozen, slotted dataclass by one that sets its slots directly.

    Only plain fields are supported: each one an ``__init__`` parameter,
    positional, with no default factory, and no ``__post_init__``. Anything
    else raises ``TypeError`` when the class is defined, so a field the fast
    ``__init__`` could not set as the dataclass does is never added unnoticed.
    """
    if hasattr(cls, "__post_init__"):  # the fast __init__ would never call it
        raise TypeError(f"slot_init: {cls.__name__} has a __post_init__")
    namespace: dict[str, Any] = {}
    parameters, body = ["self"], []
    for field in fields(cls):
        if not field.init or field.kw_only or field.default_factory is not MISSING:
            raise TypeError(f"slot_init: {cls.__name__}.{field.name} is not a plain field")
        name = field.name
        if name == "self":
            raise TypeError(f"slot_init: {cls.__name__} has a field named self")
        namespace[f"_set_{name}"] = cls.__dict__[name].__set__  # the slot's descriptor
        if field.default is MISSING:
            parameters.append(name)
        else:
            namespace[f"_default_{name}"] = field.default
            parameters.append(f"{name}=_default_{name}")
        body.append(f"    _set_{name}(self, {name})")
    source = f"def __init__({', '.join(parameters)}):\n" + "\n".join(body or ["    pass"])
    exec(compile(source, f"<slot_init {cls.__qualname__}>", "exec"), namespace)
    init = namespace["__init__"]
    target: Any = cls  # a class whose __init__ is replaced, which mypy does not follow
    previous = target.__init__
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = previous.__doc__
    init.__annotations__ = dict(previous.__annotations__)
    target.__init__ = init
    return cls
