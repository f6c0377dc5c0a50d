//! The fixed-size, little-endian file header and the block offset table entries, as
//! `bytemuck` `Pod` structs, plus the layout arithmetic shared by the writer and reader.
//!
//! Both structs are stored little-endian: `to_le`/`from_le` convert every multi-byte field
//! (a no-op on little-endian machines). Decoding always copies with
//! [`bytemuck::pod_read_unaligned`], so bytes read into any buffer need no particular alignment.

use bytemuck::{Pod, Zeroable};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"SHTRJTB\0";

/// The format version this code writes and reads.
///
/// Version 2: a WDL file may hold, for a position whose best capture or promotion already
/// achieves its value, a value no better than the true one (the probe searches those
/// moves). A version-1 reader would take such values as they stand, so it must refuse
/// these files.
pub const FORMAT_VERSION: u32 = 2;

/// Size in bytes of the fixed header on disk.
pub const HEADER_LEN: usize = 128;

/// Size in bytes of one [`BlockEntry`] on disk.
pub const BLOCK_ENTRY_LEN: usize = 16;

/// Largest `extra` section accepted (1 MiB).
pub const MAX_EXTRA_LEN: usize = 1 << 20;

/// Largest decompressed block accepted by the reader (bounds the allocation a damaged
/// header could ask for).
pub const MAX_BLOCK_BYTES: u64 = 1 << 22;

/// Length of the fixed material field.
pub const MATERIAL_LEN: usize = 16;

/// The file header: the first [`HEADER_LEN`] bytes of a table file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// [`HEADER_LEN`].
    pub header_len: u32,
    /// 0 = WDL, 1 = DTM.
    pub metric: u8,
    /// Opaque rule-set code of the caller.
    pub rules_code: u8,
    /// Bits per stored symbol: 1, 2, 4, 8 or 16.
    pub symbol_bits: u8,
    /// Zero.
    pub reserved0: u8,
    /// ASCII material name, NUL-padded.
    pub material: [u8; MATERIAL_LEN],
    /// Opaque id of the caller's index layout.
    pub index_scheme: u32,
    /// Number of values (indices) in the table.
    pub value_count: u64,
    /// Values per block (a power of two); the last block may hold fewer.
    pub block_values: u32,
    /// `ceil(value_count / block_values)`.
    pub block_count: u32,
    /// Entries in the symbol table (1 ..= 65536; at most `1 << symbol_bits`).
    pub symbol_count: u32,
    /// Length of the extra section in bytes (at most [`MAX_EXTRA_LEN`]).
    pub extra_len: u32,
    /// File offset of the symbol table (= [`HEADER_LEN`]).
    pub symbols_offset: u64,
    /// File offset of the extra bytes (8-aligned, after the symbol table).
    pub extra_offset: u64,
    /// File offset of the block offset table (8-aligned, after the extra bytes).
    pub offsets_offset: u64,
    /// File offset of the first compressed block (right after the offset table).
    pub blocks_offset: u64,
    /// Total file length in bytes.
    pub file_len: u64,
    /// Zero.
    pub reserved: [u8; 20],
    /// CRC-32 (IEEE) of bytes `0..blocks_offset` with this field read as zero.
    pub header_checksum: u32,
}

const _: () = assert!(std::mem::size_of::<Header>() == HEADER_LEN);
const _: () = assert!(std::mem::size_of::<BlockEntry>() == BLOCK_ENTRY_LEN);

/// Byte offset of [`Header::header_checksum`].
pub const CHECKSUM_FIELD: usize = HEADER_LEN - 4;

impl Header {
    /// Converts every multi-byte field between native and little-endian order (an
    /// involution, so it serves both directions).
    #[must_use]
    pub fn swap_le(self) -> Header {
        Header {
            version: self.version.to_le(),
            header_len: self.header_len.to_le(),
            index_scheme: self.index_scheme.to_le(),
            value_count: self.value_count.to_le(),
            block_values: self.block_values.to_le(),
            block_count: self.block_count.to_le(),
            symbol_count: self.symbol_count.to_le(),
            extra_len: self.extra_len.to_le(),
            symbols_offset: self.symbols_offset.to_le(),
            extra_offset: self.extra_offset.to_le(),
            offsets_offset: self.offsets_offset.to_le(),
            blocks_offset: self.blocks_offset.to_le(),
            file_len: self.file_len.to_le(),
            header_checksum: self.header_checksum.to_le(),
            ..self
        }
    }

    /// Decodes a header from the first [`HEADER_LEN`] bytes of `bytes`, if there are that many.
    pub fn read(bytes: &[u8]) -> Option<Header> {
        let raw = bytes.get(..HEADER_LEN)?;
        Some(bytemuck::pod_read_unaligned::<Header>(raw).swap_le())
    }

    /// The on-disk bytes of this header.
    pub fn to_bytes(self) -> [u8; HEADER_LEN] {
        bytemuck::cast(self.swap_le())
    }
}

/// One entry of the block offset table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct BlockEntry {
    /// Absolute file offset of the compressed block.
    pub offset: u64,
    /// Length of the compressed block in bytes.
    pub compressed_len: u32,
    /// CRC-32 (IEEE) of the compressed bytes.
    pub checksum: u32,
}

impl BlockEntry {
    /// See [`Header::swap_le`].
    #[must_use]
    pub fn swap_le(self) -> BlockEntry {
        BlockEntry {
            offset: self.offset.to_le(),
            compressed_len: self.compressed_len.to_le(),
            checksum: self.checksum.to_le(),
        }
    }

    /// Decodes entry `i` from an offset table slice, if it is in bounds.
    pub fn read(table: &[u8], i: usize) -> Option<BlockEntry> {
        let start = i.checked_mul(BLOCK_ENTRY_LEN)?;
        let raw = table.get(start..start.checked_add(BLOCK_ENTRY_LEN)?)?;
        Some(bytemuck::pod_read_unaligned::<BlockEntry>(raw).swap_le())
    }

    /// The on-disk bytes of this entry.
    pub fn to_bytes(self) -> [u8; BLOCK_ENTRY_LEN] {
        bytemuck::cast(self.swap_le())
    }
}

/// Rounds up to a multiple of 8, `None` on overflow.
pub fn align8(x: u64) -> Option<u64> {
    x.checked_add(7).map(|v| v & !7)
}

/// Section offsets implied by the counts in a header; the reader requires the stored
/// offsets to equal these, so a file has exactly one valid layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub symbols_offset: u64,
    pub extra_offset: u64,
    pub offsets_offset: u64,
    pub blocks_offset: u64,
}

impl Layout {
    /// `None` on arithmetic overflow.
    pub fn new(symbol_count: u32, extra_len: u32, block_count: u32) -> Option<Layout> {
        let symbols_offset = HEADER_LEN as u64;
        let extra_offset =
            align8(symbols_offset.checked_add(u64::from(symbol_count).checked_mul(2)?)?)?;
        let offsets_offset = align8(extra_offset.checked_add(u64::from(extra_len))?)?;
        let blocks_offset = offsets_offset
            .checked_add(u64::from(block_count).checked_mul(BLOCK_ENTRY_LEN as u64)?)?;
        Some(Layout {
            symbols_offset,
            extra_offset,
            offsets_offset,
            blocks_offset,
        })
    }
}

/// Bytes needed for `n` symbols of `bits` bits each (`bits` in 1, 2, 4, 8, 16).
pub fn packed_len(n: u64, bits: u8) -> Option<u64> {
    n.checked_mul(u64::from(bits))?
        .checked_add(7)
        .map(|b| b / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_through_bytes() {
        let h = Header {
            magic: MAGIC,
            version: FORMAT_VERSION,
            header_len: HEADER_LEN as u32,
            metric: 1,
            rules_code: 3,
            symbol_bits: 2,
            reserved0: 0,
            material: *b"KRvKQ\0\0\0\0\0\0\0\0\0\0\0",
            index_scheme: 0x0102_0304,
            value_count: 0x1122_3344_5566,
            block_values: 1 << 16,
            block_count: 7,
            symbol_count: 3,
            extra_len: 5,
            symbols_offset: 128,
            extra_offset: 136,
            offsets_offset: 144,
            blocks_offset: 256,
            file_len: 1000,
            reserved: [0; 20],
            header_checksum: 0xdead_beef,
        };
        let bytes = h.to_bytes();
        assert_eq!(&bytes[..8], b"SHTRJTB\0");
        assert_eq!(&bytes[8..12], &FORMAT_VERSION.to_le_bytes());
        assert_eq!(&bytes[36..40], &[4, 3, 2, 1]);
        assert_eq!(&bytes[CHECKSUM_FIELD..], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(Header::read(&bytes), Some(h));
        assert_eq!(Header::read(&bytes[..HEADER_LEN - 1]), None);
    }

    #[test]
    fn layout_and_packing() {
        let l = Layout::new(3, 5, 2).unwrap();
        assert_eq!(l.symbols_offset, 128);
        assert_eq!(l.extra_offset, 136);
        assert_eq!(l.offsets_offset, 144);
        assert_eq!(l.blocks_offset, 176);
        assert_eq!(packed_len(5, 2), Some(2));
        assert_eq!(packed_len(8, 1), Some(1));
        assert_eq!(packed_len(3, 16), Some(6));
        assert_eq!(packed_len(u64::MAX, 16), None);
        let e = BlockEntry {
            offset: 9,
            compressed_len: 10,
            checksum: 11,
        };
        let mut table = e.to_bytes().to_vec();
        assert_eq!(BlockEntry::read(&table, 0), Some(e));
        assert_eq!(BlockEntry::read(&table, 1), None);
        table.pop();
        assert_eq!(BlockEntry::read(&table, 0), None);
    }
}
