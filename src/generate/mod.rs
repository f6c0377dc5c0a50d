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
//! undecided at the end is a draw (code 0). The states are kept a byte a slot
//! ([`Cells`]): the 254 most common ones ([`GEN_ALPHABET`]) as their own bytes, the rest
//! (distances past 124 plies, counts past 62) in a map beside the array.
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
//!
//! The files of this module: `state.rs` (the state codes), `decoder.rs` (index to board),
//! `generator.rs` ([`Generator`] and its run), `seed.rs`, `passes.rs` (ply passes that
//! push), `pull.rs` (loss passes that pull), `stats.rs` (the table's figures),
//! `files.rs` (generating into a directory, writing and verifying files), `memory.rs`
//! (tables in memory), `plan.rs` (the jobs of a run and their estimates), `budget.rs`
//! (a table's needs against the memory limit and the free disk), `manifest.rs` (the
//! MANIFEST of a folder).

use crate::color::Color;
use crate::material::Material;
use crate::position::Position;
use crate::rules::RuleSet;
use crate::value::Value;

pub mod budget;
pub mod cells;
mod decoder;
pub mod digit_order;
pub mod dtz;
pub mod files;
mod generator;
pub mod manifest;
pub mod memory;
mod passes;
pub mod plan;
mod pull;
mod seed;
mod sliced;
mod state;
pub mod stats;

pub use cells::{Alphabet, Cells};
pub use generator::{Generator, LossPasses, Zeroed, ZeroedVec};
use state::packed_conversion;
pub(crate) use state::wdl_values_in_place;
pub use state::{GEN_ALPHABET, MAX_DTM, UNUSED, gen_alphabet, wdl_code};
pub use stats::{Longest, SideStats, TableStats};

/// Whether the cross-checks of debug builds (a fast path against the slow one it stands
/// for: index arithmetic against encoding, the decoder against the index's own decode,
/// un-moves built from bitboards against the retro move generator, a loss against its
/// forward moves) look at index or slot `x`. They look at one in eight, picked by a
/// multiplicative hash, so every pass of every table is still checked at positions
/// spread over its whole index, while the test build (which has debug assertions and
/// generates every table the tests read) makes the 4-man set in 1.6 times the release
/// build's time, where checking every position took 2.8 times. A fast path
/// that is wrong for a kind of position is wrong at many of them, and the tests compare
/// every table with the forward move generator (`verify`) and with a naive solver too.
#[inline]
pub(crate) fn cross_checked(x: u64) -> bool {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 == 0
}

/// Where the generator looks up positions after a capture or a promotion.
pub trait SubTables: Sync {
    /// The value of any position of a smaller material (or one the rules decide).
    fn value(&self, pos: &Position) -> Result<Value, GenError>;

    /// The category of such a position under the move rule of the run (without one, its
    /// plain win, draw or loss).
    fn category(&self, pos: &Position) -> Result<crate::value::Category, GenError> {
        Ok(files::plain_category(self.value(pos)?))
    }
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
    /// A table (or a run) would not fit the memory limit or the free disk, and was not
    /// started: no file was written.
    Refused(budget::Refusal),
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
            GenError::Refused(r) => write!(f, "{r}"),
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
    /// Codes for White to move (`0..size`), then Black to move (`size..2 * size`), a
    /// byte a slot where they fit (see [`Cells`]).
    pub codes: Cells,
    /// The result of each slot's best conversion (capture or promotion), for the side to
    /// move, two bits a slot (slot `s` at bits `2 * (s % 4)` of byte `s / 4`): 0 when it
    /// has none (or the slot is unused), else 1 + loss 0 / draw 1 / win 2.
    pub conversions: ZeroedVec<u8>,
    pub stats: TableStats,
    /// Slots whose state did not fit a byte (see [`Cells`]): the more of those left
    /// after the seed and after the last ply pass.
    pub spilled: usize,
    pub seconds: f64,
}

impl Generated {
    /// The value at an index of one side, `None` for an unused index.
    #[must_use]
    pub fn value_at(&self, turn: Color, index: u64) -> Option<Value> {
        let n = self.codes.len() as u64 / 2;
        let code = self.codes.load((turn.index() as u64 * n + index) as usize);
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
        values.to_vec()
    }
}

/// Generates one table in memory.
pub fn generate(
    material: Material,
    rules: RuleSet,
    sub: &dyn SubTables,
    progress: &dyn Progress,
) -> Result<Generated, GenError> {
    Generator::new(material, rules, sub, progress).run()
}
