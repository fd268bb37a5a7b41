"""Fix tasks: can a coding model reproduce a historical fix, graded by its tests?"""

from ._api import TasksSummary, mine_tasks
from .records import Task, TasksMeta
from .store import TaskSet, read_tasks

__all__ = ["Task", "TaskSet", "TasksMeta", "TasksSummary", "mine_tasks", "read_tasks"]
