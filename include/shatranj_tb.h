/* shatranj-tb: probe shatranj endgame tablebases from C and C++.
 *
 * Generated from src/ffi.rs by cbindgen (tests/c_api.rs checks that it is
 * current). Link with -lshatranj_tb (libshatranj_tb.so or libshatranj_tb.a;
 * the static library also needs -lpthread -ldl -lm). */

#ifndef SHATRANJ_TB_H
#define SHATRANJ_TB_H

#include <stddef.h>
#include <stdint.h>

// Success.
#define SHATRANJ_TB_OK 0

// A pointer argument that must not be NULL was NULL.
#define SHATRANJ_TB_ERR_NULL_ARGUMENT -1

// The FEN could not be read (or was not UTF-8).
#define SHATRANJ_TB_ERR_BAD_FEN -2

// The position is not a legal shatranj position (one shah a side, shahs not adjacent,
// the side not to move not in check, no pawn on the first or last rank), or its
// bitboards overlap or disagree.
#define SHATRANJ_TB_ERR_ILLEGAL_POSITION -3

// No table for the position's material (or one of the smaller tables a probe needs) in
// the directory, or more men than any table holds.
#define SHATRANJ_TB_ERR_MISSING_TABLE -4

// A table file is damaged, truncated, of another format version or of another rule set.
#define SHATRANJ_TB_ERR_DAMAGED_TABLE -5

// A table file or the directory could not be read.
#define SHATRANJ_TB_ERR_IO -6

// The caller's move array is too small; the count needed was stored.
#define SHATRANJ_TB_ERR_BUFFER_TOO_SMALL -7

// An argument is out of range: an unknown rule set, a side to move other than
// `SHATRANJ_TB_WHITE` or `SHATRANJ_TB_BLACK`.
#define SHATRANJ_TB_ERR_BAD_ARGUMENT -8

// A bug in the library (a Rust panic, caught at the boundary).
#define SHATRANJ_TB_ERR_INTERNAL -9

// The side to move wins.
#define SHATRANJ_TB_WIN 1

// Neither side can force the end of the game.
#define SHATRANJ_TB_DRAW 0

// The side to move loses.
#define SHATRANJ_TB_LOSS -1

// A DTZ category (`shatranj_tb_probe_dtz`, `ShatranjTbDtzMove`): the side to move wins
// within the move rule.
#define SHATRANJ_TB_CATEGORY_WIN 2

// A DTZ category: the side to move wins without the move rule, but the move rule saves
// the other side (a draw under `move-rule=70`). Never under `move-rule=none`.
#define SHATRANJ_TB_CATEGORY_CURSED_WIN 1

// A DTZ category: a draw.
#define SHATRANJ_TB_CATEGORY_DRAW 0

// A DTZ category: the side to move loses without the move rule, but the move rule saves
// it (a draw under `move-rule=70`). Never under `move-rule=none`.
#define SHATRANJ_TB_CATEGORY_BLESSED_LOSS -1

// A DTZ category: the side to move loses within the move rule.
#define SHATRANJ_TB_CATEGORY_LOSS -2

// `turn` of a position: White to move.
#define SHATRANJ_TB_WHITE 0

// `turn` of a position: Black to move.
#define SHATRANJ_TB_BLACK 1

// Enough room for the moves of any legal position (those of the tables have far fewer).
#define SHATRANJ_TB_MAX_MOVES 256

// An open table directory (opaque).
typedef struct ShatranjTb ShatranjTb;

// A position as bitboards: bit n is square n, a1 = 0, b1 = 1, ..., h8 = 63. Every man
// is in exactly one colour board and exactly one role board.
typedef struct ShatranjTbPosition {
  // White's men.
  uint64_t white;
  // Black's men.
  uint64_t black;
  // Shahs (kings), `K`.
  uint64_t shahs;
  // Ferzes, `Q`.
  uint64_t ferzes;
  // Alfils, `B`.
  uint64_t alfils;
  // Knights, `N`.
  uint64_t knights;
  // Rooks, `R`.
  uint64_t rooks;
  // Pawns, `P`.
  uint64_t pawns;
  // The side to move: `SHATRANJ_TB_WHITE` or `SHATRANJ_TB_BLACK`.
  int turn;
} ShatranjTbPosition;

// One legal move and its value, as `shatranj_tb_probe_root` fills them in.
typedef struct ShatranjTbMove {
  // The square the man leaves (0 = a1 ... 63 = h8).
  uint8_t from;
  // The square it goes to.
  uint8_t to;
  // 1 if a pawn reaches the last rank and becomes a ferz, else 0.
  uint8_t promotion;
  // The moving side's result if it plays this move: `SHATRANJ_TB_WIN`,
  // `SHATRANJ_TB_DRAW` or `SHATRANJ_TB_LOSS`.
  int8_t wdl;
  // Plies from the position before the move to the end of the game, -1 for a draw.
  int32_t dtm;
} ShatranjTbMove;

// One legal move and its DTZ, as `shatranj_tb_probe_root_dtz` fills them in.
typedef struct ShatranjTbDtzMove {
  // The square the man leaves (0 = a1 ... 63 = h8).
  uint8_t from;
  // The square it goes to.
  uint8_t to;
  // 1 if a pawn reaches the last rank and becomes a ferz, else 0.
  uint8_t promotion;
  // 1 if the move is a capture or a pawn move (it zeroes the move rule's count), else
  // 0.
  uint8_t zeroing;
  // The moving side's DTZ category if it plays this move: a `SHATRANJ_TB_CATEGORY_*`.
  int8_t category;
  // 1 if the move keeps the position's DTZ (a DTZ-optimal move: what an engine playing
  // under the move rule plays), else 0.
  uint8_t optimal;
  // The move's DTZ for the moving side, counted from the position before the move
  // (so including this move; a zeroing move counts 1 ply, or 141 under
  // `move-rule=70` when it leads to a cursed win or a blessed loss): positive for a
  // win, negative for a loss, 0 for a draw.
  int32_t dtz;
} ShatranjTbDtzMove;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Opens the tables of directory `dir` for rule set `rules` (for example
// `"bare-king=counter,stalemate=loss"`; NULL for that default). Lists the directory
// only: each table file is opened and checked on first use. The decompressed blocks of
// all its tables together take at most 1 GiB (see `shatranj_tb_open_opts`). Returns
// NULL on error (no such directory, an unknown rule set), with the message in
// `shatranj_tb_last_error()`.
//
// # Safety
// `dir` is NULL or a NUL-terminated string; `rules` is NULL or a NUL-terminated string.
struct ShatranjTb *shatranj_tb_open(const char *dir, const char *rules);

// `shatranj_tb_open` with a bound of `cache_bytes` bytes on the decompressed blocks the
// handle keeps, all its tables together (0 keeps none: every lookup then reads and
// decompresses its block). The bound holds whatever tables are probed; the memory is
// taken only as blocks are used.
//
// # Safety
// As `shatranj_tb_open`.
struct ShatranjTb *shatranj_tb_open_opts(const char *dir, const char *rules, size_t cache_bytes);

// What the cache of decompressed blocks of a handle holds: its bound (`capacity`), the
// bytes held now (`resident`, never above the bound) and the most held at once
// (`peak`), each stored if its pointer is not NULL. Cheap: takes one lock.
//
// # Safety
// `tb` is NULL or a live handle; each other pointer is NULL or valid for a write.
int shatranj_tb_cache_stats(const struct ShatranjTb *tb,
                            size_t *capacity,
                            size_t *resident,
                            size_t *peak);

// The message of the last error on the calling thread ("" if none yet). The string
// stays valid until the next failing call on this thread.
const char *shatranj_tb_last_error(void);

// Closes a handle from `shatranj_tb_open` (NULL is ignored). No other thread may use it
// any more.
//
// # Safety
// `tb` is NULL or a handle from `shatranj_tb_open` not closed yet.
void shatranj_tb_close(struct ShatranjTb *tb);

// The most men of any table in the directory (0 if it has none). Positions with a bare
// side, and shah against shah, need no table.
//
// # Safety
// `tb` is NULL or a live handle.
unsigned int shatranj_tb_largest(const struct ShatranjTb *tb);

// Probes a position given as FEN (at least the board and the side to move): stores the
// result for the side to move in `*wdl` (`SHATRANJ_TB_WIN`, `SHATRANJ_TB_DRAW`,
// `SHATRANJ_TB_LOSS`) and the plies to the end of the game in `*dtm` (-1 for a draw; 0
// if the game has ended). Returns `SHATRANJ_TB_OK` or a negative error code.
//
// # Safety
// `tb` is NULL or a live handle; `fen` NULL or a NUL-terminated string; `wdl` and
// `dtm` NULL or writable.
int shatranj_tb_probe_fen(const struct ShatranjTb *tb, const char *fen, int *wdl, int *dtm);

// Win, draw or loss for the side to move of a position given as bitboards, into
// `*wdl`: the fast path for a search (no text, no allocation; reads the small WDL files
// only, and the smaller tables for captures). Returns `SHATRANJ_TB_OK` or a negative
// error code.
//
// # Safety
// `tb` is NULL or a live handle; `pos` NULL or readable; `wdl` NULL or writable.
int shatranj_tb_probe_wdl(const struct ShatranjTb *tb,
                          const struct ShatranjTbPosition *pos,
                          int *wdl);

// The value of a position given as bitboards: `*wdl` as `shatranj_tb_probe_wdl`, and
// `*dtm` the plies to the end of the game (-1 for a draw). Reads the DTM files.
// Returns `SHATRANJ_TB_OK` or a negative error code.
//
// # Safety
// `tb` is NULL or a live handle; `pos` NULL or readable; `wdl` and `dtm` NULL or
// writable.
int shatranj_tb_probe_dtm(const struct ShatranjTb *tb,
                          const struct ShatranjTbPosition *pos,
                          int *wdl,
                          int *dtm);

// Every legal move of a position given as bitboards, with its value, best first (the
// first move keeps the position's value; moves of equal value in the order of their
// UCI names), into `moves[0..*count]`. A finished game has no moves (`*count` = 0).
// `SHATRANJ_TB_MAX_MOVES` entries are always enough. If `capacity` is too small,
// returns `SHATRANJ_TB_ERR_BUFFER_TOO_SMALL` with the count needed in `*count`;
// `moves` may be NULL when `capacity` is 0. Returns `SHATRANJ_TB_OK` or a negative
// error code.
//
// # Safety
// `tb` is NULL or a live handle; `pos` NULL or readable; `moves` NULL or writable for
// `capacity` entries; `count` NULL or writable.
int shatranj_tb_probe_root(const struct ShatranjTb *tb,
                           const struct ShatranjTbPosition *pos,
                           struct ShatranjTbMove *moves,
                           size_t capacity,
                           size_t *count);

// The DTZ of a position given as bitboards, under the move rule of the handle's rule
// set (`move-rule=none` unless `shatranj_tb_open` was given `move-rule=70`): `*dtz` the
// plies to the next zeroing move (a capture or a pawn move) or the end of the game, the
// winner hurrying to a zeroing move that keeps the win and the loser delaying it;
// positive if the side to move wins, negative if it loses, 0 for a draw and for a
// finished game. `*category` is its `SHATRANJ_TB_CATEGORY_*`. Reads the WDL and DTZ
// files (`MATERIAL.RULES.tbz`); a table without a DTZ file for this move rule is
// `SHATRANJ_TB_ERR_MISSING_TABLE`. Positions the rules decide alone (a bare side) need
// no table. Thread-safe, as every call on a handle. Returns `SHATRANJ_TB_OK` or a
// negative error code.
//
// # Safety
// `tb` is NULL or a live handle; `pos` NULL or readable; `dtz` and `category` NULL or
// writable.
int shatranj_tb_probe_dtz(const struct ShatranjTb *tb,
                          const struct ShatranjTbPosition *pos,
                          int *dtz,
                          int *category);

// Every legal move of a position given as bitboards with its DTZ (as Fathom's
// `tb_probe_root` for an engine under the move rule), into `moves[0..*count]`: best
// first (quicker wins, every win before a cursed one, draws, then longer losses; moves
// of equal DTZ in the order of their UCI names), each flagged `optimal` if it keeps the
// position's DTZ (`shatranj_tb_probe_dtz`'s). A finished game has no moves
// (`*count` = 0). `SHATRANJ_TB_MAX_MOVES` entries are always enough. If `capacity` is
// too small, returns `SHATRANJ_TB_ERR_BUFFER_TOO_SMALL` with the count needed in
// `*count`; `moves` may be NULL when `capacity` is 0. Reads the DTZ files of the
// position's table and of the tables its captures lead to. Thread-safe, as every call
// on a handle. Returns `SHATRANJ_TB_OK` or a negative error code.
//
// # Safety
// `tb` is NULL or a live handle; `pos` NULL or readable; `moves` NULL or writable for
// `capacity` entries; `count` NULL or writable.
int shatranj_tb_probe_root_dtz(const struct ShatranjTb *tb,
                               const struct ShatranjTbPosition *pos,
                               struct ShatranjTbDtzMove *moves,
                               size_t capacity,
                               size_t *count);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* SHATRANJ_TB_H */
