"""reviewbench: measure an AI code reviewer on your own repository's history.

The public API; everything in underscore modules and subpackages not listed here may
change without notice.
"""

from ._version import __version__
from .config import MineConfig
from .errors import ReviewbenchError
from .mine import MineSummary, mine_corpus
from .records import Case, CorpusMeta, Defect, GoldRecord, Location, Stratum
from .store import Corpus, read_corpus

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
