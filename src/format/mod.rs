//! The on-disk table file format: a validated header, a symbol table, opaque caller
//! metadata, a block offset table and zstd-compressed blocks. This module knows bytes,
//! not chess: a table is a dense array of `u16` values, one per index.
//!
//! # Writing and reading
//!
//! [`write_table`] writes a file to a temporary name beside the destination, syncs it,
//! re-opens it and checks every value, then renames it into place and syncs the directory.
//! A table is never modified in place by this crate.
//!
//! [`TableFile::open`] reads the part of a file before its first block (header, symbol
//! table, extra bytes, block offset table) and validates everything it will later rely on
//! (magic, version, header checksum, section sizes, the whole block offset table) without
//! reading the blocks. [`TableFile::get`] reads a block with a positioned read on first
//! use, checks its CRC-32, decompresses it and keeps it in a cache bounded by a
//! [`CacheBudget`] that many files may share. Files are not memory-mapped: a file someone
//! else truncates or rewrites in place under a reader is damage like any other. Damage
//! never panics: it is an [`FormatError`] naming the file.
//!
//! # Encoding
//!
//! The distinct values (other than [`UNUSED`]) are sorted by frequency, most frequent
//! first, ties by value, and replaced by their rank, the *symbol*. The symbol table maps
//! symbols back to values. Symbols are stored with 1, 2, 4, 8 or 16 bits each, the
//! smallest width that holds them, packed little-end first within each byte (symbol `i`
//! of a block is at bit `(i * bits) % 8` of byte `i * bits / 8`); 16-bit symbols are
//! stored as two byte planes (the low bytes of the whole block, then the high bytes,
//! which are mostly zero). [`UNUSED`] slots take
//! the symbol before them in the block (or the first used one after them at the start of
//! a block), which lengthens runs. Each block of `block_values` consecutive values is then
//! compressed on its own as one zstd frame (no content size, no dictionary id, no zstd
//! checksum: the block offset table carries a CRC-32 of the compressed bytes).
//!
//! Output is deterministic for a given zstd library version: blocks are compressed in
//! parallel but assembled in order, and the temporary name never reaches the file.
//!
//! # Measurements (2 shared cores, synthetic data, see `measure` in `tests/format.rs`)
//!
//! Every block holds [`DEFAULT_BLOCK_BYTES`] = 32 KiB of packed symbols, so
//! `block_values` is 131072 at 2 bits and 32768 at 8 bits, and a cold `get`
//! decompresses at most 32 KiB; the zstd level is [`DEFAULT_ZSTD_LEVEL`] = 15. The tables
//! there give the figures. Bit packing earns its place: 2-bit WDL data stored as bytes
//! is 7 % larger at level 19, five times slower to write, and takes four times the cache.
//! Byte planes for 16-bit symbols made the file 1.3 % smaller and writing 3.5 times
//! faster. Warm random `get`s run at 5–20 M/s on one core.
//!
//! # Byte layout (version 2, all integers little-endian)
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0 | 8 | magic `b"SHTRJTB\0"` |
//! | 8 | 4 | format version (2) |
//! | 12 | 4 | header length (128) |
//! | 16 | 1 | metric (0 = WDL, 1 = DTM) |
//! | 17 | 1 | rules code |
//! | 18 | 1 | bits per symbol (1, 2, 4, 8, 16) |
//! | 19 | 1 | reserved, 0 |
//! | 20 | 16 | material, ASCII, NUL-padded |
//! | 36 | 4 | index scheme |
//! | 40 | 8 | value count |
//! | 48 | 4 | values per block (power of two) |
//! | 52 | 4 | block count = ceil(value count / values per block) |
//! | 56 | 4 | symbol count (1 ..= 2^bits) |
//! | 60 | 4 | extra length (<= 1 MiB) |
//! | 64 | 8 | symbol table offset (128) |
//! | 72 | 8 | extra offset (8-aligned, after the symbol table) |
//! | 80 | 8 | block offset table offset (8-aligned, after the extra bytes) |
//! | 88 | 8 | first block offset (after the offset table) |
//! | 96 | 8 | file length |
//! | 104 | 20 | reserved, 0 |
//! | 124 | 4 | CRC-32 of bytes `0..first block offset`, this field read as 0 |
//! | 128 | 2 × symbols | symbol table: the `u16` value of each symbol; zero padding to 8 |
//! | | extra length | extra bytes; zero padding to 8 |
//! | | 16 × blocks | per block: `u64` file offset, `u32` compressed length, `u32` CRC-32 of the compressed bytes |
//! | | | the compressed blocks, contiguous, in order, up to the end of the file |

mod cache;
mod header;
mod read;
mod write;

pub use cache::{CacheBudget, CacheStats};
pub use header::{FORMAT_VERSION, HEADER_LEN, MAGIC, MAX_EXTRA_LEN};
pub use read::{DEFAULT_CACHE_BYTES, TableFile};
pub use write::{
    DEFAULT_BLOCK_BYTES, DEFAULT_ZSTD_LEVEL, DenseBlocks, Head, SPARSE_UNUSED, SparseOptions, Stop,
    Values, WriteOptions, WriteStats, smallest_until, write_smaller_until, write_smaller_with,
    write_table, write_table_until, write_table_with,
};

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What a table stores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Win/draw/loss.
    Wdl,
    /// Distance to mate (to the end of the game).
    Dtm,
    /// Distance to the next zeroing move (capture or pawn move), see
    /// [`crate::value::Dtz`]: plies of decided positions, draws unused.
    Dtz,
}

impl Metric {
    /// The header byte.
    pub fn to_u8(self) -> u8 {
        match self {
            Metric::Wdl => 0,
            Metric::Dtm => 1,
            Metric::Dtz => 2,
        }
    }

    /// From the header byte.
    pub fn from_u8(b: u8) -> Option<Metric> {
        match b {
            0 => Some(Metric::Wdl),
            1 => Some(Metric::Dtm),
            2 => Some(Metric::Dtz),
            _ => None,
        }
    }
}

/// The caller's description of a table, stored in the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMeta {
    pub metric: Metric,
    /// An opaque rule-set code from the caller (0..4 today).
    pub rules_code: u8,
    /// E.g. "KRvKQ": ASCII without NUL, at most 16 bytes.
    pub material: String,
    /// Opaque id of the caller's index layout.
    pub index_scheme: u32,
    /// Opaque caller metadata (e.g. JSON statistics), checksummed, at most 1 MiB.
    pub extra: Vec<u8>,
}

/// A slot that is never probed (e.g. an index that maps to no legal position): the writer
/// may store any value there, whatever compresses best. Reading it back gives some value
/// of the table (or `UNUSED` if every slot is `UNUSED`).
pub const UNUSED: u16 = u16::MAX;

/// Where a checksum did not match.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChecksumRegion {
    /// The header, symbol table, extra bytes and block offset table.
    Header,
    /// The compressed bytes of one block.
    Block(u32),
}

impl fmt::Display for ChecksumRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChecksumRegion::Header => f.write_str("header, symbol table, extra and offset table"),
            ChecksumRegion::Block(n) => write!(f, "block {n}"),
        }
    }
}

/// An error reading or writing a table file. Every variant names the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum FormatError {
    /// The operating system reported an error.
    Io { path: PathBuf, source: io::Error },
    /// The file does not start with [`MAGIC`].
    BadMagic { path: PathBuf, found: [u8; 8] },
    /// The file has a format version this code does not read.
    UnsupportedVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// The file is shorter than its contents require.
    Truncated {
        path: PathBuf,
        needed: u64,
        file_len: u64,
    },
    /// A field or block is inconsistent; `offset` is the file offset concerned.
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    /// A CRC-32 did not match.
    ChecksumMismatch {
        path: PathBuf,
        region: ChecksumRegion,
        stored: u32,
        computed: u32,
    },
    /// `get` past the end of the table.
    IndexOutOfRange { path: PathBuf, index: u64, len: u64 },
    /// The caller's input cannot be written (material or extra too long, ...).
    InvalidInput { path: PathBuf, what: String },
    /// The file just written read back a different value.
    VerifyFailed {
        path: PathBuf,
        index: u64,
        expected: u16,
        found: u16,
    },
    /// Writing was asked to stop ([`write_table_until`]); nothing was written.
    Interrupted { path: PathBuf },
}

impl FormatError {
    /// The file concerned.
    pub fn path(&self) -> &Path {
        match self {
            FormatError::Io { path, .. }
            | FormatError::BadMagic { path, .. }
            | FormatError::UnsupportedVersion { path, .. }
            | FormatError::Truncated { path, .. }
            | FormatError::Corrupt { path, .. }
            | FormatError::ChecksumMismatch { path, .. }
            | FormatError::IndexOutOfRange { path, .. }
            | FormatError::InvalidInput { path, .. }
            | FormatError::VerifyFailed { path, .. }
            | FormatError::Interrupted { path } => path,
        }
    }

    /// True for damage to the file (as opposed to I/O errors, caller errors and
    /// unsupported versions).
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            FormatError::BadMagic { .. }
                | FormatError::Truncated { .. }
                | FormatError::Corrupt { .. }
                | FormatError::ChecksumMismatch { .. }
        )
    }

    pub(crate) fn io(path: &Path, source: io::Error) -> FormatError {
        FormatError::Io {
            path: path.to_owned(),
            source,
        }
    }

    pub(crate) fn corrupt(path: &Path, offset: u64, what: impl Into<String>) -> FormatError {
        FormatError::Corrupt {
            path: path.to_owned(),
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Io { path, source } => {
                write!(f, "table file {}: {source}", path.display())
            }
            FormatError::BadMagic { path, found } => write!(
                f,
                "table file {}: bad magic {:?} (expected {:?}): not a shatranj-tb table",
                path.display(),
                found.escape_ascii().to_string(),
                MAGIC.escape_ascii().to_string()
            ),
            FormatError::UnsupportedVersion {
                path,
                found,
                supported,
            } => write!(
                f,
                "table file {}: unsupported format version {found} (this build reads version {supported})",
                path.display()
            ),
            FormatError::Truncated {
                path,
                needed,
                file_len,
            } => write!(
                f,
                "table file {}: truncated: needs at least {needed} bytes, has {file_len}",
                path.display()
            ),
            FormatError::Corrupt { path, offset, what } => write!(
                f,
                "table file {}: corrupt at byte offset {offset}: {what}",
                path.display()
            ),
            FormatError::ChecksumMismatch {
                path,
                region,
                stored,
                computed,
            } => write!(
                f,
                "table file {}: checksum mismatch in {region}: stored {stored:#010x}, computed {computed:#010x}",
                path.display()
            ),
            FormatError::IndexOutOfRange { path, index, len } => write!(
                f,
                "table file {}: index {index} out of range (table has {len} values)",
                path.display()
            ),
            FormatError::InvalidInput { path, what } => {
                write!(f, "table file {}: cannot write: {what}", path.display())
            }
            FormatError::VerifyFailed {
                path,
                index,
                expected,
                found,
            } => write!(
                f,
                "table file {}: verification after write failed at index {index}: wrote {expected}, read back {found}",
                path.display()
            ),
            FormatError::Interrupted { path } => {
                write!(f, "table file {}: writing was stopped", path.display())
            }
        }
    }
}

/// The message already says what the operating system reported, so no `source` is
/// given: a chain printer (`anyhow`'s `{:#}`) would print it a second time.
impl std::error::Error for FormatError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_byte_round_trips() {
        for m in [Metric::Wdl, Metric::Dtm, Metric::Dtz] {
            assert_eq!(Metric::from_u8(m.to_u8()), Some(m));
        }
        assert_eq!(Metric::from_u8(3), None);
    }

    #[test]
    fn errors_name_the_file_and_the_fault() {
        let p = Path::new("/t/KRvK.wdl");
        let e = FormatError::ChecksumMismatch {
            path: p.to_owned(),
            region: ChecksumRegion::Block(17),
            stored: 1,
            computed: 2,
        };
        let s = e.to_string();
        assert!(s.contains("/t/KRvK.wdl") && s.contains("block 17"), "{s}");
        assert_eq!(e.path(), p);
        assert!(e.is_damage());
        let e = FormatError::io(p, io::Error::other("boom"));
        // the cause is in the message, once, and not repeated as a source
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(e.to_string().matches("boom").count(), 1);
        let e = FormatError::BadMagic {
            path: p.to_owned(),
            found: *b"GIF89a\0\x01",
        };
        assert!(e.to_string().contains("bad magic"), "{e}");
    }
}
