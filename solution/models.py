"""What claw knows about models: prices and context windows, from OpenRouter's model list.

``GET /api/v1/models`` lists every model OpenRouter serves, with its context length and its
prices in US dollars per token, as decimal strings (``"0.000003"``). claw reads the list once
a day and keeps it on disk with the time it was fetched, so a run costs no extra request and a
price change reaches claw within a day. The rule that shapes this module: a price claw does
not know is ``None``, never ``0``; there is no price table in the code to rot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import httpx

from .private import private_file, private_folder
from .tools.write import atomic_write

CACHE_FILE = Path("cache") / "models.json"
"""Where the model list is kept, relative to claw's own folder (``private.claw_home``)."""

MAX_AGE = timedelta(days=1)
"""How long a cached model list is used before it is fetched again."""


@dataclass(frozen=True)
class ModelInfo:
    """One model of the list: its window and its prices per token (``None``: not listed)."""

    id: str
    context_length: int | None = None
    """The most tokens a request and its answer may hold together."""
    prompt: Decimal | None = None
    """US dollars per prompt (input) token."""
    completion: Decimal | None = None
    """US dollars per completion (output) token, reasoning tokens included."""
    cache_read: Decimal | None = None
    """US dollars per prompt token read from the provider's cache, when it is listed."""
    cache_write: Decimal | None = None
    """US dollars per prompt token written to the provider's cache, when it is listed."""


# --8<-- [start:parse]
def price(value: object) -> Decimal | None:
    """A price of the list (a decimal string, or a number) as ``Decimal``; ``None`` if unusable.

    A negative price is unusable too: OpenRouter writes ``"-1"`` for a price it cannot state.
    """
    # region ch17: Decimal(str(value)); None for None, a bool, a negative price or an unparsable one
    # more: catch InvalidOperation; check .is_finite(); str() keeps 0.1 from becoming 0.1000000001
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() and number >= 0 else None
    # endregion


def parse_model_list(body: Mapping[str, Any]) -> dict[str, ModelInfo]:
    """The models of a ``GET /models`` answer (``{"data": [...]}``), by id.

    An entry without an id is skipped; a missing or unusable price or length is ``None``.
    """
    # region ch17: one ModelInfo per entry of body["data"]: id, context_length, pricing's prices
    # more: pricing's "prompt", "completion", "input_cache_read", "input_cache_write"; int length
    models: dict[str, ModelInfo] = {}
    for entry in body.get("data") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        pricing = entry.get("pricing")
        pricing = pricing if isinstance(pricing, dict) else {}
        length = entry.get("context_length")
        models[entry["id"]] = ModelInfo(
            id=entry["id"],
            context_length=length if isinstance(length, int) and length > 0 else None,
            prompt=price(pricing.get("prompt")),
            completion=price(pricing.get("completion")),
            cache_read=price(pricing.get("input_cache_read")),
            cache_write=price(pricing.get("input_cache_write")),
        )
    return models
    # endregion
# --8<-- [end:parse]


class ModelCatalog:
    """OpenRouter's model list, fetched from ``url`` at most once per ``MAX_AGE``, kept on disk.

    ``await load()`` once, then ``lookup(model_id)`` as often as needed. A list that cannot be
    fetched leaves the catalog empty and says why in ``problem``: claw then knows no price,
    and says so, rather than stopping the run.
    """

    def __init__(self, url: str, cache: Path, *, max_age: timedelta = MAX_AGE) -> None:
        """A catalog of the list at ``url``, cached in the file ``cache``."""
        self.url = url
        self.cache = cache
        self.max_age = max_age
        self.models: dict[str, ModelInfo] = {}
        self.fetched: datetime | None = None
        """When the list in use was fetched (``None`` before ``load``, or if it failed)."""
        self.problem: str | None = None
        """Why no list could be had, if none could."""

    def lookup(self, model_id: str) -> ModelInfo | None:
        """The model ``model_id``, or ``None`` when the list does not have it."""
        return self.models.get(model_id)

    def read_cache(self, now: datetime) -> dict[str, Any] | None:
        """The cached answer, if the cache is for this URL and younger than ``max_age``."""
        try:
            saved = json.loads(self.cache.read_text(encoding="utf-8"))
            fetched = datetime.fromisoformat(saved["fetched"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged: fetch again
        if saved.get("url") != self.url or not timedelta(0) <= now - fetched < self.max_age:
            return None
        self.fetched = fetched
        body = saved.get("body")
        return body if isinstance(body, dict) else None

    async def load(self, client: httpx.AsyncClient, now: datetime | None = None) -> None:
        """Fill the catalog from the cache if it is fresh, else from ``url`` (and cache that)."""
        now = now or datetime.now(UTC)
        body = self.read_cache(now)
        if body is None:
            try:
                response = await client.get(self.url, headers={"accept": "application/json"})
                response.raise_for_status()
                body = response.json()
                if not isinstance(body, dict):
                    raise ValueError("the answer is not a JSON object")
            except (httpx.HTTPError, ValueError) as error:
                self.problem = f"the model list at {self.url} could not be read: {error}"
                return
            self.fetched = now
            saved = {"fetched": now.isoformat(), "url": self.url, "body": body}
            try:
                private_folder(self.cache.parent)
                private_file(self.cache)  # atomic_write keeps its mode: 600 (private.py)
                atomic_write(self.cache, json.dumps(saved).encode("utf-8"))
            except OSError:
                pass  # no cache this time: the list is still used
        self.models = parse_model_list(body)
