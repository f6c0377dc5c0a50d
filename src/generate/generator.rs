//! The [`Generator`] of one table: its state arrays, the helpers the passes share, and
//! [`Generator::run`], which runs the seed, the ply passes and the statistics.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;
use std::time::Instant;

use super::cells::{Alphabet, Cells};
use super::state::*;
use super::{GenError, Generated, Progress, SubTables, stats};
use crate::board::Board;
use crate::color::Color;
use crate::index::TableIndex;
use crate::material::Material;
use crate::position::Position;
use crate::role::{Piece, Role};
use crate::rules::RuleSet;
use crate::square::Square;

pub(super) const CHUNK: u64 = 1 << 14;

/// Slots per block of [`Generator::marks`] (a power of two dividing [`CHUNK`]).
pub(super) const MARK_SHIFT: u32 = 10;

/// Whether bit `i` of a bitmap kept as words of 64 is set.
#[inline]
pub(super) fn has_bit(words: &[AtomicU64], i: u64) -> bool {
    words[(i / 64) as usize].load(Ordering::Relaxed) & (1 << (i % 64)) != 0
}

/// Sets `bit` in `word`, with a plain load first: most bits set here are set already, and
/// a load costs less than a locked read-modify-write.
#[inline]
pub(super) fn set_bit(word: &AtomicU64, bit: u64) {
    if word.load(Ordering::Relaxed) & bit == 0 {
        word.fetch_or(bit, Ordering::Relaxed);
    }
}

/// The slots of block `b` (of `1 << MARK_SHIFT`) within `slots`.
#[inline]
pub(super) fn block_slots(b: u64, slots: &std::ops::Range<u64>) -> std::ops::Range<u64> {
    (b << MARK_SHIFT).max(slots.start)..((b + 1) << MARK_SHIFT).min(slots.end)
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
    pub(super) index: TableIndex,
    pub(super) loss_passes: LossPasses,
    pub(super) rules: RuleSet,
    pub(super) sub: &'a dyn SubTables,
    pub(super) progress: &'a dyn Progress,
    /// The state of every slot (see the module documentation).
    pub(super) codes: Cells,
    /// The values [`Generator::codes`] holds in a byte (the others spill).
    pub(super) alphabet: Alphabet,
    /// Per block of `1 << MARK_SHIFT` slots, bit `d % 64` is set once a slot of the block
    /// has been given a value at distance `d` other than by a ply pass's list (by the seed,
    /// or a loss a conversion lengthens): a ply pass scans only the blocks marked for it.
    /// `marks[0]` holds the distances below 64, `marks[1]` the others: the passes past 63
    /// do not scan again the blocks of the seed's many short values.
    pub(super) marks: [ZeroedVec<AtomicU64>; 2],
    /// The same marks per word of 64 slots, every distance `d` at bit `d % 64`: in a block
    /// marked for its pass, the pass reads every slot only of the words marked as well.
    pub(super) word_marks: ZeroedVec<AtomicU64>,
    /// The frontier as one bit a slot, by parity of distance: a ply pass `n` reads and
    /// clears `frontier[n % 2]` (the slots it lists at distance `n`) and lists the slots it
    /// decides at `n + 1` in the other.
    pub(super) frontier: [ZeroedVec<AtomicU64>; 2],
    /// One bit a block of `1 << MARK_SHIFT` slots: whether any slot of the block is in the
    /// frontier of the same parity.
    pub(super) frontier_blocks: [ZeroedVec<AtomicU64>; 2],
    /// One bit a block of `1 << MARK_SHIFT` slots: clear once a pull found the block has
    /// no slot left that a later loss pass could make a win (only the seed makes such
    /// slots, so a clear block stays so). A pull skips clear blocks.
    pub(super) pull_blocks: Vec<AtomicU64>,
    /// The packed conversion codes the seed found (see [`Generated::conversions`]).
    pub(super) conversions: ZeroedVec<u8>,
    pub(super) max_distance: AtomicU32,
    pub(super) error: std::sync::Mutex<Option<GenError>>,
    /// The indices of the slice being made (see [`TableIndex::slices`]).
    pub(super) slice: std::ops::Range<u64>,
}

/// What a generator hands on after each slice of a table ([`Generator::run_sliced`]).
pub(crate) trait SliceSink {
    /// The slice of indices `slice` is final in `codes` (both sides to move; every other
    /// slot holds 0), with its packed conversions in `conversions` (likewise): arrays of
    /// the whole table, of which only the slice's part was touched. The sink may reuse
    /// them.
    fn slice(
        &mut self,
        g: &Generator<'_>,
        slice: std::ops::Range<u64>,
        codes: Cells,
        conversions: ZeroedVec<u8>,
    ) -> Result<(), GenError>;
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
            index: TableIndex::for_generation(material.normalized()),
            loss_passes: LossPasses::Auto,
            rules,
            sub,
            progress,
            codes: Cells::new(0, GEN_ALPHABET, 0),
            alphabet: GEN_ALPHABET,
            marks: Default::default(),
            word_marks: ZeroedVec::default(),
            frontier: Default::default(),
            frontier_blocks: Default::default(),
            pull_blocks: Vec::new(),
            conversions: ZeroedVec::default(),
            max_distance: AtomicU32::new(0),
            error: std::sync::Mutex::new(None),
            slice: 0..0,
        }
    }

    /// Sets the states kept in a byte (the table is the same whatever they are: the
    /// others spill; tests spill most states with a small alphabet).
    #[must_use]
    pub fn alphabet(mut self, alphabet: Alphabet) -> Generator<'a> {
        self.alphabet = alphabet;
        self
    }

    /// Numbers the positions by index scheme `scheme` (1, the files', or 2, by slices,
    /// the default where the material has a lone pawn or a pair of like pawns: see
    /// [`TableIndex::for_generation`]).
    /// The table is the same either way. `None` for another scheme.
    #[must_use]
    pub fn index_scheme(mut self, scheme: u32) -> Option<Generator<'a>> {
        if scheme != 1 && scheme != 2 {
            return None;
        }
        self.index = TableIndex::try_with_scheme(self.index.material(), scheme).ok()?;
        Some(self)
    }

    /// Sets how loss passes find their predecessors (the table is the same either way).
    #[must_use]
    pub fn loss_passes(mut self, how: LossPasses) -> Generator<'a> {
        self.loss_passes = how;
        self
    }

    pub(super) fn size(&self) -> u64 {
        self.index.size()
    }

    /// The slots of the slice being made: its indices with White to move, then with
    /// Black (one range where they meet).
    pub(super) fn slice_slots(&self) -> Vec<std::ops::Range<u64>> {
        let n = self.size();
        let (a, b) = (self.slice.start, self.slice.end);
        if a == 0 && b == n {
            std::iter::once(0..2 * n).collect()
        } else {
            vec![a..b, n + a..n + b]
        }
    }

    /// The slots of the slice being made ([`Generator::slice_slots`]) chunk by chunk of
    /// `chunk` slots: each chunk that holds some, with its runs of them (in order; two
    /// where the slice's sides meet in one chunk).
    pub(super) fn slice_chunks(&self, chunk: u64) -> Vec<(u64, Vec<std::ops::Range<u64>>)> {
        let mut out: Vec<(u64, Vec<std::ops::Range<u64>>)> = Vec::new();
        for r in self.slice_slots() {
            for c in r.start / chunk..r.end.div_ceil(chunk) {
                let run = (c * chunk).max(r.start)..((c + 1) * chunk).min(r.end);
                match out.last_mut() {
                    Some((last, runs)) if *last == c => runs.push(run),
                    _ => out.push((c, vec![run])),
                }
            }
        }
        out
    }

    /// The table's name in progress labels: its material, and the slice being made where
    /// it is made in slices ("KRPvKR, files b and g").
    pub(super) fn label(&self) -> String {
        let material = self.index.material();
        if self.index.slices().len() == 1 {
            return material.to_string();
        }
        let pair = self.slice.start / self.slice.end.saturating_sub(self.slice.start).max(1);
        let file = |f: u64| char::from(b'a' + f as u8);
        format!("{material}, files {} and {}", file(pair), file(7 - pair))
    }

    /// The slots of the slice being made with `turn` to move.
    pub(super) fn slice_slots_of(&self, turn: Color) -> std::ops::Range<u64> {
        self.index.slot(turn, self.slice.start)..self.index.slot(turn, self.slice.end)
    }

    /// Stores a decided value's code and marks its block for the ply pass of its distance
    /// (for values that no ply pass lists; see [`Generator::list`]).
    #[inline]
    pub(super) fn decide(&self, slot: usize, code: u16) {
        self.codes.store(slot, code);
        let d = distance(code);
        let bit = 1u64 << (d % 64);
        set_bit(&self.marks_for(d)[slot >> MARK_SHIFT], bit);
        set_bit(&self.word_marks[slot / 64], bit);
    }

    /// The block marks that hold distance `d` (see [`Generator::marks`]).
    #[inline]
    pub(super) fn marks_for(&self, d: u32) -> &[AtomicU64] {
        &self.marks[usize::from(d >= 64)]
    }

    /// Lists a slot just decided at distance `d` (the next ply's) for the pass of `d`.
    #[inline]
    pub(super) fn list(&self, slot: u64, d: u32) {
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
    pub(super) fn reach(&self, d: u32) {
        if self.max_distance.load(Ordering::Relaxed) < d {
            self.max_distance.fetch_max(d, Ordering::Relaxed);
        }
    }

    pub(super) fn fail(&self, e: GenError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    pub(super) fn failed(&self) -> bool {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// The position at index `i` with `turn` to move, given the index's board as
    /// [`Decoder::decode_legal`] gives it, if the slot is used.
    #[inline]
    pub(super) fn position_of(
        &self,
        turn: Color,
        i: u64,
        board: Option<Board>,
    ) -> Option<Position> {
        // A decoded board has the material, one shah a side, the shahs apart and pawns on
        // ranks 2-7; the decoder has ruled out a check on the side not to move.
        debug_assert!(
            !super::cross_checked(i)
                || board.is_some()
                    == self
                        .index
                        .decode(i)
                        .is_some_and(|b| Position::from_board(b, turn).is_ok()),
            "index {i}"
        );
        let board = board?;
        if self.index.may_be_mirror(i) && !self.index.is_canonical(i, &board) {
            return None;
        }
        Some(Position::from_board_unchecked(board, turn))
    }

    /// The position at a slot already known to be used (it holds a value or a counter).
    pub(super) fn used_position_at(&self, slot: u64) -> Position {
        let (turn, i) = self.index.split_slot(slot);
        let board = self.index.decode(i).expect("a used slot decodes");
        Position::from_board_unchecked(board, turn)
    }

    /// The global slot of a position of this material (stored colours).
    #[inline]
    pub(super) fn slot_of(&self, pos: &Position) -> Option<u64> {
        let i = self.index.encode(pos.board())?;
        Some(self.index.slot(pos.turn(), i))
    }

    /// The slot of `next`, the position after a quiet move (or un-move) of `piece` from
    /// `from` to `to` in the board of index `i` (as decoded, `fixed` if not
    /// [`TableIndex::may_be_mirror`]), with `turn` to move: by index arithmetic when a
    /// piece other than a shah moves and the orientation is fixed, else by encoding.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn slot_after(
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
            debug_assert!(!super::cross_checked(i) || Some(k) == self.slot_of(&next()));
            Ok(k)
        } else if let Some(k) = fixed
            .then(|| self.shah_move_index(i, board, piece.color, to))
            .flatten()
        {
            let k = self.index.slot(turn, k);
            debug_assert!(!super::cross_checked(i) || Some(k) == self.slot_of(&next()));
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
    pub(super) fn shah_move_index(
        &self,
        i: u64,
        board: &Board,
        color: Color,
        to: Square,
    ) -> Option<u64> {
        let (wk, bk) = match color {
            Color::White => (to, board.shah_of(Color::Black)?),
            Color::Black => (board.shah_of(Color::White)?, to),
        };
        self.index.index_after_shah_move(i, wk, bk)
    }

    /// Runs every pass and returns the table (its slots in the files' order, scheme 1,
    /// whatever order it was made in).
    pub fn run(self) -> Result<Generated, GenError> {
        self.run_with(None)
    }

    /// Runs every pass, a slice at a time ([`TableIndex::slices`]), handing each to
    /// `sink` once it is final and then freeing its memory: the table returned keeps its
    /// figures only (`codes` and `conversions` empty). A table with pawns then needs the
    /// memory of its largest slice only: a quarter of it with a lone pawn, an eighth with
    /// a pair of like pawns and no lone pawn.
    pub(crate) fn run_sliced(self, sink: &mut dyn SliceSink) -> Result<Generated, GenError> {
        self.run_with(Some(sink))
    }

    fn run_with(mut self, mut sink: Option<&mut dyn SliceSink>) -> Result<Generated, GenError> {
        let start = Instant::now();
        // the whole table's slots, in the files' order
        let total = 2 * self.index.file_size();
        let slices = self.index.slices();
        let mut counts = stats::Counts::default();
        let mut spilled = 0;
        // the whole table, when no sink takes the slices
        let mut codes: Option<Cells> = None;
        let mut conversions: ZeroedVec<u8> = ZeroedVec::default();
        for slice in slices.iter().cloned() {
            self.slice = slice.clone();
            let (slice_conversions, slice_spilled) = self.run_slice()?;
            spilled = spilled.max(slice_spilled);
            counts.add(&self.index, &self.codes, slice.clone(), self.progress);
            let slice_codes = std::mem::replace(&mut self.codes, Cells::new(0, GEN_ALPHABET, 0));
            if let Some(sink) = sink.as_deref_mut() {
                sink.slice(&self, slice, slice_codes, slice_conversions)?;
            } else if slices.len() == 1 {
                codes = Some(slice_codes);
                conversions = slice_conversions;
            } else {
                // a table held in memory: the slice's values into the whole table's, at
                // their slots in the files' order
                let whole = codes
                    .get_or_insert_with(|| Cells::new(total as usize, self.alphabet.clone(), 0));
                if conversions.is_empty() {
                    conversions = zeroed(total.div_ceil(4) as usize);
                }
                let (n, file_n) = (self.size(), self.index.file_size());
                // (a split pair's digits that name no position have no file slot)
                let file_slot = |s: u64| Some(s / n * file_n + self.index.file_index(s % n)?);
                for r in self.slice_slots() {
                    r.clone().into_par_iter().for_each(|s| {
                        if let Some(f) = file_slot(s) {
                            whole.store(f as usize, slice_codes.load(s as usize));
                        }
                    });
                    for s in r {
                        let c = super::state::packed_conversion(&slice_conversions, s as usize);
                        if let Some(f) = file_slot(s) {
                            let f = f as usize;
                            conversions[f / 4] |= c << (2 * (f % 4));
                        }
                    }
                }
            }
        }
        let codes = codes.unwrap_or_else(|| Cells::new(0, GEN_ALPHABET, 0));
        Ok(Generated {
            material: self.index.material(),
            rules: self.rules,
            codes,
            conversions,
            stats: counts.finish(&self.index),
            spilled,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// Runs the seed and the ply passes of the slice [`Generator::slice`] in fresh arrays
    /// of the whole table (only the slice's part of them is ever touched), leaving its
    /// codes in `codes` (what is still undecided a draw) and returning its conversions and
    /// the most values spilled at once.
    fn run_slice(&mut self) -> Result<(ZeroedVec<u8>, usize), GenError> {
        let total = 2 * self.size();
        self.codes = Cells::new(total as usize, self.alphabet.clone(), 0);
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
        self.max_distance.store(0, Ordering::Relaxed);

        let mut conversions = zeroed(total.div_ceil(4) as usize);
        self.seed(&mut conversions);
        self.conversions = conversions;
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        if self.progress.cancelled() {
            return Err(GenError::Cancelled);
        }
        let spilled_by_seed = self.codes.spilled();
        self.retrograde();
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        if self.progress.cancelled() {
            return Err(GenError::Cancelled);
        }
        self.marks = Default::default();
        self.word_marks = ZeroedVec::default();
        self.frontier = Default::default();
        self.frontier_blocks = Default::default();
        self.pull_blocks = Vec::new();
        // what is still undecided is a draw
        for r in self.slice_slots() {
            self.codes
                .map_range(r.start as usize..r.end as usize, CHUNK as usize, |_, c| {
                    if is_undecided(c) { 0 } else { c }
                });
        }
        // the larger of the seed's spills and the passes' (a seed spills its tentative
        // values, which the passes then decide)
        let spilled = spilled_by_seed.max(self.codes.spilled());
        Ok((std::mem::take(&mut self.conversions), spilled))
    }
}

/// Types whose value of all-zero bytes is their `Default`.
///
/// # Safety
/// Every byte of an implementor zero must be a valid value.
#[allow(unsafe_code)]
pub unsafe trait Zeroed: Default {}

// SAFETY: an atomic integer has the layout of its integer, for which zero bytes are 0.
#[allow(unsafe_code)]
unsafe impl Zeroed for AtomicU64 {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Zeroed for std::sync::atomic::AtomicU8 {}
// SAFETY: zero bytes are 0.
#[allow(unsafe_code)]
unsafe impl Zeroed for u8 {}

/// `n` zeroed values, on huge pages where the system allows: the ply passes reach them at
/// random, and 2 MiB pages spare most of the TLB misses. See [`ZeroedVec`].
pub(super) fn zeroed<A: Zeroed>(n: usize) -> ZeroedVec<A> {
    ZeroedVec::new(n)
}

/// An array of values that starts zeroed, taken from the system allocator rather than
/// the program's (mimalloc, which zeroes reused memory by writing it): a large one comes
/// straight from the kernel as untouched pages, so a page costs memory only once
/// something touches it. The generator makes a table with pawns a slice at a time in
/// arrays of the whole table, of which only the slice's part is ever resident.
pub struct ZeroedVec<A> {
    ptr: std::ptr::NonNull<A>,
    len: usize,
}

// SAFETY: a ZeroedVec owns its values as a Vec does.
#[allow(unsafe_code)]
unsafe impl<A: Send> Send for ZeroedVec<A> {}
// SAFETY: as above; shared access gives `&[A]` only.
#[allow(unsafe_code)]
unsafe impl<A: Sync> Sync for ZeroedVec<A> {}

#[allow(unsafe_code)]
impl<A: Zeroed> ZeroedVec<A> {
    /// `n` zeroed values.
    #[must_use]
    pub fn new(n: usize) -> ZeroedVec<A> {
        use std::alloc::GlobalAlloc;
        let layout = std::alloc::Layout::array::<A>(n).expect("an array that fits memory");
        if layout.size() == 0 {
            return ZeroedVec {
                ptr: std::ptr::NonNull::dangling(),
                len: n,
            };
        }
        // SAFETY: the layout has a non-zero size (checked above).
        let ptr = unsafe { std::alloc::System.alloc_zeroed(layout) }.cast::<A>();
        let Some(ptr) = std::ptr::NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout);
        };
        advise_huge_pages(ptr.as_ptr().cast(), layout.size());
        ZeroedVec { ptr, len: n }
    }
}

impl<A> std::ops::Deref for ZeroedVec<A> {
    type Target = [A];

    #[allow(unsafe_code)]
    fn deref(&self) -> &[A] {
        // SAFETY: `ptr` holds `len` initialised values (zero bytes, valid for a `Zeroed`
        // type, then whatever was written through `&mut`), or is dangling for an empty
        // or zero-sized array, which a slice allows; `&self` keeps them borrowed.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<A> std::ops::DerefMut for ZeroedVec<A> {
    #[allow(unsafe_code)]
    fn deref_mut(&mut self) -> &mut [A] {
        // SAFETY: as for `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<A> Drop for ZeroedVec<A> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        use std::alloc::GlobalAlloc;
        let layout = std::alloc::Layout::array::<A>(self.len).expect("allocated so");
        if layout.size() == 0 {
            return;
        }
        // SAFETY: the values need no drop (a `Zeroed` type is an integer or an atomic
        // one: `new` is the only constructor), and `ptr` was allocated by `System` with
        // this very layout.
        unsafe { std::alloc::System.dealloc(self.ptr.as_ptr().cast(), layout) }
    }
}

impl<A: Zeroed> Default for ZeroedVec<A> {
    /// No values.
    fn default() -> ZeroedVec<A> {
        ZeroedVec::new(0)
    }
}

impl<A: Zeroed + Copy> Clone for ZeroedVec<A> {
    fn clone(&self) -> ZeroedVec<A> {
        let mut v = ZeroedVec::new(self.len);
        v.copy_from_slice(self);
        v
    }
}

impl<A: PartialEq> PartialEq for ZeroedVec<A> {
    fn eq(&self, other: &ZeroedVec<A>) -> bool {
        **self == **other
    }
}

impl<A> std::fmt::Debug for ZeroedVec<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZeroedVec").field("len", &self.len).finish()
    }
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
