"""Redis's errors as slotwise's: what a store's caller catches, whichever store it called.

Every call a Redis-backed store makes runs inside :func:`translated`, so a
caller handles :class:`~slotwise.sinks.exceptions.StoreUnavailable` (retry:
the server is unreachable, or a demoted primary refused a write) and
:class:`~slotwise.sinks.exceptions.StoreError` (the server refused the call),
never redis-py's own exceptions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from slotwise.sinks.exceptions import StoreError, StoreUnavailable

__all__ = ["translated"]


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Raise Redis's errors inside the block as slotwise's, naming ``action``."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise StoreUnavailable(f"redis unavailable while {action}: {exc}") from exc
    except ReadOnlyError as exc:
        # A primary demoted under a client that reaches it by a fixed address: the
        # writes wait for the address to lead to the promoted one.
        raise StoreUnavailable(f"redis is a read-only replica while {action}: {exc}") from exc
    except RedisError as exc:
        raise StoreError(f"redis refused {action}: {exc}") from exc
