//! Generating tables into a directory, in dependency order, and verifying them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::budget::{Limits, Needs, check_run, check_table, free_disk_bytes};
use super::digit_order::InOrder;
use super::dtz::{DtzStats, DtzTable, Leaves, generate_dtz, pack_wdl, starts_from_dtm};
use super::{Cells, GenError, Generated, Progress, SubTables, generate};
use crate::fen::Fen;
use crate::format::{self, Metric, TableMeta};
use crate::index::{DIGIT_ORDER_SCHEME, DigitOrder, INDEX_SCHEME, TableIndex};
use crate::material::Material;
use crate::position::{MoveList, Position};
use crate::probe::{ProbeError, Tablebase, stored_slot, table_path};
use crate::rules::{MoveRule, RuleSet};
use crate::value::{Category, Dtz, Value, Wdl};

impl SubTables for Tablebase {
    fn value(&self, pos: &Position) -> Result<Value, GenError> {
        Tablebase::value(self, pos).map_err(|e| GenError::SubTable(e.to_string()))
    }

    fn category(&self, pos: &Position) -> Result<Category, GenError> {
        if self.rules().move_rule == MoveRule::None {
            return Ok(plain_category(SubTables::value(self, pos)?));
        }
        Ok(Tablebase::dtz(self, pos)
            .map_err(|e| GenError::SubTable(e.to_string()))?
            .category)
    }
}

/// The category of a value without a move rule.
pub(crate) fn plain_category(v: Value) -> Category {
    match v {
        Value::Win(_) => Category::Win,
        Value::Draw => Category::Draw,
        Value::Loss(_) => Category::Loss,
    }
}

/// The sub-tables of one material as its generation reads them: the small ones whole in
/// memory (every 4-man table, and the 5-man ones of a 6-man table: see
/// [`super::plan::sub_table_is_resident`]), the others through the tablebase. The seed
/// probes a sub-table once for each capture of every position (hundreds of millions of
/// times on a 5-man table), and an array costs less than a lookup in the block cache,
/// which takes a lock.
struct ResidentSubTables<'a> {
    tb: &'a Tablebase,
    tables: Vec<Resident>,
}

/// The DTM codes of one sub-table, in slot order.
struct Resident {
    material: Material,
    index: TableIndex,
    codes: Codes,
    path: PathBuf,
}

/// A sub-table's codes: a byte a slot when it has at most 256 distinct ones (every 4-man
/// table so far), which halves what the sub-tables hold during the whole generation.
enum Codes {
    Narrow { symbols: Vec<u16>, slots: Vec<u8> },
    Wide(Vec<u16>),
}

impl Codes {
    fn new(codes: Vec<u16>) -> Codes {
        let mut seen = vec![false; 1 << 16];
        for &c in &codes {
            seen[usize::from(c)] = true;
        }
        let symbols: Vec<u16> = (0..=u16::MAX).filter(|&c| seen[usize::from(c)]).collect();
        if symbols.len() > 256 {
            return Codes::Wide(codes);
        }
        let mut symbol = vec![0u8; 1 << 16];
        for (k, &c) in symbols.iter().enumerate() {
            symbol[usize::from(c)] = k as u8;
        }
        let slots = codes.iter().map(|&c| symbol[usize::from(c)]).collect();
        Codes::Narrow { symbols, slots }
    }

    #[inline]
    fn get(&self, slot: usize) -> Option<u16> {
        match self {
            Codes::Narrow { symbols, slots } => slots.get(slot).map(|&k| symbols[usize::from(k)]),
            Codes::Wide(codes) => codes.get(slot).copied(),
        }
    }
}

impl<'a> ResidentSubTables<'a> {
    /// Reads the small sub-tables of `material` that `tb` has.
    fn new(tb: &'a Tablebase, material: Material) -> Result<ResidentSubTables<'a>, GenError> {
        let mut tables: Vec<Resident> = Vec::new();
        let table_slots = super::plan::slots(material);
        for m in material.successors() {
            let m = m.normalized();
            if m.is_decided_by_rules() || !tb.has_table(m) || tables.iter().any(|r| r.material == m)
            {
                continue;
            }
            let index = TableIndex::new(m);
            if !super::plan::sub_table_is_resident(2 * index.size(), table_slots) {
                continue;
            }
            let codes = tb
                .read_dtm_codes(m)
                .map_err(|e| GenError::SubTable(e.to_string()))?;
            tables.push(Resident {
                material: m,
                index,
                codes: Codes::new(codes),
                path: table_path(tb.dir(), m, tb.rules(), Metric::Dtm),
            });
        }
        Ok(ResidentSubTables { tb, tables })
    }
}

impl SubTables for ResidentSubTables<'_> {
    fn value(&self, pos: &Position) -> Result<Value, GenError> {
        if let Some(v) = Value::of_decided(pos, self.tb.rules()) {
            return Ok(v);
        }
        let m = Material::from_board(pos.board());
        let stored = m.normalized();
        let Some(r) = self.tables.iter().find(|r| r.material == stored) else {
            return SubTables::value(self.tb, pos);
        };
        let s = stored_slot(&r.index, m, pos).ok_or_else(|| {
            GenError::Inconsistent(format!("no index for {}", Fen::from_position(pos)))
        })?;
        let code = r.codes.get(s as usize).unwrap_or(format::UNUSED);
        Tablebase::dtm_code_value(&r.path, s, code).map_err(|e| GenError::SubTable(e.to_string()))
    }

    fn category(&self, pos: &Position) -> Result<Category, GenError> {
        if self.tb.rules().move_rule == MoveRule::None {
            return Ok(plain_category(self.value(pos)?));
        }
        SubTables::category(self.tb, pos)
    }
}

/// Whether some table that `material` converts into has cursed wins or blessed losses
/// under the move rule of `tb` (read from the figures in their DTZ files).
fn cursed_subtables(tb: &Tablebase, material: Material) -> Result<bool, GenError> {
    if tb.rules().move_rule == MoveRule::None {
        return Ok(false);
    }
    for m in material.successors() {
        let m = m.normalized();
        if m.is_decided_by_rules() {
            continue;
        }
        let stats = tb
            .dtz_stats(m)
            .map_err(|e| GenError::SubTable(format!("the DTZ of {m}: {e}")))?;
        if stats.has_cursed() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// zstd level of DTZ files. Measured on KBvKP's DTZ file (2 shared, busy cores; bytes and
/// seconds to compress, write, read back and check): level 9 with 32 KiB blocks 1,173,680
/// bytes in 0.5 s; 15 with 32 KiB 965,412 in 2.5 s; 15 with 64 KiB 859,124 in 2.7 s; 15 with
/// 128 KiB 806,285 in 4.3 s; 19 with 256 KiB 749,013 in 10 s. KQvKQ: 196,601 bytes at 9 and
/// 32 KiB, 157,100 at 15 and 128 KiB, 148,609 at 19 and 256 KiB.
pub const DTZ_ZSTD_LEVEL: i32 = 15;

/// Bytes of packed symbols per block of a DTZ file (see [`DTZ_ZSTD_LEVEL`]).
pub const DTZ_BLOCK_BYTES: usize = 64 << 10;

/// Bytes of packed symbols per block of a DTZ file whose values are mostly unused (see
/// [`format::SparseOptions`]). KRQvKR's file, 97.6 % unused, at level 15: 272,957 bytes
/// with blocks of 64 KiB, 226,955 with 128 KiB, 216,494 with 256 KiB.
pub const DTZ_SPARSE_BLOCK_BYTES: usize = 256 << 10;

/// zstd level of a DTZ file whose values are mostly unused. KRQvKR's file with blocks of
/// 256 KiB (and unused slots also tried filled along a period): 202,463 bytes at level 15,
/// 199,507 at 17 (2 s more), 197,808 at 19 (4.6 s more).
pub const DTZ_SPARSE_ZSTD_LEVEL: i32 = 17;

/// zstd target length of a DTZ file whose values are mostly unused, at
/// [`DTZ_SPARSE_ZSTD_LEVEL`] (see [`format::SparseOptions::target_length`]). Measured by
/// re-compressing the blocks of five files (2 cores; bytes of blocks, seconds): against
/// the level's own, KBBvKB +1.5 % in 2.3-2.7 s instead of 4.95-5.28 s, KBBvKQ +0.5 % in
/// 4.1-4.6 s instead of 5.2-5.8 s, KRQvKR +0.4 %, KNvKQ +0.2 %, KPvKP +1.3 %. Levels 15 and
/// 16, or a search log of 2, saved as much time or more but made KRQvKR's or KNvKQ's file
/// larger than the Syzygy generator's `.jtbz`; this keeps both below.
pub const DTZ_SPARSE_TARGET_LENGTH: u32 = 192;

/// Values a side from which a sparse DTZ file compresses its dense blocks (those of many
/// used values) at [`DTZ_DENSE_BLOCK_LEVEL`] (see [`format::DenseBlocks`]): every table of
/// 5 men or more; the sparse files of 4 men have at most 18 blocks and take under a
/// second.
pub const DTZ_DENSE_BLOCKS_FROM: usize = 1 << 24;

/// Bytes at zstd level 3 from which a block of a large sparse DTZ file is dense (see
/// [`DTZ_DENSE_BLOCKS_FROM`]).
pub const DTZ_DENSE_BLOCK_BYTES: usize = 2048;

/// zstd level of the dense blocks of a large sparse DTZ file (see
/// [`DTZ_DENSE_BLOCKS_FROM`]). Measured by re-compressing each file's blocks (2 cores,
/// bytes of blocks, seconds) against every block at [`DTZ_SPARSE_ZSTD_LEVEL`] with
/// [`DTZ_SPARSE_TARGET_LENGTH`]: KBPvKQ (1,355 blocks, of which none below 4 KiB at level
/// 3) 20,916,193 bytes in 28.9 s against 20,293,041 in 62.5 s (+3.1 %), KNBvKR 1,980,349 in
/// 1.5 s against 1,956,284 in 2.9 s, KBBvKB in 1.3 s against 2.3-2.7 s (its file 2,217,988
/// bytes against 2,204,492); KRQvKR, whose blocks are all below 2 KiB at level 3, is unchanged (its file is
/// one of the goals, which level 15 throughout would have lost: 203,783 bytes
/// against `.jtbz`'s 202,064). Level 15 with a search log of 2 took KBPvKQ's in 17.8 s but
/// made it 8.8 % larger.
pub const DTZ_DENSE_BLOCK_LEVEL: i32 = 15;

/// Writes the DTZ file of a table (to a temporary name, synced, read back and checked,
/// then renamed into place); its size. A table that is its own mirror keeps White to move,
/// its wins by a zeroing move left out. Any other keeps one side to move, with or
/// without its wins by a zeroing move, whichever compresses better (its figures say which,
/// `DtzStats::side_stored` and `zeroing_wins_left_out`): a probe of that side reads the WDL
/// file and this one, a probe of the other side looks one move ahead. The values are read
/// through as they are compressed ([`Side`]): a copy would double the memory the table
/// needs.
/// Stops with [`GenError::Cancelled`] once `progress` asks it to, leaving no file.
pub fn write_dtz(dir: &Path, t: &DtzTable, progress: &dyn Progress) -> Result<u64, GenError> {
    let plies = |range: std::ops::Range<usize>, out: &mut Vec<u16>| t.plies.read_into(range, out);
    let ply = |s: usize| t.plies.load(s);
    let prefetch = |s: usize| t.plies.prefetch(s);
    let dtz = DtzValues {
        material: t.material,
        rules: t.rules,
        stats: &t.stats,
        plies: &plies,
        len: t.plies.len(),
        zeroing_wins: ZeroingWins::Bits(&t.zeroing_wins),
        ply: Some(PlyAt {
            ply: &ply,
            prefetch: &prefetch,
        }),
    };
    write_dtz_values(dir, &dtz, progress)
}

/// A table's DTZ for [`write_dtz_values`], wherever its plies are kept.
pub(super) struct DtzValues<'a> {
    pub material: Material,
    pub rules: RuleSet,
    pub stats: &'a DtzStats,
    /// The plies of a range of slots (as [`DtzTable::plies`]), into the vector.
    pub plies: &'a (dyn Fn(std::ops::Range<usize>, &mut Vec<u16>) + Sync),
    /// Number of slots (both sides to move).
    pub len: usize,
    /// Where its wins by a zeroing move are told.
    pub zeroing_wins: ZeroingWins<'a>,
    /// The plies of one slot, where they can be read one at a time (held in memory): the
    /// file then keeps its values in the digit order that compresses them best (index
    /// scheme 3, see [`super::digit_order`]); otherwise in scheme 1's order.
    pub ply: Option<PlyAt<'a>>,
}

/// The plies of one slot (as [`DtzValues::ply`]), and a prefetch of them (see
/// [`super::digit_order::ValueAt::prefetch`]).
#[derive(Clone, Copy)]
pub(super) struct PlyAt<'a> {
    pub ply: &'a (dyn Fn(usize) -> u16 + Sync),
    pub prefetch: &'a (dyn Fn(usize) + Sync),
}

/// Where the wins in 1 ply by a zeroing move of a table's DTZ are told.
#[derive(Clone, Copy)]
pub(super) enum ZeroingWins<'a> {
    /// A bit a slot, as [`DtzTable::zeroing_wins`]; the plies say 1.
    Bits(&'a [std::sync::atomic::AtomicU64]),
    /// The plies say [`super::sliced::ZEROING_WIN`].
    Marked,
}

/// A side of at most this many numbers (the 4-man tables without pawns, 2.6 M, and
/// KPvKP) whose file is sparse compares the [`ORDERS_COMPARED`] best digit orders of its
/// sample in the file's own packing (its symbols, blocks and fills, at
/// [`ORDERS_COMPARED_LEVEL`]) rather than taking the best on the sample. On the other
/// 4-man tables with pawns (6.3 M) it made KBvKP's and KQvKP's files without their wins
/// by a zeroing move 5 % smaller (221,268 to 210,819 bytes, 367,738 to 346,560, all below
/// the Syzygy generator's) and took 3.5 s more each.
pub const ORDERS_COMPARED_MAX: u64 = 1 << 22;

/// How many of a small side's best digit orders on the sample are compared
/// ([`ORDERS_COMPARED_MAX`]).
pub const ORDERS_COMPARED: usize = 24;

/// The zstd level a small side's orders are compared at ([`ORDERS_COMPARED_MAX`]).
/// Comparing the sample's best 8: at 9 (the level the sides are compared at) KRvKR's
/// file was 4,987 bytes, at 6 4,440, the other 4-man files the same at both; at 4
/// KNvKB's was 112,194 against 108,041.
pub const ORDERS_COMPARED_LEVEL: i32 = 6;

/// The weight, in per cent against 100, of a DTZ file of a table with pawns that keeps
/// its wins by a zeroing move: one that leaves them out is written only if it is a
/// quarter smaller. A probe of a win left out looks at its zeroing moves, and one of the
/// other side's losses at a child's or two, where a pawn's moves lead into other tables.
/// Every file smaller wins in a table without pawns. Measured in docs/ARCHITECTURE.md, "A
/// small table's digit order".
pub const KEPT_ZEROING_WINS_WEIGHT_PAWNS: u64 = 75;

/// [`write_dtz`] of plies read through `t.plies`.
pub(super) fn write_dtz_values(
    dir: &Path,
    t: &DtzValues<'_>,
    progress: &dyn Progress,
) -> Result<u64, GenError> {
    let stop = || progress.cancelled();
    let meta = |side_stored: Option<&str>, left_out: bool, order: Option<&DigitOrder>| {
        let stats = DtzStats {
            side_stored: side_stored.map(str::to_string),
            zeroing_wins_left_out: left_out,
            digit_order: order.map(|o| o.order().to_vec()),
            ..t.stats.clone()
        };
        serde_json::to_vec(&stats)
            .map(|extra| TableMeta {
                metric: Metric::Dtz,
                rules_code: t.rules.code(),
                material: t.material.to_string(),
                index_scheme: if order.is_some() {
                    DIGIT_ORDER_SCHEME
                } else {
                    INDEX_SCHEME
                },
                extra,
            })
            .map_err(|e| GenError::Write(e.to_string()))
    };
    let half = t.len / 2;
    let options = format::WriteOptions {
        zstd_level: DTZ_ZSTD_LEVEL,
        block_bytes: DTZ_BLOCK_BYTES,
        sparse: Some(format::SparseOptions {
            block_bytes: DTZ_SPARSE_BLOCK_BYTES,
            zstd_level: DTZ_SPARSE_ZSTD_LEVEL,
            target_length: Some(DTZ_SPARSE_TARGET_LENGTH),
            dense_blocks: (half >= DTZ_DENSE_BLOCKS_FROM).then_some(format::DenseBlocks {
                min_bytes: DTZ_DENSE_BLOCK_BYTES,
                zstd_level: DTZ_DENSE_BLOCK_LEVEL,
            }),
        }),
        ..format::WriteOptions::default()
    };
    let path = table_path(dir, t.material, t.rules, Metric::Dtz);
    let index = TableIndex::new(t.material);
    let periods = index.fill_periods();
    let side = |start, left_out: bool| Side {
        plies: t.plies,
        ply: t.ply,
        zeroing_wins: t.zeroing_wins,
        left_out,
        start,
        len: half,
        periods: &periods,
    };
    // the digit orders of each side with and without its wins by a zeroing move, chosen
    // on those values (the orders best for the two differ: KNvKB's Black to move, with
    // them the Black pieces first and the White shah last, without them the White shah
    // first): the best on the sample, or in a small table the best few, for the file's
    // own packing to compare
    let orders_of = |start, left_out| {
        if t.ply.is_none() {
            return Ok(vec![None]);
        }
        match super::digit_order::best_orders(&index, &side(start, left_out), &stop) {
            Some(o) => Ok(o.into_iter().map(Some).collect()),
            None if progress.cancelled() => Err(GenError::Cancelled),
            None => Ok(vec![None]),
        }
    };
    fn in_order<'s>(
        side: &'s Side<'_>,
        order: &'s Option<DigitOrder>,
    ) -> Box<dyn format::Values + 's> {
        match order {
            Some(order) => Box::new(InOrder {
                values: side,
                order,
            }),
            None => Box::new(*side),
        }
    }
    // White to move only in a table that is its own mirror (Black to move is the same
    // with the colours swapped), its wins by a zeroing move left out. Otherwise one side
    // to move, with or without its wins by a zeroing move, whichever compresses best (a
    // probe of the other side looks one move ahead; one of a win left out looks at its
    // zeroing moves), in a table with pawns without them only if that saves a quarter
    // ([`KEPT_ZEROING_WINS_WEIGHT_PAWNS`])
    let kinds: &[(usize, bool)] = if t.material.is_symmetric() {
        &[(0, true)]
    } else {
        &[(0, false), (half, false), (0, true), (half, true)]
    };
    let sides: Vec<Side<'_>> = kinds.iter().map(|&(start, l)| side(start, l)).collect();
    let symmetric = t.material.is_symmetric();
    let meta_of = |(start, left_out): (usize, bool), order: Option<&DigitOrder>| {
        if symmetric {
            meta(None, false, order)
        } else {
            let colour = if start == 0 { "white" } else { "black" };
            meta(Some(colour), left_out, order)
        }
    };
    let mut ranked = Vec::new();
    for &(start, left_out) in kinds {
        ranked.push(orders_of(start, left_out)?);
    }
    // which side and whether its wins by a zeroing move are left out: each in the best
    // order on its sample
    let k = if kinds.len() == 1 {
        0
    } else {
        let mut metas = Vec::new();
        for (&kind, r) in kinds.iter().zip(&ranked) {
            metas.push(meta_of(kind, r[0].as_ref())?);
        }
        let values: Vec<_> = sides
            .iter()
            .zip(&ranked)
            .map(|(s, r)| in_order(s, &r[0]))
            .collect();
        let kept_weight = if t.material.has_pawns() {
            KEPT_ZEROING_WINS_WEIGHT_PAWNS
        } else {
            100
        };
        let candidates: Vec<(&TableMeta, &dyn format::Values, u64)> = metas
            .iter()
            .zip(&values)
            .zip(kinds)
            .map(|((m, v), &(_, left_out))| (m, &**v, if left_out { 100 } else { kept_weight }))
            .collect();
        format::smallest_until(&path, &candidates, &options, &stop).map_err(write_error)?
    };
    // then the order of that one: a small side whose file will be sparse (at least three
    // quarters of its numbers unused) compares its best few on the sample in the file's
    // own packing; any other takes the sample's best (the file's packing, compared on a
    // sample of a dense file's blocks at a lower level than its own, chose orders that
    // made KRvKQ's and KBvKP's files larger than the sample's)
    let mut orders = ranked.swap_remove(k);
    let sparse = || {
        let numbers = orders[0].as_ref().map_or(half as u64, DigitOrder::size);
        let unused = format::Values::frequencies(&sides[k])[usize::from(format::UNUSED)];
        let held = half as u64 - unused;
        (numbers - held) * 256 >= numbers * format::SPARSE_UNUSED
    };
    let compared = if half as u64 <= ORDERS_COMPARED_MAX && sparse() {
        ORDERS_COMPARED
    } else {
        1
    };
    orders.truncate(compared);
    let mut metas = Vec::new();
    for order in &orders {
        metas.push(meta_of(kinds[k], order.as_ref())?);
    }
    let values: Vec<_> = orders.iter().map(|o| in_order(&sides[k], o)).collect();
    let written = if let [value] = &values[..] {
        format::write_table_until(&path, &metas[0], &**value, &options, &stop)
    } else {
        let candidates: Vec<(&TableMeta, &dyn format::Values, u64)> = metas
            .iter()
            .zip(&values)
            .map(|(m, v)| (m, &**v, 100))
            .collect();
        let compare = format::WriteOptions {
            sparse: options.sparse.clone().map(|o| format::SparseOptions {
                zstd_level: ORDERS_COMPARED_LEVEL,
                target_length: None,
                ..o
            }),
            ..options.clone()
        };
        format::smallest_until(&path, &candidates, &compare, &stop)
            .and_then(|i| format::write_table_until(&path, &metas[i], &*values[i], &options, &stop))
    };
    let w = written.map_err(write_error)?;
    Ok(w.file_bytes)
}

/// One side to move of a table's DTZ (`start..start + len` of the slots), as a file holds
/// it: draws and unused slots [`UNUSED`](format::UNUSED), and so the wins by a zeroing
/// move if they are `left_out`.
#[derive(Clone, Copy)]
struct Side<'a> {
    plies: &'a (dyn Fn(std::ops::Range<usize>, &mut Vec<u16>) + Sync),
    /// One slot's plies, where [`DtzValues::ply`] has them.
    ply: Option<PlyAt<'a>>,
    zeroing_wins: ZeroingWins<'a>,
    left_out: bool,
    start: usize,
    len: usize,
    /// [`format::Values::fill_periods`] in scheme 1's order.
    periods: &'a [usize],
}

impl super::digit_order::ValueAt for Side<'_> {
    /// # Panics
    /// Without [`Side::ply`].
    fn value_at(&self, i: u64) -> u16 {
        let s = self.start + i as usize;
        let v = (self.ply.expect("plies one at a time").ply)(s);
        match self.zeroing_wins {
            ZeroingWins::Bits(z) => {
                let zeroing = z[s / 64].load(std::sync::atomic::Ordering::Relaxed) >> (s % 64) & 1;
                if self.left_out && zeroing != 0 {
                    format::UNUSED
                } else {
                    v
                }
            }
            ZeroingWins::Marked if v == super::sliced::ZEROING_WIN => {
                if self.left_out {
                    format::UNUSED
                } else {
                    1
                }
            }
            ZeroingWins::Marked => v,
        }
    }

    fn prefetch(&self, i: u64) {
        let s = self.start + i as usize;
        if let Some(p) = self.ply {
            (p.prefetch)(s);
        }
        if let ZeroingWins::Bits(z) = self.zeroing_wins
            && let Some(w) = z.get(s / 64)
        {
            crate::prefetch::prefetch(w);
        }
    }
}

impl format::Values for Side<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        let slots = self.start + range.start..self.start + range.end;
        (self.plies)(slots.clone(), out);
        match self.zeroing_wins {
            ZeroingWins::Bits(z) if self.left_out => {
                for (v, s) in out.iter_mut().zip(slots) {
                    if z[s / 64].load(std::sync::atomic::Ordering::Relaxed) >> (s % 64) & 1 != 0 {
                        *v = format::UNUSED;
                    }
                }
            }
            ZeroingWins::Bits(_) => {}
            ZeroingWins::Marked => {
                let zeroing = if self.left_out { format::UNUSED } else { 1 };
                for v in out.iter_mut().filter(|v| **v == super::sliced::ZEROING_WIN) {
                    *v = zeroing;
                }
            }
        }
    }

    fn fill_periods(&self) -> Vec<usize> {
        self.periods.to_vec()
    }
}

/// Most slots a side to move of a table made in slices whose DTZ file keeps its values
/// in a digit order: its plies are then read whole (2 bytes a slot of both sides; every
/// 4-man table, where 64 MiB at most; a larger one keeps scheme 1's order, read from its
/// spill in runs).
pub const SLICED_DIGIT_ORDER_MAX: u64 = 1 << 24;

/// Bytes of packed symbols per block of a WDL file.
pub const WDL_BLOCK_BYTES: usize = 256 << 10;

/// zstd level of DTM files. Measured on four 5-man tables (32 KiB blocks, 2 shared
/// cores; seconds to compress, write, read back and check, which at level 9 was a tenth
/// of the slowest tables' generation):
///
/// | table  | level 9         | 7            | 6            | 5            | 3             |
/// |--------|-----------------|--------------|--------------|--------------|---------------|
/// | KNBvKB | 80.83 MB, 3.8 s | +0.3 %, 3.1 s | +1.6 %, 2.8 s | +3.9 %, 2.2 s | -0.2 %, 2.2 s |
/// | KQBvKR | 69.08 MB, 4.5 s | +0.7 %, 3.6 s | +1.9 %, 3.0 s | +5.4 %, 2.4 s | +6.6 %, 2.0 s |
/// | KRNvKQ | 45.02 MB, 4.1 s | +1.7 %, 2.8 s | +4.7 %, 2.3 s | +9.5 %, 1.7 s | +12 %, 1.2 s  |
/// | KRQvKR | 16.45 MB, 2.8 s | +5.9 %, 1.8 s | +8.4 %, 1.9 s | +19 %, 1.5 s  | +30 %, 1.2 s  |
///
/// Level 6 takes a third less time than 9 for 1.6-8.4 % more bytes, under 2 % on the two
/// largest files; below it the files of the smaller tables grow fast. Earlier, on
/// KRQvKR: levels 10-12 took 2-10 times as long for 1-2 % fewer bytes, level 15 eight
/// times as long for 16 % fewer. (`cargo run --release --example recompress -- FILE
/// LEVEL BLOCK_KIB` re-measures.)
pub const DTM_ZSTD_LEVEL: i32 = 6;

/// zstd level of WDL files (256 KiB blocks of 2-bit symbols). Measured on three 5-man
/// tables (2 shared cores; seconds to compress, write, read back and check, two runs
/// each):
///
/// | table  | level 15        | 11             | 10             | 9              |
/// |--------|-----------------|----------------|----------------|----------------|
/// | KQBvKR | 3.60 MB, 4.3-5.0 s | +12 %, 2.2-2.5 s | +14 %, 1.4-1.6 s | +15 %, 1.2-1.3 s |
/// | KNBvKQ | 1.88 MB, 3.2-3.6 s | +11 %, 1.5-2.0 s | +13 %, 1.2-1.4 s | +14 %, 1.3-1.7 s |
/// | KRQvKR | 1.60 MB, 3.4-3.6 s | +20 %, 1.7-2.0 s | +20 %, 1.3-1.7 s | +23 %, 1.4-1.5 s |
///
/// Level 15 (zstd's optimal parser at this block size) took longer on the largest
/// 5-man tables than compressing their DTM files, twenty times larger; level 10 takes a
/// third of its time. The WDL files of all tables up to 5 men grew from 330 MB to about
/// 375 MB when this level was chosen (392 MB in the last full run, against 5.8 GB of
/// DTM files).
pub const WDL_ZSTD_LEVEL: i32 = 10;

/// What became of one table.
#[derive(Clone, Debug)]
pub enum TableOutcome {
    /// It was there and its files check out.
    Kept(Material),
    /// It was generated and written. The table keeps its statistics only (`codes` and
    /// `conversions` empty): the values are in the files.
    Written {
        table: Box<Generated>,
        wdl_bytes: u64,
        dtm_bytes: u64,
        /// The DTZ file: its size, figures, the seconds its retrograde took and the
        /// seconds writing it took (compressed, synced and read back).
        dtz_bytes: u64,
        dtz: Box<DtzStats>,
        dtz_seconds: f64,
        dtz_file_seconds: f64,
    },
}

/// Writes the WDL and DTM files of a generated table into `dir` (each to a temporary name,
/// synced, read back and checked, then renamed into place). Returns their sizes.
///
/// The DTM file is written first; then the codes become the WDL file's values in place, so
/// that writing needs no second table-sized array (on a 5-man table with a pawn, 1.4 GB).
/// Afterwards `g.codes` is empty: the values are in the files.
pub fn write(dir: &Path, g: &mut Generated) -> Result<(u64, u64), GenError> {
    let writer = TableWriter::new(dir, g, g.codes.len())?;
    let d = writer.dtm(&g.codes, &super::NoProgress)?;
    let (w, _) = write_wdl_from_codes(&writer, g, &super::NoProgress)?;
    Ok((w, d.file_bytes))
}

/// Writes the WDL and DTM files of a generated table (`g`'s figures in their headers).
struct TableWriter {
    material: Material,
    rules: RuleSet,
    extra: Vec<u8>,
    wdl_path: PathBuf,
    dtm_path: PathBuf,
    /// Values the files hold: a material that is its own colour mirror (KQvKQ) stores
    /// White to move only (Black to move is the same table with colours swapped).
    stored: usize,
}

impl TableWriter {
    /// The writer of `g`'s files into `dir` (created if missing), of `slots` slots.
    fn new(dir: &Path, g: &Generated, slots: usize) -> Result<TableWriter, GenError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| GenError::Write(format!("cannot create {}: {e}", dir.display())))?;
        Ok(TableWriter {
            material: g.material,
            rules: g.rules,
            extra: serde_json::to_vec(&g.stats).map_err(|e| GenError::Write(e.to_string()))?,
            wdl_path: table_path(dir, g.material, g.rules, Metric::Wdl),
            dtm_path: table_path(dir, g.material, g.rules, Metric::Dtm),
            stored: if g.material.is_symmetric() {
                slots / 2
            } else {
                slots
            },
        })
    }

    fn meta(&self, metric: Metric) -> TableMeta {
        TableMeta {
            metric,
            rules_code: self.rules.base().code(),
            material: self.material.to_string(),
            index_scheme: INDEX_SCHEME,
            extra: self.extra.clone(),
        }
    }

    /// Writes the DTM file of the DTM codes `values` (slot order).
    fn dtm(
        &self,
        values: &dyn format::Values,
        progress: &dyn Progress,
    ) -> Result<format::WriteStats, GenError> {
        let options = format::WriteOptions {
            zstd_level: DTM_ZSTD_LEVEL,
            ..format::WriteOptions::default()
        };
        self.file(Metric::Dtm, values, &options, progress)
    }

    /// Writes the WDL file of its values `values` ([`Generated::wdl_file_values`]).
    fn wdl(
        &self,
        values: &dyn format::Values,
        progress: &dyn Progress,
    ) -> Result<format::WriteStats, GenError> {
        // WDL blocks hold 1 M positions (2 bits each): measured on KRQvKR, 24% smaller
        // than 32 KiB blocks; a cold block still decompresses in well under a millisecond.
        let options = format::WriteOptions {
            block_bytes: WDL_BLOCK_BYTES,
            zstd_level: WDL_ZSTD_LEVEL,
            ..format::WriteOptions::default()
        };
        self.file(Metric::Wdl, values, &options, progress)
    }

    /// Writes the file of `metric` (WDL or DTM), stopping once `progress` asks it to.
    fn file(
        &self,
        metric: Metric,
        values: &dyn format::Values,
        options: &format::WriteOptions,
        progress: &dyn Progress,
    ) -> Result<format::WriteStats, GenError> {
        let path = if metric == Metric::Dtm {
            &self.dtm_path
        } else {
            &self.wdl_path
        };
        let head = format::Head(values, self.stored);
        let stop = || progress.cancelled();
        format::write_table_until(path, &self.meta(metric), &head, options, &stop)
            .map_err(write_error)
    }
}

/// Writes the WDL file of `g` once its DTM file is written: the codes become the file's
/// values in place (no second table-sized array), and their memory is returned (`g.codes`
/// is then empty). On a failure or once `progress` cancels, the DTM file is removed too.
fn write_wdl_from_codes(
    writer: &TableWriter,
    g: &mut Generated,
    progress: &dyn Progress,
) -> Result<(u64, Cells), GenError> {
    let mut values = std::mem::take(&mut g.codes);
    super::wdl_values_in_place(&mut values, &g.conversions);
    let w = writer.wdl(&values, progress).inspect_err(|_| {
        let _ = std::fs::remove_file(&writer.dtm_path);
    })?;
    Ok((w.file_bytes, values))
}

/// Whether the files of a table (WDL, DTM and DTZ under the tablebase's move rule) are
/// present and their checksums hold.
#[must_use]
pub fn table_checks_out(tb: &Tablebase, material: Material) -> bool {
    tb.has_table(material) && tb.has_dtz_file(material) && tb.check_files(material).is_ok()
}

/// Removes temporary files that an interrupted generation left behind (`.NAME.tmp.PID.N`,
/// written by a process that no longer runs). Tables are only ever renamed into place
/// complete, so these were never tables.
fn remove_stale_temporaries(dir: &Path) {
    // Whether a process runs is read from /proc; elsewhere nothing is removed.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with('.') {
            continue;
        }
        let mut parts = name.rsplit('.');
        let (Some(_n), Some(pid), Some("tmp")) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Generates `materials` (and every table they depend on) into `dir`, keeping tables
/// that are there and check out. Calls `report` after each table. Stops with
/// [`GenError::Cancelled`] when `progress` asks it to, between passes or blocks of a
/// table; the table under way is then not written (the tables finished before it are).
pub fn generate_into(
    dir: &Path,
    materials: &[Material],
    rules: RuleSet,
    progress: &dyn Progress,
    report: impl FnMut(&TableOutcome),
) -> Result<Vec<TableOutcome>, GenError> {
    generate_into_within(dir, materials, rules, &Limits::NONE, progress, report)
}

/// [`generate_into`] within `limits`: before the first table, the run is checked (its
/// largest table against the memory limit, then every table, then the files of all of
/// them against the folder's free disk), and before each table, that table again
/// against the disk then free; one that would not fit fails with [`GenError::Refused`]
/// before it starts, writing nothing.
pub fn generate_into_within(
    dir: &Path,
    materials: &[Material],
    rules: RuleSet,
    limits: &Limits,
    progress: &dyn Progress,
    mut report: impl FnMut(&TableOutcome),
) -> Result<Vec<TableOutcome>, GenError> {
    let mut todo: Vec<Material> = Vec::new();
    for m in materials {
        for d in m.with_dependencies() {
            if !todo.contains(&d) {
                todo.push(d);
            }
        }
    }
    let todo = Material::dependency_order(todo);
    remove_stale_temporaries(dir);
    let folder_error = |e: &dyn std::fmt::Display| GenError::Folder {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(folder_error(&e)),
        Ok(_) => {}
    }
    let mut tb = Tablebase::open(dir, rules).map_err(|e| folder_error(&e))?;
    // Which tables are to be generated is known before the first one is: the others are
    // present and check out, and generating a table changes no other.
    let plan: Vec<(Material, bool)> = todo
        .into_iter()
        .map(|m| (m, table_checks_out(&tb, m)))
        .collect();
    let to_generate: Vec<Material> = plan
        .iter()
        .filter(|(_, kept)| !kept)
        .map(|(m, _)| *m)
        .collect();
    check_run(&to_generate, limits, free_disk_bytes(dir)).map_err(GenError::Refused)?;
    let weight = |m: Material| 2 * TableIndex::new(m).size();
    let count = to_generate.len();
    let mut remaining: u64 = plan
        .iter()
        .filter(|(_, kept)| !kept)
        .map(|(m, _)| weight(*m))
        .sum();
    let mut done = 0;
    let mut number = 0;
    let mut outcomes = Vec::new();
    for (m, kept) in plan {
        let outcome = if kept {
            TableOutcome::Kept(m)
        } else {
            number += 1;
            progress.table(m, number, count, done, remaining);
            check_table(&Needs::of(m), limits, free_disk_bytes(dir)).map_err(GenError::Refused)?;
            let outcome = make_table(dir, &mut tb, m, rules, progress)?;
            done += weight(m);
            remaining -= weight(m);
            outcome
        };
        report(&outcome);
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Generates the table of `m` (WDL and DTM, then DTZ under the move rule of `rules`),
/// writes its files into `dir`, then opens `tb` again over `dir` and checks them through
/// it ([`check_written`]).
fn make_table(
    dir: &Path,
    tb: &mut Tablebase,
    m: Material,
    rules: RuleSet,
    progress: &dyn Progress,
) -> Result<TableOutcome, GenError> {
    let subs = ResidentSubTables::new(tb, m)?;
    // read before anything is written: a sub-table without its DTZ file fails here
    let cursed_subtables = cursed_subtables(tb, m)?;
    if TableIndex::for_generation(m.normalized()).slices().len() > 1 {
        let outcome = make_sliced_table(dir, m, rules, progress, &subs, cursed_subtables)?;
        drop(subs);
        reopen_and_check(dir, tb, m, progress)?;
        return Ok(outcome);
    }
    let mut g = generate(m, rules, &subs, progress)?;
    if progress.cancelled() {
        return Err(GenError::Cancelled);
    }
    // The WDL and DTM files are in place before the DTZ: if it fails or is cancelled, they
    // go too, so that no table is left without its DTZ (a later run makes it again whole).
    let writer = TableWriter::new(dir, &g, g.codes.len())?;
    let d = writer.dtm(&g.codes, progress)?;
    let wdl = pack_wdl(&g.codes);
    let from_dtm = starts_from_dtm(
        m,
        rules,
        &wdl,
        Some(&g.conversions),
        cursed_subtables,
        &g.codes,
        &subs,
        None,
    )
    .inspect_err(|_| {
        let _ = std::fs::remove_file(&writer.dtm_path);
    })?;
    let (wdl_bytes, dtm_bytes, wdl, dtz) = if from_dtm {
        // the DTZ starts from the codes, which then become the WDL file's values
        let leaves = Leaves {
            conversions: Some(&g.conversions),
            cursed_subtables,
            dtm: Some(&g.codes),
        };
        let dtz = generate_dtz(m, rules, &wdl, leaves, &subs, progress, Cells::default())
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&writer.dtm_path);
            })?;
        let (w, values) = write_wdl_from_codes(&writer, &mut g, progress)?;
        drop(values);
        (w, d.file_bytes, wdl, Ok(dtz))
    } else {
        // the codes' memory becomes the DTZ state once the WDL file is written
        let (w, buffer) = write_wdl_from_codes(&writer, &mut g, progress)?;
        let leaves = Leaves {
            conversions: Some(&g.conversions),
            cursed_subtables,
            dtm: None,
        };
        let dtz = generate_dtz(m, rules, &wdl, leaves, &subs, progress, buffer);
        (w, d.file_bytes, wdl, dtz)
    };
    // The DTZ file's writing needs its plies alone: what made them goes first (the WDL, the
    // conversions and the sub-tables: KRQvKR's peak was this writing's, 471 MiB, with them
    // held). The values are on disk by then (writing emptied the codes): keep the summary
    // only, or a long run (every 5-man table) would hold every table it wrote.
    drop(wdl);
    drop(std::mem::take(&mut g.conversions));
    drop(subs);
    let dtz_file = Instant::now();
    let dtz = dtz.and_then(|dtz| Ok((write_dtz(dir, &dtz, progress)?, dtz)));
    let dtz_file_seconds = dtz_file.elapsed().as_secs_f64();
    let (dtz_bytes, dtz) = match dtz {
        Ok(d) => d,
        Err(e) => {
            remove_table_files(dir, g.material, rules);
            return Err(e);
        }
    };
    drop(dtz.plies);
    reopen_and_check(dir, tb, m, progress)?;
    Ok(TableOutcome::Written {
        table: Box::new(g),
        wdl_bytes,
        dtm_bytes,
        dtz_bytes,
        dtz: Box::new(dtz.stats),
        dtz_seconds: dtz.seconds,
        dtz_file_seconds,
    })
}

/// [`make_table`] a slice at a time ([`TableIndex::slices`], a table with pawns), but for
/// the check after writing: each slice's values go to temporary files as it is
/// finished, and the table's files are written from those at the end.
fn make_sliced_table(
    dir: &Path,
    m: Material,
    rules: RuleSet,
    progress: &dyn Progress,
    subs: &ResidentSubTables<'_>,
    cursed_subtables: bool,
) -> Result<TableOutcome, GenError> {
    use super::sliced::{SliceFiles, SpilledCodes, SpilledWdl};
    std::fs::create_dir_all(dir)
        .map_err(|e| GenError::Write(format!("cannot create {}: {e}", dir.display())))?;
    let stored_form = m.normalized();
    let index = TableIndex::for_generation(stored_form);
    let layout = index
        .split_layout()
        .ok_or_else(|| GenError::Inconsistent(format!("{m} is not made in slices")))?;
    // the files' indices a side to move (fewer than the generator's for a split pair)
    let size = layout.file_size();
    let total = 2 * size;
    let dtm_path = table_path(dir, stored_form, rules, Metric::Dtm);
    let mut files = SliceFiles::new(&dtm_path, m, rules, subs, progress, cursed_subtables)?;
    let mut g = super::Generator::new(m, rules, subs, progress).run_sliced(&mut files)?;
    if progress.cancelled() {
        return Err(GenError::Cancelled);
    }
    // the generator's time is the table's, without its DTZ
    g.seconds -= files.dtz_seconds;
    let writer = TableWriter::new(dir, &g, total as usize)?;
    let codes = SpilledCodes {
        spill: &files.codes,
        layout,
        size,
    };
    let wdl = SpilledWdl {
        codes: &files.codes,
        conversions: &files.conversions,
        layout,
        size,
    };
    let written = writer
        .dtm(&codes, progress)
        .and_then(|d| files.codes.check().map(|()| d))
        .and_then(|d| {
            let w = writer.wdl(&wdl, progress)?;
            files.codes.check()?;
            files.conversions.check()?;
            Ok((d, w))
        });
    let (d, w) = written.inspect_err(|_| remove_table_files(dir, stored_form, rules))?;
    let owner = super::Generator::new(m, rules, subs, progress)
        .index_scheme(1)
        .expect("scheme 1");
    let dtz_stats = files.dtz_counts.finish(&owner, rules.move_rule);
    let plies = |range: std::ops::Range<usize>, out: &mut Vec<u16>| {
        files.plies.read_file_order(&layout, size, range, out);
    };
    let dtz_file = Instant::now();
    // A small table's plies are read whole, so that its DTZ file can keep them in a
    // digit order (from the spill, that would be a read a value).
    let whole: Option<Vec<u16>> = (size <= SLICED_DIGIT_ORDER_MAX).then(|| {
        let mut v = Vec::new();
        files
            .plies
            .read_file_order(&layout, size, 0..total as usize, &mut v);
        v
    });
    let ply = whole.as_deref().map(|v| move |s: usize| v[s]);
    let prefetch = whole.as_deref().map(|v| {
        move |s: usize| {
            if let Some(p) = v.get(s) {
                crate::prefetch::prefetch(p);
            }
        }
    });
    let dtz = DtzValues {
        material: g.material,
        rules,
        stats: &dtz_stats,
        plies: &plies,
        len: total as usize,
        zeroing_wins: ZeroingWins::Marked,
        ply: ply
            .as_ref()
            .zip(prefetch.as_ref())
            .map(|(ply, prefetch)| PlyAt {
                ply: ply as &(dyn Fn(usize) -> u16 + Sync),
                prefetch: prefetch as &(dyn Fn(usize) + Sync),
            }),
    };
    let dtz_bytes =
        write_dtz_values(dir, &dtz, progress).and_then(|b| files.plies.check().map(|()| b));
    let dtz_file_seconds = dtz_file.elapsed().as_secs_f64();
    let dtz_bytes = dtz_bytes.inspect_err(|_| remove_table_files(dir, stored_form, rules))?;
    let dtz_seconds = files.dtz_seconds;
    Ok(TableOutcome::Written {
        table: Box::new(g),
        wdl_bytes: w.file_bytes,
        dtm_bytes: d.file_bytes,
        dtz_bytes,
        dtz: Box::new(dtz_stats),
        dtz_seconds,
        dtz_file_seconds,
    })
}

/// Opens `tb` again over `dir` and checks the files of `m` just written through it. A
/// check that `progress` cancels removes them, as one that fails does.
fn reopen_and_check(
    dir: &Path,
    tb: &mut Tablebase,
    m: Material,
    progress: &dyn Progress,
) -> Result<(), GenError> {
    // A fresh tablebase: one opened before may hold a file that the new one replaced
    // (a damaged table regenerated), whose open handle still reads the old bytes. The
    // check reads through one of its own with a smaller cache: its positions are spread
    // over the table, and a cache of the default size would fill with their blocks (on
    // KRPvKR, 740 MB more than the table's generation needed). With 64 MiB the check took
    // longer: KRQvKR 26.1 s in all against 23.4 s.
    let open = |budget| {
        Tablebase::open_with_budget(dir, tb.rules(), budget).map_err(|e| GenError::Folder {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })
    };
    let check = open(format::CacheBudget::new(CHECK_CACHE_BYTES))?;
    check_written(&check, m, progress)?;
    drop(check);
    *tb = open(format::CacheBudget::new(crate::probe::DEFAULT_CACHE_BYTES))?;
    Ok(())
}

/// A progress that shows nothing but passes on whether to stop.
struct CancelOnly<'a>(&'a dyn Progress);

impl Progress for CancelOnly<'_> {
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
}

/// Removes the files of `m` under `rules` (WDL, DTM and DTZ) from `dir`, those there are:
/// what a table whose making failed after some were renamed into place leaves.
fn remove_table_files(dir: &Path, m: Material, rules: RuleSet) {
    let (wdl, dtm) = paths(dir, m, rules);
    let _ = std::fs::remove_file(wdl);
    let _ = std::fs::remove_file(dtm);
    let _ = std::fs::remove_file(table_path(dir, m, rules, Metric::Dtz));
}

/// A write's error: [`GenError::Cancelled`] if it was stopped.
fn write_error(e: format::FormatError) -> GenError {
    match e {
        format::FormatError::Interrupted { .. } => GenError::Cancelled,
        e => GenError::Write(e.to_string()),
    }
}

/// The block cache of the check after writing (see [`reopen_and_check`]).
const CHECK_CACHE_BYTES: usize = 256 << 20;

/// Checks a table just written by re-deriving [`WRITE_CHECK_SAMPLE`] positions (in runs
/// of [`WRITE_CHECK_RUN`] consecutive slots) from their children with the forward move
/// generator, reading the files back (the generator's own
/// cross-checks run in debug builds only). A table that fails is removed, so that a later
/// run does not keep it, and the error names it. One that `progress` cancels (it shows no
/// bars: the check is a small part of the table's time) is removed too.
fn check_written(tb: &Tablebase, m: Material, progress: &dyn Progress) -> Result<(), GenError> {
    let mut seed = 0x5eed_u64;
    for b in m.to_string().bytes() {
        seed = (seed ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let remove = || remove_table_files(tb.dir(), m, tb.rules());
    // a table that could not be checked is not kept either: a later run would take it
    // for a checked one
    let quiet = CancelOnly(progress);
    let sample = Some((WRITE_CHECK_SAMPLE, seed, WRITE_CHECK_RUN));
    let report = match verify_sampled(tb, m, sample, &quiet) {
        Ok(report) if report.cancelled => {
            remove();
            return Err(GenError::Cancelled);
        }
        Ok(report) => report,
        Err(e) => {
            remove();
            return Err(GenError::Write(format!(
                "reading back {m} (the files were removed): {e}"
            )));
        }
    };
    if report.mismatch_count == 0 {
        return Ok(());
    }
    remove();
    Err(GenError::Inconsistent(format!(
        "{m}: {} of {} positions checked after writing disagree with their children \
         (the files were removed), e.g. {}",
        report.mismatch_count,
        report.checked,
        report.mismatches.first().map_or("", String::as_str)
    )))
}

/// Generates `material` alone into `dir`, as one job of a run spread over many
/// processes or machines (see [`super::plan`]): it writes the two files of this table and
/// nothing else. Every table it reads must be in `dir` with its checksums holding (it is
/// another job's output), else [`GenError::SubTable`] names the missing one and nothing
/// is written. A table that is there and checks out is kept.
///
/// Temporary files of this table's own files left by an earlier, interrupted attempt are
/// removed (only this job writes them, whichever machine the attempt ran on); those of
/// other tables are left alone, since on a shared folder they may be another machine's
/// work under way.
pub fn generate_one(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    progress: &dyn Progress,
) -> Result<TableOutcome, GenError> {
    generate_one_within(dir, material, rules, &Limits::NONE, progress)
}

/// [`generate_one`] within `limits`: a table that would not fit them fails with
/// [`GenError::Refused`] before it starts (see [`generate_into_within`]).
pub fn generate_one_within(
    dir: &Path,
    material: Material,
    rules: RuleSet,
    limits: &Limits,
    progress: &dyn Progress,
) -> Result<TableOutcome, GenError> {
    let m = material.normalized();
    let folder_error = |e: &dyn std::fmt::Display| GenError::Folder {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    let mut tb = Tablebase::open(dir, rules).map_err(|e| folder_error(&e))?;
    // a table that cannot be made here is refused first, whatever else is missing
    if !tb.has_table(m) {
        check_table(&Needs::of(m), limits, free_disk_bytes(dir)).map_err(GenError::Refused)?;
    }
    check_sub_tables(dir, &tb, m)?;
    remove_own_temporaries(dir, m, rules);
    if table_checks_out(&tb, m) {
        return Ok(TableOutcome::Kept(m));
    }
    progress.table(m, 1, 1, 0, 2 * TableIndex::new(m).size());
    check_table(&Needs::of(m), limits, free_disk_bytes(dir)).map_err(GenError::Refused)?;
    make_table(dir, &mut tb, m, rules, progress)
}

/// Checks, before a job starts, that the tables `m` reads are in `dir`: each one it reads
/// directly, with its files intact; under the move rule also every table below those, each
/// with its DTZ file, since the DTZ retrograde reads the cursed values of the tables it
/// reads and the check after writing probes the DTZ of their positions (whose wins look at
/// their own zeroing moves, and so on down). A missing one is named; nothing is written.
fn check_sub_tables(dir: &Path, tb: &Tablebase, m: Material) -> Result<(), GenError> {
    let rules = tb.rules();
    let direct = super::plan::reads(m);
    let below = m.with_dependencies();
    let deeper = below.iter().filter(|s| **s != m && !direct.contains(s));
    for &sub in direct.iter().chain(deeper) {
        if !tb.has_table(sub) {
            return Err(GenError::SubTable(format!(
                "{m} reads {sub}, which is not in {} (rules {rules}): generate it first",
                dir.display()
            )));
        }
        if rules.move_rule != MoveRule::None && !tb.has_dtz_file(sub) {
            return Err(GenError::SubTable(format!(
                "{m} reads {sub}, whose DTZ file for rules {rules} is not in {}: \
                 generate it first (`shatranj-tb generate {sub} --rules {rules}`)",
                dir.display()
            )));
        }
        if direct.contains(&sub) {
            tb.check_files(sub).map_err(|e| {
                GenError::SubTable(format!(
                    "{m} reads {sub}, whose files do not check out: {e}"
                ))
            })?;
        }
    }
    Ok(())
}

/// Removes the temporaries of `material`'s files (`.NAME.tmp.PID.N`) that this process
/// did not write.
fn remove_own_temporaries(dir: &Path, material: Material, rules: RuleSet) {
    let (wdl, dtm) = paths(dir, material, rules);
    let dtz = table_path(dir, material, rules, Metric::Dtz);
    let own = std::process::id().to_string();
    let prefixes: Vec<String> = [wdl, dtm, dtz]
        .iter()
        .filter_map(|p| {
            p.file_name()
                .map(|n| format!(".{}.tmp.", n.to_string_lossy()))
        })
        .collect();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = prefixes.iter().find_map(|p| name.strip_prefix(p.as_str())) else {
            continue;
        };
        if rest.split('.').next() != Some(own.as_str()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The result of verifying one table.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    pub material: Option<Material>,
    /// Positions checked (both sides to move).
    pub checked: u64,
    /// FENs of positions whose stored value is not the best of their children's, with
    /// what was stored and what the children give (at most 20 kept).
    pub mismatches: Vec<String>,
    pub mismatch_count: u64,
    /// Whether the progress asked the check to stop before every position was looked at
    /// (`checked` counts those that were).
    pub cancelled: bool,
}

/// What one range of a verification found.
struct ChunkReport {
    checked: u64,
    bad: Vec<String>,
    bad_count: u64,
}

/// Re-derives every position's value of a table from its children, using the forward move
/// generator (not the un-moves) and the sub-tables, and compares it with the files (DTM,
/// and WDL against DTM).
pub fn verify(
    tb: &Tablebase,
    material: Material,
    progress: &dyn Progress,
) -> Result<VerifyReport, ProbeError> {
    verify_with(tb, material, None, progress)
}

/// Positions a sampled check of a freshly written table looks at (see
/// [`generate_into`]), in runs of [`WRITE_CHECK_RUN`].
pub const WRITE_CHECK_SAMPLE: u64 = 20_000;

/// Consecutive slots each draw of the check after writing looks at: the positions of a
/// run, and their children, mostly share the blocks their probes decompress, where single
/// random slots each decompress blocks of their own. Measured (2 cores, the check alone):
/// KNBvKB 5.7 s to 1.1 s, KRQvKR 1.3 s to 0.5 s; a table one of whose values in a thousand
/// is wrong is still found (`the_check_after_writing_finds_altered_values`).
const WRITE_CHECK_RUN: u64 = 64;

/// Like [`verify`], but with `sample: Some((n, seed))` checks `n` positions drawn at
/// random (seeded by `seed`, spread over both sides to move and the whole index) instead
/// of every position: the way to check a table too large to verify whole. With `n` at
/// least the table's number of slots, every position is checked.
pub fn verify_with(
    tb: &Tablebase,
    material: Material,
    sample: Option<(u64, u64)>,
    progress: &dyn Progress,
) -> Result<VerifyReport, ProbeError> {
    verify_sampled(tb, material, sample.map(|(n, seed)| (n, seed, 1)), progress)
}

/// Positions of a sample one task checks. In chunks of 16,384 (a whole verify's), the
/// check after writing (20,000 positions) was two tasks of 16,384 and 3,616, one core of
/// two idle for most of it: on KNPvKB (2 cores) it took 17.4 s, in tasks of 1,024 8.6 s.
const SAMPLE_CHUNK: u64 = 1 << 10;

/// [`verify_with`], its sample `Some((n, seed, run))` drawn in runs of `run` consecutive
/// slots: a run's positions and their children share the blocks a probe decompresses
/// (the check after writing, [`WRITE_CHECK_RUN`]).
fn verify_sampled(
    tb: &Tablebase,
    material: Material,
    sample: Option<(u64, u64, u64)>,
    progress: &dyn Progress,
) -> Result<VerifyReport, ProbeError> {
    let stored = material.normalized();
    tb.check_files(stored)?;
    let index = TableIndex::new(stored);
    let n = index.size();
    let rules = tb.rules();
    let sample = sample.filter(|&(count, _, _)| count < 2 * n);
    let whole = sample.is_none() && 2 * n <= DtzMemo::MAX_SLOTS;
    let memo = (whole && tb.has_dtz_file(stored)).then(|| DtzMemo::new(&index));
    let own = if whole {
        Some(OwnCodes {
            stored,
            index: index.clone(),
            codes: tb.read_dtm_codes(stored)?,
            path: table_path(tb.dir(), stored, rules, Metric::Dtm),
        })
    } else {
        None
    };
    // chunks of slots (a whole verify), or chunks of draws (a sample: smaller, so that
    // the threads share its work, see [`SAMPLE_CHUNK`])
    let (chunk, work) = match sample {
        None => (1u64 << 14, 2 * n),
        Some((count, _, _)) => (SAMPLE_CHUNK, count),
    };
    let chunks = work.div_ceil(chunk);
    progress.begin(&format!("verify {stored}"), work);
    let results: Vec<Result<ChunkReport, ProbeError>> = (0..chunks)
        .into_par_iter()
        .map_init(
            || (MoveList::new(), Vec::new()),
            |(moves, children), c| {
                let mut report = ChunkReport {
                    checked: 0,
                    bad: Vec::new(),
                    bad_count: 0,
                };
                if progress.cancelled() {
                    return Ok(report);
                }
                let mut check = |slot: u64, report: &mut ChunkReport| -> Result<bool, ProbeError> {
                    let (turn, i) = index.split_slot(slot);
                    let Some(board) = index.decode(i) else {
                        return Ok(false);
                    };
                    let Ok(pos) = Position::from_board(board, turn) else {
                        return Ok(false);
                    };
                    if index.encode(&board) != Some(i) {
                        return Ok(false);
                    }
                    report.checked += 1;
                    let probes = Probes {
                        tb,
                        memo: memo.as_ref(),
                        own: own.as_ref(),
                    };
                    if let Some(bad) = check_position(probes, &pos, rules, moves, children)? {
                        report.bad_count += 1;
                        if report.bad.len() < 20 {
                            report.bad.push(bad);
                        }
                    }
                    Ok(true)
                };
                let lo = c * chunk;
                let hi = (lo + chunk).min(work);
                match sample {
                    None => {
                        for slot in lo..hi {
                            check(slot, &mut report)?;
                        }
                    }
                    Some((_, seed, run)) => {
                        // draws until this chunk's share of positions is checked; slots
                        // without a position are drawn again, a bounded number of times
                        let mut state = seed ^ c.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        let mut tries = 0;
                        let want = hi - lo;
                        while report.checked < want && tries < 64 * want {
                            let start = splitmix64(&mut state) % (2 * n);
                            for slot in start..(start + run).min(2 * n) {
                                if report.checked == want {
                                    break;
                                }
                                tries += 1;
                                check(slot, &mut report)?;
                            }
                        }
                    }
                }
                progress.advance(hi - lo);
                Ok(report)
            },
        )
        .collect();
    progress.end();
    let mut report = VerifyReport {
        material: Some(material),
        cancelled: progress.cancelled(),
        ..VerifyReport::default()
    };
    for r in results {
        let ChunkReport {
            checked,
            bad,
            bad_count: count,
        } = r?;
        report.checked += checked;
        report.mismatch_count += count;
        for b in bad {
            if report.mismatches.len() < 20 {
                report.mismatches.push(b);
            }
        }
    }
    Ok(report)
}

/// The DTZ of every position of one table, each probed once: a whole verify looks a
/// position's DTZ up once for each of its parents, and a probe of the side to move a DTZ
/// file does not hold searches that position's moves. On the 4-man tables this made a
/// whole verify several times faster.
struct DtzMemo {
    /// Per slot (as [`stored_slot`] numbers them), 0 until probed, else
    /// [`DtzMemo::code`] of its DTZ.
    codes: Vec<AtomicU32>,
}

impl DtzMemo {
    /// Slots of the largest table a whole verify keeps a memo of (4 bytes a slot).
    const MAX_SLOTS: u64 = 1 << 27;

    fn new(index: &TableIndex) -> DtzMemo {
        DtzMemo {
            codes: (0..2 * index.size()).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The categories, in the order of their codes.
    const CATEGORIES: [Category; 5] = [
        Category::Loss,
        Category::BlessedLoss,
        Category::Draw,
        Category::CursedWin,
        Category::Win,
    ];

    /// A DTZ as a nonzero code: its category's place (from 1) above the plies.
    fn code(d: Dtz) -> Option<u32> {
        let place = Self::CATEGORIES.iter().position(|&c| c == d.category)? as u32;
        (d.plies < 1 << 24).then_some(((place + 1) << 24) | d.plies)
    }

    fn decode(code: u32) -> Dtz {
        Dtz {
            category: Self::CATEGORIES[(code >> 24) as usize - 1],
            plies: code & 0xFF_FFFF,
        }
    }
}

/// The DTM codes of the table a whole verify checks, read from its file once (2 bytes a
/// slot): a position of the table is then looked up by its slot alone, where a probe also
/// finds its table, and its block in the cache, for each of its parents. On 2 cores this
/// took a release `verify` of the fifteen 4-man tables from 80.5 s to 69.5 s (peak
/// resident memory 237 to 197 MiB: the block cache is no longer filled).
struct OwnCodes {
    stored: Material,
    index: TableIndex,
    codes: Vec<u16>,
    /// The DTM file, named by an error.
    path: PathBuf,
}

/// The probes of a verification: DTZ through its memo if it has one, and the values of
/// its own table from the codes read whole if it has them.
#[derive(Clone, Copy)]
struct Probes<'a> {
    tb: &'a Tablebase,
    memo: Option<&'a DtzMemo>,
    own: Option<&'a OwnCodes>,
}

impl Probes<'_> {
    /// The slot of `pos` in the table verified (as [`stored_slot`] numbers them), if it
    /// is one of its positions and the verification is whole (it reads the table's codes,
    /// and keeps its memo if any): what [`Probes::value`] and [`Probes::dtz`] look it up
    /// by, so that a child is encoded once for both.
    fn own_slot(self, pos: &Position) -> Option<u64> {
        let own = self.own?;
        let m = pos_material(pos);
        (m.normalized() == own.stored)
            .then(|| stored_slot(&own.index, m, pos))
            .flatten()
    }

    /// [`Tablebase::value`] of `pos`, from the codes read whole if `slot` is its
    /// [`Probes::own_slot`].
    fn value(self, pos: &Position, slot: Option<u64>) -> Result<Value, ProbeError> {
        let Some(own) = self.own else {
            return self.tb.value(pos);
        };
        // as a probe: the rules decide a bare side before any table is read
        if let Some(v) = Value::of_decided(pos, self.tb.rules()) {
            return Ok(v);
        }
        match slot {
            Some(s) => Tablebase::dtm_code_value(&own.path, s, own.codes[s as usize]),
            None => self.tb.value(pos),
        }
    }

    /// [`Tablebase::dtz`] of the position `pos` makes, through the memo if `slot` is its
    /// [`Probes::own_slot`] (a memo that has it needs no position).
    fn dtz(self, pos: impl FnOnce() -> Position, slot: Option<u64>) -> Result<Dtz, ProbeError> {
        let (Some(memo), Some(slot)) = (self.memo, slot) else {
            return self.tb.dtz(&pos());
        };
        let cell = &memo.codes[slot as usize];
        let code = cell.load(Ordering::Relaxed);
        if code != 0 {
            return Ok(DtzMemo::decode(code));
        }
        let d = self.tb.dtz(&pos())?;
        if let Some(code) = DtzMemo::code(d) {
            cell.store(code, Ordering::Relaxed);
        }
        Ok(d)
    }
}

/// One position of a verification: `None` when the files hold the value its children
/// give (and the WDL file agrees with the DTM file), else a line saying what differs.
/// `children` is scratch space for the children's values and [`Probes::own_slot`]s.
fn check_position(
    probes: Probes<'_>,
    pos: &Position,
    rules: RuleSet,
    moves: &mut MoveList,
    children: &mut Vec<(Value, Option<u64>)>,
) -> Result<Option<String>, ProbeError> {
    let tb = probes.tb;
    let own_slot = probes.own_slot(pos);
    let stored_value = probes.value(pos, own_slot)?;
    let stored_wdl = tb.wdl(pos)?;
    pos.legal_moves_into(moves);
    children.clear();
    let derived = if moves.is_empty() {
        Value::of_ended(pos, rules).unwrap_or(Value::Draw)
    } else {
        let mut best: Option<Value> = None;
        for m in moves.iter() {
            let after = pos.play_unchecked(m);
            let slot = probes.own_slot(&after);
            let child = probes.value(&after, slot)?;
            children.push((child, slot));
            let v = child.parent();
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        best.expect("a move exists")
    };
    if derived != stored_value || stored_wdl != stored_value.wdl() {
        return Ok(Some(format!(
            "{}: stored {stored_value} (WDL file: {stored_wdl}), children give {derived}",
            Fen::from_position(pos)
        )));
    }
    if tb.has_dtz_file(pos_material(pos)) {
        let stored = probes.dtz(|| *pos, own_slot)?;
        let derived = derived_dtz(probes, pos, rules, moves, children, stored_wdl)?;
        if stored != derived {
            return Ok(Some(format!(
                "{}: stored DTZ {stored}, children give {derived}",
                Fen::from_position(pos)
            )));
        }
    }
    Ok(None)
}

fn pos_material(pos: &Position) -> Material {
    Material::from_board(pos.board())
}

/// The DTZ of a position from its children (`moves` holds its legal moves): a zeroing
/// move is valued by the child's category alone, any other by the child's DTZ.
///
/// `children` holds the value and [`Probes::own_slot`] of each move's child (in the order
/// of `moves`) and `best` the position's win, draw or loss they give, already checked
/// against the files. Without the move rule a child's category is its plain win, draw or
/// loss, and a DTZ ranks by its category first, so then only the moves of the best
/// category are looked at, and a zeroing move among them needs no DTZ probe (a probe of a
/// winning child looks at the child's own zeroing moves): the same answer for fewer
/// probes.
fn derived_dtz(
    probes: Probes<'_>,
    pos: &Position,
    rules: RuleSet,
    moves: &MoveList,
    children: &[(Value, Option<u64>)],
    best: Wdl,
) -> Result<Dtz, ProbeError> {
    let rule = rules.move_rule;
    if moves.is_empty() {
        let v = Value::of_ended(pos, rules).unwrap_or(Value::Draw);
        return Ok(Dtz::from_plies(v.wdl(), 0, rule));
    }
    let plain = rule == MoveRule::None;
    if plain && best == Wdl::Draw {
        return Ok(Dtz::from_plies(Wdl::Draw, 0, rule));
    }
    let mut derived: Option<Dtz> = None;
    for (m, &(child, slot)) in moves.iter().zip(children) {
        let zeroing = crate::probe::is_zeroing(m);
        let child_dtz = if !plain {
            probes.dtz(|| pos.play_unchecked(m), slot)?
        } else if child.parent().wdl() != best {
            continue;
        } else if zeroing {
            // only the category counts
            Dtz::from_plies(child.wdl(), 0, rule)
        } else {
            probes.dtz(|| pos.play_unchecked(m), slot)?
        };
        let v = crate::probe::dtz_of_move(zeroing, child_dtz, rule);
        if derived.is_none_or(|b| v.rank() > b.rank()) {
            derived = Some(v);
        }
    }
    Ok(derived.expect("a move of the best category exists"))
}

/// SplitMix64: the next of a stream of well-mixed 64-bit numbers.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Paths of both files of a table.
#[must_use]
pub fn paths(dir: &Path, material: Material, rules: RuleSet) -> (PathBuf, PathBuf) {
    (
        table_path(dir, material, rules, Metric::Wdl),
        table_path(dir, material, rules, Metric::Dtm),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::NoProgress;

    /// The check after writing, though it draws its positions in runs, finds a table one
    /// of whose DTM values in a thousand was changed to another of its values, and removes
    /// the table's files.
    #[test]
    fn the_check_after_writing_finds_altered_values() {
        let dir = tempfile::tempdir().unwrap();
        let m: Material = "KRvKN".parse().unwrap();
        let rules = RuleSet::default();
        generate_into(dir.path(), &[m], rules, &NoProgress, |_| {}).unwrap();
        let (wdl_path, dtm_path) = paths(dir.path(), m, rules);
        let file = format::TableFile::open(&dtm_path).unwrap();
        let mut values = file.read_all().unwrap();
        let mut altered = 0;
        for i in (0..values.len() - 1).step_by(1000) {
            if values[i] != values[i + 1] {
                values[i] = values[i + 1];
                altered += 1;
            }
        }
        assert!(altered > 1000, "{altered} values altered");
        format::write_table_with(
            &dtm_path,
            file.meta(),
            &values,
            &format::WriteOptions::default(),
        )
        .unwrap();
        let tb = Tablebase::open(dir.path(), rules).unwrap();
        match check_written(&tb, m, &NoProgress) {
            Err(GenError::Inconsistent(e)) => assert!(e.contains("disagree"), "{e}"),
            other => panic!("the altered table was not found out: {other:?}"),
        }
        assert!(!dtm_path.exists() && !wdl_path.exists());
    }
}
