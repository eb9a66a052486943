"""Typed configs: one pydantic model per trainer, loaded from YAML with dotted
command-line overrides (``optim.lr=1e-4 data.path=runs/x``).

Every field carries its help text (``Field(description=...)``); ``guirl train
<method> --help-config`` prints them. Unknown keys are errors that list the
valid ones, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

C = TypeVar("C", bound=BaseModel)


class ConfigError(ValueError):
    """A config file or override is wrong; the message says where and how to fix it."""


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"optim.lr=1e-4"`` -> ``(["optim", "lr"], 0.0001)`` (value read as YAML)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.subkey=value")
    key, raw = text.split("=", 1)
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"override {text!r} has an empty key part; write e.g. optim.lr=1e-4")
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"override {text!r}: value is not valid YAML ({err})") from None
    return key.split("."), value


def upgrade_deprecated(model: type[BaseModel], data: Any) -> Any:
    """``data`` (a config mapping) with the deprecated spellings ``model`` declares replaced by today's, each with a
    ``DeprecationWarning``: field names (``DEPRECATED_FIELDS``: old -> new) and values (``DEPRECATED_VALUES``:
    field -> {old -> new}). For a ``model_validator(mode="before")``; kept for one release."""
    fields: dict[str, str] = getattr(model, "DEPRECATED_FIELDS", {})
    values: dict[str, dict[str, str]] = getattr(model, "DEPRECATED_VALUES", {})
    if not isinstance(data, dict) or not (fields or values):
        return data
    data = dict(data)
    for old, new in fields.items():
        if old in data:
            if new in data:
                raise ValueError(f"{old!r} is the deprecated name of {new!r}; set only {new!r}")
            warnings.warn(f"config field {old!r} is deprecated; use {new!r}", DeprecationWarning, stacklevel=2)
            data[new] = data.pop(old)
    for name, renames in values.items():
        value = data.get(name)
        if isinstance(value, str) and value in renames:
            warnings.warn(f"{name}={value!r} is deprecated; use {name}={renames[value]!r}", DeprecationWarning,
                          stacklevel=2)
            data[name] = renames[value]
    return data


def _set_path(data: dict, keys: list[str], value: Any, model: type[BaseModel], original: str) -> None:
    node, cls = data, model
    for depth, key in enumerate(keys):
        if cls is not None and key in getattr(cls, "DEPRECATED_FIELDS", {}):
            key = cls.DEPRECATED_FIELDS[key]
            warnings.warn(f"override {original!r}: {keys[depth]!r} is deprecated; use {key!r}", DeprecationWarning,
                          stacklevel=2)
            if depth == len(keys) - 1:
                node.pop(keys[depth], None)  # the override replaces the file's value under its old name
        fields = cls.model_fields if cls is not None else None
        if fields is not None and key not in fields:
            where = ".".join(keys[:depth]) or "the top level"
            raise ConfigError(f"override {original!r}: unknown field {key!r} at {where}; valid fields: {sorted(fields)}")
        if depth == len(keys) - 1:
            node[key] = value
            return
        annotation = fields[key].annotation if fields is not None else None
        cls = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        child = node.get(key)
        if not isinstance(child, dict):
            child = {} if child is None or cls is not None else child
            if not isinstance(child, dict):
                raise ConfigError(f"override {original!r}: {'.'.join(keys[: depth + 1])} is not a section")
            node[key] = child
        node = child


def _section(annotation: Any) -> type[BaseModel] | None:
    """The config class a field's value is a mapping of (``X``, ``X | None``, ``list[X]``), else None (a
    ``dict[str, X]`` is keyed by free names: not checked)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) is dict:
        return None
    return next((a for a in get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)), None)


def check_keys(data: Any, model: type[BaseModel], where: str, prefix: str = "") -> None:
    """Refuse a key of a config file that ``model`` has no field for (a typo would otherwise fall back to
    the default without a word), naming the key and the valid fields."""
    if not isinstance(data, dict):
        return
    fields = model.model_fields
    for key, value in data.items():
        name = getattr(model, "DEPRECATED_FIELDS", {}).get(key, key)
        if name not in fields:
            raise ConfigError(f"{where}: unknown field {prefix + str(key)!r}; valid fields"
                              f"{' of ' + prefix.rstrip('.') if prefix else ''}: {sorted(fields)}")
        sub = _section(fields[name].annotation)
        if sub is not None:
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                check_keys(item, sub, where, f"{prefix}{key}{f'[{i}]' if isinstance(value, list) else ''}.")


def load_config(model: type[C], path: str | Path | None = None, overrides: list[str] | None = None) -> C:
    """Read ``path`` (YAML) into ``model``, then apply dotted overrides."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist; pass a YAML file (see recipes/)")
        try:
            loaded = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {err}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of config fields")
        check_keys(loaded, model, str(path))
        data = loaded
    for text in overrides or []:
        keys, value = parse_override(text)
        _set_path(data, keys, value, model, text)
    try:
        return model.model_validate(data)
    except ValidationError as err:
        where = f"{path}" if path is not None else "config"
        lines = []
        for e in err.errors():
            loc = ".".join(str(x) for x in e["loc"])
            help_text = _field_help(model, [str(x) for x in e["loc"]])
            hint = f" ({help_text})" if help_text else ""
            lines.append(f"{where}: field '{loc}': {e['msg']}{hint}")
        raise ConfigError("\n".join(lines)) from None


def _field_help(model: type[BaseModel], keys: list[str]) -> str:
    cls: Any = model
    info = None
    for key in keys:
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or key not in cls.model_fields:
            return ""
        info = cls.model_fields[key]
        cls = info.annotation
    return (info.description or "") if info is not None else ""


def config_help(model: type[BaseModel], prefix: str = "") -> list[str]:
    """One line per leaf field: ``dotted.name (type, default): help``."""
    lines = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            lines += config_help(ann, f"{prefix}{name}.")
            continue
        type_name = getattr(ann, "__name__", str(ann)).replace("typing.", "")
        default = info.get_default(call_default_factory=True)
        lines.append(f"{prefix}{name} ({type_name}, default {default!r}): {info.description or ''}")
    return lines
