"""Type stubs of the native module (src/lib.rs of the binding crate)."""

import os
from typing import Any, Dict, List, Literal, Optional, TypedDict, Union

WIN: Literal[1]
DRAW: Literal[0]
LOSS: Literal[-1]
DEFAULT_RULES: str

WdlName = Literal["win", "draw", "loss"]
EndName = Literal["checkmate", "stalemate", "bare-king"]
CategoryName = Literal["win", "cursed-win", "draw", "blessed-loss", "loss"]

class MoveValue(TypedDict):
    uci: str
    san: str
    wdl: WdlName
    dtm: Optional[int]
    dtz: Optional[int]
    zeroing: bool

class ProbeDict(TypedDict):
    fen: str
    material: str
    rules: str
    wdl: WdlName
    dtm: Optional[int]
    dtz: Optional[int]
    category: Optional[CategoryName]
    end: Optional[EndName]
    best_move: Optional[str]
    moves: List[MoveValue]

class CacheStats(TypedDict):
    capacity: int
    resident_bytes: int
    peak_bytes: int
    blocks: int

class LineStep(TypedDict):
    uci: str
    fen: str
    wdl: WdlName
    dtm: Optional[int]
    end: Optional[EndName]

class Tablebase:
    """A tables directory for one rule set (None: bare-king=counter,stalemate=loss)."""

    def __init__(
        self,
        path: Union[str, "os.PathLike[str]"],
        rules: Optional[str] = None,
        cache_mb: Optional[int] = None,
    ) -> None: ...
    def cache_stats(self) -> CacheStats: ...
    @property
    def path(self) -> str: ...
    @property
    def rules(self) -> str: ...
    def materials(self) -> List[str]: ...
    def wdl(self, fen: str) -> Literal[1, 0, -1]: ...
    def dtm(self, fen: str) -> Optional[int]: ...
    def dtz(self, fen: str) -> int: ...
    def category(self, fen: str) -> CategoryName: ...
    def probe(self, fen: str) -> ProbeDict: ...
    def line(self, fen: str) -> List[LineStep]: ...
    def solve(
        self,
        fen: str,
        plies: int = 30,
        time: Optional[float] = None,
        hash_mb: int = 64,
        threads: int = 0,
        tree_depth: int = 5,
    ) -> Dict[str, Any]: ...
