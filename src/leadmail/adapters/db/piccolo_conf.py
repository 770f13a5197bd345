"""Piccolo's configuration, built from the same settings the service uses.

``PICCOLO_CONF=leadmail.adapters.db.piccolo_conf piccolo migrations ...`` works against
``LEADMAIL_DATABASE_URL``; ``leadmail migrate`` swaps ``DB`` for the engine it was given.
"""

from __future__ import annotations

from typing import Any

from piccolo.conf.apps import AppRegistry
from piccolo.engine.base import Engine

from leadmail.adapters.db.connect import engine_for_url
from leadmail.config import Settings

DB: Engine[Any] = engine_for_url(Settings.from_env().database_url)

APP_REGISTRY = AppRegistry(apps=["leadmail.adapters.db.piccolo_app"])
