//! DTZ: plies to the next zeroing move (a capture or a pawn move) or to the end of the
//! game, for every decided position of one table, by a retrograde over the moves that are
//! not zeroing, once the table's win, draw or loss is known.
//!
//! Win, draw and loss are those of the game without the move rule (the table's WDL), so
//! the winner only ever moves into a loss and the loser into a win: the retrograde needs
//! no draws. A zeroing move is a leaf, valued by the child's category under the move rule
//! with its count started afresh: a leaf into a loss is a win in 1 ply, into a win a loss
//! in 1, and under `move-rule=70` a leaf into a blessed loss (cursed win) counts 141 plies,
//! so that every value above 140 is a cursed win (blessed loss) and the smallest value is
//! the best (see [`crate::value::Dtz`]). Then, pass by pass over distances `d = 0, 1, ...`:
//! each position decided at `d` is a child of its predecessors by moves that are not
//! zeroing (un-moves of pieces other than pawns); a predecessor of a loss at `d` wins in
//! `d + 1` at most, and a predecessor of a win at `d` that loses has one reply fewer left
//! to try; after its last one, it loses at `d + 1`, or later if a zeroing reply (a leaf)
//! holds out longer. Once the wins of a pass outnumber the losses still open, the wins
//! stop pushing: each open loss instead looks at its own replies (a pull), and loses one
//! ply after its longest once all of them are decided. Likewise, once the losses of a
//! pass outnumber the wins still open, the losses stop pushing: each open win looks for a
//! reply that does not zero into a loss at `d` and wins in `d + 1` if it finds one. Both
//! pulls give the values the pushes would: on KRBvKP (most wins decided within four
//! plies, then about 180 M losses at 4 visiting their predecessors, nearly all of them
//! won already) the win pull took the DTZ from 71.8 s to 43.1 s on 2 cores, the file
//! byte for byte the same.
//!
//! The seed of a position reads the generator's best conversion where it tells the
//! leaves of captures and promotions (no sub-table has cursed values, or there is no move
//! rule): a win of a side without pawns is then seeded without decoding it, one with
//! pawns looks only at its pawns' steps, and a loss counts its moves that do not zero
//! without building them.
//!
//! A pawn move that neither captures nor promotes stays in the table, so under the move
//! rule its leaf depends on the table's own categories. A first round takes those leaves
//! to be plain (neither cursed nor blessed); if the table then has no cursed value, that
//! round is exact. Otherwise the retrograde runs again by *pawn advance* (each White pawn's
//! ranks above the second plus each Black pawn's below the seventh,
//! [`crate::index::TableIndex::pawn_advance`]), the most advanced stage first: a pawn's
//! step raises the advance by one and no other move within the table changes it, so every
//! leaf of a stage is in a stage already final, and each stage is a retrograde of its own
//! over the moves that do not zero. A table whose sub-tables have cursed values (KBPvKB,
//! whose promotions lead to KQBvKB) goes by pawn advance at once. On KBPvKB this took the
//! DTZ from 463 s (round after round of the whole table) to 91 s, the file byte for byte
//! the same.
//!
//! A table of up to 5 men without pawns whose leaves all count 1 ply starts its DTZ from
//! its DTM instead, where a sample of its wins says few zero at once: it
//! lowers only the positions a zeroing move shortens, and their predecessors in turn
//! ([`from_dtm`]; [`starts_from_dtm`] decides). On KNBvKB that took the DTZ from 35.8 s to
//! 11.7-12.8 s (2 cores), the file byte for byte the same.
//!
//! State: one 16-bit word a slot (the distance once decided; while open, the count of
//! replies left and whether a zeroing reply reaches a cursed win), plus the table's WDL in
//! two bits a slot, two bits a slot for the values given and not yet visited by their
//! pass and for the slots still open (`Frontier`) and, once the passes pull, a flag a
//! chunk for the open losses.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::cells::{Alphabet, Cells};
use super::decoder::Decoder;
use super::generator::CHUNK;
use super::state::UNUSED;
use super::{GenError, Generator, Progress, SubTables};
use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::fen::Fen;
use crate::material::Material;
use crate::position::{Move, MoveList, Position};
use crate::role::{Piece, Role};
use crate::rules::{MoveRule, RuleSet};
use crate::value::{Category, Value};

/// Longest DTZ a file can hold.
pub const MAX_DTZ: u32 = 0x7FFF;

/// A pass pulls once the wins at its distance outnumber the open losses this many times
/// (see [`Run::pull_pays`]).
const PULL_RATIO: u64 = 2;

/// The plies a zeroing move into a cursed win (a blessed loss) counts.
const CURSED_LEAF: u16 = 141;

/// The DTZ states kept in a byte: plies up to 171 (the cursed leaf's 141 and 30 more),
/// [`NONE`], [`WIN_OPEN`], open losses of up to 63 replies (15 if blessed). Any other
/// state spills (see [`Cells`]).
pub(crate) const DTZ_ALPHABET: Alphabet = Alphabet::new(
    172,
    &[
        (NONE, 1),
        (WIN_OPEN, 1),
        (LOSS_OPEN, 64),
        (LOSS_OPEN | BLESSED, 16),
    ],
);

/// A draw or an unused slot (no DTZ).
const NONE: u16 = 0xFFFF;
/// A win not yet decided.
const WIN_OPEN: u16 = 0xFFFE;
/// A loss not yet decided: `LOSS_OPEN | count`, with [`BLESSED`] if a zeroing reply
/// reaches a cursed win of the opponent.
const LOSS_OPEN: u16 = 0x8000;
const BLESSED: u16 = 0x4000;
const COUNT: u16 = 0x3FFF;

/// The table's WDL in two bits a slot.
const W_NONE: u8 = 0;
const W_MATED: u8 = 1;
const W_LOSS: u8 = 2;
const W_WIN: u8 = 3;

/// Packs the WDL of DTM codes (slot order; [`UNUSED`] for unused slots) two bits a slot:
/// what the DTZ retrograde needs once the codes are gone.
#[must_use]
pub fn pack_wdl(codes: &Cells) -> Vec<u8> {
    // written in place: a collect of unknown length would hold the pieces and the whole
    let mut packed = vec![0u8; codes.len().div_ceil(4)];
    packed
        .par_chunks_mut(4096)
        .enumerate()
        .for_each(|(c, out)| {
            for (j, b) in out.iter_mut().enumerate() {
                let first = (c * 4096 + j) * 4;
                for k in 0..(codes.len() - first).min(4) {
                    *b |= wdl_of_code(codes.load(first + k)) << (2 * k);
                }
            }
        });
    packed
}

/// [`pack_wdl`] of the slots of `ranges` only (each from and to a multiple of 4 slots),
/// in an array of the whole table whose other bytes are never touched.
pub(crate) fn pack_wdl_in(
    codes: &Cells,
    ranges: &[std::ops::Range<u64>],
) -> super::generator::ZeroedVec<u8> {
    let mut packed: super::generator::ZeroedVec<u8> =
        super::generator::zeroed(codes.len().div_ceil(4));
    for r in ranges {
        debug_assert!(r.start % 4 == 0 && (r.end % 4 == 0 || r.end == codes.len() as u64));
        let bytes = (r.start / 4) as usize..(r.end.div_ceil(4)) as usize;
        packed[bytes.clone()]
            .par_chunks_mut(4096)
            .enumerate()
            .for_each(|(c, out)| {
                for (j, b) in out.iter_mut().enumerate() {
                    let first = bytes.start * 4 + (c * 4096 + j) * 4;
                    for k in 0..(codes.len() - first).min(4) {
                        *b |= wdl_of_code(codes.load(first + k)) << (2 * k);
                    }
                }
            });
    }
    packed
}

/// The packed WDL ([`W_NONE`] and so on) of a DTM code.
#[inline]
fn wdl_of_code(c: u16) -> u8 {
    if c == UNUSED || c == 0 {
        W_NONE
    } else if c == 1 {
        W_MATED
    } else {
        match Value::from_dtm_code(c) {
            Value::Win(_) => W_WIN,
            _ => W_LOSS,
        }
    }
}

#[inline]
fn wdl_at(packed: &[u8], slot: u64) -> u8 {
    (packed[(slot / 4) as usize] >> (2 * (slot % 4))) & 3
}

pub use crate::stats::{DtzSideStats, DtzStats};

mod from_dtm;

/// The DTZ values of one table.
#[derive(Debug)]
pub struct DtzTable {
    pub material: Material,
    /// The whole rule set, the move rule included.
    pub rules: RuleSet,
    /// Plies of every decided slot (White to move, then Black to move); [`UNUSED`] for a
    /// draw or an unused slot.
    pub plies: Cells,
    /// One bit a slot: a win in 1 ply by a zeroing move (a capture, a promotion or a pawn
    /// move into a loss), which a reader can find by looking at those moves: a file may
    /// leave them out (see `files::write_dtz`). The retrograde's own array, not a copy
    /// (which, beside the plies, the WDL and the conversions, made the DTZ stage's peak).
    pub zeroing_wins: super::generator::ZeroedVec<AtomicU64>,
    pub stats: DtzStats,
    /// Slots whose plies did not fit a byte at the end (see [`Cells`]).
    pub spilled: usize,
    /// Rounds of the retrograde: two for a pawn table whose first round found cursed
    /// values (the second by pawn advance), otherwise one.
    pub rounds: u32,
    pub seconds: f64,
}

impl DtzTable {
    /// [`DtzTable::zeroing_wins`] as plain words, 64 slots a word.
    #[must_use]
    pub fn zeroing_win_words(&self) -> Vec<u64> {
        self.zeroing_wins
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }
}

/// How the leaves of captures and promotions are valued.
pub struct Leaves<'a> {
    /// The packed best conversion of each slot (see [`super::Generated::conversions`]),
    /// when the generator just made them: then no sub-table is probed.
    pub conversions: Option<&'a [u8]>,
    /// Whether some sub-table has cursed wins or blessed losses under the move rule:
    /// then conversions are probed for their category.
    pub cursed_subtables: bool,
    /// The table's DTM codes (in the WDL's slot order), when still held: then the first
    /// round starts from them where every zeroing move's leaf counts 1 ply (see
    /// [`from_dtm`]), and lowers only what zeroing moves shorten.
    pub dtm: Option<&'a Cells>,
}

/// Makes the DTZ of a table under `rules.move_rule` from its packed WDL ([`pack_wdl`]).
/// `buffer` becomes the state (and then the plies) if it has room for one value a slot,
/// so that the generator's codes, once written, need not be freed for a second array
/// the same size to be allocated (an empty one is fine).
pub fn generate_dtz(
    material: Material,
    rules: RuleSet,
    wdl: &[u8],
    leaves: Leaves<'_>,
    sub: &dyn SubTables,
    progress: &dyn Progress,
    buffer: Cells,
) -> Result<DtzTable, GenError> {
    generate_dtz_in(
        DTZ_ALPHABET,
        material,
        rules,
        wdl,
        leaves,
        sub,
        progress,
        buffer,
    )
}

/// [`generate_dtz`] with the states of `alphabet` kept in a byte (the others spill; the
/// table is the same).
#[allow(clippy::too_many_arguments)]
fn generate_dtz_in(
    alphabet: Alphabet,
    material: Material,
    rules: RuleSet,
    wdl: &[u8],
    leaves: Leaves<'_>,
    sub: &dyn SubTables,
    progress: &dyn Progress,
    buffer: Cells,
) -> Result<DtzTable, GenError> {
    let start = Instant::now();
    let part = generate_dtz_slice(
        alphabet, material, rules, wdl, leaves, sub, progress, None, buffer,
    )?;
    let g = Generator::new(material, rules, sub, progress)
        .index_scheme(1)
        .expect("scheme 1");
    Ok(DtzTable {
        material: g.index.material(),
        rules,
        plies: part.plies,
        zeroing_wins: part.zeroing_wins,
        stats: part.counts.finish(&g, rules.move_rule),
        spilled: part.spilled,
        rounds: part.rounds,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The DTZ of one slice of a table ([`crate::index::TableIndex::slices`]), in arrays of
/// the whole table of which only the slice's part is ever touched.
pub(crate) struct DtzSlice {
    /// The plies of the slice's slots (as [`DtzTable::plies`]); every other slot 0.
    pub plies: Cells,
    /// As [`DtzTable::zeroing_wins`], for the slice's slots.
    pub zeroing_wins: super::generator::ZeroedVec<AtomicU64>,
    /// The slice's figures.
    pub counts: DtzCounts,
    pub spilled: usize,
    pub rounds: u32,
}

/// The DTZ of the slice `slice` (indices of the generator's index,
/// [`crate::index::TableIndex::for_generation`]) of a table, from its packed WDL, whose
/// other slots are never read: no move within the table leaves a slice. Without a slice,
/// the whole table in the files' order. See [`generate_dtz`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn generate_dtz_slice(
    alphabet: Alphabet,
    material: Material,
    rules: RuleSet,
    wdl: &[u8],
    leaves: Leaves<'_>,
    sub: &dyn SubTables,
    progress: &dyn Progress,
    slice: Option<std::ops::Range<u64>>,
    buffer: Cells,
) -> Result<DtzSlice, GenError> {
    let g = slice_generator(material, rules, sub, progress, slice);
    let chunks = g.slice_chunks(CHUNK);
    let material = g.index.material();
    let has_pawns = material.has_pawns();
    // Under the move rule, a pawn's step is a leaf whose category is the table's own. A
    // first round takes every such leaf to be plain (not cursed); if the table then has
    // no cursed value, that was right. Otherwise (and from the start if a sub-table has
    // cursed values, so the table likely has some too) the retrograde runs by pawn
    // advance: the positions of the most advanced pawns first, since a step only ever
    // leads to a position of one advance more, whose values are then final.
    let cursed_possible = rules.move_rule != MoveRule::None && has_pawns;
    let mut by_advance = cursed_possible && leaves.cursed_subtables;
    let cursed_subtables = leaves.cursed_subtables;
    let mut rounds = 0;
    let mut zeroing_wins: super::generator::ZeroedVec<AtomicU64>;
    let mut buffer = buffer;
    let plies = loop {
        rounds += 1;
        zeroing_wins = super::generator::zeroed((2 * g.size()).div_ceil(64) as usize);
        let run = Run {
            alphabet: alphabet.clone(),
            chunks: &chunks,
            zeroing_wins: &zeroing_wins,
            g: &g,
            wdl,
            conversions: leaves.conversions,
            cursed_subtables,
            by_advance,
            move_rule: rules.move_rule,
            max: AtomicU32::new(0),
            open_losses: AtomicU64::new(0),
            wins_at: (0..=MAX_DTZ + 1).map(|_| AtomicU64::new(0)).collect(),
            losses_at: (0..=MAX_DTZ + 1).map(|_| AtomicU64::new(0)).collect(),
            open_wins: AtomicU64::new(0),
        };
        let plies = match leaves.dtm {
            Some(dtm) if !by_advance && leaves_count_one(rules, cursed_subtables) => {
                run.run_from_dtm(dtm)?
            }
            _ => run.run(buffer)?,
        };
        if !cursed_possible
            || by_advance
            || !chunks.par_iter().any(|(_, runs)| {
                runs.iter()
                    .flat_map(Clone::clone)
                    .any(|s| cursed(plies.load(s as usize)))
            })
        {
            break plies;
        }
        buffer = plies;
        by_advance = true;
    };
    let mut counts = DtzCounts::default();
    counts.add(&g, wdl, &plies, &chunks, rules.move_rule);
    let spilled = plies.spilled();
    Ok(DtzSlice {
        plies,
        zeroing_wins,
        counts,
        spilled,
        rounds,
    })
}

/// The generator of the slice `slice` of a table (its generator's indices), or of the
/// whole table in the files' order.
fn slice_generator<'a>(
    material: Material,
    rules: RuleSet,
    sub: &'a dyn SubTables,
    progress: &'a dyn Progress,
    slice: Option<std::ops::Range<u64>>,
) -> Generator<'a> {
    let mut g = Generator::new(material, rules, sub, progress);
    g.slice = match slice {
        Some(slice) => slice,
        None => {
            g = g.index_scheme(1).expect("scheme 1");
            0..g.size()
        }
    };
    g
}

/// Whether every zeroing move's leaf counts 1 ply in a table's first round: without the
/// move rule, or with it where no sub-table has cursed values (its own pawn steps count as
/// plain in that round).
fn leaves_count_one(rules: RuleSet, cursed_subtables: bool) -> bool {
    rules.move_rule == MoveRule::None || !cursed_subtables
}

/// Whether the DTZ of a table (or of the slice `slice`, as [`generate_dtz_slice`] takes
/// it) should start from its DTM codes `dtm` ([`Leaves::dtm`]): where every leaf counts 1
/// ply and few wins zero at once (see [`from_dtm`]). Looks at a sample of the wins.
#[allow(clippy::too_many_arguments)]
pub(crate) fn starts_from_dtm(
    material: Material,
    rules: RuleSet,
    wdl: &[u8],
    conversions: Option<&[u8]>,
    cursed_subtables: bool,
    dtm: &Cells,
    sub: &dyn SubTables,
    slice: Option<std::ops::Range<u64>>,
) -> Result<bool, GenError> {
    if !leaves_count_one(rules, cursed_subtables) || !super::plan::dtz_may_start_from_dtm(material)
    {
        return Ok(false);
    }
    let g = slice_generator(material, rules, sub, &super::NoProgress, slice);
    let chunks = g.slice_chunks(CHUNK);
    let run = Run {
        alphabet: DTZ_ALPHABET,
        chunks: &chunks,
        zeroing_wins: &[],
        g: &g,
        wdl,
        conversions,
        cursed_subtables,
        by_advance: false,
        move_rule: rules.move_rule,
        max: AtomicU32::new(0),
        open_losses: AtomicU64::new(0),
        wins_at: Vec::new(),
        losses_at: Vec::new(),
        open_wins: AtomicU64::new(0),
    };
    run.starting_from_dtm_pays(dtm)
}

/// Whether stored plies are over the move rule's count (cursed or blessed).
#[inline]
fn cursed(p: u16) -> bool {
    p != UNUSED && p >= CURSED_LEAF
}

/// Per chunk of [`CHUNK`] slots, which distances below 255 some slot of it was given
/// (bit `d`), and whether one of 255 or more was (bit 255): a pass of distance `d` reads
/// only the chunks marked for it, so a table with long distances does not read its whole
/// state once a ply. A value is only ever given at a distance above the pass under way, so
/// the marks need no clearing (a win lowered later leaves a mark that costs one read).
#[derive(Default)]
struct Marks([AtomicU64; 4]);

impl Marks {
    fn has(&self, d: u32) -> bool {
        let b = d.min(255);
        self.0[(b / 64) as usize].load(Ordering::Relaxed) >> (b % 64) & 1 != 0
    }
}

#[inline]
fn mark(marks: &[Marks], slot: u64, d: u32) {
    let b = d.min(255);
    let word = &marks[(slot / CHUNK) as usize].0[(b / 64) as usize];
    let bit = 1u64 << (b % 64);
    if word.load(Ordering::Relaxed) & bit == 0 {
        word.fetch_or(bit, Ordering::Relaxed);
    }
}

/// What a retrograde that decides its DTZ anew knows of the values given and not yet
/// visited: per chunk the distances given ([`Marks`]), and a bit a slot given a value
/// whose pass has not yet visited it. A pass reads only the set bits of the chunks
/// marked for it, not every slot: the values given by a pass are one ply longer (a leaf
/// longer still), so the bits set are those of about two passes. On KBPvKN (DTZ of up
/// to 64 plies) the scan of every slot of each marked chunk was most of the passes' time.
///
/// And a bit a slot still open (a win or a loss without a value yet), cleared when it is
/// given one: a pull reads the slots open or given a value not yet visited (a win
/// given a value by a leaf may still be lowered), not every slot of its chunks.
struct Frontier {
    marks: Vec<Marks>,
    pending: super::generator::ZeroedVec<AtomicU64>,
    open: super::generator::ZeroedVec<AtomicU64>,
}

impl Frontier {
    fn new(slots: u64) -> Frontier {
        Frontier {
            marks: (0..slots.div_ceil(CHUNK))
                .map(|_| Marks::default())
                .collect(),
            pending: super::generator::zeroed(slots.div_ceil(64) as usize),
            open: super::generator::zeroed(slots.div_ceil(64) as usize),
        }
    }

    /// Notes that `slot` is open.
    #[inline]
    fn opened(&self, slot: u64) {
        self.open[(slot / 64) as usize].fetch_or(1 << (slot % 64), Ordering::Relaxed);
    }

    /// Calls `f` on each slot of `run` that is open or given a value not yet visited.
    #[inline]
    fn for_each_open_or_pending(&self, run: std::ops::Range<u64>, mut f: impl FnMut(u64)) {
        let mut w = run.start / 64;
        while w * 64 < run.end {
            let base = w * 64;
            let mut bits = self.pending[w as usize].load(Ordering::Relaxed)
                | self.open[w as usize].load(Ordering::Relaxed);
            if base < run.start {
                bits &= u64::MAX << (run.start - base);
            }
            if run.end - base < 64 {
                bits &= (1u64 << (run.end - base)) - 1;
            }
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                f(base + u64::from(b));
            }
            w += 1;
        }
    }

    /// Notes that `slot` was given the value `d`.
    #[inline]
    fn give(&self, slot: u64, d: u32) {
        mark(&self.marks, slot, d);
        let word = &self.pending[(slot / 64) as usize];
        let bit = 1u64 << (slot % 64);
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
        let open = &self.open[(slot / 64) as usize];
        if open.load(Ordering::Relaxed) & bit != 0 {
            open.fetch_and(!bit, Ordering::Relaxed);
        }
    }

    /// Calls `visit` on each slot of `run` whose bit is set and for which `at` holds
    /// (its value is the pass's), and clears their bits: a slot visited is final.
    #[inline]
    fn take(
        &self,
        run: std::ops::Range<u64>,
        at: impl FnMut(u64) -> bool,
        mut visit: impl FnMut(u64),
    ) {
        let Ok(()) = take_bits::<std::convert::Infallible>(&self.pending, run, at, |s| {
            visit(s);
            Ok(())
        });
    }
}

/// Calls `visit` on each slot of `run` whose bit in `words` is set and for which `at`
/// holds, and clears their bits; stops at the first error.
#[inline]
fn take_bits<E>(
    words: &[AtomicU64],
    run: std::ops::Range<u64>,
    mut at: impl FnMut(u64) -> bool,
    mut visit: impl FnMut(u64) -> Result<(), E>,
) -> Result<(), E> {
    let mut w = run.start / 64;
    while w * 64 < run.end {
        let base = w * 64;
        let mut bits = words[w as usize].load(Ordering::Relaxed);
        if base < run.start {
            bits &= u64::MAX << (run.start - base);
        }
        if run.end - base < 64 {
            bits &= (1u64 << (run.end - base)) - 1;
        }
        let mut taken = 0u64;
        while bits != 0 {
            let b = bits.trailing_zeros();
            bits &= bits - 1;
            if at(base + u64::from(b)) {
                taken |= 1 << b;
                visit(base + u64::from(b))?;
            }
        }
        if taken != 0 {
            words[w as usize].fetch_and(!taken, Ordering::Relaxed);
        }
        w += 1;
    }
    Ok(())
}

/// The tally of value `d`.
fn count_at(at: &[AtomicU64], d: u32) -> u64 {
    at.get(d as usize).map_or(0, |a| a.load(Ordering::Relaxed))
}

/// A flag a chunk of [`CHUNK`] slots: whether some slot `s` of it, with state `v`, is
/// `wanted(s, v)`.
fn chunk_flags(
    st: &Cells,
    chunks: &[(u64, Vec<std::ops::Range<u64>>)],
    wanted: impl Fn(u64, u16) -> bool + Sync,
) -> Vec<AtomicBool> {
    let flags: Vec<AtomicBool> = (0..(st.len() as u64).div_ceil(CHUNK))
        .map(|_| AtomicBool::new(false))
        .collect();
    chunks.par_iter().for_each(|(c, runs)| {
        let any = runs
            .iter()
            .flat_map(Clone::clone)
            .any(|s| wanted(s, st.load(s as usize)));
        flags[*c as usize].store(any, Ordering::Relaxed);
    });
    flags
}

/// One round of the retrograde.
struct Run<'g, 'a> {
    g: &'g Generator<'a>,
    /// The slots of the slice being made, chunk by chunk ([`Generator::slice_chunks`]).
    chunks: &'g [(u64, Vec<std::ops::Range<u64>>)],
    /// The states the retrograde keeps in a byte.
    alphabet: Alphabet,
    wdl: &'g [u8],
    /// The generator's conversions, if known (see [`Leaves::conversions`]).
    conversions: Option<&'g [u8]>,
    /// See [`Leaves::cursed_subtables`].
    cursed_subtables: bool,
    /// Whether the retrograde runs by pawn advance, most advanced first (see
    /// [`generate_dtz`]): then a pawn step's leaf reads its category from the state.
    by_advance: bool,
    move_rule: MoveRule,
    max: AtomicU32,
    /// The slots that win in 1 ply by a zeroing move (see [`DtzTable::zeroing_wins`]).
    zeroing_wins: &'g [AtomicU64],
    /// Losses not yet decided (while their replies are counted: see [`Run::pull_pays`]).
    open_losses: AtomicU64,
    /// How many wins were given each value (a win lowered later counts at both): the
    /// work of a pass that pushes.
    wins_at: Vec<AtomicU64>,
    /// How many losses were given each value: the work of a pass whose losses push.
    losses_at: Vec<AtomicU64>,
    /// Wins without a value yet (see [`Run::win_pull_pays`]).
    open_wins: AtomicU64,
}

impl Run<'_, '_> {
    /// The plies of every slot, in `buffer` (see [`generate_dtz`]).
    fn run(&self, buffer: Cells) -> Result<Cells, GenError> {
        let g = self.g;
        let total = 2 * g.size();
        let mut st = buffer;
        let slots = g.slice_slots();
        if st.len() as u64 != total {
            st = Cells::new(total as usize, self.alphabet.clone(), 0);
        }
        st.reset_ranges(self.alphabet.clone(), NONE, &slots);
        let marks = Frontier::new(total);
        let levels: Vec<Option<u32>> = if self.by_advance {
            (0..=g.index.max_pawn_advance()).rev().map(Some).collect()
        } else {
            vec![None]
        };
        for advance in levels {
            self.stage(&st, &marks, advance)?;
        }
        let plies = st;
        // NONE is UNUSED; any other state at or above LOSS_OPEN is still open
        let open = self.chunks.par_iter().find_map_first(|(_, runs)| {
            runs.iter().flat_map(Clone::clone).find(|&s| {
                let v = plies.load(s as usize);
                v >= LOSS_OPEN && v != NONE
            })
        });
        if let Some(slot) = open {
            let pos = g.used_position_at(slot);
            return Err(GenError::Inconsistent(format!(
                "DTZ: {} was never decided",
                Fen::from_position(&pos)
            )));
        }
        Ok(plies)
    }

    /// The seed and the passes of one stage: every slot, or (by pawn advance) those of
    /// one advance, once every more advanced slot is final.
    fn stage(&self, st: &Cells, marks: &Frontier, advance: Option<u32>) -> Result<(), GenError> {
        let g = self.g;
        let total: u64 = self
            .chunks
            .iter()
            .flat_map(|(_, r)| r)
            .map(|r| r.end - r.start)
            .sum();
        // a stage's passes read only its own marks and tallies
        marks.marks.par_iter().for_each(|m| {
            for w in &m.0 {
                w.store(0, Ordering::Relaxed);
            }
        });
        self.max.store(0, Ordering::Relaxed);
        self.open_losses.store(0, Ordering::Relaxed);
        for w in self.wins_at.iter().chain(&self.losses_at) {
            w.store(0, Ordering::Relaxed);
        }
        self.open_wins.store(0, Ordering::Relaxed);
        let label = match advance {
            Some(a) => format!("{} DTZ seed, pawn advance {a}", g.label()),
            None => format!("{} DTZ seed", g.label()),
        };
        g.progress.begin(&label, total);
        let conversions = self.conversions;
        self.chunks.par_iter().for_each_init(
            || (MoveList::new(), Vec::with_capacity(64)),
            |(moves, kids), (_, runs)| {
                if g.failed() || g.progress.cancelled() {
                    return;
                }
                let mut decoder = Decoder::new(&g.index);
                let mut max = 0;
                let mut counts = Counts::default();
                for slot in runs.iter().flat_map(Clone::clone) {
                    let w = wdl_at(self.wdl, slot);
                    if w == W_NONE || !self.in_stage(slot, advance) {
                        continue;
                    }
                    if w == W_MATED {
                        st.store(slot as usize, 0);
                        marks.give(slot, 0);
                        counts.loss(0);
                        continue;
                    }
                    let seeded = match self.win_without_position(conversions, slot, w) {
                        Some(v) => Ok(v),
                        None => {
                            let (turn, i) = g.index.split_slot(slot);
                            let board = decoder.decode_legal(&g.index, i, turn);
                            let Some(pos) = g.position_of(turn, i, board) else {
                                g.fail(GenError::Inconsistent(format!(
                                    "DTZ: slot {slot} has a value but names no position"
                                )));
                                return;
                            };
                            self.seed(conversions, slot, &pos, w, moves, kids, st)
                        }
                    };
                    match seeded {
                        Ok(v) => {
                            // a win's seed of 1 is a zeroing move (a mate in 1 is found
                            // by the passes, not the seed)
                            if w == W_WIN && v == 1 {
                                self.zeroing_wins[(slot / 64) as usize]
                                    .fetch_or(1 << (slot % 64), Ordering::Relaxed);
                            }
                            if v < LOSS_OPEN {
                                max = max.max(u32::from(v));
                            }
                            if w == W_WIN {
                                counts.win(v);
                                if v == WIN_OPEN {
                                    counts.opened_wins += 1;
                                }
                            } else if v >= LOSS_OPEN {
                                counts.opened += 1;
                            } else {
                                counts.loss(v);
                            }
                            st.store(slot as usize, v);
                            if v < LOSS_OPEN {
                                marks.give(slot, u32::from(v));
                            } else {
                                marks.opened(slot);
                            }
                        }
                        Err(e) => {
                            g.fail(e);
                            return;
                        }
                    }
                }
                self.max.fetch_max(max, Ordering::Relaxed);
                self.add(&counts);
                g.progress
                    .advance(runs.iter().map(|r| r.end - r.start).sum());
            },
        );
        g.progress.end();
        self.check(g)?;
        // Once the losses pull (the wins no longer push), their counts are no longer kept:
        // `open` flags the chunks that still hold an open loss instead.
        let mut open: Option<Vec<AtomicBool>> = None;
        // Once the wins pull (the losses no longer push), the chunks that hold an open win.
        let mut open_wins: Option<Vec<AtomicBool>> = None;
        let mut d: u32 = 0;
        while d <= self.max.load(Ordering::Relaxed) {
            let n = d as u16;
            if open.is_none() && self.pull_pays(d) {
                open = Some(self.open_losses(st));
            }
            if open_wins.is_none() && self.win_pull_pays(d) {
                open_wins = Some(self.open_wins(st, d, advance));
            }
            // wins push to count their predecessors' replies down, losses to give their
            // predecessors a win, each until its side pulls instead
            let wins_push = open.is_none();
            let losses_push = open_wins.is_none();
            let at_n = st.matcher(n);
            self.chunks
                .par_iter()
                .for_each_init(Vec::new, |preds, (chunk, runs)| {
                    if g.failed() || !marks.marks[*chunk as usize].has(d) {
                        return;
                    }
                    let mut decoder = None;
                    let mut counts = Counts::default();
                    for run in runs {
                        marks.take(
                            run.clone(),
                            |slot| at_n.at(slot as usize),
                            |slot| {
                                if (if wdl_at(self.wdl, slot) == W_WIN {
                                    wins_push
                                } else {
                                    losses_push
                                }) && self.in_stage(slot, advance)
                                {
                                    let decoder =
                                        decoder.get_or_insert_with(|| Decoder::new(&g.index));
                                    self.spread(slot, d, st, marks, preds, decoder, &mut counts);
                                }
                            },
                        );
                    }
                    self.add(&counts);
                });
            if let Some(flags) = &open_wins {
                self.pull_wins(d, st, marks, flags, advance);
            }
            if let Some(open) = &open {
                self.pull(d, st, marks, open);
            }
            self.check(g)?;
            d += 1;
        }
        drop(open);
        drop(open_wins);
        Ok(())
    }

    /// Whether `slot` belongs to the stage of pawn advance `advance` (every slot does to
    /// a stage of all).
    #[inline]
    fn in_stage(&self, slot: u64, advance: Option<u32>) -> bool {
        advance.is_none_or(|a| self.g.index.pawn_advance(self.g.index.split_slot(slot).1) == a)
    }

    fn check(&self, g: &Generator<'_>) -> Result<(), GenError> {
        if let Some(e) = g.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        if g.progress.cancelled() {
            return Err(GenError::Cancelled);
        }
        Ok(())
    }

    /// The category of a child in this table after a pawn move, for the player to move
    /// there.
    fn own_category(&self, child: &Position, st: &Cells) -> Result<Category, GenError> {
        let Some(s) = self.g.slot_of(child) else {
            return Err(GenError::Inconsistent(format!(
                "DTZ: no index for {}",
                Fen::from_position(child)
            )));
        };
        let w = wdl_at(self.wdl, s);
        // by pawn advance, the child's stage is final; otherwise no leaf is cursed
        let over = self.by_advance && cursed(st.load(s as usize));
        Ok(match (w, over) {
            (W_NONE, _) => Category::Draw,
            (W_WIN, false) => Category::Win,
            (W_WIN, true) => Category::CursedWin,
            (_, false) => Category::Loss,
            (_, true) => Category::BlessedLoss,
        })
    }

    /// The category of the child after a zeroing move, for the player to move there.
    fn leaf_category(&self, pos: &Position, m: &Move, st: &Cells) -> Result<Category, GenError> {
        let child = pos.play_unchecked(m);
        if m.capture.is_none() && !m.promotion {
            return self.own_category(&child, st);
        }
        if self.move_rule != MoveRule::None && self.cursed_subtables {
            return self.g.sub.category(&child);
        }
        Ok(super::files::plain_category(self.g.sub.value(&child)?))
    }

    /// The first state of a win of a side without pawns, from the generator's
    /// conversions alone (as [`Run::seed`] finds it, without decoding the position): 1 if
    /// a capture wins, else open.
    fn win_without_position(&self, conversions: Option<&[u8]>, slot: u64, w: u8) -> Option<u16> {
        if w != W_WIN {
            return None;
        }
        // a side with pawns may win by a step, which the conversions do not tell
        let (turn, _) = self.g.index.split_slot(slot);
        if self.g.index.material().side(turn).count(Role::Pawn) > 0 {
            return None;
        }
        let conversion = self.conversion(conversions, slot)?;
        Some(if conversion == 3 { 1 } else { WIN_OPEN })
    }

    /// The generator's conversion code of `slot` (3 when a capture or promotion wins),
    /// where it tells a leaf's category: without the move rule, or when no sub-table has
    /// cursed values.
    fn conversion(&self, conversions: Option<&[u8]>, slot: u64) -> Option<u8> {
        conversions
            .filter(|_| self.move_rule == MoveRule::None || !self.cursed_subtables)
            .map(|c| super::state::packed_conversion(c, slot as usize))
    }

    /// The first state of a decided slot (not mated): a win's leaf, or a loss's count.
    #[allow(clippy::too_many_arguments)]
    fn seed(
        &self,
        conversions: Option<&[u8]>,
        slot: u64,
        pos: &Position,
        w: u8,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
        st: &Cells,
    ) -> Result<u16, GenError> {
        // A conversion code from the generator: 3 when a capture or promotion wins.
        let conversion = self.conversion(conversions, slot);
        // With the conversions known, the only zeroing moves left to look at are the steps
        // of the mover's pawns (none without pawns to move).
        if let Some(conversion) = conversion {
            if w == W_WIN {
                if conversion == 3 {
                    return Ok(1);
                }
                return self.win_by_step(pos, st);
            }
            // A loss counts its moves that do not zero, unless a step may reach a cursed
            // win (by pawn advance), which blesses it: then the general way below.
            if !self.by_advance
                && !self
                    .g
                    .index
                    .successors_may_coincide(pos.board(), pos.turn())
            {
                let mut steps = 0u64;
                pos.for_each_legal_pawn_step(|_| {
                    steps += 1;
                    true
                });
                let quiet = pos.count_quiet_moves() - steps;
                if quiet == 0 {
                    if conversion == 0 && steps == 0 {
                        return Err(GenError::Inconsistent(format!(
                            "DTZ: {} is lost, has moves and none of them",
                            Fen::from_position(pos)
                        )));
                    }
                    return Ok(1);
                }
                if quiet > u64::from(COUNT) {
                    return Err(GenError::Inconsistent("DTZ: too many replies".into()));
                }
                return Ok(LOSS_OPEN | quiet as u16);
            }
        }
        moves.clear();
        pos.legal_moves_into(moves);
        if w == W_WIN {
            // (the conversions are not known here: every zeroing move is looked at)
            let mut best = WIN_OPEN;
            for m in moves.iter() {
                let zeroing = m.capture.is_some() || m.role == Role::Pawn;
                if !zeroing {
                    continue;
                }
                match self.leaf_category(pos, m, st)? {
                    Category::Loss => return Ok(1),
                    Category::BlessedLoss => best = best.min(CURSED_LEAF),
                    _ => {}
                }
            }
            return Ok(best);
        }
        // a loss: count the distinct children of moves that do not zero
        kids.clear();
        let mut zeroing = 0u16;
        for m in moves.iter() {
            if m.capture.is_some() || m.role == Role::Pawn {
                zeroing = zeroing.max(1);
                let cursed_possible = self.move_rule != MoveRule::None
                    && if m.capture.is_some() || m.promotion {
                        self.cursed_subtables
                    } else {
                        self.by_advance
                    };
                if cursed_possible && self.leaf_category(pos, m, st)? == Category::CursedWin {
                    zeroing = CURSED_LEAF;
                }
                continue;
            }
            let child = pos.play_unchecked(m);
            match self.g.slot_of(&child) {
                Some(k) => kids.push(k),
                None => {
                    return Err(GenError::Inconsistent(format!(
                        "DTZ: no index for {}",
                        Fen::from_position(&child)
                    )));
                }
            }
        }
        kids.sort_unstable();
        kids.dedup();
        if kids.is_empty() {
            if zeroing == 0 {
                return Err(GenError::Inconsistent(format!(
                    "DTZ: {} is lost, has moves and none of them",
                    Fen::from_position(pos)
                )));
            }
            return Ok(zeroing);
        }
        if kids.len() > usize::from(COUNT) {
            return Err(GenError::Inconsistent("DTZ: too many replies".into()));
        }
        let blessed = if zeroing == CURSED_LEAF { BLESSED } else { 0 };
        Ok(LOSS_OPEN | blessed | kids.len() as u16)
    }

    /// The first state of a win whose conversions are known not to win: 1 if a pawn's
    /// step leads into a loss, [`CURSED_LEAF`] if only into a blessed one, else open.
    fn win_by_step(&self, pos: &Position, st: &Cells) -> Result<u16, GenError> {
        let mut best = WIN_OPEN;
        let mut error = None;
        pos.for_each_legal_pawn_step(|m| match self.leaf_category(pos, &m, st) {
            Ok(Category::Loss) => {
                best = 1;
                false
            }
            Ok(Category::BlessedLoss) => {
                best = best.min(CURSED_LEAF);
                true
            }
            Ok(_) => true,
            Err(e) => {
                error = Some(e);
                false
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(best),
        }
    }

    /// Adds a task's tallies to the run's.
    fn add(&self, counts: &Counts) {
        for (at, tallies) in [
            (&self.wins_at, &counts.wins),
            (&self.losses_at, &counts.losses),
        ] {
            for &(v, n) in tallies {
                if let Some(at) = at.get(usize::from(v)) {
                    at.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
        self.open_losses.fetch_add(counts.opened, Ordering::Relaxed);
        self.open_losses.fetch_sub(counts.closed, Ordering::Relaxed);
        self.open_wins
            .fetch_add(counts.opened_wins, Ordering::Relaxed);
        self.open_wins
            .fetch_sub(counts.closed_wins, Ordering::Relaxed);
    }

    /// Whether the pass of distance `d` should pull: each open loss looks at its replies
    /// ([`Run::pull`]) instead of each win at `d` visiting its predecessors. A table has
    /// far more wins than losses, and most losses are decided within a few plies, after
    /// which a push visits the predecessors of millions of wins to count down a few
    /// thousand losses. Pulling costs a decode and the replies up to the first one not yet
    /// decided, a push a decode and every predecessor.
    fn pull_pays(&self, d: u32) -> bool {
        self.open_losses.load(Ordering::Relaxed) * PULL_RATIO < count_at(&self.wins_at, d)
    }

    /// Whether the pass of distance `d` should pull wins: each win still open looks for
    /// a reply that does not zero into a loss at `d` ([`Run::pull_wins`]) instead of each
    /// loss at `d` visiting its predecessors. Most wins are decided within a few plies,
    /// after which the losses of a pass push to millions of predecessors that already
    /// win as fast; pulling costs a decode and the replies up to the first loss found.
    fn win_pull_pays(&self, d: u32) -> bool {
        self.open_wins.load(Ordering::Relaxed) * PULL_RATIO < count_at(&self.losses_at, d)
    }

    /// Whether the state `v` at `slot` is a win of the stage that a loss at `d` could
    /// still lower (open, or given a value above `d + 1` by a leaf).
    #[inline]
    fn win_above(&self, slot: u64, v: u16, d: u32, advance: Option<u32>) -> bool {
        v != NONE
            && u32::from(v) > d + 1
            && wdl_at(self.wdl, slot) == W_WIN
            && self.in_stage(slot, advance)
    }

    /// A flag a chunk of [`CHUNK`] slots: whether it holds a win [`Run::win_above`] `d`.
    fn open_wins(&self, st: &Cells, d: u32, advance: Option<u32>) -> Vec<AtomicBool> {
        chunk_flags(st, self.chunks, |s, v| self.win_above(s, v, d, advance))
    }

    /// The win-pulling half of pass `d`, after the losses at `d` are final: every win
    /// still above `d + 1` with a reply that does not zero into a loss at `d` (at most
    /// `d`: a smaller one would have decided it already) wins in `d + 1`.
    fn pull_wins(
        &self,
        d: u32,
        st: &Cells,
        marks: &Frontier,
        flags: &[AtomicBool],
        advance: Option<u32>,
    ) {
        let next = d + 1;
        if next > MAX_DTZ {
            return self.g.fail(GenError::TooLong(self.g.index.material()));
        }
        self.pull_chunks(
            st,
            marks,
            flags,
            |slot, v| self.win_above(slot, v, d, advance),
            |slot, decoder| {
                let won = self.reaches_loss(slot, d, st, decoder)?;
                Ok(won.then_some(next as u16))
            },
            |old, new, counts| {
                counts.win(new);
                if old == WIN_OPEN {
                    counts.closed_wins += 1;
                }
            },
        );
    }

    /// The common part of the pulls: in parallel, a task a flagged chunk of [`CHUNK`]
    /// slots, `decide` the slots that are `candidate`s; a slot decided gets its value (and
    /// its mark), `tally` counts it, and a chunk left with no candidate loses its flag.
    /// Each task alone gives values to the slots of its chunk.
    #[allow(clippy::too_many_arguments)]
    fn pull_chunks(
        &self,
        st: &Cells,
        marks: &Frontier,
        flags: &[AtomicBool],
        candidate: impl Fn(u64, u16) -> bool + Sync,
        decide: impl Fn(u64, &mut Decoder) -> Result<Option<u16>, GenError> + Sync,
        tally: impl Fn(u16, u16, &mut Counts) + Sync,
    ) {
        let g = self.g;
        self.chunks.par_iter().for_each_init(
            || None,
            |decoder, (c, runs)| {
                let c = *c as usize;
                if g.failed() || !flags[c].load(Ordering::Relaxed) {
                    return;
                }
                let mut counts = Counts::default();
                let mut still_open = false;
                let mut failed = None;
                for run in runs {
                    marks.for_each_open_or_pending(run.clone(), |slot| {
                        let old = st.load(slot as usize);
                        if failed.is_some() || !candidate(slot, old) {
                            return;
                        }
                        let decoder = decoder.get_or_insert_with(|| Decoder::new(&g.index));
                        match decide(slot, decoder) {
                            Ok(None) => still_open = true,
                            Ok(Some(new)) => {
                                st.store(slot as usize, new);
                                marks.give(slot, u32::from(new));
                                self.max.fetch_max(u32::from(new), Ordering::Relaxed);
                                tally(old, new, &mut counts);
                            }
                            Err(e) => failed = Some(e),
                        }
                    });
                }
                if let Some(e) = failed {
                    return g.fail(e);
                }
                if !still_open {
                    flags[c].store(false, Ordering::Relaxed);
                }
                self.add(&counts);
            },
        );
    }

    /// Whether the win at `slot` has a reply that does not zero into a loss decided at
    /// `d` or less.
    fn reaches_loss(
        &self,
        slot: u64,
        d: u32,
        st: &Cells,
        decoder: &mut Decoder,
    ) -> Result<bool, GenError> {
        let mut found = false;
        self.for_each_quiet_child(slot, decoder, |k| {
            found = matches!(wdl_at(self.wdl, k), W_LOSS | W_MATED)
                && u32::from(st.load(k as usize)) <= d;
            !found
        })?;
        Ok(found)
    }

    /// Whether a state, at `slot`, is a loss still open.
    #[inline]
    fn is_open_loss(&self, slot: u64, v: u16) -> bool {
        v >= LOSS_OPEN && v != NONE && wdl_at(self.wdl, slot) != W_WIN
    }

    /// A flag a chunk of [`CHUNK`] slots: whether it holds a loss still open.
    fn open_losses(&self, st: &Cells) -> Vec<AtomicBool> {
        chunk_flags(st, self.chunks, |s, v| self.is_open_loss(s, v))
    }

    /// The pull half of pass `d`, after the wins at `d` are final: every open loss whose
    /// replies are all decided loses in one ply more than its longest reply. The chunks
    /// flagged ([`Run::open_losses`]) are read whole: a flag a chunk rather than a bit a
    /// slot keeps the pull's memory off the table's peak, and reading the states costs
    /// little (0.78 s over every pass of KRRvKR).
    fn pull(&self, d: u32, st: &Cells, marks: &Frontier, open: &[AtomicBool]) {
        self.pull_chunks(
            st,
            marks,
            open,
            |slot, v| self.is_open_loss(slot, v),
            |slot, decoder| self.settled_loss(slot, d, st, decoder),
            |_, new, counts| {
                counts.closed += 1;
                counts.loss(new);
            },
        );
    }

    /// The value of the open loss at `slot` if every reply that does not zero is decided
    /// by the end of pass `d` (one ply more than the longest, or the blessed leaf's if
    /// longer); `None` while one is not.
    fn settled_loss(
        &self,
        slot: u64,
        d: u32,
        st: &Cells,
        decoder: &mut Decoder,
    ) -> Result<Option<u16>, GenError> {
        let mut longest: Option<u16> = None;
        let mut open = false;
        self.for_each_won_reply(slot, decoder, |k| {
            let v = st.load(k as usize);
            if u32::from(v) > d {
                open = true;
                return false;
            }
            longest = longest.max(Some(v));
            true
        })?;
        let g = self.g;
        if open {
            return Ok(None);
        }
        let Some(longest) = longest else {
            return Err(GenError::Inconsistent(format!(
                "DTZ: {} is open but has no reply that does not zero",
                Fen::from_position(&g.used_position_at(slot))
            )));
        };
        let v = u32::from(longest) + 1;
        let v = if st.load(slot as usize) & BLESSED != 0 {
            v.max(u32::from(CURSED_LEAF))
        } else {
            v
        };
        debug_assert!(v == d + 1 || v == u32::from(CURSED_LEAF), "{v} at pass {d}");
        Ok(Some(v as u16))
    }

    /// Calls `f` with the slot of each child of the loss at `slot` by a move that does not
    /// zero (each a win of the opponent: a move that leaves the mover's shah in check
    /// reaches an unused slot, skipped) until it returns false; an error if one is not won.
    fn for_each_won_reply(
        &self,
        slot: u64,
        decoder: &mut Decoder,
        mut f: impl FnMut(u64) -> bool,
    ) -> Result<(), GenError> {
        let mut not_won = false;
        self.for_each_quiet_child(slot, decoder, |k| match wdl_at(self.wdl, k) {
            W_NONE => true,
            W_WIN => f(k),
            _ => {
                not_won = true;
                false
            }
        })?;
        if not_won {
            return Err(GenError::Inconsistent(format!(
                "DTZ: {} is lost but has a reply that does not win",
                Fen::from_position(&self.g.used_position_at(slot))
            )));
        }
        Ok(())
    }

    /// Calls `f` with the slot of each child of `slot` by a move that does not zero (a man
    /// other than a pawn to an empty square; a move that leaves the mover's shah in check
    /// reaches an unused slot) until it returns false.
    fn for_each_quiet_child(
        &self,
        slot: u64,
        decoder: &mut Decoder,
        mut f: impl FnMut(u64) -> bool,
    ) -> Result<(), GenError> {
        let g = self.g;
        let (turn, i) = g.index.split_slot(slot);
        let Some(board) = decoder.decode(&g.index, i) else {
            return Err(GenError::Inconsistent(format!(
                "DTZ: slot {slot} holds a value but names no position"
            )));
        };
        let fixed = !g.index.may_be_mirror(i);
        let occ = board.occupied();
        let empty = !occ;
        let other_shah = board
            .shah_of(!turn)
            .map_or(Bitboard::EMPTY, attacks::shah_attacks);
        for from in board.by_color(turn) {
            let role = board.role_at(from).expect("occupied");
            // pawn moves and captures zero: their leaves are in the seed's state
            let targets = match role {
                Role::Pawn => continue,
                Role::Shah => attacks::shah_attacks(from) & empty & !other_shah,
                _ => attacks::attacks(role, turn, from, occ) & empty,
            };
            let piece = Piece { color: turn, role };
            for to in targets {
                let k = g
                    .slot_after(i, &board, fixed, piece, from, to, !turn, || {
                        let mut after = board;
                        after.move_piece(turn, role, from, to, role);
                        Position::placement(after, !turn)
                    })
                    .map_err(|next| {
                        GenError::Inconsistent(format!(
                            "DTZ: no index for successor {} of slot {slot}",
                            Fen::from_position(&next)
                        ))
                    })?;
                if !f(k) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The slots of the predecessors of `slot` by moves that do not zero (un-moves of men
    /// other than pawns), each once, in `preds`.
    fn quiet_predecessors_of(
        &self,
        slot: u64,
        preds: &mut Vec<u64>,
        decoder: &mut Decoder,
    ) -> Result<(), GenError> {
        let g = self.g;
        let (turn, i) = g.index.split_slot(slot);
        let Some(board) = decoder.decode(&g.index, i) else {
            return Err(GenError::Inconsistent(format!(
                "DTZ: slot {slot} holds a value but names no position"
            )));
        };
        let pos = Position::from_board_unchecked(board, turn);
        preds.clear();
        if let Err(prev) = g.quiet_predecessors(&pos, i, preds, false) {
            return Err(GenError::Inconsistent(format!(
                "DTZ: no index for predecessor {} of {}",
                Fen::from_position(&prev),
                Fen::from_position(&pos)
            )));
        }
        if g.index.successors_may_coincide(pos.board(), !pos.turn()) {
            preds.sort_unstable();
            preds.dedup();
        }
        Ok(())
    }

    /// Spreads the value of a slot decided at `d` to its predecessors.
    #[allow(clippy::too_many_arguments)]
    fn spread(
        &self,
        slot: u64,
        d: u32,
        st: &Cells,
        marks: &Frontier,
        preds: &mut Vec<u64>,
        decoder: &mut Decoder,
        counts: &mut Counts,
    ) {
        let g = self.g;
        if let Err(e) = self.quiet_predecessors_of(slot, preds, decoder) {
            return g.fail(e);
        }
        let next = d + 1;
        if next > MAX_DTZ {
            return g.fail(GenError::TooLong(g.index.material()));
        }
        let lost = wdl_at(self.wdl, slot) != W_WIN;
        for &p in preds.iter() {
            let wp = wdl_at(self.wdl, p);
            if lost {
                if wp != W_WIN {
                    return g.fail(GenError::Inconsistent(format!(
                        "DTZ: {} moves into a loss but does not win",
                        Fen::from_position(&g.used_position_at(p))
                    )));
                }
                // most predecessors already win as fast: a plain load spares the locked
                // read-modify-write (x86 has no atomic minimum: it is a CAS loop)
                if st.load(p as usize) > next as u16 {
                    let old = st.fetch_min(p as usize, next as u16);
                    if old > next as u16 {
                        marks.give(p, next);
                        self.max.fetch_max(next, Ordering::Relaxed);
                        counts.win(next as u16);
                        if old == WIN_OPEN {
                            counts.closed_wins += 1;
                        }
                    }
                }
            } else if wp == W_LOSS {
                let old = st.fetch_sub(p as usize, 1);
                if old < LOSS_OPEN || old & COUNT == 0 {
                    return g.fail(GenError::Inconsistent(format!(
                        "DTZ: the replies of {} were counted wrong",
                        Fen::from_position(&g.used_position_at(p))
                    )));
                }
                if old & COUNT == 1 {
                    let v = if old & BLESSED != 0 {
                        next.max(u32::from(CURSED_LEAF))
                    } else {
                        next
                    };
                    st.store(p as usize, v as u16);
                    marks.give(p, v);
                    self.max.fetch_max(v, Ordering::Relaxed);
                    counts.closed += 1;
                    counts.loss(v as u16);
                }
            }
        }
    }
}

/// A task's tallies for [`Run::add`].
#[derive(Default)]
struct Counts {
    /// Wins given each value (few distinct values a task).
    wins: Vec<(u16, u64)>,
    /// Losses given each value.
    losses: Vec<(u16, u64)>,
    /// Losses left open by the seed.
    opened: u64,
    /// Losses decided by a push.
    closed: u64,
    /// Wins left open by the seed.
    opened_wins: u64,
    /// Wins open until a push gave them a value.
    closed_wins: u64,
}

impl Counts {
    fn win(&mut self, v: u16) {
        match self.wins.iter_mut().find(|(w, _)| *w == v) {
            Some(e) => e.1 += 1,
            None => self.wins.push((v, 1)),
        }
    }

    fn loss(&mut self, v: u16) {
        match self.losses.iter_mut().find(|(w, _)| *w == v) {
            Some(e) => e.1 += 1,
            None => self.losses.push((v, 1)),
        }
    }
}

/// The figures of a DTZ table counted so far, a slice at a time: per side to move, the
/// longest win, the longest loss, the cursed wins, the blessed losses and the first slot
/// of the longest win in the files' order.
#[derive(Clone, Copy, Default)]
pub(crate) struct DtzCounts([(u32, u32, u64, u64, Option<u64>); 2]);

/// Two sides' tallies of [`DtzCounts`] as one.
fn merge_tallies(
    a: (u32, u32, u64, u64, Option<u64>),
    b: (u32, u32, u64, u64, Option<u64>),
) -> (u32, u32, u64, u64, Option<u64>) {
    let (lw, lws) = if b.0 > a.0 || (b.0 == a.0 && lt(b.4, a.4)) {
        (b.0, b.4)
    } else {
        (a.0, a.4)
    };
    (lw, a.1.max(b.1), a.2 + b.2, a.3 + b.3, lws)
}

impl DtzCounts {
    /// Adds the figures of the slots of `chunks`.
    fn add(
        &mut self,
        g: &Generator<'_>,
        wdl: &[u8],
        plies: &Cells,
        chunks: &[(u64, Vec<std::ops::Range<u64>>)],
        move_rule: MoveRule,
    ) {
        let (n, file_n) = (g.size(), g.index.file_size());
        let limit = move_rule.plies().unwrap_or(u32::MAX);
        for turn in Color::ALL {
            let side = turn.index() as u64 * n..(turn.index() as u64 + 1) * n;
            let t = chunks
                .par_iter()
                .map(|(_, runs)| {
                    let (mut lw, mut ll, mut cw, mut bl, mut lws) = (0u32, 0u32, 0u64, 0u64, None);
                    for r in runs {
                        for s in r.start.max(side.start)..r.end.min(side.end) {
                            let p = plies.load(s as usize);
                            if p == UNUSED {
                                continue;
                            }
                            let p = u32::from(p);
                            if wdl_at(wdl, s) == W_WIN {
                                if p >= lw {
                                    // the first of the longest in the files' order,
                                    // its slot there (a decided slot names a position,
                                    // so it has one)
                                    let f = turn.index() as u64 * file_n
                                        + g.index.file_index(s - side.start).unwrap_or(u64::MAX);
                                    if p > lw || lws.is_none_or(|x| f < x) {
                                        lw = p;
                                        lws = Some(f);
                                    }
                                }
                                cw += u64::from(p > limit);
                            } else {
                                ll = ll.max(p);
                                bl += u64::from(p > limit);
                            }
                        }
                    }
                    (lw, ll, cw, bl, lws)
                })
                .reduce(|| (0, 0, 0, 0, None), merge_tallies);
            self.0[turn.index()] = merge_tallies(self.0[turn.index()], t);
        }
    }

    /// Adds the figures of another part of the table.
    pub(crate) fn merge(&mut self, other: &DtzCounts) {
        for k in 0..2 {
            self.0[k] = merge_tallies(self.0[k], other.0[k]);
        }
    }

    /// The figures of every part added; `g` numbers slots as the files do (scheme 1).
    pub(crate) fn finish(&self, g: &Generator<'_>, move_rule: MoveRule) -> DtzStats {
        debug_assert_eq!(g.index.scheme(), 1);
        let side = |turn: Color| {
            let (lw, ll, cw, bl, lws) = self.0[turn.index()];
            DtzSideStats {
                longest_win: lw,
                longest_loss: ll,
                cursed_wins: cw,
                blessed_losses: bl,
                longest_win_fen: lws
                    .map(|s| Fen::from_position(&g.used_position_at(s)).to_string()),
            }
        };
        DtzStats {
            move_rule: move_rule.as_str().to_string(),
            white: side(Color::White),
            black: side(Color::Black),
            side_stored: None,
            zeroing_wins_left_out: false,
            digit_order: None,
        }
    }
}

/// Whether slot `a` comes before slot `b` (a missing slot last).
fn lt(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::NoProgress;
    use crate::generate::memory::MemoryTables;

    /// Asserts that two ways gave one table's DTZ alike (plies, zeroing wins, figures), on
    /// a table with more than a thousand decided positions.
    fn assert_same_dtz(a: &DtzTable, b: &DtzTable, what: &str) {
        let decided = a.plies.to_vec().iter().filter(|&&p| p != NONE).count();
        assert!(decided > 1000, "{what}: {decided} decided");
        assert!(a.plies == b.plies, "{what}: the plies differ");
        assert_eq!(a.zeroing_win_words(), b.zeroing_win_words(), "{what}");
        assert_eq!(a.stats, b.stats, "{what}");
    }

    fn dtz_of(tables: &MemoryTables, m: Material, rules: RuleSet, cursed: bool) -> DtzTable {
        dtz_in(DTZ_ALPHABET, tables, m, rules, cursed)
    }

    fn dtz_in(
        alphabet: Alphabet,
        tables: &MemoryTables,
        m: Material,
        rules: RuleSet,
        cursed: bool,
    ) -> DtzTable {
        let g = tables.get(&m).expect("generated");
        let wdl = pack_wdl(&g.codes);
        let leaves = Leaves {
            conversions: Some(&g.conversions),
            cursed_subtables: cursed,
            dtm: None,
        };
        let buffer = Cells::default();
        generate_dtz_in(
            alphabet,
            m,
            rules,
            &wdl,
            leaves,
            tables,
            &NoProgress,
            buffer,
        )
        .expect("DTZ")
    }

    /// The DTZ state is a byte a slot with the rest spilled to a map: the plies are the
    /// same whatever the byte holds. Here it holds plies below 3 and open losses of up to
    /// 2 replies only, so that most states go through the map (by pawn advance too).
    #[test]
    fn dtz_is_the_same_when_most_states_spill() {
        let base = RuleSet::default();
        let rules = RuleSet {
            move_rule: MoveRule::Seventy,
            ..base
        };
        let narrow = Alphabet::new(
            3,
            &[
                (NONE, 1),
                (WIN_OPEN, 1),
                (LOSS_OPEN, 3),
                (LOSS_OPEN | BLESSED, 3),
            ],
        );
        let mut tables = MemoryTables::new(base);
        for name in ["KPvKP", "KQvKQ"] {
            let m = name.parse::<Material>().expect("material").normalized();
            tables.generate(m).expect("generated");
            for by_advance in [false, m.has_pawns()] {
                let wide = dtz_of(&tables, m, rules, by_advance);
                let spilled = dtz_in(narrow.clone(), &tables, m, rules, by_advance);
                assert!(spilled.plies.spilled() > 1000, "{name}");
                assert!(wide.plies == spilled.plies, "{name}: the plies differ");
                assert_eq!(
                    wide.zeroing_win_words(),
                    spilled.zeroing_win_words(),
                    "{name}"
                );
                assert_eq!(wide.stats, spilled.stats, "{name}");
            }
        }
    }

    /// A sub-table with cursed values sends a pawn table under the move rule through the
    /// retrograde by pawn advance (and its captures through the sub-tables' categories,
    /// not the generator's conversions): where nothing is cursed, every value must be the
    /// single round's.
    #[test]
    fn by_pawn_advance_gives_what_one_round_gives() {
        let base = RuleSet::default();
        let rules = RuleSet {
            move_rule: MoveRule::Seventy,
            ..base
        };
        let mut tables = MemoryTables::new(base);
        for name in ["KPvKP", "KNvKP"] {
            let m = name.parse::<Material>().expect("material").normalized();
            tables.generate(m).expect("generated");
            let one = dtz_of(&tables, m, rules, false);
            let staged = dtz_of(&tables, m, rules, true);
            assert_eq!(one.rounds, 1, "{name}");
            assert_same_dtz(&one, &staged, name);
        }
    }

    /// The DTZ started from the DTM gives the very values, zeroing wins and figures of the
    /// retrograde that decides every position anew: on tables with and without pawns,
    /// long and short, under every rule set whose leaves all count 1 ply (the move rule
    /// included, no sub-table being cursed), and whether or not the sample would choose it.
    #[test]
    fn dtz_from_dtm_is_the_dtz() {
        use crate::rules::{BareKing, Stalemate};
        let base = RuleSet::default();
        let variants = [
            (base, &["KNvKB", "KRvKP", "KPvKP", "KQvKQ", "KBvKP"][..]),
            (
                RuleSet {
                    bare_king: BareKing::Immediate,
                    stalemate: Stalemate::Draw,
                    ..base
                },
                &["KRvKN"][..],
            ),
        ];
        for (tables_rules, names) in variants {
            let mut tables = MemoryTables::new(tables_rules);
            for &name in names {
                let m = name.parse::<Material>().expect("material").normalized();
                tables.generate(m).expect("generated");
                let g = tables.get(&m).expect("generated");
                let wdl = pack_wdl(&g.codes);
                for move_rule in [MoveRule::None, MoveRule::Seventy] {
                    let rules = RuleSet {
                        move_rule,
                        ..tables_rules
                    };
                    let anew = dtz_of(&tables, m, rules, false);
                    let leaves = Leaves {
                        conversions: Some(&g.conversions),
                        cursed_subtables: false,
                        dtm: Some(&g.codes),
                    };
                    let from = generate_dtz(
                        m,
                        rules,
                        &wdl,
                        leaves,
                        &tables,
                        &NoProgress,
                        Cells::default(),
                    )
                    .expect("DTZ");
                    assert_same_dtz(&anew, &from, &format!("{name} {rules}"));
                }
            }
        }
    }
}
