"""Probe shatranj endgame tablebases (tables made by ``shatranj-tb generate``).

>>> from shatranj_tb import Tablebase
>>> tb = Tablebase("tables")
>>> tb.dtm("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1")
39

``wdl()`` gives 1 (win), 0 (draw) or -1 (loss) for the side to move; ``dtm()`` the
plies to the end of the game (None for a draw); ``dtz()`` the plies to the next zeroing
move (a capture or a pawn move), signed (positive for a win, negative for a loss, 0 for a
draw), and ``category()`` the result under the rule set's move rule (``"win"``,
``"cursed-win"``, ``"draw"``, ``"blessed-loss"``, ``"loss"``), both from the DTZ files;
``probe()`` a dict with the fields of ``shatranj-tb probe --json``; ``line()`` an optimal line to the end; ``solve()`` the
problem solver (any number of men, the fields of ``shatranj-tb solve --json``). Every probe
releases the GIL. Errors: ValueError (bad FEN, illegal position, unknown rule set),
LookupError (missing table), OSError (damaged or unreadable table file).
"""

from ._native import DEFAULT_RULES, DRAW, LOSS, WIN, Tablebase

__all__ = ["Tablebase", "WIN", "DRAW", "LOSS", "DEFAULT_RULES"]
