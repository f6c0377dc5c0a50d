//! Opening, validating and probing a table file.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rayon::prelude::*;

use super::cache::{BlockCache, CacheBudget};
use super::header::{
    BLOCK_ENTRY_LEN, BlockEntry, CHECKSUM_FIELD, FORMAT_VERSION, HEADER_LEN, Header, Layout, MAGIC,
    MATERIAL_LEN, MAX_BLOCK_BYTES, MAX_EXTRA_LEN, packed_len,
};
use super::{ChecksumRegion, FormatError, Metric, TableMeta, UNUSED};

/// Default cache capacity of a [`TableFile`] opened with its own budget
/// ([`TableFile::open`]): 64 MiB of decompressed blocks.
///
/// Files opened with one [`CacheBudget`] ([`TableFile::open_with_budget`]) share it: a
/// process probing many tables holds at most that budget. Memory grows only as blocks are
/// used: a 2-bit table of 200 M values is 50 MB decompressed, so it fits entirely.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// A validated table file. `Send + Sync`: share it between threads by reference or `Arc`.
///
/// The header, symbol table and block offset table are read into memory (and checked)
/// at open; each block is read with a positioned read on a cache miss, then checksummed
/// and decompressed. The file is not mapped, so a file truncated or rewritten in place
/// under a reader (`cp` or `rsync --inplace` over it) gives a damaged-table error naming
/// it, never a crash; blocks already cached keep answering as the file was when opened.
pub struct TableFile {
    path: PathBuf,
    file: File,
    file_len: u64,
    /// When the file was last modified, as of opening it (if the system says).
    modified: Option<SystemTime>,
    /// The offset table, checked at open.
    entries: Box<[BlockEntry]>,
    meta: TableMeta,
    len: u64,
    symbols: Vec<u16>,
    /// Symbols in range are `< symbol_count`; with `1 << bits` larger, some bit patterns
    /// are invalid and `get` reports them.
    bits: u8,
    block_shift: u32,
    block_count: u32,
    offsets_offset: usize,
    cache: BlockCache,
}

/// Reads `buf.len()` bytes at `offset` without moving a file position (threads share the
/// file). `UnexpectedEof` if the file ends first.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    /// This thread's buffer for the compressed bytes of a block.
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Decompresses one zstd frame into `dst`, reusing this thread's decompression context.
fn decompress_into(src: &[u8], dst: &mut [u8]) -> io::Result<usize> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        match slot.as_mut() {
            Some(d) => d.decompress_to_buffer(src, dst),
            None => Err(io::Error::other("no zstd decompressor")),
        }
    })
}

/// Symbol `pos` of a decompressed block, `None` if past its end.
#[inline(always)]
fn decode_symbol(data: &[u8], pos: usize, bits: u8) -> Option<usize> {
    match bits {
        16 => {
            // Two byte planes: low bytes of the whole block, then high bytes.
            let half = data.len() / 2;
            if pos >= half {
                return None;
            }
            let lo = *data.get(pos)?;
            let hi = *data.get(half + pos)?;
            Some(usize::from(u16::from_le_bytes([lo, hi])))
        }
        8 => data.get(pos).map(|&b| usize::from(b)),
        _ => {
            let bit = pos.checked_mul(usize::from(bits))?;
            let byte = *data.get(bit / 8)?;
            Some(usize::from((byte >> (bit % 8)) & ((1u8 << bits) - 1)))
        }
    }
}

struct Parsed {
    meta: TableMeta,
    len: u64,
    symbols: Vec<u16>,
    bits: u8,
    block_shift: u32,
    block_count: u32,
    offsets_offset: usize,
    entries: Vec<BlockEntry>,
}

fn to_usize(path: &Path, x: u64, offset: u64, what: &str) -> Result<usize, FormatError> {
    usize::try_from(x)
        .map_err(|_| FormatError::corrupt(path, offset, format!("{what} {x} too large")))
}

/// The length of the part of a file [`parse`] reads (header, symbols, extra bytes,
/// offset table: everything before the first block), from its first `head` bytes (up
/// to [`HEADER_LEN`]), checking what it depends on.
fn prefix_len(path: &Path, head: &[u8], file_len: u64) -> Result<u64, FormatError> {
    check_header(path, head, file_len).map(|(_, layout)| layout.blocks_offset)
}

/// Checks the header's magic, version, lengths and section offsets.
fn check_header(path: &Path, bytes: &[u8], file_len: u64) -> Result<(Header, Layout), FormatError> {
    let truncated = |needed: u64| FormatError::Truncated {
        path: path.to_owned(),
        needed,
        file_len,
    };
    let corrupt = |offset: u64, what: String| FormatError::corrupt(path, offset, what);

    let Some(magic) = bytes.get(..MAGIC.len()) else {
        return Err(truncated(HEADER_LEN as u64));
    };
    if magic != MAGIC {
        let mut found = [0u8; 8];
        found.copy_from_slice(magic);
        return Err(FormatError::BadMagic {
            path: path.to_owned(),
            found,
        });
    }
    let h = Header::read(bytes).ok_or_else(|| truncated(HEADER_LEN as u64))?;
    if h.version != FORMAT_VERSION {
        return Err(FormatError::UnsupportedVersion {
            path: path.to_owned(),
            found: h.version,
            supported: FORMAT_VERSION,
        });
    }
    if h.header_len as usize != HEADER_LEN {
        return Err(corrupt(12, format!("header length {}", h.header_len)));
    }
    if h.file_len > file_len {
        return Err(truncated(h.file_len));
    }
    if h.file_len != file_len {
        return Err(corrupt(
            96,
            format!(
                "header says the file has {} bytes, it has {file_len}",
                h.file_len
            ),
        ));
    }
    let layout = Layout::new(h.symbol_count, h.extra_len, h.block_count)
        .ok_or_else(|| corrupt(56, "section sizes overflow".into()))?;
    let stored = Layout {
        symbols_offset: h.symbols_offset,
        extra_offset: h.extra_offset,
        offsets_offset: h.offsets_offset,
        blocks_offset: h.blocks_offset,
    };
    if stored != layout {
        return Err(corrupt(
            64,
            format!("section offsets {stored:?} do not match the counts ({layout:?})"),
        ));
    }
    if layout.blocks_offset > file_len {
        return Err(truncated(layout.blocks_offset));
    }
    Ok((h, layout))
}

/// Validates everything `get` will rely on, except the blocks' contents. `bytes` are
/// the first bytes of a file of `file_len` bytes, at least up to its first block.
fn parse(path: &Path, bytes: &[u8], file_len: u64) -> Result<Parsed, FormatError> {
    let truncated = |needed: u64| FormatError::Truncated {
        path: path.to_owned(),
        needed,
        file_len,
    };
    let corrupt = |offset: u64, what: String| FormatError::corrupt(path, offset, what);
    let (h, layout) = check_header(path, bytes, file_len)?;
    let blocks_offset = to_usize(path, layout.blocks_offset, 88, "first block offset")?;

    // Header checksum over header (checksum field as zero), symbols, extra, offset table.
    let covered = bytes
        .get(..blocks_offset)
        .ok_or_else(|| truncated(layout.blocks_offset))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&covered[..CHECKSUM_FIELD]);
    hasher.update(&[0; 4]);
    hasher.update(&covered[HEADER_LEN..]);
    let computed = hasher.finalize();
    if computed != h.header_checksum {
        return Err(FormatError::ChecksumMismatch {
            path: path.to_owned(),
            region: ChecksumRegion::Header,
            stored: h.header_checksum,
            computed,
        });
    }

    // Semantic checks: the checksum matched, so these catch writer bugs and forgeries.
    let metric =
        Metric::from_u8(h.metric).ok_or_else(|| corrupt(16, format!("metric {}", h.metric)))?;
    if !matches!(h.symbol_bits, 1 | 2 | 4 | 8 | 16) {
        return Err(corrupt(18, format!("bits per symbol {}", h.symbol_bits)));
    }
    if h.reserved0 != 0 || h.reserved != [0; 20] {
        return Err(corrupt(19, "reserved bytes are not zero".into()));
    }
    let material_end = h
        .material
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(MATERIAL_LEN);
    let (material, padding) = h.material.split_at(material_end);
    if !material.iter().all(|b| b.is_ascii_graphic()) || padding.iter().any(|&b| b != 0) {
        return Err(corrupt(
            20,
            "material is not NUL-padded printable ASCII".into(),
        ));
    }
    let max_symbols = 1u32 << h.symbol_bits;
    if h.symbol_count == 0 || h.symbol_count > max_symbols {
        return Err(corrupt(
            56,
            format!(
                "{} symbols with {} bits each",
                h.symbol_count, h.symbol_bits
            ),
        ));
    }
    if h.extra_len as usize > MAX_EXTRA_LEN {
        return Err(corrupt(60, format!("extra length {}", h.extra_len)));
    }
    if !h.block_values.is_power_of_two()
        || packed_len(u64::from(h.block_values), h.symbol_bits).is_none_or(|n| n > MAX_BLOCK_BYTES)
    {
        return Err(corrupt(48, format!("values per block {}", h.block_values)));
    }
    if h.value_count.div_ceil(u64::from(h.block_values)) != u64::from(h.block_count) {
        return Err(corrupt(
            52,
            format!(
                "{} blocks for {} values of {} per block",
                h.block_count, h.value_count, h.block_values
            ),
        ));
    }

    // Block offset table: blocks are contiguous, in order, non-empty, and end the file.
    let offsets_offset = to_usize(path, layout.offsets_offset, 80, "offset table offset")?;
    let table = &covered[offsets_offset..];
    let mut expected = layout.blocks_offset;
    let mut entries = Vec::with_capacity(h.block_count as usize);
    for i in 0..h.block_count as usize {
        let at = layout.offsets_offset + (i * BLOCK_ENTRY_LEN) as u64;
        let e = BlockEntry::read(table, i).ok_or_else(|| truncated(at))?;
        if e.offset != expected || e.compressed_len == 0 {
            return Err(corrupt(
                at,
                format!(
                    "block {i} at offset {} with length {} (expected offset {expected})",
                    e.offset, e.compressed_len
                ),
            ));
        }
        expected = expected
            .checked_add(u64::from(e.compressed_len))
            .filter(|&end| end <= file_len)
            .ok_or_else(|| corrupt(at, format!("block {i} extends past the end of the file")))?;
        entries.push(e);
    }
    if expected != file_len {
        return Err(corrupt(
            expected,
            format!(
                "{} bytes after the last block",
                file_len.saturating_sub(expected)
            ),
        ));
    }

    let symbols_start = to_usize(path, layout.symbols_offset, 64, "symbol table offset")?;
    let symbols = covered[symbols_start..]
        .chunks_exact(2)
        .take(h.symbol_count as usize)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let extra_start = to_usize(path, layout.extra_offset, 72, "extra offset")?;
    let extra = covered
        .get(extra_start..extra_start + h.extra_len as usize)
        .ok_or_else(|| truncated(layout.extra_offset + u64::from(h.extra_len)))?
        .to_vec();

    Ok(Parsed {
        meta: TableMeta {
            metric,
            rules_code: h.rules_code,
            // Checked above: printable ASCII.
            material: material.iter().map(|&b| char::from(b)).collect(),
            index_scheme: h.index_scheme,
            extra,
        },
        len: h.value_count,
        symbols,
        bits: h.symbol_bits,
        block_shift: h.block_values.trailing_zeros(),
        block_count: h.block_count,
        offsets_offset,
        entries,
    })
}

impl TableFile {
    /// Opens the file and validates magic, format version, header checksum, sizes and
    /// the block offset table before trusting anything. Cheap: blocks are not read. The
    /// file has a cache of its own of [`DEFAULT_CACHE_BYTES`].
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        TableFile::open_with_cache(path, DEFAULT_CACHE_BYTES)
    }

    /// [`TableFile::open`] with a cache of its own of `cache_bytes` bytes of
    /// decompressed data.
    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<TableFile, FormatError> {
        TableFile::open_with_budget(path, CacheBudget::new(cache_bytes))
    }

    /// [`TableFile::open`] with a cache bounded by `budget`, which every file opened
    /// with it shares.
    pub fn open_with_budget(
        path: &Path,
        budget: Arc<CacheBudget>,
    ) -> Result<TableFile, FormatError> {
        let file = File::open(path).map_err(|e| FormatError::io(path, e))?;
        let metadata = file.metadata().map_err(|e| FormatError::io(path, e))?;
        let (file_len, modified) = (metadata.len(), metadata.modified().ok());
        let read_prefix = |len: u64| -> Result<Vec<u8>, FormatError> {
            let len = to_usize(path, len, 0, "header length")?;
            let mut bytes = vec![0u8; len];
            read_exact_at(&file, &mut bytes, 0).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    FormatError::corrupt(path, 0, "the file shrank while it was being opened")
                } else {
                    FormatError::io(path, e)
                }
            })?;
            Ok(bytes)
        };
        let head = read_prefix(file_len.min(HEADER_LEN as u64))?;
        let prefix = read_prefix(prefix_len(path, &head, file_len)?)?;
        let p = parse(path, &prefix, file_len)?;
        Ok(TableFile {
            path: path.to_owned(),
            cache: BlockCache::new(p.block_count, budget),
            file,
            file_len,
            modified,
            entries: p.entries.into_boxed_slice(),
            meta: p.meta,
            len: p.len,
            symbols: p.symbols,
            bits: p.bits,
            block_shift: p.block_shift,
            block_count: p.block_count,
            offsets_offset: p.offsets_offset,
        })
    }

    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Number of compressed blocks.
    pub fn block_count(&self) -> u32 {
        self.block_count
    }

    /// Values per block (the last block may hold fewer).
    pub fn block_values(&self) -> u64 {
        1u64 << self.block_shift
    }

    /// Bits per stored symbol (1, 2, 4, 8 or 16).
    pub fn symbol_bits(&self) -> u8 {
        self.bits
    }

    /// The distinct values, most frequent first.
    pub fn symbols(&self) -> &[u16] {
        &self.symbols
    }

    /// Sets the capacity in bytes of decompressed data of this file's cache budget
    /// (shared with every file opened with the same budget), evicting at once if it
    /// shrank. The blocks held never exceed it; with 0 nothing is kept.
    pub fn set_cache_capacity(&self, bytes: usize) {
        self.cache.budget().set_capacity(bytes);
    }

    /// The capacity of this file's cache budget.
    pub fn cache_capacity(&self) -> usize {
        self.cache.budget().capacity()
    }

    /// Bytes of this file's decompressed blocks held in the cache now.
    pub fn cached_bytes(&self) -> usize {
        self.cache.resident_bytes()
    }

    /// The budget this file's cache counts against.
    pub fn cache_budget(&self) -> &Arc<CacheBudget> {
        self.cache.budget()
    }

    /// The value at `index`; decompresses (and checksums) the block on first use and keeps
    /// it in a bounded, thread-safe cache. Err on `index >= len` or any damage. Never
    /// panics. A warm hit does not allocate.
    #[inline]
    pub fn get(&self, index: u64) -> Result<u16, FormatError> {
        let (block, pos) = self.locate(index)?;
        let bits = self.bits;
        let symbol = match self.cache.with(block, |d| decode_symbol(d, pos, bits)) {
            Some(s) => s,
            None => {
                let data = self.load_block(block)?;
                self.cache
                    .insert_with(block, data, |d| decode_symbol(d, pos, bits))
            }
        };
        self.value_of(symbol, block, pos)
    }

    /// The value at `index` if its block is in the cache now, else `Ok(None)`: never reads
    /// the file (no read, no decompression), so it cannot block on
    /// I/O. Err on `index >= len` or a bad symbol, as [`TableFile::get`].
    #[inline]
    pub fn get_cached(&self, index: u64) -> Result<Option<u16>, FormatError> {
        let (block, pos) = self.locate(index)?;
        let bits = self.bits;
        match self.cache.with(block, |d| decode_symbol(d, pos, bits)) {
            Some(symbol) => self.value_of(symbol, block, pos).map(Some),
            None => Ok(None),
        }
    }

    /// The values at `indices` into `out` (of the same length), taking each block's
    /// cache lock once for all the indices in it: the reads of one block then overlap
    /// in memory instead of each waiting behind a lock (a probe reads a dozen values,
    /// mostly in one or two blocks). With `read` false, as [`TableFile::get_cached`]:
    /// `Ok(false)` if a block is not cached (and `out` is then partly written); with
    /// `read` true, as [`TableFile::get`]: blocks are read as needed, and the answer is
    /// `Ok(true)`.
    ///
    /// # Panics
    /// If `indices` and `out` differ in length.
    pub fn get_many(
        &self,
        indices: &[u64],
        out: &mut [u16],
        read: bool,
    ) -> Result<bool, FormatError> {
        assert_eq!(indices.len(), out.len(), "one output for each index");
        for (indices, out) in indices.chunks(256).zip(out.chunks_mut(256)) {
            if !self.get_chunk(indices, out, read)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// [`TableFile::get_many`] for at most 256 indices.
    fn get_chunk(&self, indices: &[u64], out: &mut [u16], read: bool) -> Result<bool, FormatError> {
        let mut done = [false; 256];
        let bits = self.bits;
        for i in 0..indices.len() {
            if done[i] {
                continue;
            }
            let (block, _) = self.locate(indices[i])?;
            // every index of this block, under one lock
            let mut fill = |data: &[u8]| -> Result<(), FormatError> {
                for j in i..indices.len() {
                    if done[j] {
                        continue;
                    }
                    let (b, pos) = self.locate(indices[j])?;
                    if b == block {
                        out[j] = self.value_of(decode_symbol(data, pos, bits), block, pos)?;
                        done[j] = true;
                    }
                }
                Ok(())
            };
            match self.cache.with(block, &mut fill) {
                Some(filled) => filled?,
                None if read => {
                    let data = self.load_block(block)?;
                    self.cache.insert_with(block, data, &mut fill)?;
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// The block of `index` and its position in the block.
    #[inline]
    fn locate(&self, index: u64) -> Result<(u32, usize), FormatError> {
        if index >= self.len {
            return Err(self.out_of_range(index));
        }
        // index < len <= block_count << block_shift, so the block number fits in u32.
        let block = (index >> self.block_shift) as u32;
        let pos = (index & ((1u64 << self.block_shift) - 1)) as usize;
        Ok((block, pos))
    }

    #[inline]
    fn value_of(&self, symbol: Option<usize>, block: u32, pos: usize) -> Result<u16, FormatError> {
        match symbol.and_then(|s| self.symbols.get(s)) {
            Some(&v) => Ok(v),
            None => Err(self.bad_symbol(block, pos)),
        }
    }

    #[cold]
    fn out_of_range(&self, index: u64) -> FormatError {
        FormatError::IndexOutOfRange {
            path: self.path.clone(),
            index,
            len: self.len,
        }
    }

    #[cold]
    fn bad_symbol(&self, block: u32, pos: usize) -> FormatError {
        let offset = self.entry(block).map_or(0, |e| e.offset);
        FormatError::corrupt(
            &self.path,
            offset,
            format!(
                "block {block}: symbol {pos} is missing or not in the symbol table of {} entries",
                self.symbols.len()
            ),
        )
    }

    fn entry(&self, block: u32) -> Option<BlockEntry> {
        self.entries.get(block as usize).copied()
    }

    /// Number of values in `block`.
    fn values_in_block(&self, block: u32) -> u64 {
        let start = u64::from(block) << self.block_shift;
        (self.len - start).min(1u64 << self.block_shift)
    }

    /// Reads, checksums and decompresses one block.
    #[cold]
    fn load_block(&self, block: u32) -> Result<Box<[u8]>, FormatError> {
        let at = self.offsets_offset as u64 + u64::from(block) * BLOCK_ENTRY_LEN as u64;
        let corrupt = |offset: u64, what: String| FormatError::corrupt(&self.path, offset, what);
        let e = self
            .entry(block)
            .ok_or_else(|| corrupt(at, format!("no offset table entry for block {block}")))?;
        let n = packed_len(self.values_in_block(block), self.bits)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| corrupt(at, format!("block {block} is too large")))?;
        READ_BUF.with(|buf| {
            let mut src = buf.borrow_mut();
            src.resize(e.compressed_len as usize, 0);
            if let Err(err) = read_exact_at(&self.file, &mut src, e.offset) {
                return Err(if err.kind() == io::ErrorKind::UnexpectedEof {
                    self.changed(block, e.offset).unwrap_or_else(|| {
                        corrupt(e.offset, format!("block {block} is out of the file"))
                    })
                } else {
                    FormatError::io(&self.path, err)
                });
            }
            let computed = crc32fast::hash(&src);
            if computed != e.checksum {
                return Err(self.changed(block, e.offset).unwrap_or(
                    FormatError::ChecksumMismatch {
                        path: self.path.clone(),
                        region: ChecksumRegion::Block(block),
                        stored: e.checksum,
                        computed,
                    },
                ));
            }
            let mut data = vec![0u8; n].into_boxed_slice();
            match decompress_into(&src, &mut data) {
                Ok(got) if got == n => Ok(data),
                Ok(got) => Err(corrupt(
                    e.offset,
                    format!("block {block} decompresses to {got} bytes, expected {n}"),
                )),
                Err(err) => Err(corrupt(
                    e.offset,
                    format!("block {block} does not decompress: {err}"),
                )),
            }
        })
    }

    /// After a block failed to read or to check: the error to give if the file is not
    /// the one opened any more (another length now, or modified since it was opened),
    /// which is what copying over a table in place does.
    #[cold]
    fn changed(&self, block: u32, offset: u64) -> Option<FormatError> {
        let metadata = self.file.metadata().ok()?;
        let now = metadata.len();
        (now != self.file_len || metadata.modified().ok() != self.modified).then(|| {
            FormatError::corrupt(
                &self.path,
                offset,
                format!(
                    "block {block} cannot be read: the file was changed in place since it was \
                     opened (it has {now} bytes, it had {}) (put tables into a folder in use \
                     by copying them under another name and renaming them into place)",
                    self.file_len
                ),
            )
        })
    }

    /// Calls `check(block, first_index, decompressed)` on every block in parallel; returns
    /// the error of the lowest failing block.
    fn for_each_block(
        &self,
        check: impl Fn(u32, u64, &[u8]) -> Result<(), FormatError> + Sync,
    ) -> Result<(), FormatError> {
        let results: Vec<Result<(), FormatError>> = (0..self.block_count)
            .into_par_iter()
            .map(|b| {
                let data = self.load_block(b)?;
                check(b, u64::from(b) << self.block_shift, &data)
            })
            .collect();
        results.into_iter().collect()
    }

    /// Reads, checksums and decompresses every block, and checks every symbol (for a
    /// `verify` command). Runs on the rayon pool; does not fill the cache.
    pub fn verify_blocks(&self) -> Result<(), FormatError> {
        let n_symbols = self.symbols.len();
        self.for_each_block(|b, _, data| {
            if n_symbols == 1 << self.bits {
                return Ok(());
            }
            for pos in 0..self.values_in_block(b) as usize {
                if decode_symbol(data, pos, self.bits).is_none_or(|s| s >= n_symbols) {
                    return Err(self.bad_symbol(b, pos));
                }
            }
            Ok(())
        })
    }

    /// Every value of the table, in index order, read at once (every block checksummed
    /// and decompressed, in parallel): for a table small enough to hold whole and read
    /// often. An unused slot reads as [`TableFile::get`] reads it.
    pub fn read_all(&self) -> Result<Vec<u16>, FormatError> {
        let len = usize::try_from(self.len).map_err(|_| self.out_of_range(self.len))?;
        let mut out = vec![0u16; len];
        out.par_chunks_mut(1 << self.block_shift)
            .enumerate()
            .try_for_each(|(b, chunk)| {
                let b = b as u32;
                let data = self.load_block(b)?;
                for (pos, v) in chunk.iter_mut().enumerate() {
                    *v = self.value_of(decode_symbol(&data, pos, self.bits), b, pos)?;
                }
                Ok(())
            })?;
        Ok(out)
    }

    /// Checks that every value other than [`UNUSED`] reads back as in `values`; stops with
    /// [`FormatError::Interrupted`] once `stop` says so (asked before each block).
    pub(crate) fn check_values<V: super::Values + ?Sized>(
        &self,
        values: &V,
        stop: super::Stop<'_>,
    ) -> Result<(), FormatError> {
        if values.len() as u64 != self.len {
            return Err(FormatError::corrupt(
                &self.path,
                40,
                format!("{} values, expected {}", self.len, values.len()),
            ));
        }
        self.for_each_block(|b, first, data| {
            if stop() {
                return Err(FormatError::Interrupted {
                    path: self.path.clone(),
                });
            }
            let start = first as usize;
            let mut want = Vec::new();
            values.read_into(start..start + self.values_in_block(b) as usize, &mut want);
            // one loop per width, so that each decodes its symbols without a branch on it
            match self.bits {
                1 => self.check_block::<1>(data, start, &want),
                2 => self.check_block::<2>(data, start, &want),
                4 => self.check_block::<4>(data, start, &want),
                8 => self.check_block::<8>(data, start, &want),
                _ => self.check_block::<16>(data, start, &want),
            }
        })
    }

    /// Checks one decompressed block of `BITS`-bit symbols against `values`, the values
    /// from index `start` on.
    fn check_block<const BITS: u8>(
        &self,
        data: &[u8],
        start: usize,
        values: &[u16],
    ) -> Result<(), FormatError> {
        debug_assert_eq!(BITS, self.bits);
        for (pos, &want) in values.iter().enumerate() {
            let got = decode_symbol(data, pos, BITS).and_then(|s| self.symbols.get(s));
            match got {
                Some(&v) if v == want || want == UNUSED => {}
                _ => {
                    return Err(FormatError::VerifyFailed {
                        path: self.path.clone(),
                        index: (start + pos) as u64,
                        expected: want,
                        found: got.copied().unwrap_or(UNUSED),
                    });
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .field("len", &self.len)
            .field("bits", &self.bits)
            .field("block_values", &self.block_values())
            .field("block_count", &self.block_count)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_file_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<TableFile>();
    }

    #[test]
    fn decode_symbol_packing() {
        // Symbols 0..8 at 2 bits: byte 0 = 0b11_10_01_00.
        let data = [0b1110_0100u8, 0b0000_0001];
        let got: Vec<_> = (0..5).map(|i| decode_symbol(&data, i, 2)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(2), Some(3), Some(1)]);
        assert_eq!(decode_symbol(&data, 8, 2), None);
        assert_eq!(decode_symbol(&data, 1, 4), Some(0b1110));
        assert_eq!(decode_symbol(&data, 0, 16), Some(0x01e4));
        assert_eq!(decode_symbol(&data, 1, 16), None);
        assert_eq!(decode_symbol(&data, 7, 1), Some(1));
        assert_eq!(decode_symbol(&data, usize::MAX, 16), None);
    }

    #[test]
    fn parse_rejects_short_and_foreign_bytes() {
        let p = Path::new("x.tb");
        assert!(matches!(
            parse(p, b"SHTR", 4),
            Err(FormatError::Truncated { .. })
        ));
        assert!(matches!(
            parse(p, b"GIF89a and more", 15),
            Err(FormatError::BadMagic { .. })
        ));
        assert!(matches!(
            parse(p, b"SHTRJTB\0 but short", 18),
            Err(FormatError::Truncated { .. })
        ));
    }
}
