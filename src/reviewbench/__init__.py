"""reviewbench: measure an AI code reviewer on your own repository's history.

The public API; everything in underscore modules and subpackages not listed here may
change without notice.
"""

from . import _startup

_startup.install()  # before the heavy imports below: Ctrl-C during them is one line

from ._version import __version__  # noqa: E402
from .config import MineConfig  # noqa: E402
from .errors import ReviewbenchError  # noqa: E402
from .mine import MineSummary, mine_corpus  # noqa: E402
from .records import Case, CorpusMeta, Defect, GoldRecord, Location, Stratum  # noqa: E402
from .store import Corpus, read_corpus  # noqa: E402

__all__ = [
    "Case",
    "Corpus",
    "CorpusMeta",
    "Defect",
    "GoldRecord",
    "Location",
    "MineConfig",
    "MineSummary",
    "ReviewbenchError",
    "Stratum",
    "__version__",
    "mine_corpus",
    "read_corpus",
]
