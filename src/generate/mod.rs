//! The retrograde generator: WDL and DTM for every position of one material.
//!
//! Per position (both sides to move) the generator keeps one 16-bit state:
//! - `d + 1` once decided at distance `d` plies (odd `d` a win for the side to move, even
//!   `d` a loss);
//! - [`UNUSED`] for an index that names no legal, canonical position;
//! - while undecided, either `SAVED` (a capture or promotion, or a stalemate that is a
//!   draw, already saves the position from losing) or an open count: how many distinct
//!   quiet successors (moves within the material) are not yet known to win for the
//!   opponent, and whether the position has a conversion at all (see `open_state`).
//!
//! One state a slot keeps the ply passes at one cache miss a predecessor. What is still
//! undecided at the end is a draw (code 0).
//!
//! The passes:
//! 1. *Seed*: every position is decoded; its quiet moves are counted and its captures and
//!    promotions played and looked up in the smaller tables (through [`SubTables`]),
//!    giving a first (tentative) win, a saving draw, or a loss to compare with. Mates and
//!    stalemates get their value at once.
//! 2. *Retrograde*, ply by ply `n = 0, 1, 2, ...`: the positions decided at distance `n`
//!    form the frontier. From a loss at `n`, every quiet predecessor (found with un-moves
//!    from the same attack tables) wins in `n + 1` unless it already wins faster. From a
//!    win at `n`, every quiet predecessor's open count drops by one; at zero the
//!    predecessor is lost in `n + 1`, or later where one of its conversions resists
//!    longer. The positions decided in one pass are listed (one bit a slot) for the next;
//!    seed values and losses that a conversion lengthens are found by scanning the words
//!    of 64 slots marked for their distance. Either way a pass visits its frontier in slot
//!    order, which keeps neighbouring positions' predecessors near each other in memory.
//!    A pass of losses may instead *pull*: once fewer positions of the winning side are
//!    still open than there are losses, each open position looks for a quiet move into
//!    a loss at `n` (forward moves), which costs less than visiting every predecessor of
//!    every loss, most of them decided long before (see [`LossPasses`]).
//! 3. What is still undecided is a draw.
//!
//! Conversions do not reset the distance: DTM counts plies to the real end of the game.
//! Symmetric duplicates are handled by counting successors and predecessors as distinct
//! canonical indices, so the counts balance.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::fen::Fen;
use crate::index::TableIndex;
use crate::material::Material;
use crate::position::{MoveList, Position};
use crate::retro::UnMoveKinds;
use crate::role::{Piece, Role};
use crate::rules::RuleSet;
use crate::square::Square;
use crate::value::{Value, Wdl};

pub mod files;
pub mod memory;
pub mod stats;

pub use stats::{Longest, SideStats, TableStats};

/// The code of an index that names no legal, canonical position.
pub const UNUSED: u16 = u16::MAX;
/// Longest distance a table can hold (codes stay below the undecided states).
pub const MAX_DTM: u32 = 65_000;
/// The first undecided state: [`open_state`] counts from here.
const OPEN: u16 = 0xFE00;
/// Most quiet successors an open state can count.
const MAX_OPEN_COUNT: usize = 127;
/// The state of an undecided position that a conversion (or a drawn stalemate) saves
/// from losing: its quiet successors need no counting.
const SAVED: u16 = 0xFF00;

// Decided codes, open states and SAVED never meet.
const _: () = assert!(MAX_DTM + 1 < OPEN as u32);
const _: () = assert!(open_state(MAX_OPEN_COUNT as u16, true) < SAVED && SAVED < UNUSED);

/// The state of an undecided position with `count` quiet successors not yet known to win
/// for the opponent (at most [`MAX_OPEN_COUNT`]); bit 0 says whether it has a conversion
/// (all of them losing), the one thing a loss settled from its last quiet successor still
/// has to look at.
#[inline]
const fn open_state(count: u16, has_conversion: bool) -> u16 {
    OPEN + (count << 1) + has_conversion as u16
}

/// Where the generator looks up positions after a capture or a promotion.
pub trait SubTables: Sync {
    /// The value of any position of a smaller material (or one the rules decide).
    fn value(&self, pos: &Position) -> Result<Value, GenError>;
}

/// Why a table could not be generated.
#[derive(Debug)]
pub enum GenError {
    /// A sub-table was missing or unreadable.
    SubTable(String),
    /// A distance beyond [`MAX_DTM`].
    TooLong(Material),
    /// An internal inconsistency (a bug): the message says which position.
    Inconsistent(String),
    /// Writing the table failed.
    Write(String),
    /// The table folder cannot be read or created.
    Folder {
        path: std::path::PathBuf,
        message: String,
    },
    /// [`Progress::cancelled`] asked the generation to stop; no file was written.
    Cancelled,
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::SubTable(m) => write!(f, "sub-table needed: {m}"),
            GenError::TooLong(m) => write!(f, "{m}: a distance exceeds {MAX_DTM} plies"),
            GenError::Inconsistent(m) => write!(f, "internal inconsistency: {m}"),
            GenError::Write(m) => write!(f, "writing the table failed: {m}"),
            GenError::Folder { path, message } => {
                write!(
                    f,
                    "cannot use the table folder {}: {message}",
                    path.display()
                )
            }
            GenError::Cancelled => f.write_str("generation cancelled"),
        }
    }
}

impl std::error::Error for GenError {}

/// Reports progress of long passes, and may ask for the work to stop. All methods may be
/// called from many threads.
pub trait Progress: Sync {
    /// A pass begins over `total` units.
    fn begin(&self, _pass: &str, _total: u64) {}
    /// `n` more units are done.
    fn advance(&self, _n: u64) {}
    /// The pass is over.
    fn end(&self) {}
    /// A table of a run is started: the `number`-th (from 1) of `count` to generate, with
    /// `positions` slots; `done` and `remaining` count the slots of the run's tables
    /// generated before it and still to come (this one included).
    fn table(
        &self,
        _material: Material,
        _number: usize,
        _count: usize,
        _done: u64,
        _remaining: u64,
    ) {
    }
    /// Whether the work should stop: generation checks it between blocks of positions
    /// (every few milliseconds) and then fails with [`GenError::Cancelled`], writing no
    /// file.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Progress that reports nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// A generated table in memory.
#[derive(Clone, Debug)]
pub struct Generated {
    pub material: Material,
    pub rules: RuleSet,
    /// Codes for White to move (`0..size`), then Black to move (`size..2 * size`).
    pub codes: Vec<u16>,
    /// The result of each slot's best conversion (capture or promotion), for the side to
    /// move, two bits a slot (slot `s` at bits `2 * (s % 4)` of byte `s / 4`): 0 when it
    /// has none (or the slot is unused), else 1 + loss 0 / draw 1 / win 2.
    pub conversions: Vec<u8>,
    pub stats: TableStats,
    pub seconds: f64,
}

impl Generated {
    /// The value at an index of one side, `None` for an unused index.
    #[must_use]
    pub fn value_at(&self, turn: Color, index: u64) -> Option<Value> {
        let n = self.codes.len() as u64 / 2;
        let code = self.codes[(turn.index() as u64 * n + index) as usize];
        (code != UNUSED).then(|| Value::from_dtm_code(code))
    }

    /// The conversion code of a slot (see [`Generated::conversions`]).
    #[must_use]
    pub fn conversion_at(&self, slot: usize) -> u8 {
        packed_conversion(&self.conversions, slot)
    }

    /// The values of the WDL file, slot by slot: 0 loss, 1 draw, 2 win, [`UNUSED`] for an
    /// unused slot.
    ///
    /// A position whose best conversion (capture or promotion) already achieves its value
    /// is stored with a value no better than its own, chosen to lengthen runs (the value
    /// before it, where that is no better): a reader takes the better of the stored value
    /// and the position's conversions (see [`crate::probe::Tablebase::wdl`]). Such positions are
    /// many (a hanging piece decides most of them), which makes WDL files far smaller.
    /// (Looking ahead to the next exact value as well made no measurable difference.)
    #[must_use]
    pub fn wdl_file_values(&self) -> Vec<u16> {
        let mut values = self.codes.clone();
        wdl_values_in_place(&mut values, &self.conversions);
        values
    }
}

/// Turns DTM codes into the values of the WDL file in place (see
/// [`Generated::wdl_file_values`]; `conversions` as [`Generated::conversions`]).
pub(crate) fn wdl_values_in_place(codes: &mut [u16], conversions: &[u8]) {
    // Runs restart every 2^20 slots (a WDL block), so the chunks go in parallel. Each
    // value needs its own code and the value before it, so one pass rewrites them.
    const CHUNK: usize = 1 << 20;
    codes
        .par_chunks_mut(CHUNK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let mut prev = 0u16;
            for (j, v) in chunk.iter_mut().enumerate() {
                let s = k * CHUNK + j;
                let c = *v;
                if c == UNUSED {
                    continue;
                }
                let exact = wdl_code(Value::from_dtm_code(c).wdl());
                let conversion = packed_conversion(conversions, s);
                *v = if conversion != 0 && u16::from(conversion - 1) == exact {
                    prev.min(exact)
                } else {
                    exact
                };
                prev = *v;
            }
        });
}

/// The conversion code of `slot` in packed codes (see [`Generated::conversions`]).
#[inline]
fn packed_conversion(conversions: &[u8], slot: usize) -> u8 {
    (conversions[slot / 4] >> (2 * (slot % 4))) & 3
}

#[inline]
fn conversion_code(wdl: Wdl) -> u8 {
    1 + wdl_code(wdl) as u8
}

/// The code of a WDL value in WDL files: 0 loss, 1 draw, 2 win.
#[inline]
#[must_use]
pub fn wdl_code(wdl: Wdl) -> u16 {
    match wdl {
        Wdl::Loss => 0,
        Wdl::Draw => 1,
        Wdl::Win => 2,
    }
}

#[inline]
fn code_of(v: Value) -> u16 {
    v.to_dtm_code().expect("distance checked against MAX_DTM")
}

/// Whether a state holds a decided value.
#[inline]
fn is_decided(code: u16) -> bool {
    code != 0 && code < OPEN
}

/// Whether a state is open: undecided, its quiet successors counted.
#[inline]
fn is_open(code: u16) -> bool {
    (OPEN..SAVED).contains(&code)
}

/// Whether a state is undecided (open or [`SAVED`]).
#[inline]
fn is_undecided(code: u16) -> bool {
    code >= OPEN && code != UNUSED
}

/// Whether bit `i` of a bitmap kept as words of 64 is set.
#[inline]
fn has_bit(words: &[AtomicU64], i: u64) -> bool {
    words[(i / 64) as usize].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
}

/// Sets `bit` in `word`, with a plain load first: most bits set here are set already, and
/// a load costs less than a locked read-modify-write.
#[inline]
fn set_bit(word: &AtomicU64, bit: u64) {
    if word.load(Ordering::Relaxed) & bit == 0 {
        word.fetch_or(bit, Ordering::Relaxed);
    }
}

/// The slots of block `b` (of `1 << MARK_SHIFT`) within `slots`.
#[inline]
fn block_slots(b: u64, slots: &std::ops::Range<u64>) -> std::ops::Range<u64> {
    (b << MARK_SHIFT).max(slots.start)..((b + 1) << MARK_SHIFT).min(slots.end)
}

/// Whether a slot holding `code` may still get the win whose code is `win`: it is
/// undecided, or holds a (tentative) win found by a conversion that is slower.
#[inline]
fn may_win_at(code: u16, win: u16) -> bool {
    is_undecided(code) || (is_decided(code) && code > win && distance(code) % 2 == 1)
}

#[inline]
fn distance(code: u16) -> u32 {
    u32::from(code) - 1
}

const CHUNK: u64 = 1 << 14;
/// A loss pass pulls only when its losses are at least this share of a side's slots
/// (`size / PULL_MIN_SHARE`): fewer are pushed at less than the cost of a pull's scan.
const PULL_MIN_SHARE: u64 = 256;
/// A loss pass pulls when fewer than `PULL_RATIO_NUM / PULL_RATIO_DEN` positions are
/// open for each loss. Measured on 2 cores, wall time: on KRNvKQ (ply 6) a push took
/// 290 ns a loss and a pull 110 ns an open position; on KNBvKB (plies 30-32) 140 and
/// 104 ns. A push's cost grows with the moves of the winning side, a pull's falls with
/// the share of open positions that win at once.
const PULL_RATIO_NUM: u64 = 3;
/// See [`PULL_RATIO_NUM`].
const PULL_RATIO_DEN: u64 = 2;
/// Slots per block of [`Generator::marks`] (a power of two dividing [`CHUNK`]).
const MARK_SHIFT: u32 = 10;

/// Decodes indices that mostly come in increasing order: where the last group is a single
/// piece, the rest of the board is decoded once per run of that piece's squares.
struct Decoder {
    last: Option<(Piece, u32, u64)>,
    /// The first index of the run of the last piece's squares decoded last (before the
    /// first, a value no index is within a run of), and the board without that piece.
    prefix: (u64, Option<Board>),
    /// What the prefix board says of checks on the shah not to move, for one side to move
    /// (see [`Decoder::decode_legal`]).
    threats: Option<Threats>,
}

/// Whether one of `rooks` attacks `shah` on a board occupied by `occ`.
#[inline]
fn rook_checks(rooks: Bitboard, shah: Square, occ: Bitboard) -> bool {
    rooks.any() && (attacks::rook_attacks(shah, occ) & rooks).any()
}

/// Checks on the shah of the side not to move in a board without its last piece.
#[derive(Clone, Copy)]
struct Threats {
    turn: Color,
    /// The shah that must not be in check.
    shah: Square,
    /// Whether a piece other than a rook already checks it (no last piece can block that).
    leaper: bool,
    /// The rooks of the side to move: the last piece may open or close their lines.
    rooks: Bitboard,
}

impl Decoder {
    fn new(index: &TableIndex) -> Decoder {
        Decoder {
            last: index.last_single(),
            prefix: (1 << 63, None),
            threats: None,
        }
    }

    /// The board of index `i` if, with `turn` to move, the side not to move is not in
    /// check (the one thing a decoded board can get wrong; see
    /// [`Generator::position_of`]). The checks of the pieces decoded once per run are
    /// found once per run as well.
    #[inline]
    fn decode_legal(&mut self, index: &TableIndex, i: u64, turn: Color) -> Option<Board> {
        let Some((piece, offset, squares)) = self.last else {
            let board = index.decode(i)?;
            let shah = board.shah_of(!turn)?;
            return (!board.attackers_to(shah, turn, board.occupied()).any()).then_some(board);
        };
        // within the run: no division
        if i.wrapping_sub(self.prefix.0) >= squares {
            self.prefix = (index.last_run_start(i), index.decode_without_last(i));
            self.threats = None;
        }
        let prefix = self.prefix.1?;
        let threats = match self.threats {
            Some(t) if t.turn == turn => t,
            _ => {
                let shah = prefix.shah_of(!turn)?;
                let rooks = prefix.by_piece(Piece {
                    color: turn,
                    role: Role::Rook,
                });
                let t = Threats {
                    turn,
                    shah,
                    leaper: (prefix.attackers_to(shah, turn, prefix.occupied()) & !rooks).any(),
                    rooks,
                };
                self.threats = Some(t);
                t
            }
        };
        let sq = Square::new(offset + (i - self.prefix.0) as u32);
        if threats.leaper || prefix.occupied().contains(sq) {
            return None;
        }
        let mut board = prefix;
        board.put_on_empty(sq, piece);
        let occ = board.occupied();
        let checked = (piece.color == turn
            && attacks::attacks(piece.role, turn, sq, occ).contains(threats.shah))
            || rook_checks(threats.rooks, threats.shah, occ);
        debug_assert_eq!(
            checked,
            board.attackers_to(threats.shah, turn, occ).any(),
            "{board:?}"
        );
        (!checked).then_some(board)
    }

    /// The board of index `i` (see [`TableIndex::decode`]).
    #[inline]
    fn decode(&mut self, index: &TableIndex, i: u64) -> Option<Board> {
        let board = match self.last {
            Some((piece, offset, squares)) => {
                if i.wrapping_sub(self.prefix.0) >= squares {
                    self.prefix = (index.last_run_start(i), index.decode_without_last(i));
                    self.threats = None;
                }
                let sq = Square::new(offset + (i - self.prefix.0) as u32);
                self.prefix
                    .1
                    .filter(|b| !b.occupied().contains(sq))
                    .map(|mut b| {
                        b.put_on_empty(sq, piece);
                        b
                    })
            }
            None => index.decode(i),
        };
        debug_assert_eq!(board, index.decode(i));
        board
    }
}

/// How a ply pass of losses finds the positions that win one ply later.
///
/// Both ways give the same table; they differ in the work done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossPasses {
    /// Pull where it is cheaper (see [`Generator::pull_pays`]), else push.
    #[default]
    Auto,
    /// Always push: every loss marks its quiet predecessors won (un-moves).
    Push,
    /// Pull on every loss pass after the first: every position not yet won looks for a
    /// quiet move into the losses (forward moves).
    Pull,
}

/// The generator for one material under one rule set.
pub struct Generator<'a> {
    index: TableIndex,
    loss_passes: LossPasses,
    rules: RuleSet,
    sub: &'a dyn SubTables,
    progress: &'a dyn Progress,
    /// The state of every slot (see the module documentation).
    codes: Vec<AtomicU16>,
    /// Per block of `1 << MARK_SHIFT` slots, bit `d % 64` is set once a slot of the block
    /// has been given a value at distance `d` other than by a ply pass's list (by the seed,
    /// or a loss a conversion lengthens): a ply pass scans only the blocks marked for it.
    /// `marks[0]` holds the distances below 64, `marks[1]` the others: the passes past 63
    /// do not scan again the blocks of the seed's many short values.
    marks: [Vec<AtomicU64>; 2],
    /// The same marks per word of 64 slots, every distance `d` at bit `d % 64`: in a block
    /// marked for its pass, the pass reads every slot only of the words marked as well.
    word_marks: Vec<AtomicU64>,
    /// The frontier as one bit a slot, by parity of distance: a ply pass `n` reads and
    /// clears `frontier[n % 2]` (the slots it lists at distance `n`) and lists the slots it
    /// decides at `n + 1` in the other.
    frontier: [Vec<AtomicU64>; 2],
    /// One bit a block of `1 << MARK_SHIFT` slots: whether any slot of the block is in the
    /// frontier of the same parity.
    frontier_blocks: [Vec<AtomicU64>; 2],
    /// One bit a block of `1 << MARK_SHIFT` slots: clear once a pull found the block has
    /// no slot left that a later loss pass could make a win (only the seed makes such
    /// slots, so a clear block stays so). A pull skips clear blocks.
    pull_blocks: Vec<AtomicU64>,
    /// The packed conversion codes the seed found (see [`Generated::conversions`]).
    conversions: Vec<u8>,
    max_distance: AtomicU32,
    error: std::sync::Mutex<Option<GenError>>,
}

impl<'a> Generator<'a> {
    /// Prepares to generate `material` (in stored form).
    #[must_use]
    pub fn new(
        material: Material,
        rules: RuleSet,
        sub: &'a dyn SubTables,
        progress: &'a dyn Progress,
    ) -> Generator<'a> {
        Generator {
            index: TableIndex::new(material.normalized()),
            loss_passes: LossPasses::Auto,
            rules,
            sub,
            progress,
            codes: Vec::new(),
            marks: [Vec::new(), Vec::new()],
            word_marks: Vec::new(),
            frontier: [Vec::new(), Vec::new()],
            frontier_blocks: [Vec::new(), Vec::new()],
            pull_blocks: Vec::new(),
            conversions: Vec::new(),
            max_distance: AtomicU32::new(0),
            error: std::sync::Mutex::new(None),
        }
    }

    /// Sets how loss passes find their predecessors (the table is the same either way).
    #[must_use]
    pub fn loss_passes(mut self, how: LossPasses) -> Generator<'a> {
        self.loss_passes = how;
        self
    }

    fn size(&self) -> u64 {
        self.index.size()
    }

    /// Stores a decided value's code and marks its block for the ply pass of its distance
    /// (for values that no ply pass lists; see [`Generator::list`]).
    #[inline]
    fn decide(&self, slot: usize, code: u16) {
        self.codes[slot].store(code, Ordering::Relaxed);
        let d = distance(code);
        let bit = 1u64 << (d % 64);
        set_bit(&self.marks_for(d)[slot >> MARK_SHIFT], bit);
        set_bit(&self.word_marks[slot / 64], bit);
    }

    /// The block marks that hold distance `d` (see [`Generator::marks`]).
    #[inline]
    fn marks_for(&self, d: u32) -> &[AtomicU64] {
        &self.marks[usize::from(d >= 64)]
    }

    /// Lists a slot just decided at distance `d` (the next ply's) for the pass of `d`.
    #[inline]
    fn list(&self, slot: u64, d: u32) {
        let parity = (d % 2) as usize;
        self.frontier[parity][(slot / 64) as usize].fetch_or(1 << (slot % 64), Ordering::Relaxed);
        let block = slot >> MARK_SHIFT;
        set_bit(
            &self.frontier_blocks[parity][(block / 64) as usize],
            1 << (block % 64),
        );
    }

    /// Notes that a value at distance `d` exists: the ply passes go on to `d` at least.
    #[inline]
    fn reach(&self, d: u32) {
        if self.max_distance.load(Ordering::Relaxed) < d {
            self.max_distance.fetch_max(d, Ordering::Relaxed);
        }
    }

    fn fail(&self, e: GenError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn failed(&self) -> bool {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// The position at index `i` with `turn` to move, given the index's board as
    /// [`Decoder::decode_legal`] gives it, if the slot is used.
    #[inline]
    fn position_of(&self, turn: Color, i: u64, board: Option<Board>) -> Option<Position> {
        // A decoded board has the material, one shah a side, the shahs apart and pawns on
        // ranks 2-7; the decoder has ruled out a check on the side not to move.
        debug_assert_eq!(
            board.is_some(),
            self.index
                .decode(i)
                .is_some_and(|b| Position::from_board(b, turn).is_ok())
        );
        let board = board?;
        if self.index.may_be_mirror(i) && !self.index.is_canonical(i, &board) {
            return None;
        }
        Some(Position::from_board_unchecked(board, turn))
    }

    /// The position at a slot already known to be used (it holds a value or a counter).
    fn used_position_at(&self, slot: u64) -> Position {
        let (turn, i) = self.index.split_slot(slot);
        let board = self.index.decode(i).expect("a used slot decodes");
        Position::from_board_unchecked(board, turn)
    }

    /// The global slot of a position of this material (stored colours).
    #[inline]
    fn slot_of(&self, pos: &Position) -> Option<u64> {
        let i = self.index.encode(pos.board())?;
        Some(self.index.slot(pos.turn(), i))
    }

    /// The slot of `next`, the position after a quiet move (or un-move) of `piece` from
    /// `from` to `to` in the board of index `i` (as decoded, `fixed` if not
    /// [`TableIndex::may_be_mirror`]), with `turn` to move: by index arithmetic when a
    /// piece other than a shah moves and the orientation is fixed, else by encoding.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn slot_after(
        &self,
        i: u64,
        board: &crate::board::Board,
        fixed: bool,
        piece: Piece,
        from: Square,
        to: Square,
        turn: Color,
        next: impl FnOnce() -> Position,
    ) -> Result<u64, Position> {
        if fixed && piece.role != Role::Shah {
            let k = self.index.index_after_move(i, board, piece, from, to);
            let k = self.index.slot(turn, k);
            debug_assert_eq!(Some(k), self.slot_of(&next()));
            Ok(k)
        } else if let Some(k) = fixed
            .then(|| self.shah_move_index(i, board, piece.color, to))
            .flatten()
        {
            let k = self.index.slot(turn, k);
            debug_assert_eq!(Some(k), self.slot_of(&next()));
            Ok(k)
        } else {
            let p = next();
            self.slot_of(&p).ok_or(p)
        }
    }

    /// The index after the shah of `color` moves to `to` on the board of index `i` (as
    /// decoded), where the board keeps its orientation (see
    /// [`TableIndex::index_after_shah_move`]).
    #[inline]
    fn shah_move_index(&self, i: u64, board: &Board, color: Color, to: Square) -> Option<u64> {
        let (wk, bk) = match color {
            Color::White => (to, board.shah_of(Color::Black)?),
            Color::Black => (board.shah_of(Color::White)?, to),
        };
        self.index.index_after_shah_move(i, wk, bk)
    }

    /// Runs every pass and returns the table.
    pub fn run(mut self) -> Result<Generated, GenError> {
        let start = Instant::now();
        let total = 2 * self.size();
        self.codes = zeroed(total as usize);
        let blocks = total.div_ceil(1 << MARK_SHIFT);
        self.marks = [zeroed(blocks as usize), zeroed(blocks as usize)];
        self.word_marks = zeroed(total.div_ceil(64) as usize);
        self.frontier = [
            zeroed(total.div_ceil(64) as usize),
            zeroed(total.div_ceil(64) as usize),
        ];
        self.frontier_blocks = [
            zeroed(blocks.div_ceil(64) as usize),
            zeroed(blocks.div_ceil(64) as usize),
        ];
        self.pull_blocks = (0..blocks.div_ceil(64))
            .map(|_| AtomicU64::new(u64::MAX))
            .collect();

        self.conversions = self.seed();
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        if self.progress.cancelled() {
            return Err(GenError::Cancelled);
        }
        self.retrograde();
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        if self.progress.cancelled() {
            return Err(GenError::Cancelled);
        }
        self.marks = [Vec::new(), Vec::new()];
        self.word_marks = Vec::new();
        self.frontier = [Vec::new(), Vec::new()];
        self.frontier_blocks = [Vec::new(), Vec::new()];
        self.pull_blocks = Vec::new();
        let conversions = std::mem::take(&mut self.conversions);
        // what is still undecided is a draw
        let mut codes = std::mem::take(&mut self.codes);
        codes.par_chunks_mut(CHUNK as usize).for_each(|chunk| {
            for c in chunk {
                if is_undecided(*c.get_mut()) {
                    *c.get_mut() = 0;
                }
            }
        });
        // in place: the same size and layout
        let codes: Vec<u16> = codes.into_iter().map(AtomicU16::into_inner).collect();
        let material = self.index.material();
        let stats = stats::count(&self.index, &codes, self.progress);
        Ok(Generated {
            material,
            rules: self.rules,
            codes,
            conversions,
            stats,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Seeds every slot; returns the best conversion of each, packed (see
    /// [`Generated::conversions`]).
    fn seed(&self) -> Vec<u8> {
        let total = 2 * self.size();
        self.progress
            .begin(&format!("{} seed", self.index.material()), total);
        let chunks: Vec<(u32, Vec<u8>)> = (0..total.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(
                || (MoveList::new(), Vec::with_capacity(64)),
                |(moves, kids), chunk| {
                    let lo = chunk * CHUNK;
                    let hi = (lo + CHUNK).min(total);
                    let mut max = 0;
                    let mut packed = vec![0u8; (hi - lo).div_ceil(4) as usize];
                    if self.progress.cancelled() {
                        return (max, packed);
                    }
                    let mut decoder = Decoder::new(&self.index);
                    for slot in lo..hi {
                        let (turn, i) = self.index.split_slot(slot);
                        let board = decoder.decode_legal(&self.index, i, turn);
                        let pos = self.position_of(turn, i, board);
                        let (d, conversion) = self.seed_one(slot, pos, moves, kids);
                        if let Some(d) = d {
                            max = max.max(d);
                        }
                        let k = (slot - lo) as usize;
                        packed[k / 4] |= conversion << (2 * (k % 4));
                    }
                    self.progress.advance(hi - lo);
                    (max, packed)
                },
            )
            .collect();
        let max = chunks.iter().map(|c| c.0).max().unwrap_or(0);
        self.max_distance.fetch_max(max, Ordering::Relaxed);
        self.progress.end();
        let mut conversions = Vec::with_capacity(total.div_ceil(4) as usize);
        for (_, packed) in chunks {
            conversions.extend_from_slice(&packed);
        }
        conversions
    }

    /// Seeds one slot; returns the distance of a (tentative) decided value and the
    /// conversion code of the slot (see [`Generated::conversions`]).
    fn seed_one(
        &self,
        slot: u64,
        pos: Option<Position>,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> (Option<u32>, u8) {
        let (d, best_conversion) = self.seed_slot(slot, pos, moves, kids);
        (d, best_conversion.map_or(0, |v| conversion_code(v.wdl())))
    }

    /// Seeds one slot; returns the distance of a (tentative) decided value and the value
    /// of the best conversion, if any.
    fn seed_slot(
        &self,
        slot: u64,
        pos: Option<Position>,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> (Option<u32>, Option<Value>) {
        let s = slot as usize;
        let Some(pos) = pos else {
            self.codes[s].store(UNUSED, Ordering::Relaxed);
            return (None, None);
        };
        // Quiet successors are counted as distinct indices; only where two moves may reach
        // one index (see `successors_may_coincide`) must they be encoded to tell.
        let (quiet, best_conversion) =
            if self.index.successors_may_coincide(pos.board(), pos.turn()) {
                match self.seed_moves_dedup(slot, &pos, moves, kids) {
                    Some(r) => r,
                    None => return (None, None),
                }
            } else {
                // the quiet moves are counted in bulk; only conversions are played
                let mut best_conversion: Option<Value> = None;
                let mut error = None;
                let quiet = pos.count_quiet_and_each_conversion(|m| {
                    match self.sub.value(&pos.play_unchecked(&m)) {
                        Ok(v) => {
                            let v = v.parent();
                            best_conversion = Some(best_conversion.map_or(v, |b| b.max(v)));
                            // nothing wins faster: the quiet moves need no count
                            v != Value::Win(1)
                        }
                        Err(e) => {
                            error = Some(e);
                            false
                        }
                    }
                });
                match (quiet, error) {
                    (Some(quiet), None) => (quiet as usize, best_conversion),
                    (None, None) if best_conversion == Some(Value::Win(1)) => (0, best_conversion),
                    (_, e) => {
                        self.fail(e.unwrap_or_else(|| {
                            GenError::Inconsistent("conversion search stopped".to_string())
                        }));
                        return (None, None);
                    }
                }
            };
        if quiet == 0 && best_conversion.is_none() {
            // mate or stalemate: the rules decide
            let v = Value::of_ended(&pos, self.rules).unwrap_or(Value::Draw);
            if v != Value::Draw {
                self.decide(s, code_of(v));
                return (v.dtm(), None);
            }
            self.codes[s].store(SAVED, Ordering::Relaxed);
            return (None, None);
        }
        match best_conversion {
            Some(v @ Value::Win(d)) => {
                if d > MAX_DTM {
                    self.fail(GenError::TooLong(self.index.material()));
                    return (None, None);
                }
                self.decide(s, code_of(v));
                (Some(d), best_conversion)
            }
            Some(Value::Draw) => {
                self.codes[s].store(SAVED, Ordering::Relaxed);
                (None, best_conversion)
            }
            loss => {
                if quiet == 0 {
                    // only conversions, all losing
                    let v = loss.expect("a move exists");
                    if v.dtm().unwrap_or(0) > MAX_DTM {
                        self.fail(GenError::TooLong(self.index.material()));
                        return (None, None);
                    }
                    self.decide(s, code_of(v));
                    (v.dtm(), best_conversion)
                } else if quiet > MAX_OPEN_COUNT {
                    self.fail(GenError::Inconsistent(format!(
                        "{} has {quiet} quiet moves, more than {MAX_OPEN_COUNT}",
                        Fen::from_position(&pos)
                    )));
                    (None, None)
                } else {
                    let state = open_state(quiet as u16, best_conversion.is_some());
                    self.codes[s].store(state, Ordering::Relaxed);
                    (None, best_conversion)
                }
            }
        }
    }

    /// The quiet successors (distinct indices) and the best conversion of a position
    /// whose moves may reach one index twice; `None` after a failure.
    fn seed_moves_dedup(
        &self,
        slot: u64,
        pos: &Position,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> Option<(usize, Option<Value>)> {
        let mut best_conversion: Option<Value> = None;
        kids.clear();
        pos.legal_moves_into(moves);
        let (_, i) = self.index.split_slot(slot);
        let fixed = !self.index.may_be_mirror(i);
        for m in moves.iter() {
            if m.is_conversion() {
                let child = pos.play_unchecked(m);
                let v = match self.sub.value(&child) {
                    Ok(v) => v.parent(),
                    Err(e) => {
                        self.fail(e);
                        return None;
                    }
                };
                best_conversion = Some(best_conversion.map_or(v, |b| b.max(v)));
            } else {
                let piece = Piece {
                    color: pos.turn(),
                    role: m.role,
                };
                match self.slot_after(
                    i,
                    pos.board(),
                    fixed,
                    piece,
                    m.from,
                    m.to,
                    !pos.turn(),
                    || pos.play_unchecked(m),
                ) {
                    Ok(k) => kids.push(k),
                    Err(child) => {
                        self.fail(GenError::Inconsistent(format!(
                            "no index for {} after {m} in {}",
                            Fen::from_position(&child),
                            Fen::from_position(pos)
                        )));
                        return None;
                    }
                }
            }
        }
        kids.sort_unstable();
        kids.dedup();
        Some((kids.len(), best_conversion))
    }

    fn retrograde(&self) {
        /// Blocks a task.
        const GROUP: u64 = 16;
        let blocks = self.marks[0].len() as u64;
        let total = 2 * self.size();
        let mut n: u32 = 0;
        loop {
            let max = self.max_distance.load(Ordering::Relaxed);
            if n > max || self.failed() || self.progress.cancelled() {
                break;
            }
            let want = (n + 1) as u16;
            let bit = 1u64 << (n % 64);
            let marks = self.marks_for(n);
            let frontier = &self.frontier[(n % 2) as usize];
            let frontier_blocks = &self.frontier_blocks[(n % 2) as usize];
            // by the side to move in the positions that win at n + 1
            let pull = if n % 2 == 0 {
                [Color::White, Color::Black].map(|c| self.pull_pays(c, n))
            } else {
                [false; 2]
            };
            // by the side to move in the losses: whose predecessors are pulled, not pushed
            let size = self.size();
            let skip = |slot: u64| pull[usize::from(slot < size)];
            self.progress
                .begin(&format!("{} ply {n}", self.index.material()), total);
            (0..blocks.div_ceil(GROUP)).into_par_iter().for_each_init(
                || {
                    (
                        Vec::with_capacity(64),
                        MoveList::new(),
                        Decoder::new(&self.index),
                        Vec::with_capacity(1 << MARK_SHIFT),
                    )
                },
                |(preds, moves, decoder, found), group| {
                    let first = group * GROUP;
                    let end = (first + GROUP).min(blocks);
                    if self.progress.cancelled() {
                        return;
                    }
                    for block in first..end {
                        let marked = marks[block as usize].load(Ordering::Relaxed) & bit != 0;
                        let listed = has_bit(frontier_blocks, block);
                        if !marked && !listed {
                            continue;
                        }
                        let start = block << MARK_SHIFT;
                        let stop = (start + (1 << MARK_SHIFT)).min(total);
                        // The slots at `n` of the block, in order: in a word marked for
                        // `n` every slot is read (listed or not; a scan not broken by the
                        // propagation's random accesses streams from memory), in another
                        // only the listed ones.
                        found.clear();
                        let words = (start / 64) as usize..stop.div_ceil(64) as usize;
                        let word_marks = &self.word_marks[words.clone()];
                        for ((w, listed_bits), word_mark) in
                            words.clone().zip(&frontier[words]).zip(word_marks)
                        {
                            if marked && word_mark.load(Ordering::Relaxed) & bit != 0 {
                                if listed {
                                    listed_bits.store(0, Ordering::Relaxed);
                                }
                                let lo = w * 64;
                                let hi = (lo + 64).min(stop as usize);
                                // branch-free: the loads of the word overlap
                                let mut bits = 0u64;
                                for (k, c) in self.codes[lo..hi].iter().enumerate() {
                                    bits |= u64::from(c.load(Ordering::Relaxed) == want) << k;
                                }
                                while bits != 0 {
                                    found.push((lo + bits.trailing_zeros() as usize) as u64);
                                    bits &= bits - 1;
                                }
                            } else if listed {
                                let mut bits = listed_bits.load(Ordering::Relaxed);
                                if bits == 0 {
                                    continue;
                                }
                                listed_bits.store(0, Ordering::Relaxed);
                                while bits != 0 {
                                    let slot = w as u64 * 64 + u64::from(bits.trailing_zeros());
                                    bits &= bits - 1;
                                    debug_assert_eq!(
                                        self.codes[slot as usize].load(Ordering::Relaxed),
                                        want
                                    );
                                    found.push(slot);
                                }
                            }
                        }
                        for &slot in found.iter() {
                            if !skip(slot) {
                                self.propagate(slot, n, preds, moves, decoder);
                            }
                        }
                    }
                    self.progress.advance((end - first) << MARK_SHIFT);
                },
            );
            // every slot listed for `n` is done (its bit cleared above)
            frontier_blocks
                .iter()
                .for_each(|w| w.store(0, Ordering::Relaxed));
            self.progress.end();
            for c in [Color::White, Color::Black] {
                if pull[c.index()] {
                    self.pull_wins(c, n);
                }
            }
            n += 1;
        }
    }

    /// Whether the loss pass `n` should find the wins of `turn` at `n + 1` by pulling
    /// ([`Generator::pull_wins`]) rather than by pushing from each loss of the other side.
    ///
    /// A push visits every quiet predecessor of every loss (about as many as a position
    /// has moves), most of them long decided once a table is half done; a pull visits
    /// the moves of every position of `turn` still open, and stops at the first that
    /// reaches a loss. So a pull pays once fewer positions are open than are lost at `n`.
    fn pull_pays(&self, turn: Color, n: u32) -> bool {
        match self.loss_passes {
            LossPasses::Push => return false,
            LossPasses::Pull => return n > 0,
            LossPasses::Auto => {}
        }
        if n == 0 {
            return false;
        }
        let size = self.size();
        let want = (n + 1) as u16;
        let win = (n + 2) as u16;
        let losses = self.index.slot(!turn, 0)..self.index.slot(!turn, size);
        // The losses at `n` are in the blocks listed or marked for `n`: first a bound,
        // every slot of those blocks. A push of a few losses costs less than the scans.
        let frontier_blocks = &self.frontier_blocks[(n % 2) as usize];
        let bit = 1u64 << (n % 64);
        let marks = self.marks_for(n);
        let has_losses = |block: u64| {
            marks[block as usize].load(Ordering::Relaxed) & bit != 0
                || has_bit(frontier_blocks, block)
        };
        let blocks = |slots: &std::ops::Range<u64>| {
            slots.start >> MARK_SHIFT..slots.end.div_ceil(1 << MARK_SHIFT)
        };
        let bound = blocks(&losses)
            .into_par_iter()
            .filter(|&b| has_losses(b))
            .count() as u64;
        if bound << MARK_SHIFT < size / PULL_MIN_SHARE {
            return false;
        }
        // Both counts from a sample of the blocks (one in 64, spread by a hash): a scan
        // of every block, twice each loss pass, would cost more than a pull saves.
        let sampled = |b: u64| b.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58 == 0;
        let count = |slots: std::ops::Range<u64>,
                     keep: &(dyn Fn(u64) -> bool + Sync),
                     f: &(dyn Fn(u16) -> bool + Sync)| {
            blocks(&slots)
                .into_par_iter()
                .filter(|&b| sampled(b) && keep(b))
                .map(|b| {
                    let r = block_slots(b, &slots);
                    self.codes[r.start as usize..r.end as usize]
                        .iter()
                        .filter(|c| f(c.load(Ordering::Relaxed)))
                        .count() as u64
                })
                .sum::<u64>()
        };
        let lost = count(losses, &has_losses, &|c| c == want);
        if lost == 0 {
            return false;
        }
        let open = count(
            self.index.slot(turn, 0)..self.index.slot(turn, size),
            &|b| has_bit(&self.pull_blocks, b),
            &|c| may_win_at(c, win),
        );
        open * PULL_RATIO_DEN < PULL_RATIO_NUM * lost
    }

    /// The pull half of loss pass `n`: every position of `turn` that is not yet known to
    /// win by `n + 1` wins in `n + 1` if one of its quiet moves reaches a position lost
    /// at `n`. The same wins a push from those losses finds (a move that leaves the
    /// mover's shah in check reaches an unused slot, never a loss).
    fn pull_wins(&self, turn: Color, n: u32) {
        /// Blocks a task.
        const GROUP: u64 = 16;
        let slots = self.index.slot(turn, 0)..self.index.slot(turn, self.size());
        let first = slots.start >> MARK_SHIFT;
        let blocks = slots.end.div_ceil(1 << MARK_SHIFT) - first;
        let win = (n + 2) as u16;
        self.progress.begin(
            &format!("{} ply {n} (pull)", self.index.material()),
            blocks << MARK_SHIFT,
        );
        (0..blocks.div_ceil(GROUP)).into_par_iter().for_each_init(
            || Decoder::new(&self.index),
            |decoder, group| {
                if self.progress.cancelled() {
                    return;
                }
                let mut won = false;
                let group_blocks =
                    first + group * GROUP..(first + (group + 1) * GROUP).min(first + blocks);
                for b in group_blocks.clone() {
                    if !has_bit(&self.pull_blocks, b) {
                        continue;
                    }
                    let r = block_slots(b, &slots);
                    let mut open = false;
                    for slot in r.clone() {
                        let cell = &self.codes[slot as usize];
                        if !may_win_at(cell.load(Ordering::Relaxed), win) {
                            continue;
                        }
                        let i = slot - slots.start;
                        let Some(board) = decoder.decode(&self.index, i) else {
                            return self.fail(GenError::Inconsistent(format!(
                                "slot {slot} holds a state but names no position"
                            )));
                        };
                        match self.reaches_loss(i, &board, turn, n) {
                            Ok(false) => open = true,
                            Ok(true) => {
                                // this thread alone writes the slots of its blocks
                                cell.store(win, Ordering::Relaxed);
                                self.list(slot, n + 1);
                                won = true;
                            }
                            Err(next) => {
                                return self.fail(GenError::Inconsistent(format!(
                                    "no index for successor {} of slot {slot}",
                                    Fen::from_position(&next)
                                )));
                            }
                        }
                    }
                    // a block shared with the other side's slots keeps its bit
                    if !open && r.end - r.start == 1 << MARK_SHIFT {
                        self.pull_blocks[(b / 64) as usize]
                            .fetch_and(!(1 << (b % 64)), Ordering::Relaxed);
                    }
                }
                if won {
                    self.reach(n + 1);
                }
                self.progress
                    .advance((group_blocks.end - group_blocks.start) << MARK_SHIFT);
            },
        );
        self.progress.end();
    }

    /// Whether a quiet move of `turn` on `board` (index `i`) reaches a position lost at
    /// `n`. Moves are not checked for legality: one that leaves the mover's shah in check
    /// reaches a slot no position uses. On an inconsistency (a successor without an
    /// index), returns that successor.
    #[inline]
    fn reaches_loss(&self, i: u64, board: &Board, turn: Color, n: u32) -> Result<bool, Position> {
        let loss = (n + 1) as u16;
        let fixed = !self.index.may_be_mirror(i);
        let occ = board.occupied();
        let empty = !occ;
        let forward = turn.fold(1, -1);
        let last_rank = Bitboard::rank(turn.fold(7, 0));
        let other_shah = board
            .shah_of(!turn)
            .map_or(Bitboard::EMPTY, attacks::shah_attacks);
        for from in board.by_color(turn) {
            let role = board.role_at(from).expect("occupied");
            let targets = match role {
                Role::Shah => attacks::shah_attacks(from) & empty & !other_shah,
                Role::Pawn => {
                    from.offset(0, forward)
                        .map_or(Bitboard::EMPTY, Bitboard::from_square)
                        & empty
                        & !last_rank
                }
                _ => attacks::attacks(role, turn, from, occ) & empty,
            };
            let piece = Piece { color: turn, role };
            for to in targets {
                let k = self.slot_after(i, board, fixed, piece, from, to, !turn, || {
                    let mut after = *board;
                    after.move_piece(turn, role, from, to, role);
                    Position::placement(after, !turn)
                })?;
                if self.codes[k as usize].load(Ordering::Relaxed) == loss {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Pushes the slot of every quiet predecessor of `pos` (index `i`) to `preds`: the
    /// positions [`Position::for_each_unmove`] gives for [`UnMoveKinds::QUIET`], one entry
    /// per un-move. Un-moves of pieces other than the shah are checked for legality and
    /// indexed by arithmetic on `i`, without building the position before. On an
    /// inconsistency (a predecessor without an index), returns that predecessor.
    fn quiet_predecessors(
        &self,
        pos: &Position,
        i: u64,
        preds: &mut Vec<u64>,
    ) -> Result<(), Position> {
        let start = preds.len();
        let mover = !pos.turn();
        if self.index.may_be_mirror(i) {
            let mut bad = None;
            pos.for_each_unmove(UnMoveKinds::QUIET, |_, prev| match self.slot_of(&prev) {
                Some(p) => preds.push(p),
                None => bad = Some(prev),
            });
            return bad.map_or(Ok(()), Err);
        }
        let board = pos.board();
        let occ = board.occupied();
        let empty = !occ;
        // the side to move now, which must not be in check before the un-move
        let victim = pos.shah(pos.turn());
        let rooks = board.by_piece(Piece {
            color: mover,
            role: Role::Rook,
        });
        // pieces that check the victim now by a leap: no un-move of another piece
        // removes that check
        let leapers = board.attackers_to(victim, mover, occ) & !rooks;
        let back = mover.fold(-1, 1);
        let first_rank = Bitboard::rank(mover.fold(0, 7));
        for to in board.by_color(mover) {
            let role = board.role_at(to).expect("occupied");
            if role == Role::Shah || leapers.without(to).any() {
                continue;
            }
            // a leaper must not have checked the victim from where it comes
            let checking = if role == Role::Rook {
                Bitboard::EMPTY
            } else {
                attacks::attacks(role, !mover, victim, occ)
            };
            let from_set = if role == Role::Pawn {
                to.offset(0, back)
                    .map_or(Bitboard::EMPTY, Bitboard::from_square)
                    & empty
                    & !first_rank
            } else {
                attacks::attacks(role, mover, to, occ) & empty
            } & !checking;
            let piece = Piece { color: mover, role };
            let other_rooks = rooks.without(to);
            for from in from_set {
                let occ_before = occ.without(to).with(from);
                if (role == Role::Rook && attacks::rook_attacks(from, occ_before).contains(victim))
                    || rook_checks(other_rooks, victim, occ_before)
                {
                    continue;
                }
                let k = self.index.index_after_move(i, board, piece, to, from);
                preds.push(self.index.slot(mover, k));
            }
        }
        // A shah un-move leaves every leaper where it is (no check by one may remain), and
        // the shah, apart from the victim, gives no check: only a rook's line, opened or
        // closed by the shah, can.
        let shah = pos.shah(mover);
        let shah_from = if leapers.any() {
            Bitboard::EMPTY
        } else {
            attacks::shah_attacks(shah) & empty
        };
        for from in shah_from {
            if from.distance(victim) <= 1
                || rook_checks(rooks, victim, occ.without(shah).with(from))
            {
                continue;
            }
            if let Some(k) = self.shah_move_index(i, board, mover, from) {
                preds.push(self.index.slot(mover, k));
                continue;
            }
            let mut before = *board;
            before.move_piece(mover, Role::Shah, shah, from, Role::Shah);
            debug_assert!(!before.attackers_to(victim, mover, before.occupied()).any());
            let prev = Position::from_board_unchecked(before, mover);
            match self.slot_of(&prev) {
                Some(p) => preds.push(p),
                None => return Err(prev),
            }
        }
        #[cfg(debug_assertions)]
        {
            let mut fast = preds[start..].to_vec();
            let mut slow = Vec::new();
            pos.for_each_unmove(UnMoveKinds::QUIET, |_, prev| {
                slow.push(self.slot_of(&prev).expect("a predecessor has an index"));
            });
            fast.sort_unstable();
            slow.sort_unstable();
            debug_assert_eq!(fast, slow, "predecessors of {}", Fen::from_position(pos));
        }
        let _ = start;
        Ok(())
    }

    /// Spreads the value of a position decided at distance `n` to its predecessors.
    ///
    /// Out of line, as it was before the pass loop grew: that loop stays small, and
    /// profiles show the two apart.
    #[inline(never)]
    fn propagate(
        &self,
        slot: u64,
        n: u32,
        preds: &mut Vec<u64>,
        moves: &mut MoveList,
        decoder: &mut Decoder,
    ) {
        let (turn, i) = self.index.split_slot(slot);
        let Some(board) = decoder.decode(&self.index, i) else {
            return self.fail(GenError::Inconsistent(format!(
                "slot {slot} holds a value but names no position"
            )));
        };
        let pos = Position::from_board_unchecked(board, turn);
        let mover = !pos.turn();
        preds.clear();
        if let Err(prev) = self.quiet_predecessors(&pos, i, preds) {
            self.fail(GenError::Inconsistent(format!(
                "no index for predecessor {} of {}",
                Fen::from_position(&prev),
                Fen::from_position(&pos)
            )));
            return;
        }
        // Two un-moves reach one index only where two moves could (the same geometry).
        if self.index.successors_may_coincide(pos.board(), mover) {
            preds.sort_unstable();
            preds.dedup();
        }
        if n % 2 == 0 {
            // a loss at n: every predecessor wins in n + 1 at most
            if n + 1 > MAX_DTM {
                self.fail(GenError::TooLong(self.index.material()));
                return;
            }
            let win = (n + 2) as u16;
            // Plain loads first: their cache misses overlap, where a locked
            // compare-exchange would wait for each in turn.
            let mut seen = [0u16; 64];
            for (k, &p) in preds.iter().enumerate().take(seen.len()) {
                seen[k] = self.codes[p as usize].load(Ordering::Relaxed);
            }
            for (k, &p) in preds.iter().enumerate() {
                let cell = &self.codes[p as usize];
                let mut cur = seen
                    .get(k)
                    .copied()
                    .unwrap_or_else(|| cell.load(Ordering::Relaxed));
                // exactly one thread decides it, and lists it for the next ply
                while may_win_at(cur, win) {
                    match cell.compare_exchange_weak(cur, win, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => {
                            self.list(p, n + 1);
                            break;
                        }
                        Err(now) => cur = now,
                    }
                }
            }
            self.reach(n + 1);
        } else {
            // a win at n: one more successor of each predecessor is lost for it (plain
            // loads first, as above)
            let mut open = [false; 64];
            for (k, &p) in preds.iter().enumerate().take(open.len()) {
                open[k] = is_open(self.codes[p as usize].load(Ordering::Relaxed));
            }
            for (k, &p) in preds.iter().enumerate() {
                let cell = &self.codes[p as usize];
                // In a pass of wins a state leaves "open" only when the thread that counts
                // its last successor settles it, and this successor is not counted yet:
                // an open state seen here is still open.
                let is_open_now = open
                    .get(k)
                    .copied()
                    .unwrap_or_else(|| is_open(cell.load(Ordering::Relaxed)));
                if !is_open_now {
                    continue;
                }
                let old = cell.fetch_sub(2, Ordering::AcqRel);
                debug_assert!(is_open(old) && old >= open_state(1, false), "state {old}");
                if old >> 1 == open_state(1, false) >> 1 {
                    self.settle_loss(p, n, old & 1 == 1, moves);
                }
            }
        }
    }

    /// A position all of whose quiet successors now win for the opponent, the last at
    /// distance `n` (wins are spread in order of distance): it is lost, as late as its
    /// best successor allows. Only its conversions can resist longer than `n`, and the
    /// seed recorded whether it has any (`has_conversion`).
    fn settle_loss(&self, slot: u64, n: u32, has_conversion: bool, moves: &mut MoveList) {
        let mut worst: u32 = n;
        if has_conversion {
            let pos = self.used_position_at(slot);
            let mut error = None;
            pos.for_each_conversion(|m| match self.sub.value(&pos.play_unchecked(&m)) {
                Ok(Value::Win(d)) => {
                    worst = worst.max(d);
                    true
                }
                Ok(v) => {
                    error = Some(GenError::Inconsistent(format!(
                        "{} counted as lost but conversion {m} gives {v}",
                        Fen::from_position(&pos)
                    )));
                    false
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            });
            if let Some(e) = error {
                return self.fail(e);
            }
        }
        #[cfg(debug_assertions)]
        self.check_loss(slot, n, worst, moves);
        let _ = moves;
        let loss = worst + 1;
        if loss > MAX_DTM {
            return self.fail(GenError::TooLong(self.index.material()));
        }
        if loss == n + 1 {
            self.codes[slot as usize].store(code_of(Value::Loss(loss)), Ordering::Relaxed);
            self.list(slot, loss);
        } else {
            self.decide(slot as usize, code_of(Value::Loss(loss)));
        }
        self.reach(loss);
    }

    /// Checks a loss that [`Generator::settle_loss`] found by forward generation (debug
    /// builds): every move wins for the opponent, quiet ones by `n` at most, and the
    /// longest win is `worst`.
    #[cfg(debug_assertions)]
    fn check_loss(&self, slot: u64, n: u32, worst: u32, moves: &mut MoveList) {
        let pos = self.used_position_at(slot);
        let (_, i) = self.index.split_slot(slot);
        let fixed = !self.index.may_be_mirror(i);
        pos.legal_moves_into(moves);
        let mut longest = n;
        let mut quiet_at_n = false;
        for m in moves.iter() {
            let v = if m.is_conversion() {
                self.sub
                    .value(&pos.play_unchecked(m))
                    .expect("a sub-table read once reads again")
            } else {
                let piece = Piece {
                    color: pos.turn(),
                    role: m.role,
                };
                let k = self
                    .slot_after(
                        i,
                        pos.board(),
                        fixed,
                        piece,
                        m.from,
                        m.to,
                        !pos.turn(),
                        || pos.play_unchecked(m),
                    )
                    .expect("a successor has an index");
                let code = self.codes[k as usize].load(Ordering::Relaxed);
                assert!(is_decided(code), "{pos:?}: {m} undecided");
                let v = Value::from_dtm_code(code);
                quiet_at_n |= v == Value::Win(n);
                v
            };
            match v {
                Value::Win(d) if d <= n || m.is_conversion() => longest = longest.max(d),
                _ => panic!("{pos:?} counted as lost at ply {n} but {m} gives {v}"),
            }
        }
        assert!(quiet_at_n, "{pos:?}: no quiet successor wins at {n}");
        assert_eq!(longest, worst, "{pos:?}");
    }
}

/// `n` zeroed atomics (`Default` is zero), on huge pages where the system allows: the ply
/// passes reach them at random, and 2 MiB pages spare most of the TLB misses.
fn zeroed<A: Default>(n: usize) -> Vec<A> {
    let mut v: Vec<A> = Vec::with_capacity(n);
    advise_huge_pages(v.as_mut_ptr().cast(), n * std::mem::size_of::<A>());
    v.resize_with(n, A::default);
    v
}

/// Asks the kernel to back the 2 MiB-aligned part of `[ptr, ptr + len)` with huge pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: `[start, end)` lies inside an allocation this process owns (the caller's
        // reserved capacity). MADV_HUGEPAGE only changes how the kernel backs those pages,
        // never what they hold or whether they are mapped; if the kernel refuses (huge
        // pages disabled) nothing changes, so the result is ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

/// Generates one table in memory.
pub fn generate(
    material: Material,
    rules: RuleSet,
    sub: &dyn SubTables,
    progress: &dyn Progress,
) -> Result<Generated, GenError> {
    Generator::new(material, rules, sub, progress).run()
}
