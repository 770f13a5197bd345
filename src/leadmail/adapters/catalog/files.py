"""The template catalog as a directory of ``.html`` files, one template per file."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from leadmail.domain.templates import InvalidTemplate, TemplateSource
from leadmail.ports.templates import TemplateCatalog

PACKAGED = "leadmail.templates"
SUFFIX = ".html"


class FileTemplateCatalog(TemplateCatalog):
    """Reads every ``*.html`` file of ``directory`` (the catalog shipped with leadmail when
    None) in file-name order. Each ``load()`` reads the files again: an edited file is seen
    on the next load, nothing is cached."""

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory

    def load(self) -> list[TemplateSource]:
        root: Traversable = files(PACKAGED) if self._directory is None else self._directory
        where = f"the packaged catalog {PACKAGED}" if self._directory is None else str(root)
        if not root.is_dir():
            raise InvalidTemplate(f"template directory {where} does not exist or is not a folder")
        entries = sorted(
            (e for e in root.iterdir() if e.name.endswith(SUFFIX) and e.is_file()),
            key=lambda e: e.name,
        )
        if not entries:
            raise InvalidTemplate(f"template directory {where} has no {SUFFIX} files")
        sources: list[TemplateSource] = []
        first_file: dict[str, str] = {}
        for entry in entries:
            # A file of a folder given (LEADMAIL_TEMPLATES_DIR) is named by its path, which
            # the person fixing it can open; a packaged one by its name.
            origin = entry.name if self._directory is None else str(entry)
            source = TemplateSource.parse(_read(entry, origin), origin=origin)
            earlier = first_file.setdefault(source.template_id, entry.name)
            if earlier != entry.name:
                raise InvalidTemplate(
                    f"{origin}: id {source.template_id!r} is already used by {earlier}"
                )
            sources.append(source)
        return sources


def _read(entry: Traversable, origin: str) -> str:
    try:
        return entry.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidTemplate(f"{origin}: is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except OSError as e:
        raise InvalidTemplate(f"{origin}: cannot be read ({e.strerror or e})") from e
