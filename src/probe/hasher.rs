//! The hasher of the table map.

/// Hashes a [`Material`] (a dozen small counts) for the table map, which every probe of
/// every move consults: a multiply-rotate hash (as rustc's FxHash), several times cheaper
/// than the default SipHash. The keys are the tables of a local directory, not input an
/// attacker chooses, so flooding resistance is not needed.
#[derive(Clone, Copy, Default)]
pub(super) struct BuildMaterialHasher;

#[derive(Default)]
pub(super) struct MaterialHasher(u64);

impl std::hash::BuildHasher for BuildMaterialHasher {
    type Hasher = MaterialHasher;
    fn build_hasher(&self) -> MaterialHasher {
        MaterialHasher(0)
    }
}

impl std::hash::Hasher for MaterialHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}
