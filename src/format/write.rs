//! Writing a table file: symbol remapping, bit packing, parallel zstd, temp + rename.

use std::cmp::Reverse;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use zstd::zstd_safe::CParameter;

use super::header::{
    BlockEntry, CHECKSUM_FIELD, FORMAT_VERSION, HEADER_LEN, Header, Layout, MAGIC, MATERIAL_LEN,
    MAX_BLOCK_BYTES, MAX_EXTRA_LEN, packed_len,
};
use super::read::TableFile;
use super::{FormatError, TableMeta, UNUSED};

/// Default bytes of packed symbols per block (so values per block = 8 × this / bits).
///
/// Measured (`measure` in `tests/format.rs`, 2 shared cores, level 19, synthetic data):
/// file size relative to 32 KiB blocks and cold `get` (one block read, checksummed and
/// decompressed):
///
/// | block  | WDL 20 M (2 bits) | DTM 20 M (8 bits) | cold get    |
/// |-------:|------------------:|------------------:|------------:|
/// | 8 KiB  | +10.1 %           | +5.4 %            | 30–70 µs    |
/// | 16 KiB | +3.3 %            | +2.0 %            | 50–75 µs    |
/// | 32 KiB | 589,158 B         | 3,924,390 B       | 60–165 µs   |
/// | 64 KiB | −2.6 %            | −1.0 %            | 95–315 µs   |
/// | 128 KiB| −4.6 %            | −1.7 %            | 215–600 µs  |
///
/// 32 KiB is the knee: larger blocks save little and double the cold cost.
pub const DEFAULT_BLOCK_BYTES: usize = 32 << 10;

/// Default zstd level. Measured with 32 KiB blocks (2 shared cores, including the
/// verification pass):
///
/// | level | WDL 20 M: bytes, Mvalues/s | DTM ≤ 250, 20 M (8 bits) | DTM ≤ 600, 5 M (16 bits) |
/// |------:|---------------------------:|-------------------------:|-------------------------:|
/// | 3     | 763,290 B, 48              | 5,234,242 B, 31          | —                        |
/// | 9     | 667,263 B, 30              | 4,455,525 B, 11          | 1,286,341 B, 11          |
/// | 15    | 597,075 B, 8.4             | 4,021,707 B, 2.5         | 1,158,991 B, 3.6         |
/// | 19    | 589,158 B, 2.5             | 3,924,390 B, 1.0         | 1,149,819 B, 1.4         |
///
/// Level 15 is within 1–2.5 % of level 19 at 2.5–3.5 times its speed: a 200 M-value
/// table takes about 25 s (WDL) to 80 s (8-bit DTM) instead of up to 200 s. A generator
/// may ask for 19 through [`WriteOptions`] for release tables.
pub const DEFAULT_ZSTD_LEVEL: i32 = 15;

/// How to write a table. [`WriteOptions::default`] is what [`write_table`] uses; the
/// other settings exist for measurements and tests. Every setting gives a valid file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Bytes of packed symbols per block, rounded down to a power of two and clamped to
    /// 64 B ..= 4 MiB.
    pub block_bytes: usize,
    /// zstd compression level (1 ..= 22).
    pub zstd_level: i32,
    /// Smallest symbol width to use (1, 2, 4, 8 or 16); e.g. 8 turns bit packing off.
    pub min_symbol_bits: u8,
    /// How to write values that are mostly unused (at least [`SPARSE_UNUSED`] of them);
    /// `None`: as the others.
    pub sparse: Option<SparseOptions>,
}

/// [`WriteOptions`] of values that are mostly unused: their blocks compress to so little
/// that fewer, larger ones are smaller (fewer offset entries, zstd frame headers and
/// tables, and matches into a longer past), and cost less to compress harder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseOptions {
    /// In place of [`WriteOptions::block_bytes`].
    pub block_bytes: usize,
    /// In place of [`WriteOptions::zstd_level`].
    pub zstd_level: i32,
    /// zstd's target length (`ZSTD_c_targetLength`, 1 ..= 131,072), in place of the
    /// level's own; `None` keeps the level's. At the optimal parsers' levels (16 and
    /// above) a match this long is taken without looking for a longer one: a larger
    /// value searches more and a smaller one less.
    pub target_length: Option<u32>,
    /// Blocks that compress poorly, at a cheaper level; `None`: every block at
    /// [`SparseOptions::zstd_level`].
    pub dense_blocks: Option<DenseBlocks>,
}

/// The blocks of a sparse file ([`SparseOptions`]) that are not sparse themselves, at a
/// level of their own: those whose values are less than [`SPARSE_UNUSED`] unused, and
/// those that compress to at least `min_bytes` at zstd level 3 (where the fill of their
/// unused slots is chosen: [`Values::fill_periods`]). A high level costs little on a
/// block of few used values and much on one of many, for a few per cent fewer bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseBlocks {
    /// Bytes at zstd level 3 from which a block is dense.
    pub min_bytes: usize,
    /// zstd level of a dense block (no target length).
    pub zstd_level: i32,
}

/// The share of unused values, in 256ths, from which values are sparse
/// ([`WriteOptions::sparse`]) and a block's unused slots are also tried
/// filled along a period ([`Values::fill_periods`]).
pub const SPARSE_UNUSED: u64 = 192;

/// Whether `unused` values of `len` are at least [`SPARSE_UNUSED`] of them: a file's (its
/// blocks then take [`WriteOptions::sparse`]) or a block's (its unused slots are then
/// tried filled along a period).
fn mostly_unused(unused: u64, len: u64) -> bool {
    unused.saturating_mul(256) >= len.saturating_mul(SPARSE_UNUSED)
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            block_bytes: DEFAULT_BLOCK_BYTES,
            zstd_level: DEFAULT_ZSTD_LEVEL,
            min_symbol_bits: 1,
            sparse: None,
        }
    }
}

/// What [`write_table`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteStats {
    /// Number of values (indices) written.
    pub values: u64,
    /// Size of the file.
    pub file_bytes: u64,
    /// Number of compressed blocks.
    pub blocks: u32,
    /// Number of [`UNUSED`] values.
    pub unused: u64,
    /// Number of distinct stored values (symbols).
    pub symbols: u32,
    /// Bits per stored symbol.
    pub symbol_bits: u8,
    /// Values per block.
    pub block_values: u32,
    /// Wall time, including the verification pass.
    pub elapsed: Duration,
}

/// The values a table file is written from, read a range at a time: an array, or a
/// generator's state at a byte a slot.
pub trait Values: Sync {
    /// How many values (indices) there are.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of `range` (within `0..len()`), into `out` (cleared first).
    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>);

    /// Adds how many times each value occurs in `range` to `freq` (2^16 counts).
    fn count_into(&self, range: std::ops::Range<usize>, freq: &mut [u64]) {
        let mut values = Vec::new();
        self.read_into(range, &mut values);
        for &v in &values {
            freq[usize::from(v)] += 1;
        }
    }

    /// Periods (in values) along which the values repeat, as the place values of the
    /// digits of their numbering after the fastest: a block at least [`SPARSE_UNUSED`]
    /// unused is also packed with its unused slots filled from the slot one period
    /// before, for each period, and the packing that compresses smallest at
    /// [`FILL_LEVEL`] is kept (unused slots are never read, so a reader needs nothing).
    fn fill_periods(&self) -> Vec<usize> {
        Vec::new()
    }

    /// How many times each value occurs in all of them (2^16 counts): by
    /// [`Values::count_into`] over ranges of 2^20, in parallel, unless the values know it
    /// another way.
    fn frequencies(&self) -> Vec<u64> {
        let len = self.len();
        (0..len.div_ceil(1 << 20))
            .into_par_iter()
            .fold(
                || vec![0u64; 1 << 16],
                |mut f, c| {
                    self.count_into(c << 20..((c + 1) << 20).min(len), &mut f);
                    f
                },
            )
            .reduce(
                || vec![0u64; 1 << 16],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    }
}

impl Values for [u16] {
    fn len(&self) -> usize {
        <[u16]>::len(self)
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        out.clear();
        out.extend_from_slice(&self[range]);
    }
}

impl Values for Vec<u16> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        self.as_slice().read_into(range, out);
    }
}

impl<const N: usize> Values for [u16; N] {
    fn len(&self) -> usize {
        N
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        self.as_slice().read_into(range, out);
    }
}

/// The first `len` values of `values`.
pub struct Head<'a, V: ?Sized>(pub &'a V, pub usize);

impl<V: Values + ?Sized> Values for Head<'_, V> {
    fn len(&self) -> usize {
        self.1.min(self.0.len())
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        debug_assert!(range.end <= self.len());
        self.0.read_into(range, out);
    }

    fn count_into(&self, range: std::ops::Range<usize>, freq: &mut [u64]) {
        debug_assert!(range.end <= self.len());
        self.0.count_into(range, freq);
    }
}

/// Writes `values` (one u16 per index) to `path` with the default [`WriteOptions`]: to a
/// temporary name beside it first, fsync, then re-open and check every value ([`UNUSED`]
/// slots excepted), then rename into place (and fsync the directory). On any error the
/// temporary file is removed and `path` is untouched. Same input, same bytes.
pub fn write_table(
    path: &Path,
    meta: &TableMeta,
    values: &[u16],
) -> Result<WriteStats, FormatError> {
    write_table_with(path, meta, values, &WriteOptions::default())
}

/// [`write_table`] with explicit options.
pub fn write_table_with<V: Values + ?Sized>(
    path: &Path,
    meta: &TableMeta,
    values: &V,
    options: &WriteOptions,
) -> Result<WriteStats, FormatError> {
    write_table_until(path, meta, values, options, &|| false)
}

/// Whether a write should stop ([`write_table_until`]).
pub type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// [`write_table_with`] that stops with [`FormatError::Interrupted`] once `stop` says so:
/// it is asked before each block is compressed and before each is read back, so a large
/// file stops within a block's work. The temporary file is then removed and `path` is
/// untouched.
pub fn write_table_until<V: Values + ?Sized>(
    path: &Path,
    meta: &TableMeta,
    values: &V,
    options: &WriteOptions,
    stop: Stop<'_>,
) -> Result<WriteStats, FormatError> {
    write_impl(path, meta, values, options, &|_| Ok(()), stop)
}

/// Removes the temporary file unless disarmed (also on panic).
struct TempFile {
    path: PathBuf,
    armed: bool,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes to `path` whichever of `candidates` (each its metadata, its values, all of one
/// length, and a weight in per cent) compresses smaller once its size is weighted, as
/// [`write_table_with`] writes one; its index in `candidates` and what was written. The
/// candidates are compared on every [`SAMPLE_EVERY`]-th block compressed at
/// [`SAMPLE_LEVEL`] at most (the first of equal ones wins), so that choosing among `n`
/// costs a small part of compressing one.
pub fn write_smaller_with(
    path: &Path,
    candidates: &[(&TableMeta, &dyn Values, u64)],
    options: &WriteOptions,
) -> Result<(usize, WriteStats), FormatError> {
    write_smaller_until(path, candidates, options, &|| false)
}

/// [`write_smaller_with`] that stops as [`write_table_until`] does (also while the
/// candidates are compared).
pub fn write_smaller_until(
    path: &Path,
    candidates: &[(&TableMeta, &dyn Values, u64)],
    options: &WriteOptions,
    stop: Stop<'_>,
) -> Result<(usize, WriteStats), FormatError> {
    let started = Instant::now();
    let i = smallest_until(path, candidates, options, stop)?;
    let stats = write_file(
        path,
        candidates[i].0,
        candidates[i].1,
        options,
        started,
        &|_| Ok(()),
        stop,
    )?;
    Ok((i, stats))
}

/// Which of `candidates` [`write_smaller_until`] would write to `path` (named in errors
/// only: nothing is written), compared as it compares them.
pub fn smallest_until(
    path: &Path,
    candidates: &[(&TableMeta, &dyn Values, u64)],
    options: &WriteOptions,
    stop: Stop<'_>,
) -> Result<usize, FormatError> {
    let invalid = |what: String| FormatError::InvalidInput {
        path: path.to_owned(),
        what,
    };
    let mut best: Option<(usize, u64)> = None;
    for (i, (_, values, weight)) in candidates.iter().enumerate() {
        let sampled = WriteOptions {
            zstd_level: options.zstd_level.min(SAMPLE_LEVEL),
            // a target length means something else at a sample's level (a faster parser's
            // sampling step, or nothing): the sample keeps its level's
            sparse: options.sparse.as_ref().map(|o| SparseOptions {
                zstd_level: o.zstd_level.min(SAMPLE_LEVEL),
                target_length: o.target_length.filter(|_| o.zstd_level <= SAMPLE_LEVEL),
                dense_blocks: None,
                ..o.clone()
            }),
            ..options.clone()
        };
        let encoding = analyze(*values, &sampled).map_err(|e| e.at(path))?;
        // every block of a file of few (a sample of two blocks of ten misjudged KNvKQ's
        // DTZ candidates by a tenth), and the sample scaled to the whole: candidates may
        // differ in blocks ([`WriteOptions::sparse`])
        let blocks = u64::from(encoding.block_count);
        let every = if blocks < 4 * SAMPLE_EVERY as u64 {
            1
        } else {
            SAMPLE_EVERY
        };
        let (mut sampled_bytes, mut sampled_blocks) = (0u64, 0u64);
        compress_blocks(*values, &encoding, every, BATCH_BYTES, stop, |block| {
            sampled_bytes += block.len() as u64;
            sampled_blocks += 1;
            Ok(())
        })
        .map_err(|e| e.at(path))?;
        let whole =
            u128::from(sampled_bytes) * u128::from(blocks) / u128::from(sampled_blocks.max(1));
        let bytes = u64::try_from(u128::from(*weight) * whole).unwrap_or(u64::MAX);
        if best.is_none_or(|b| bytes < b.1) {
            best = Some((i, bytes));
        }
    }
    let Some((i, _)) = best else {
        return Err(invalid("no values to write".into()));
    };
    Ok(i)
}

/// Checks the metadata and options.
fn check_input(path: &Path, meta: &TableMeta, options: &WriteOptions) -> Result<(), FormatError> {
    let invalid = |what: String| FormatError::InvalidInput {
        path: path.to_owned(),
        what,
    };
    let material = meta.material.as_bytes();
    if material.len() > MATERIAL_LEN || !material.iter().all(|b| b.is_ascii_graphic()) {
        return Err(invalid(format!(
            "material {:?} is not printable ASCII of at most {MATERIAL_LEN} bytes",
            meta.material
        )));
    }
    if meta.extra.len() > MAX_EXTRA_LEN {
        return Err(invalid(format!(
            "extra metadata has {} bytes, more than {MAX_EXTRA_LEN}",
            meta.extra.len()
        )));
    }
    let levels = std::iter::once(options.zstd_level).chain(options.sparse.iter().flat_map(|o| {
        std::iter::once(o.zstd_level).chain(o.dense_blocks.as_ref().map(|d| d.zstd_level))
    }));
    for level in levels {
        if !(1..=22).contains(&level) {
            return Err(invalid(format!("zstd level {level}")));
        }
    }
    if let Some(t) = options.sparse.as_ref().and_then(|o| o.target_length)
        && !(1..=ZSTD_TARGET_LENGTH_MAX).contains(&t)
    {
        return Err(invalid(format!("zstd target length {t}")));
    }

    Ok(())
}

/// `after_sync` runs between the fsync and the verification (tests inject damage there).
pub(crate) fn write_impl<V: Values + ?Sized>(
    path: &Path,
    meta: &TableMeta,
    values: &V,
    options: &WriteOptions,
    after_sync: &dyn Fn(&Path) -> io::Result<()>,
    stop: Stop<'_>,
) -> Result<WriteStats, FormatError> {
    write_file(
        path,
        meta,
        values,
        options,
        Instant::now(),
        after_sync,
        stop,
    )
}

/// Encodes `values` into a file at a temporary name, its blocks written as they are
/// compressed (a batch at a time, so that the compressed file is never held in memory)
/// and the header and offset table, which name every block, last; syncs it, reads it back
/// and checks every value against `values`, then renames it into place.
fn write_file<V: Values + ?Sized>(
    path: &Path,
    meta: &TableMeta,
    values: &V,
    options: &WriteOptions,
    started: Instant,
    after_sync: &dyn Fn(&Path) -> io::Result<()>,
    stop: Stop<'_>,
) -> Result<WriteStats, FormatError> {
    check_input(path, meta, options)?;
    let encoding = analyze(values, options).map_err(|e| e.at(path))?;
    let too_big = || FormatError::io(path, io::Error::other("table too large"));
    let extra_len = u32::try_from(meta.extra.len()).map_err(|_| too_big())?;
    let layout = Layout::new(
        encoding.symbols.len() as u32,
        extra_len,
        encoding.block_count,
    )
    .ok_or_else(too_big)?;
    let invalid = |what: String| FormatError::InvalidInput {
        path: path.to_owned(),
        what,
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| invalid("the path has no file name".into()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let temp_path = dir.join(format!(
        ".{}.tmp.{}.{}",
        file_name.to_string_lossy(),
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let io_err = |e| FormatError::io(path, e);
    let mut temp = TempFile {
        path: temp_path,
        armed: false,
    };
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp.path)
        .map_err(io_err)?;
    temp.armed = true;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    // the prefix's place, filled once every block's length and checksum are known
    io::copy(&mut io::repeat(0).take(layout.blocks_offset), &mut w).map_err(io_err)?;
    let mut entries = Vec::with_capacity(encoding.block_count as usize);
    let mut offset = layout.blocks_offset;
    compress_blocks(values, &encoding, 1, BATCH_BYTES, stop, |block| {
        let compressed_len = u32::try_from(block.len())
            .map_err(|_| EncodeError::Invalid("block too large".into()))?;
        entries.push(BlockEntry {
            offset,
            compressed_len,
            checksum: crc32fast::hash(block),
        });
        offset += u64::from(compressed_len);
        w.write_all(block).map_err(EncodeError::Io)
    })
    .map_err(|e| e.at(path))?;
    let bytes = assemble(
        meta,
        values.len() as u64,
        &encoding,
        layout,
        &entries,
        offset,
    );
    let mut file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
    file.seek(SeekFrom::Start(0)).map_err(io_err)?;
    file.write_all(&bytes.prefix).map_err(io_err)?;
    file.sync_all().map_err(io_err)?;
    drop(file);
    after_sync(&temp.path).map_err(io_err)?;

    let table = TableFile::open(&temp.path).map_err(|e| e.with_path(path))?;
    if table.file_len() != bytes.file_len {
        return Err(FormatError::corrupt(
            path,
            0,
            format!(
                "wrote {} bytes, read back {}",
                bytes.file_len,
                table.file_len()
            ),
        ));
    }
    table
        .check_values(values, stop)
        .map_err(|e| e.with_path(path))?;
    drop(table);

    fs::rename(&temp.path, path).map_err(io_err)?;
    temp.armed = false;
    sync_dir(&dir).map_err(io_err)?;

    Ok(WriteStats {
        values: values.len() as u64,
        file_bytes: bytes.file_len,
        blocks: encoding.block_count,
        unused: encoding.unused,
        symbols: encoding.symbols.len() as u32,
        symbol_bits: encoding.bits,
        block_values: encoding.block_values,
        elapsed: started.elapsed(),
    })
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

impl FormatError {
    /// The same error, naming `path` instead.
    pub(crate) fn with_path(mut self, new: &Path) -> FormatError {
        match &mut self {
            FormatError::Io { path, .. }
            | FormatError::BadMagic { path, .. }
            | FormatError::UnsupportedVersion { path, .. }
            | FormatError::Truncated { path, .. }
            | FormatError::Corrupt { path, .. }
            | FormatError::ChecksumMismatch { path, .. }
            | FormatError::IndexOutOfRange { path, .. }
            | FormatError::InvalidInput { path, .. }
            | FormatError::VerifyFailed { path, .. }
            | FormatError::Interrupted { path } => *path = new.to_owned(),
        }
        self
    }
}

/// How a table's values become blocks: their symbols (most frequent first), each value's
/// symbol, the symbols' width and the blocks' size and number.
struct Encoding {
    symbols: Vec<u16>,
    code: Vec<u16>,
    bits: u8,
    block_values: u32,
    block_count: u32,
    unused: u64,
    /// zstd level of the blocks.
    level: i32,
    /// zstd target length of the blocks (see [`SparseOptions::target_length`]).
    target_length: Option<u32>,
    /// The blocks compressed at a level of their own ([`SparseOptions::dense_blocks`]).
    dense_blocks: Option<DenseBlocks>,
}

/// The largest target length zstd takes (`ZSTD_TARGETLENGTH_MAX`).
const ZSTD_TARGET_LENGTH_MAX: u32 = 1 << 17;

/// Bytes of packed symbols [`compress_blocks`] compresses at a time (at least two blocks a
/// thread): what it holds of the file in memory, besides each thread's block.
const BATCH_BYTES: usize = 32 << 20;

/// [`write_smaller_with`] compares its candidates on one block in this many.
pub const SAMPLE_EVERY: usize = 8;

/// The highest zstd level [`write_smaller_with`] compares its candidates at. Measured on
/// KNBvKB's DTZ file (64 KiB blocks, 2 cores, with the read-back check): level 15 in
/// 6.6 s, 9 in 1.8 s; comparing four candidates at 15 took 3.7 s more than writing the
/// chosen one.
pub const SAMPLE_LEVEL: i32 = 9;

/// Why [`compress_blocks`] gave no more blocks.
#[derive(Debug)]
enum EncodeError {
    /// The values or options cannot be written.
    Invalid(String),
    /// `stop` said so.
    Stopped,
    /// The blocks' sink failed to write one.
    Io(io::Error),
}

impl EncodeError {
    fn at(self, path: &Path) -> FormatError {
        match self {
            EncodeError::Invalid(what) => FormatError::InvalidInput {
                path: path.to_owned(),
                what,
            },
            EncodeError::Stopped => FormatError::Interrupted {
                path: path.to_owned(),
            },
            EncodeError::Io(e) => FormatError::io(path, e),
        }
    }
}

/// Remaps values to symbols by frequency (a pass over the values, in parallel) and sizes
/// the blocks.
fn analyze<V: Values + ?Sized>(
    values: &V,
    options: &WriteOptions,
) -> Result<Encoding, EncodeError> {
    let len = values.len();
    let mut freq = values.frequencies();
    let unused = std::mem::take(&mut freq[usize::from(UNUSED)]);
    let mut symbols: Vec<u16> = (0..UNUSED).filter(|&v| freq[usize::from(v)] > 0).collect();
    symbols.sort_by_key(|&v| (Reverse(freq[usize::from(v)]), v));
    if symbols.is_empty() {
        // Every slot is UNUSED (or there are none): reading any slot gives UNUSED.
        symbols.push(UNUSED);
    }
    let mut code = vec![0u16; 1 << 16];
    for (s, &v) in symbols.iter().enumerate() {
        code[usize::from(v)] = s as u16;
    }
    let bits = [1u8, 2, 4, 8, 16]
        .into_iter()
        .find(|&b| b >= options.min_symbol_bits && symbols.len() <= 1 << b)
        .unwrap_or(16);

    let sparse = mostly_unused(unused, len as u64);
    let (block_bytes, level, target_length, dense_blocks) = match &options.sparse {
        Some(o) if sparse => (
            o.block_bytes,
            o.zstd_level,
            o.target_length,
            o.dense_blocks.clone(),
        ),
        _ => (options.block_bytes, options.zstd_level, None, None),
    };
    let clamped = block_bytes.clamp(64, MAX_BLOCK_BYTES as usize);
    let block_bytes = 1usize << (usize::BITS - 1 - clamped.leading_zeros());
    let block_values = u32::try_from(block_bytes * 8 / usize::from(bits))
        .map_err(|_| EncodeError::Invalid("block too large".to_string()))?;
    let block_count = u32::try_from(len.div_ceil(block_values as usize))
        .map_err(|_| EncodeError::Invalid(format!("{len} values are too many")))?;

    Ok(Encoding {
        symbols,
        code,
        bits,
        block_values,
        block_count,
        unused,
        level,
        target_length,
        dense_blocks,
    })
}

/// Packs and compresses the blocks, in parallel a batch of `batch_bytes` at a time
/// (packed, at least two blocks a thread; [`BATCH_BYTES`] for a file), and
/// gives each to `sink` in order: every block (`every` 1) or every `every`-th only (a
/// sample of the compressed size, not a file). Asks `stop` before each block.
fn compress_blocks<V: Values + ?Sized>(
    values: &V,
    e: &Encoding,
    every: usize,
    batch_bytes: usize,
    stop: Stop<'_>,
    mut sink: impl FnMut(&[u8]) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let len = values.len();
    let per_block = e.block_values as usize;
    let every = every.max(1);
    let picked = (e.block_count as usize).div_ceil(every);
    let block_bytes = (per_block * usize::from(e.bits)).div_ceil(8).max(1);
    let periods = values.fill_periods();
    let batch = (batch_bytes / block_bytes).max(2 * rayon::current_num_threads());
    let mut first = 0;
    while first < picked {
        let last = (first + batch).min(picked);
        let blocks = (first..last)
            .into_par_iter()
            .map(|k| k * every)
            .map_init(
                || {
                    let c = compressor(e.level).and_then(|mut c| {
                        if let Some(t) = e.target_length {
                            c.set_parameter(CParameter::TargetLength(t))?;
                        }
                        Ok(c)
                    });
                    (c, None, None, Vec::new(), Vec::new())
                },
                |(c, fast, dense, buf, chunk), b| {
                    if stop() {
                        return Err(EncodeError::Stopped);
                    }
                    values.read_into(b * per_block..((b + 1) * per_block).min(len), chunk);
                    let c = c
                        .as_mut()
                        .map_err(|e| EncodeError::Invalid(format!("zstd compressor: {e}")))?;
                    let zstd = |c: &mut zstd::bulk::Compressor<'_>, buf: &[u8]| {
                        c.compress(buf)
                            .map_err(|e| EncodeError::Invalid(format!("zstd: {e}")))
                    };
                    // a block mostly unused: the fill of its unused slots that compresses
                    // best at a fast level
                    let unused = chunk.iter().filter(|&&v| v == UNUSED).count() as u64;
                    let sparse_block = mostly_unused(unused, chunk.len() as u64);
                    let mut fill = None;
                    // the block's size at FILL_LEVEL, if it was compressed there
                    let mut fast_bytes = None;
                    if !periods.is_empty() && sparse_block {
                        let fast = fast
                            .get_or_insert_with(|| compressor(FILL_LEVEL))
                            .as_mut()
                            .map_err(|e| EncodeError::Invalid(format!("zstd compressor: {e}")))?;
                        pack(chunk, &e.code, e.bits, None, buf);
                        let mut best = zstd(fast, buf)?.len();
                        for &p in &periods {
                            pack(chunk, &e.code, e.bits, Some(p), buf);
                            let size = zstd(fast, buf)?.len();
                            if size < best {
                                (best, fill) = (size, Some(p));
                            }
                        }
                        fast_bytes = Some(best);
                    }
                    pack(chunk, &e.code, e.bits, fill, buf);
                    let c = match &e.dense_blocks {
                        Some(d)
                            if !sparse_block || fast_bytes.is_some_and(|b| b >= d.min_bytes) =>
                        {
                            dense
                                .get_or_insert_with(|| compressor(d.zstd_level))
                                .as_mut()
                                .map_err(|e| {
                                    EncodeError::Invalid(format!("zstd compressor: {e}"))
                                })?
                        }
                        _ => c,
                    };
                    // The compressor returns a buffer of zstd's bound (more than the
                    // block's bytes): keep only what it holds until it is written (when
                    // a file's blocks were all held, this took KRQvKR's peak from 887 to
                    // 736 MB).
                    let mut block = zstd(c, buf)?;
                    block.shrink_to_fit();
                    Ok(block)
                },
            )
            .collect::<Result<Vec<Vec<u8>>, EncodeError>>()?;
        for block in &blocks {
            sink(block)?;
        }
        first = last;
    }
    Ok(())
}

/// zstd level at which [`compress_blocks`] chooses how to fill a block's unused slots
/// ([`Values::fill_periods`]), before it compresses the block at the file's.
const FILL_LEVEL: i32 = 3;

fn compressor(level: i32) -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    // The offset table has the lengths and checksums; the reader knows the sizes.
    c.set_parameter(CParameter::ContentSizeFlag(false))?;
    c.set_parameter(CParameter::ChecksumFlag(false))?;
    c.set_parameter(CParameter::DictIdFlag(false))?;
    Ok(c)
}

/// Packs one block of values as symbols into `out`. An [`UNUSED`] slot repeats the symbol
/// `period` slots before it (with `None`, or in the block's first period, the one before
/// it), or at the start of the block the first used symbol after it.
fn pack(chunk: &[u16], code: &[u16], bits: u8, period: Option<usize>, out: &mut Vec<u8>) {
    thread_local! {
        /// The symbols of the block being packed, kept between blocks rather than
        /// allocated for each (a block of sparse values is packed once a fill).
        static SYMS: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    out.clear();
    let len = packed_len(chunk.len() as u64, bits).unwrap_or(0) as usize;
    out.resize(len, 0);
    SYMS.with_borrow_mut(|syms| {
        symbols_of(chunk, code, period, syms);
        match bits {
            16 => {
                // Byte planes: the high bytes (mostly zero, as symbols are ranked by
                // frequency) form one long, very compressible run.
                let (lo, hi) = out.split_at_mut(chunk.len());
                for ((l, h), &s) in lo.iter_mut().zip(hi).zip(syms.iter()) {
                    [*l, *h] = s.to_le_bytes();
                }
            }
            8 => {
                for (o, &s) in out.iter_mut().zip(syms.iter()) {
                    *o = s as u8;
                }
            }
            _ => {
                // a byte holds 8 / bits symbols, the first in its lowest bits
                let bits = usize::from(bits);
                for (o, group) in out.iter_mut().zip(syms.chunks(8 / bits)) {
                    *o = group
                        .iter()
                        .enumerate()
                        .fold(0u8, |b, (k, &s)| b | (s as u8) << (k * bits));
                }
            }
        }
    });
}

/// The symbols of a block of values (see [`pack`]) into `syms`, its unused slots filled.
fn symbols_of(chunk: &[u16], code: &[u16], period: Option<usize>, syms: &mut Vec<u16>) {
    syms.clear();
    syms.reserve(chunk.len());
    let mut prev = chunk
        .iter()
        .find(|&&v| v != UNUSED)
        .map_or(0, |&v| code[usize::from(v)]);
    match period {
        Some(p) if p > 0 => {
            for (i, &v) in chunk.iter().enumerate() {
                let s = if v != UNUSED {
                    code[usize::from(v)]
                } else if i >= p {
                    syms[i - p]
                } else {
                    prev
                };
                prev = s;
                syms.push(s);
            }
        }
        _ => syms.extend(chunk.iter().map(|&v| {
            if v != UNUSED {
                prev = code[usize::from(v)];
            }
            prev
        })),
    }
}

/// The file bytes before the first block (header, symbols, extra, offset table).
struct Prefix {
    prefix: Vec<u8>,
    file_len: u64,
}

/// The file's prefix once its blocks are written: `entries` name them, the last ending
/// at `file_len`.
fn assemble(
    meta: &TableMeta,
    n: u64,
    e: &Encoding,
    layout: Layout,
    entries: &[BlockEntry],
    file_len: u64,
) -> Prefix {
    let mut material = [0u8; MATERIAL_LEN];
    material[..meta.material.len()].copy_from_slice(meta.material.as_bytes());
    let symbol_count = e.symbols.len() as u32;
    // checked by the caller when it laid out the file
    let extra_len = meta.extra.len() as u32;
    let block_count = e.block_count;

    let header = Header {
        magic: MAGIC,
        version: FORMAT_VERSION,
        header_len: HEADER_LEN as u32,
        metric: meta.metric.to_u8(),
        rules_code: meta.rules_code,
        symbol_bits: e.bits,
        reserved0: 0,
        material,
        index_scheme: meta.index_scheme,
        value_count: n,
        block_values: e.block_values,
        block_count,
        symbol_count,
        extra_len,
        symbols_offset: layout.symbols_offset,
        extra_offset: layout.extra_offset,
        offsets_offset: layout.offsets_offset,
        blocks_offset: layout.blocks_offset,
        file_len,
        reserved: [0; 20],
        header_checksum: 0,
    };
    let mut prefix = Vec::with_capacity(layout.blocks_offset as usize);
    prefix.extend_from_slice(&header.to_bytes());
    for s in &e.symbols {
        prefix.extend_from_slice(&s.to_le_bytes());
    }
    prefix.resize(layout.extra_offset as usize, 0);
    prefix.extend_from_slice(&meta.extra);
    prefix.resize(layout.offsets_offset as usize, 0);
    for entry in entries {
        prefix.extend_from_slice(&entry.to_bytes());
    }
    debug_assert_eq!(prefix.len() as u64, layout.blocks_offset);
    let checksum = crc32fast::hash(&prefix);
    prefix[CHECKSUM_FIELD..HEADER_LEN].copy_from_slice(&checksum.to_le_bytes());
    Prefix { prefix, file_len }
}

#[cfg(test)]
mod tests {
    /// The packing as first written, one value at a time: what [`pack`] must give.
    fn pack_reference(
        chunk: &[u16],
        code: &[u16],
        bits: u8,
        period: Option<usize>,
        out: &mut Vec<u8>,
    ) {
        out.clear();
        let len = packed_len(chunk.len() as u64, bits).unwrap_or(0) as usize;
        out.resize(len, 0);
        let mut prev = chunk
            .iter()
            .find(|&&v| v != UNUSED)
            .map_or(0, |&v| code[usize::from(v)]);
        let mut syms = Vec::new();
        for (i, &v) in chunk.iter().enumerate() {
            let s = if v == UNUSED {
                match period {
                    Some(p) if i >= p => syms[i - p],
                    _ => prev,
                }
            } else {
                code[usize::from(v)]
            };
            prev = s;
            if period.is_some() {
                syms.push(s);
            }
            match bits {
                16 => {
                    // Byte planes: the high bytes (mostly zero, as symbols are ranked by
                    // frequency) form one long, very compressible run.
                    let [lo, hi] = s.to_le_bytes();
                    out[i] = lo;
                    out[chunk.len() + i] = hi;
                }
                8 => out[i] = s as u8,
                _ => {
                    let bit = i * usize::from(bits);
                    out[bit / 8] |= (s as u8) << (bit % 8);
                }
            }
        }
    }

    use super::*;
    use crate::format::Metric;

    fn meta() -> TableMeta {
        TableMeta {
            metric: Metric::Wdl,
            rules_code: 1,
            material: "KRvK".into(),
            index_scheme: 7,
            extra: b"{}".to_vec(),
        }
    }

    /// A write told to stop, while it compresses or while it reads the file back, fails
    /// naming the file, leaves no temporary file, and leaves the file already there as it
    /// was; so does choosing between candidates.
    #[test]
    fn a_stopped_write_leaves_the_file_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.wdl");
        let old: Vec<u16> = (0..1000).map(|i| (i % 2) as u16).collect();
        write_table(&path, &meta(), &old).unwrap();
        let before = fs::read(&path).unwrap();
        let values: Vec<u16> = (0..1_000_000u32).map(|i| (i % 7) as u16).collect();
        let options = WriteOptions {
            block_bytes: 4096,
            ..WriteOptions::default()
        };
        let files = || fs::read_dir(dir.path()).unwrap().count();
        let asked = AtomicU64::new(0);
        let in_compression = || asked.fetch_add(1, Ordering::Relaxed) >= 3;
        // only true once the temporary file is there: asked while it is read back
        let saw_temporary = std::sync::atomic::AtomicBool::new(false);
        let reading_back = || {
            let there = files() > 1;
            saw_temporary.fetch_or(there, Ordering::Relaxed);
            there
        };
        let never = || false;
        let stops: [Stop<'_>; 2] = [&in_compression, &reading_back];
        for stop in stops {
            let err = write_table_until(&path, &meta(), &values, &options, stop).unwrap_err();
            assert!(matches!(err, FormatError::Interrupted { .. }), "{err}");
            assert_eq!(err.path(), path);
            assert_eq!(files(), 1);
            assert_eq!(fs::read(&path).unwrap(), before);
        }
        assert!(saw_temporary.load(Ordering::Relaxed));
        let other: Vec<u16> = values.iter().map(|v| v ^ 1).collect();
        let candidates: [(&TableMeta, &dyn Values, u64); 2] =
            [(&meta(), &values, 100), (&meta(), &other, 100)];
        asked.store(0, Ordering::Relaxed);
        let err = write_smaller_until(&path, &candidates, &options, &in_compression).unwrap_err();
        assert!(matches!(err, FormatError::Interrupted { .. }), "{err}");
        assert_eq!(files(), 1);
        assert_eq!(fs::read(&path).unwrap(), before);
        // and one never told to stop writes
        write_table_until(&path, &meta(), &values, &options, &never).unwrap();
        assert_ne!(fs::read(&path).unwrap(), before);
    }

    /// The smaller of two candidates once weighted is written, with its own metadata,
    /// and reads back as its values.
    #[test]
    fn write_smaller_writes_the_smaller_weighted_candidate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        let n = 200_000;
        // a noisy candidate and one of long runs
        let mut x = 12345u64;
        let noisy: Vec<u16> = (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 59) as u16
            })
            .collect();
        let runs: Vec<u16> = (0..n).map(|i| (i / 5000) as u16 % 7).collect();
        let (mut a, mut b) = (meta(), meta());
        a.extra = b"{\"a\":1}".to_vec();
        b.extra = b"{\"b\":1}".to_vec();
        let options = WriteOptions {
            block_bytes: 1 << 10,
            ..WriteOptions::default()
        };
        for (weights, want) in [([100, 100], 1), ([1, 10_000], 0)] {
            let candidates: [(&TableMeta, &dyn Values, u64); 2] =
                [(&a, &noisy, weights[0]), (&b, &runs, weights[1])];
            let (i, w) = write_smaller_with(&path, &candidates, &options).unwrap();
            assert_eq!(i, want, "{weights:?}");
            let t = TableFile::open(&path).unwrap();
            assert_eq!(t.meta().extra, candidates[want].0.extra);
            assert_eq!(w.file_bytes, t.file_len());
            let expected = if want == 0 { &noisy } else { &runs };
            assert_eq!(&t.read_all().unwrap(), expected);
        }
    }

    #[test]
    fn pack_fills_unused_with_neighbours() {
        let mut code = vec![0u16; 1 << 16];
        code[10] = 1;
        code[20] = 2;
        let mut out = Vec::new();
        pack(&[UNUSED, 20, UNUSED, 10, 10], &code, 2, None, &mut out);
        // Symbols 2, 2, 2, 1, 1 -> bits 10 10 10 01 | 01.
        assert_eq!(out, [0b01_10_10_10, 0b01]);
        pack(&[UNUSED, UNUSED], &code, 8, None, &mut out);
        assert_eq!(out, [0, 0]);
        code[30] = 0x0102;
        pack(&[20, 10, 30], &code, 16, None, &mut out);
        assert_eq!(out, [2, 1, 2, 0, 0, 1]);
        // from one period before, the first period as without one
        pack(
            &[20, UNUSED, 10, UNUSED, UNUSED],
            &code,
            8,
            Some(2),
            &mut out,
        );
        assert_eq!(out, [2, 2, 1, 2, 1]);
    }

    /// Values in rows of 64 that repeat, most of them unused.
    struct Rows(Vec<u16>, Vec<usize>);

    impl Values for Rows {
        fn len(&self) -> usize {
            self.0.len()
        }

        fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
            self.0.read_into(range, out);
        }

        fn fill_periods(&self) -> Vec<usize> {
            self.1.clone()
        }
    }

    /// Unused slots filled from a row before make a file of repeating rows far smaller
    /// than filled from the slot before, and it reads back as its values.
    #[test]
    fn unused_slots_filled_along_a_period_when_that_is_smaller() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        let mut x = 99u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let row: Vec<u16> = (0..64).map(|_| (next() % 6) as u16).collect();
        let values: Vec<u16> = (0..1 << 20)
            .map(|i| {
                if next() % 10 == 0 {
                    row[i % 64]
                } else {
                    UNUSED
                }
            })
            .collect();
        let options = WriteOptions {
            block_bytes: 16 << 10,
            ..WriteOptions::default()
        };
        let mut sizes = Vec::new();
        for periods in [vec![], vec![64], vec![7, 64 * 64, 64]] {
            let w =
                write_table_with(&path, &meta(), &Rows(values.clone(), periods), &options).unwrap();
            let back = TableFile::open(&path).unwrap().read_all().unwrap();
            for (v, b) in values.iter().zip(&back) {
                assert!(*v == UNUSED || v == b);
            }
            sizes.push(w.file_bytes);
        }
        assert!(sizes[1] * 4 < sizes[0], "{sizes:?}");
        assert!(sizes[2] <= sizes[1], "{sizes:?}");
    }

    /// Values at least three quarters unused are written in the sparse options' blocks,
    /// others in the usual ones; a sparse level out of range is refused.
    #[test]
    fn mostly_unused_values_are_written_with_the_sparse_options() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        let mut options = WriteOptions {
            block_bytes: 1 << 10,
            sparse: Some(SparseOptions {
                block_bytes: 4 << 10,
                zstd_level: 19,
                target_length: Some(64),
                dense_blocks: None,
            }),
            ..WriteOptions::default()
        };
        // one used in 4 (exactly three quarters unused), one in 3, one in 2
        for (used_every, sparse) in [(4, true), (3, false), (2, false)] {
            let values: Vec<u16> = (0..100_000u32)
                .map(|i| {
                    if i % used_every == 0 {
                        (i % 7) as u16
                    } else {
                        UNUSED
                    }
                })
                .collect();
            let w = write_table_with(&path, &meta(), &values, &options).unwrap();
            let block_bytes = w.block_values as usize * usize::from(w.symbol_bits) / 8;
            assert_eq!(block_bytes, if sparse { 4 << 10 } else { 1 << 10 });
            let back = TableFile::open(&path).unwrap().read_all().unwrap();
            for (v, b) in values.iter().zip(&back) {
                assert!(*v == UNUSED || v == b);
            }
        }
        options.sparse.as_mut().unwrap().target_length = Some(0);
        let err = write_table_with(&path, &meta(), &[1u16, 2], &options).unwrap_err();
        assert!(err.to_string().contains("zstd target length 0"), "{err}");
        options.sparse.as_mut().unwrap().target_length = None;
        options.sparse.as_mut().unwrap().zstd_level = 23;
        let err = write_table_with(&path, &meta(), &[1u16, 2], &options).unwrap_err();
        assert!(err.to_string().contains("zstd level 23"), "{err}");
    }

    /// In a sparse file, the blocks of many used values go at the dense blocks' level
    /// (here a poor one, so the file is larger), the others at the sparse level; a dense
    /// level out of range is refused.
    #[test]
    fn dense_blocks_of_a_sparse_file_take_their_own_level() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.tb");
        // the first fifth every value used (structured, so a high level finds more), the
        // rest unused: the file is sparse, its first blocks are not
        let values: Vec<u16> = (0..200_000u32)
            .map(|i| {
                if i < 40_000 {
                    ((i * i / 7 + i / 13) % 11) as u16
                } else {
                    UNUSED
                }
            })
            .collect();
        let mut options = WriteOptions {
            sparse: Some(SparseOptions {
                block_bytes: 4 << 10,
                zstd_level: 19,
                target_length: None,
                dense_blocks: None,
            }),
            ..WriteOptions::default()
        };
        let whole = write_table_with(&path, &meta(), &values, &options).unwrap();
        options.sparse.as_mut().unwrap().dense_blocks = Some(DenseBlocks {
            min_bytes: 1 << 20,
            zstd_level: 1,
        });
        let dense = write_table_with(&path, &meta(), &values, &options).unwrap();
        assert!(dense.file_bytes > whole.file_bytes, "{dense:?} {whole:?}");
        let back = TableFile::open(&path).unwrap().read_all().unwrap();
        for (v, b) in values.iter().zip(&back) {
            assert!(*v == UNUSED || v == b);
        }
        options.sparse.as_mut().unwrap().dense_blocks = Some(DenseBlocks {
            min_bytes: 0,
            zstd_level: 0,
        });
        let err = write_table_with(&path, &meta(), &values, &options).unwrap_err();
        assert!(err.to_string().contains("zstd level 0"), "{err}");
    }

    /// [`pack`] gives the bytes of the plain one-value-at-a-time packing, at every
    /// symbol width, with and without a fill period, for blocks of any length.
    #[test]
    fn pack_is_the_reference_packing() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for bits in [1u8, 2, 4, 8, 16] {
            let symbols = if bits == 16 { 1000 } else { 1u64 << bits };
            // values 0..symbols map to symbols in reverse
            let mut code = vec![0u16; 1 << 16];
            for v in 0..symbols {
                code[v as usize] = (symbols - 1 - v) as u16;
            }
            for len in [0usize, 1, 7, 8, 9, 333, 4096] {
                for unused_in_16 in [0u64, 8, 15, 16] {
                    let chunk: Vec<u16> = (0..len)
                        .map(|_| {
                            if next() % 16 < unused_in_16 {
                                UNUSED
                            } else {
                                (next() % symbols) as u16
                            }
                        })
                        .collect();
                    for period in [None, Some(1), Some(7), Some(64)] {
                        pack(&chunk, &code, bits, period, &mut fast);
                        pack_reference(&chunk, &code, bits, period, &mut slow);
                        assert_eq!(fast, slow, "{bits} bits, {len} values, period {period:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_come_in_order_whatever_the_batch() {
        // several batches of two blocks a thread, the last one short
        let n = 512 * (6 * rayon::current_num_threads() + 3);
        let values: Vec<u16> = (0..n as u32).map(|i| ((i * 7919) % 13) as u16).collect();
        let options = WriteOptions {
            block_bytes: 256,
            zstd_level: 3,
            ..WriteOptions::default()
        };
        let e = analyze(&values[..], &options).unwrap();
        let blocks = |batch_bytes, every| {
            let mut out: Vec<Vec<u8>> = Vec::new();
            compress_blocks(&values[..], &e, every, batch_bytes, &|| false, |b| {
                out.push(b.to_vec());
                Ok(())
            })
            .unwrap();
            out
        };
        // one batch of every block, against batches of a few blocks (at least two a thread)
        let whole = blocks(BATCH_BYTES, 1);
        assert_eq!(whole.len(), e.block_count as usize);
        assert_eq!(e.block_values, 512);
        assert_eq!(blocks(1, 1), whole);
        let sampled: Vec<Vec<u8>> = whole.iter().step_by(SAMPLE_EVERY).cloned().collect();
        assert_eq!(blocks(1, SAMPLE_EVERY), sampled);
        // and each block decompresses to its own values
        let third = zstd::bulk::decompress(&whole[3], 1 << 20).unwrap();
        let mut packed = Vec::new();
        let per_block = e.block_values as usize;
        pack(
            &values[3 * per_block..4 * per_block],
            &e.code,
            e.bits,
            None,
            &mut packed,
        );
        assert_eq!(third, packed);
    }

    #[test]
    fn symbols_are_sorted_by_frequency_then_value() {
        let values = [5, 3, 3, 9, 9, UNUSED, 9, 5];
        let e = analyze(&values[..], &WriteOptions::default()).unwrap();
        assert_eq!(e.symbols, [9, 3, 5]);
        assert_eq!(e.bits, 2);
        assert_eq!(e.unused, 1);
        assert_eq!(e.block_values, (DEFAULT_BLOCK_BYTES * 4) as u32);
        let forced = WriteOptions {
            min_symbol_bits: 8,
            block_bytes: 1000,
            ..WriteOptions::default()
        };
        let e = analyze(&values[..], &forced).unwrap();
        assert_eq!((e.bits, e.block_values), (8, 512));
    }

    #[test]
    fn damage_before_verification_is_caught_and_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.wdl");
        let values: Vec<u16> = (0..100_000u32).map(|i| (i % 3) as u16).collect();
        let flip_last_byte = |p: &Path| -> io::Result<()> {
            let mut bytes = fs::read(p)?;
            let last = bytes.len() - 1;
            bytes[last] ^= 0x10;
            fs::write(p, bytes)
        };
        let err = write_impl(
            &path,
            &meta(),
            &values,
            &WriteOptions::default(),
            &flip_last_byte,
            &|| false,
        )
        .unwrap_err();
        assert!(matches!(err, FormatError::ChecksumMismatch { .. }), "{err}");
        assert_eq!(err.path(), path);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);

        // A file that stays self-consistent but holds other values: rewrite it whole.
        let other: Vec<u16> = values.iter().map(|&v| (v + 1) % 3).collect();
        let other_path = dir.path().join("other");
        write_table(&other_path, &meta(), &other).unwrap();
        let swap = |p: &Path| fs::copy(&other_path, p).map(|_| ());
        let err = write_impl(
            &path,
            &meta(),
            &values,
            &WriteOptions::default(),
            &swap,
            &|| false,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                FormatError::VerifyFailed {
                    index: 0,
                    expected: 0,
                    found: 1,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("KRvK.wdl"), "{err}");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["other"]);
    }
}
