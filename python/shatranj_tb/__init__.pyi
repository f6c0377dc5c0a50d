from ._native import DEFAULT_RULES as DEFAULT_RULES
from ._native import CacheStats as CacheStats
from ._native import DRAW as DRAW
from ._native import LOSS as LOSS
from ._native import WIN as WIN
from ._native import LineStep as LineStep
from ._native import MoveValue as MoveValue
from ._native import ProbeDict as ProbeDict
from ._native import Tablebase as Tablebase

__all__ = ["Tablebase", "WIN", "DRAW", "LOSS", "DEFAULT_RULES"]
