//! Making the files of a table a slice at a time ([`crate::index::TableIndex::slices`]):
//! each slice's DTM codes, conversions and DTZ are made in memory, then written to
//! temporary files beside the table's (in the generator's order, scheme 2), and the
//! memory is freed before the next slice; the table's files are then written from those,
//! read back in the files' order (scheme 1, [`SplitLayout`]). A table with a lone pawn so
//! needs the memory of its largest slice, a quarter of the table; one split by a pair of
//! pawns, an eighth.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::cells::Cells;
use super::dtz::{
    DTZ_ALPHABET, DtzCounts, Leaves, generate_dtz_slice, pack_wdl_in, starts_from_dtm,
};
use super::generator::{Generator, SliceSink, ZeroedVec};
use super::state::{UNUSED, WDL_RUN, wdl_file_value};
use super::{GenError, Progress, SubTables};
use crate::format;
use crate::index::SplitLayout;
use crate::material::Material;
use crate::rules::RuleSet;

/// Slots a spill reads or writes at once.
const RUN: usize = 1 << 20;

/// A temporary file of values while a table is made a slice at a time, named as the
/// table's temporaries are (`.NAME.tmp.PID.KIND`, removed by a later run if this process
/// dies) and removed when dropped.
pub(super) struct Spill {
    path: PathBuf,
    file: File,
    /// The first read error (reads come from file writers, which take no errors).
    error: Mutex<Option<String>>,
}

impl Spill {
    /// A new empty spill beside `table` (the path of a table file), of kind `kind`.
    pub(super) fn create(table: &Path, kind: &str) -> Result<Spill, GenError> {
        let name = table
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = table.with_file_name(format!(".{name}.tmp.{}.{kind}", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| GenError::Write(format!("cannot create {}: {e}", path.display())))?;
        Ok(Spill {
            path,
            file,
            error: Mutex::new(None),
        })
    }

    fn write_at(&self, bytes: &[u8], offset: u64) -> Result<(), GenError> {
        write_all_at(&self.file, bytes, offset)
            .map_err(|e| GenError::Write(format!("cannot write {}: {e}", self.path.display())))
    }

    /// Reads `buf.len()` bytes at `offset`; on an error, zeros and the error kept for
    /// [`Spill::check`].
    fn read_at(&self, buf: &mut [u8], offset: u64) {
        if let Err(e) = read_exact_at(&self.file, buf, offset) {
            buf.fill(0);
            let mut error = self.error.lock().unwrap_or_else(|p| p.into_inner());
            error.get_or_insert_with(|| format!("cannot read {}: {e}", self.path.display()));
        }
    }

    /// Whether every read so far succeeded.
    pub(super) fn check(&self) -> Result<(), GenError> {
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(GenError::Write(e)),
            None => Ok(()),
        }
    }

    /// Writes the values of the slots `range` of `cells`, two bytes each at their slot.
    fn write_cells(&self, cells: &Cells, range: std::ops::Range<u64>) -> Result<(), GenError> {
        self.write_cells_marking(cells, range, None)
    }

    /// [`Spill::write_cells`], with [`ZEROING_WIN`] at each slot whose bit is set in
    /// `zeroing_wins` (a bit a slot, as [`super::dtz::DtzTable::zeroing_wins`]).
    fn write_cells_marking(
        &self,
        cells: &Cells,
        range: std::ops::Range<u64>,
        zeroing_wins: Option<&[AtomicU64]>,
    ) -> Result<(), GenError> {
        let runs: Vec<std::ops::Range<usize>> = (range.start as usize..range.end as usize)
            .step_by(RUN)
            .map(|lo| lo..(lo + RUN).min(range.end as usize))
            .collect();
        runs.par_iter().try_for_each_init(
            || (Vec::new(), Vec::new()),
            |(values, bytes): &mut (Vec<u16>, Vec<u8>), r| {
                cells.read_into(r.clone(), values);
                if let Some(z) = zeroing_wins {
                    mark_zeroing_wins(z, r.clone(), values);
                }
                let le: &[u8] = if cfg!(target_endian = "little") {
                    bytemuck::cast_slice(values)
                } else {
                    bytes.clear();
                    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
                    bytes
                };
                self.write_at(le, 2 * r.start as u64)
            },
        )
    }

    /// The values of the slots `range` in the files' order (scheme 1), from a spill of
    /// values in the generator's (see [`SplitLayout`]; `size` indices a side to move).
    pub(super) fn read_file_order(
        &self,
        layout: &SplitLayout,
        size: u64,
        range: std::ops::Range<usize>,
        out: &mut Vec<u16>,
    ) {
        out.clear();
        gather(
            layout,
            size,
            range,
            |r, buf: &mut Vec<u16>| self.read_values(r, buf),
            out,
        );
    }

    /// The packed 2-bit codes of the slots `range` in the files' order, one a byte, from
    /// a spill of packed codes (four a byte) in the generator's order.
    pub(super) fn read_packed_file_order(
        &self,
        layout: &SplitLayout,
        size: u64,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) {
        out.clear();
        let read = |r: std::ops::Range<usize>, buf: &mut Vec<u8>| {
            let first = r.start / 4;
            let mut bytes = vec![0u8; r.end.div_ceil(4) - first];
            self.read_at(&mut bytes, first as u64);
            buf.clear();
            buf.extend(r.map(|s| (bytes[s / 4 - first] >> (2 * (s % 4))) & 3));
        };
        gather(layout, size, range, read, out);
    }

    /// The values of the slots `range`, as [`Spill::write_cells`] wrote them.
    pub(super) fn read_values(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        out.clear();
        out.resize(range.len(), 0);
        self.read_at(bytemuck::cast_slice_mut(out), 2 * range.start as u64);
        if cfg!(target_endian = "big") {
            for v in out.iter_mut() {
                *v = u16::from_le(*v);
            }
        }
    }
}

/// What a spill of plies holds at a win in 1 ply by a zeroing move (above every ply,
/// below [`format::UNUSED`]), so that the table's DTZ file can be written with or without
/// them ([`super::files::ZeroingWins::Marked`]) with no bit array of the whole table kept
/// in memory across its slices.
pub(super) const ZEROING_WIN: u16 = format::UNUSED - 1;

/// Puts [`ZEROING_WIN`] in `values` (the slots `range`) where `zeroing_wins` has a bit.
fn mark_zeroing_wins(
    zeroing_wins: &[AtomicU64],
    range: std::ops::Range<usize>,
    values: &mut [u16],
) {
    let words = range.start / 64..range.end.div_ceil(64);
    for (w, word) in zeroing_wins[words.clone()].iter().enumerate() {
        let w = words.start + w;
        let mut bits = word.load(Ordering::Relaxed);
        while bits != 0 {
            let s = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if range.contains(&s) {
                debug_assert_eq!(values[s - range.start], 1, "a zeroing win at {s}");
                values[s - range.start] = ZEROING_WIN;
            }
        }
    }
}

/// The values of slots `range` in the files' order (scheme 1) into `out`, from values
/// in the generator's order that `read` gives a range at a time: for the units the range
/// touches, one read a slice and side to move. A file index is walked as an odometer of
/// its digits (unit, outer value, the digits between the split groups, inner value, run),
/// so no index is divided, and a run is copied whole.
fn gather<T: Copy + Default>(
    layout: &SplitLayout,
    size: u64,
    range: std::ops::Range<usize>,
    read: impl Fn(std::ops::Range<usize>, &mut Vec<T>),
    out: &mut Vec<T>,
) {
    let (mids, inner_file_runs, inner_slice_runs, run) = layout.shape();
    let (mids, run) = (mids as usize, run as usize);
    let (file_unit, slice_unit) = layout.file_and_slice_unit();
    let (file_unit, slice_unit) = (file_unit as usize, slice_unit as usize);
    let outer_run = layout.outer.run as usize;
    let inner_len = inner_slice_runs as usize * run;
    let inner_slices = layout.inner.map_or(1, |d| d.slices()) as usize;
    let size = size as usize;
    // the generator's indices a side to move (more than the files' for a split pair)
    let gen_size = layout.size() as usize;
    let mut buffers: Vec<Vec<T>> = (0..layout.slices()).map(|_| Vec::new()).collect();
    // each scheme 1 value of the outer and inner digits: its slice and value in scheme 2
    let outer: Vec<(usize, usize)> = (0..layout.outer.file_runs())
        .map(|p| {
            let (s, q) = layout.outer.slice_place(p);
            (s as usize, q as usize)
        })
        .collect();
    let inner: Vec<(usize, usize)> = match layout.inner {
        Some(d) => (0..d.file_runs())
            .map(|p| {
                let (s, q) = d.slice_place(p);
                (s as usize, q as usize)
            })
            .collect(),
        None => vec![(0, 0)],
    };
    debug_assert_eq!(inner.len() as u64, inner_file_runs);
    let mut start = range.start;
    while start < range.end {
        // one side to move at a time
        let side = start / size * size;
        let gen_side = start / size * gen_size;
        let end = range.end.min(side + size);
        let (lo, hi) = (start - side, end - side);
        let units = lo / file_unit..hi.div_ceil(file_unit);
        for (slice, buf) in buffers.iter_mut().enumerate() {
            let first = gen_side + slice * layout.slice as usize + units.start * slice_unit;
            read(first..first + units.len() * slice_unit, buf);
        }
        // the digits of `lo`, then counted up
        let (unit, x) = (lo / file_unit, lo % file_unit);
        let outer_len = mids * inner.len() * run;
        let (mut p, x) = (x / outer_len, x % outer_len);
        let (mut mid, x) = (x / (inner.len() * run), x % (inner.len() * run));
        let (mut pi, mut r) = (x / run, x % run);
        let mut unit = unit - units.start;
        let mut i = lo;
        while i < hi {
            let (so, qo) = outer[p];
            let (si, qi) = inner[pi];
            let take = (run - r).min(hi - i);
            let at = unit * slice_unit + qo * outer_run + mid * inner_len + qi * run + r;
            let buf = &buffers[so * inner_slices + si];
            if take == 1 {
                out.push(buf[at]);
            } else {
                out.extend_from_slice(&buf[at..at + take]);
            }
            i += take;
            r = 0;
            pi += 1;
            if pi == inner.len() {
                pi = 0;
                mid += 1;
                if mid == mids {
                    mid = 0;
                    p += 1;
                    if p == outer.len() {
                        p = 0;
                        unit += 1;
                    }
                }
            }
        }
        start = end;
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(unix)]
fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn write_all_at(file: &File, mut bytes: &[u8], mut offset: u64) -> std::io::Result<()> {
    while !bytes.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, bytes, offset)?;
        bytes = &bytes[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

/// The values of a table's spilled DTM codes in the files' order, for the file writer.
pub(super) struct SpilledCodes<'a> {
    pub spill: &'a Spill,
    pub layout: SplitLayout,
    /// Indices a side to move.
    pub size: u64,
}

impl format::Values for SpilledCodes<'_> {
    fn len(&self) -> usize {
        2 * self.size as usize
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        self.spill
            .read_file_order(&self.layout, self.size, range, out);
    }
}

/// The values of a table's WDL file ([`super::Generated::wdl_file_values`]) from its
/// spilled DTM codes and conversions.
pub(super) struct SpilledWdl<'a> {
    pub codes: &'a Spill,
    pub conversions: &'a Spill,
    pub layout: SplitLayout,
    /// Indices a side to move.
    pub size: u64,
}

impl format::Values for SpilledWdl<'_> {
    fn len(&self) -> usize {
        2 * self.size as usize
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        let (mut codes, mut conversions) = (Vec::new(), Vec::new());
        let mut prev = self.value_before(range.start, &mut codes, &mut conversions);
        self.read(range, &mut codes, &mut conversions);
        out.clear();
        out.extend(codes.iter().zip(&conversions).map(|(&c, &conversion)| {
            if c == UNUSED {
                UNUSED
            } else {
                prev = wdl_file_value(c, conversion, prev);
                prev
            }
        }));
    }
}

impl SpilledWdl<'_> {
    /// Slots read at a time by [`SpilledWdl::value_before`].
    const BACK: usize = 1 << 12;

    /// The DTM codes and conversions of the slots `range`, in the files' order.
    fn read(&self, range: std::ops::Range<usize>, codes: &mut Vec<u16>, conversions: &mut Vec<u8>) {
        self.codes
            .read_file_order(&self.layout, self.size, range.clone(), codes);
        self.conversions
            .read_packed_file_order(&self.layout, self.size, range, conversions);
    }

    /// The WDL file's value of the last used slot before `slot` in its run (0 at the start
    /// of a run), as [`wdl_file_value`] makes it slot by slot from the start of the run:
    /// looking back from `slot`, the smallest exact value of the slots whose conversion
    /// achieves it, down to the first slot whose conversion does not (its exact value
    /// included) or to the start of the run (0).
    fn value_before(&self, slot: usize, codes: &mut Vec<u16>, conversions: &mut Vec<u8>) -> u16 {
        let run_start = slot / WDL_RUN * WDL_RUN;
        let mut smallest = u16::MAX;
        let mut end = slot;
        while end > run_start {
            let from = end.saturating_sub(Self::BACK).max(run_start);
            self.read(from..end, codes, conversions);
            for (&c, &conversion) in codes.iter().zip(conversions.iter()).rev() {
                if c == UNUSED {
                    continue;
                }
                // the slot's exact value (nothing before it to cap it)
                let exact = wdl_file_value(c, conversion, u16::MAX);
                if wdl_file_value(c, conversion, 0) == exact {
                    // its value does not depend on the slots before it
                    return smallest.min(exact);
                }
                smallest = smallest.min(exact);
            }
            end = from;
        }
        0
    }
}

/// Takes the slices of a table as the generator finishes them: writes their DTM codes and
/// conversions to spills, makes their DTZ and writes it to a spill too.
pub(super) struct SliceFiles<'a> {
    pub material: Material,
    pub rules: RuleSet,
    pub sub: &'a dyn SubTables,
    pub progress: &'a dyn Progress,
    /// See [`Leaves::cursed_subtables`].
    pub cursed_subtables: bool,
    pub codes: Spill,
    /// The packed conversions, a byte for four slots.
    pub conversions: Spill,
    /// The slices' DTZ, [`ZEROING_WIN`] at each win by a zeroing move.
    pub plies: Spill,
    pub dtz_counts: DtzCounts,
    pub dtz_spilled: usize,
    pub dtz_rounds: u32,
    pub dtz_seconds: f64,
}

impl<'a> SliceFiles<'a> {
    /// Spills beside `table` (the path of the table's DTM file).
    pub(super) fn new(
        table: &Path,
        material: Material,
        rules: RuleSet,
        sub: &'a dyn SubTables,
        progress: &'a dyn Progress,
        cursed_subtables: bool,
    ) -> Result<SliceFiles<'a>, GenError> {
        Ok(SliceFiles {
            material,
            rules,
            sub,
            progress,
            cursed_subtables,
            codes: Spill::create(table, "codes")?,
            conversions: Spill::create(table, "conversions")?,
            plies: Spill::create(table, "plies")?,
            dtz_counts: DtzCounts::default(),
            dtz_spilled: 0,
            dtz_rounds: 0,
            dtz_seconds: 0.0,
        })
    }
}

impl SliceSink for SliceFiles<'_> {
    fn slice(
        &mut self,
        g: &Generator<'_>,
        slice: std::ops::Range<u64>,
        codes: Cells,
        conversions: ZeroedVec<u8>,
    ) -> Result<(), GenError> {
        let ranges = g.slice_slots();
        for r in &ranges {
            self.codes.write_cells(&codes, r.clone())?;
            // slices start and end at multiples of 4 slots (of 1,806 shah pairs)
            let bytes = (r.start / 4) as usize..r.end.div_ceil(4) as usize;
            self.conversions
                .write_at(&conversions[bytes.clone()], bytes.start as u64)?;
        }
        let start = Instant::now();
        let wdl = pack_wdl_in(&codes, &ranges);
        // the DTZ starts from the codes, or else their memory becomes its state
        let from_dtm = starts_from_dtm(
            self.material,
            self.rules,
            &wdl,
            Some(&conversions),
            self.cursed_subtables,
            &codes,
            self.sub,
            Some(slice.clone()),
        )?;
        let (dtm, buffer) = if from_dtm {
            (Some(codes), Cells::default())
        } else {
            (None, codes)
        };
        let leaves = Leaves {
            conversions: Some(&conversions),
            cursed_subtables: self.cursed_subtables,
            dtm: dtm.as_ref(),
        };
        let part = generate_dtz_slice(
            DTZ_ALPHABET,
            self.material,
            self.rules,
            &wdl,
            leaves,
            self.sub,
            self.progress,
            Some(slice),
            buffer,
        )?;
        drop(dtm);
        drop(wdl);
        drop(conversions);
        for r in &ranges {
            self.plies
                .write_cells_marking(&part.plies, r.clone(), Some(&part.zeroing_wins))?;
        }
        self.dtz_counts.merge(&part.counts);
        self.dtz_spilled = self.dtz_spilled.max(part.spilled);
        self.dtz_rounds = self.dtz_rounds.max(part.rounds);
        self.dtz_seconds += start.elapsed().as_secs_f64();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::TableIndex;
    use crate::material::Material;
    use rand::{Rng, SeedableRng};

    /// The gather from the generator's order gives, at each slot of the files' order, the
    /// generator's slot of the same position: over ranges of both sides to move, across
    /// units, of tables split by a lone pawn, a pair, and (6 men) both sides' pawns.
    #[test]
    fn gather_puts_each_slot_where_the_files_have_it() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for name in [
            "KRvKP", "KRPvKR", "KPPvKR", "KRPvKBP", "KRPvKPP", "KPPvKPP", "KNBvKPP",
        ] {
            let m: Material = name.parse::<Material>().unwrap().normalized();
            let index = TableIndex::try_with_scheme(m, 2).unwrap();
            let layout = index.split_layout().unwrap();
            let (size, gen_size) = (layout.file_size(), layout.size());
            assert_eq!(gen_size, index.size(), "{name}");
            // the generator's slot itself as the value
            let read = |r: std::ops::Range<usize>, buf: &mut Vec<u64>| {
                buf.clear();
                buf.extend(r.map(|s| s as u64));
            };
            let mut checked = 0;
            for k in 0..40 {
                let len = if k % 2 == 0 { 3_000 } else { 70_000 };
                // the first across the two sides to move
                let start = if k == 0 {
                    size - len / 2
                } else {
                    rng.gen_range(0..2 * size - len)
                };
                let mut out = Vec::new();
                gather(
                    &layout,
                    size,
                    start as usize..(start + len) as usize,
                    read,
                    &mut out,
                );
                assert_eq!(out.len() as u64, len, "{name}");
                for (f, &g) in (start..).zip(&out) {
                    let (side, f) = (f / size, f % size);
                    assert_eq!(g / gen_size, side, "{name} file slot {f}");
                    assert_eq!(
                        layout.file_index(g % gen_size),
                        Some(f),
                        "{name} file slot {f}"
                    );
                    checked += 1;
                }
            }
            assert!(checked > 1_000_000, "{name}");
        }
    }
}
