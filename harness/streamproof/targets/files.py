"""Reading target files: one YAML mapping, validated into a frozen model, errors naming the
file and the field."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from streamproof.targets.errors import TargetConfigError


def load_target_file[M: BaseModel](file: Path, model: type[M], kind: str) -> M:
    """``file`` validated as ``model``; its ``kind`` (default ``kind``) must be ``kind``."""
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetConfigError(f"{file}: cannot read target file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else str(file)
        raise TargetConfigError(
            f"{where}: malformed YAML: {getattr(exc, 'problem', exc)}"
        ) from None
    if not isinstance(data, dict):
        raise TargetConfigError(f"{file}: a target file must be a mapping")
    declared = data.get("kind", kind)
    if declared != kind:
        raise TargetConfigError(f"{file}: kind: expected {kind!r}, found {declared!r}")
    cwd = data.get("cwd")
    if isinstance(cwd, str) and cwd:
        # A relative working directory means relative to the target file, wherever the run
        # starts; it must exist now, not fail later as a crash of the target.
        folder = (file.parent / cwd).resolve()
        if not folder.is_dir():
            raise TargetConfigError(f"{file}: cwd: {cwd!r} is not a folder (looked at {folder})")
        data = {**data, "cwd": str(folder)}
    build = data.get("build")
    if isinstance(build, dict):
        # The build runs relative to the target file too (default: the file's own folder).
        where = build.get("cwd", ".")
        if isinstance(where, str) and where:
            folder = (file.parent / where).resolve()
            if not folder.is_dir():
                raise TargetConfigError(
                    f"{file}: build.cwd: {where!r} is not a folder (looked at {folder})"
                )
            data = {**data, "build": {**build, "cwd": str(folder)}}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(file)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else str(err["msg"])
        raise TargetConfigError(f"{file}: {loc}: {msg.removeprefix('Value error, ')}") from None
