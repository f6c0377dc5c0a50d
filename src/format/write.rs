//! Writing a table file: symbol remapping, bit packing, parallel zstd, temp + rename.

use std::cmp::Reverse;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
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
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            block_bytes: DEFAULT_BLOCK_BYTES,
            zstd_level: DEFAULT_ZSTD_LEVEL,
            min_symbol_bits: 1,
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
    let invalid = |what: String| FormatError::InvalidInput {
        path: path.to_owned(),
        what,
    };
    let mut best: Option<(usize, u64)> = None;
    for (i, (_, values, weight)) in candidates.iter().enumerate() {
        let sampled = WriteOptions {
            zstd_level: options.zstd_level.min(SAMPLE_LEVEL),
            ..options.clone()
        };
        let sample = encode(*values, &sampled, SAMPLE_EVERY, stop).map_err(|e| e.at(path))?;
        let bytes = weight * sample.blocks.iter().map(|b| b.len() as u64).sum::<u64>();
        if best.is_none_or(|b| bytes < b.1) {
            best = Some((i, bytes));
        }
    }
    let Some((i, _)) = best else {
        return Err(invalid("no values to write".into()));
    };
    let (encoded, bytes) = prepare(path, candidates[i].0, candidates[i].1, options, stop)?;
    let stats = write_prepared(
        path,
        candidates[i].1,
        &encoded,
        &bytes,
        started,
        &|_| Ok(()),
        stop,
    )?;
    Ok((i, stats))
}

/// Checks the metadata and options, then encodes the values and lays out the file.
fn prepare<V: Values + ?Sized>(
    path: &Path,
    meta: &TableMeta,
    values: &V,
    options: &WriteOptions,
    stop: Stop<'_>,
) -> Result<(Encoded, Prefix), FormatError> {
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
    if !(1..=22).contains(&options.zstd_level) {
        return Err(invalid(format!("zstd level {}", options.zstd_level)));
    }

    let encoded = encode(values, options, 1, stop).map_err(|e| e.at(path))?;
    let bytes =
        assemble(meta, values.len() as u64, &encoded).map_err(|e| FormatError::io(path, e))?;
    Ok((encoded, bytes))
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
    let started = Instant::now();
    let (encoded, bytes) = prepare(path, meta, values, options, stop)?;
    write_prepared(path, values, &encoded, &bytes, started, after_sync, stop)
}

/// Writes an encoded file to a temporary name, syncs it, reads it back and checks every
/// value against `values`, then renames it into place.
fn write_prepared<V: Values + ?Sized>(
    path: &Path,
    values: &V,
    encoded: &Encoded,
    bytes: &Prefix,
    started: Instant,
    after_sync: &dyn Fn(&Path) -> io::Result<()>,
    stop: Stop<'_>,
) -> Result<WriteStats, FormatError> {
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
    w.write_all(&bytes.prefix).map_err(io_err)?;
    for block in &encoded.blocks {
        w.write_all(block).map_err(io_err)?;
    }
    let file = w.into_inner().map_err(|e| io_err(e.into_error()))?;
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
        blocks: encoded.blocks.len() as u32,
        unused: encoded.unused,
        symbols: encoded.symbols.len() as u32,
        symbol_bits: encoded.bits,
        block_values: encoded.block_values,
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

/// Symbols and compressed blocks.
struct Encoded {
    symbols: Vec<u16>,
    bits: u8,
    block_values: u32,
    unused: u64,
    blocks: Vec<Vec<u8>>,
}

/// [`write_smaller_with`] compares its candidates on one block in this many.
pub const SAMPLE_EVERY: usize = 8;

/// The highest zstd level [`write_smaller_with`] compares its candidates at. Measured on
/// KNBvKB's DTZ file (64 KiB blocks, 2 cores, with the read-back check): level 15 in
/// 6.6 s, 9 in 1.8 s; comparing four candidates at 15 took 3.7 s more than writing the
/// chosen one.
pub const SAMPLE_LEVEL: i32 = 9;

/// Why [`encode`] gave no blocks.
#[derive(Debug)]
enum EncodeError {
    /// The values or options cannot be written.
    Invalid(String),
    /// `stop` said so.
    Stopped,
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
        }
    }
}

/// Remaps values to symbols by frequency, packs and compresses the blocks in parallel:
/// every block (`every` 1) or every `every`-th only (a sample of the compressed size, not
/// a file). Asks `stop` before each block.
fn encode<V: Values + ?Sized>(
    values: &V,
    options: &WriteOptions,
    every: usize,
    stop: Stop<'_>,
) -> Result<Encoded, EncodeError> {
    let len = values.len();
    let mut freq = (0..len.div_ceil(1 << 20))
        .into_par_iter()
        .fold(
            || vec![0u64; 1 << 16],
            |mut f, c| {
                values.count_into(c << 20..((c + 1) << 20).min(len), &mut f);
                f
            },
        )
        .reduce(
            || vec![0u64; 1 << 16],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
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

    let clamped = options.block_bytes.clamp(64, MAX_BLOCK_BYTES as usize);
    let block_bytes = 1usize << (usize::BITS - 1 - clamped.leading_zeros());
    let block_values = u32::try_from(block_bytes * 8 / usize::from(bits))
        .map_err(|_| EncodeError::Invalid("block too large".to_string()))?;
    let block_count = u32::try_from(len.div_ceil(block_values as usize))
        .map_err(|_| EncodeError::Invalid(format!("{len} values are too many")))?;

    let level = options.zstd_level;
    let per_block = block_values as usize;
    let blocks = (0..block_count as usize)
        .into_par_iter()
        .filter(|b| b % every.max(1) == 0)
        .map_init(
            || (compressor(level), Vec::new(), Vec::new()),
            |(c, buf, chunk), b| {
                if stop() {
                    return Err(EncodeError::Stopped);
                }
                values.read_into(b * per_block..((b + 1) * per_block).min(len), chunk);
                pack(chunk, &code, bits, buf);
                let c = c
                    .as_mut()
                    .map_err(|e| EncodeError::Invalid(format!("zstd compressor: {e}")))?;
                // The compressor returns a buffer of zstd's bound (more than the block's
                // bytes), kept until the file is written: keep only what it holds. On
                // KRQvKR this took the peak of the process from 887 to 736 MB (the
                // retrograde passes' plateau); the bytes written are the same.
                let mut block = c
                    .compress(buf)
                    .map_err(|e| EncodeError::Invalid(format!("zstd: {e}")))?;
                block.shrink_to_fit();
                Ok(block)
            },
        )
        .collect::<Result<Vec<Vec<u8>>, EncodeError>>()?;
    debug_assert!(every != 1 || blocks.len() == block_count as usize);
    Ok(Encoded {
        symbols,
        bits,
        block_values,
        unused,
        blocks,
    })
}

fn compressor(level: i32) -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    // The offset table has the lengths and checksums; the reader knows the sizes.
    c.set_parameter(CParameter::ContentSizeFlag(false))?;
    c.set_parameter(CParameter::ChecksumFlag(false))?;
    c.set_parameter(CParameter::DictIdFlag(false))?;
    Ok(c)
}

/// Packs one block of values as symbols into `out`. An [`UNUSED`] slot repeats the symbol
/// before it, or at the start of the block the first used symbol after it.
fn pack(chunk: &[u16], code: &[u16], bits: u8, out: &mut Vec<u8>) {
    out.clear();
    let len = packed_len(chunk.len() as u64, bits).unwrap_or(0) as usize;
    out.resize(len, 0);
    let mut prev = chunk
        .iter()
        .find(|&&v| v != UNUSED)
        .map_or(0, |&v| code[usize::from(v)]);
    for (i, &v) in chunk.iter().enumerate() {
        let s = if v == UNUSED {
            prev
        } else {
            code[usize::from(v)]
        };
        prev = s;
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

/// The file bytes before the first block (header, symbols, extra, offset table).
struct Prefix {
    prefix: Vec<u8>,
    file_len: u64,
}

fn assemble(meta: &TableMeta, n: u64, e: &Encoded) -> io::Result<Prefix> {
    let too_big = || io::Error::other("table too large");
    let block_count = u32::try_from(e.blocks.len()).map_err(|_| too_big())?;
    let extra_len = u32::try_from(meta.extra.len()).map_err(|_| too_big())?;
    let symbol_count = e.symbols.len() as u32;
    let layout = Layout::new(symbol_count, extra_len, block_count).ok_or_else(too_big)?;
    let mut material = [0u8; MATERIAL_LEN];
    material[..meta.material.len()].copy_from_slice(meta.material.as_bytes());

    let mut entries = Vec::with_capacity(e.blocks.len());
    let mut offset = layout.blocks_offset;
    for block in &e.blocks {
        let compressed_len = u32::try_from(block.len()).map_err(|_| too_big())?;
        entries.push(BlockEntry {
            offset,
            compressed_len,
            checksum: crc32fast::hash(block),
        });
        offset = offset
            .checked_add(u64::from(compressed_len))
            .ok_or_else(too_big)?;
    }
    let file_len = offset;

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
    for entry in &entries {
        prefix.extend_from_slice(&entry.to_bytes());
    }
    debug_assert_eq!(prefix.len() as u64, layout.blocks_offset);
    let checksum = crc32fast::hash(&prefix);
    prefix[CHECKSUM_FIELD..HEADER_LEN].copy_from_slice(&checksum.to_le_bytes());
    Ok(Prefix { prefix, file_len })
}

#[cfg(test)]
mod tests {
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
        pack(&[UNUSED, 20, UNUSED, 10, 10], &code, 2, &mut out);
        // Symbols 2, 2, 2, 1, 1 -> bits 10 10 10 01 | 01.
        assert_eq!(out, [0b01_10_10_10, 0b01]);
        pack(&[UNUSED, UNUSED], &code, 8, &mut out);
        assert_eq!(out, [0, 0]);
        code[30] = 0x0102;
        pack(&[20, 10, 30], &code, 16, &mut out);
        assert_eq!(out, [2, 1, 2, 0, 0, 1]);
    }

    #[test]
    fn symbols_are_sorted_by_frequency_then_value() {
        let values = [5, 3, 3, 9, 9, UNUSED, 9, 5];
        let e = encode(&values, &WriteOptions::default(), 1, &|| false).unwrap();
        assert_eq!(e.symbols, [9, 3, 5]);
        assert_eq!(e.bits, 2);
        assert_eq!(e.unused, 1);
        assert_eq!(e.block_values, (DEFAULT_BLOCK_BYTES * 4) as u32);
        let forced = WriteOptions {
            min_symbol_bits: 8,
            block_bytes: 1000,
            ..WriteOptions::default()
        };
        let e = encode(&values, &forced, 1, &|| false).unwrap();
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
