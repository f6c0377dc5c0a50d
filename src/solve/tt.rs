//! The solver's transposition table: proven bounds on the distance to a forced end, for
//! each position met, shared by every search thread without locks.
//!
//! An entry is two 64-bit words, `key ^ data` and `data` (the lockless scheme of Hyatt
//! and Mann): a reader that finds `word0 ^ word1` equal to its key knows both words were
//! written together, so a torn write by two threads reads as a miss, never as a wrong
//! fact. Every fact stored is true whichever thread wrote it, so a lost update only costs
//! work again.

use std::sync::atomic::{AtomicU64, Ordering};

/// What is proven about one position, for the side to move. Distances are in plies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// The side to move forces a win within this many plies (`u8::MAX`: not proven).
    pub win_within: u8,
    /// The side to move cannot force a win within fewer than this many plies (0: nothing
    /// proven).
    pub no_win_below: u8,
    /// The side to move loses within this many plies whatever it does (`u8::MAX`: not
    /// proven).
    pub loss_within: u8,
    /// The side to move does not lose within fewer than this many plies (0: nothing
    /// proven).
    pub no_loss_below: u8,
    /// A move worth trying first here (0: none): the last one that proved a bound, a
    /// winning move or a defence that held, as `1 + from * 64 + to`. A hint only: it
    /// orders moves and proves nothing.
    pub hint: u16,
}

impl Bounds {
    pub const UNKNOWN: Bounds = Bounds {
        win_within: u8::MAX,
        no_win_below: 0,
        loss_within: u8::MAX,
        no_loss_below: 0,
        hint: 0,
    };

    fn pack(self) -> u64 {
        u64::from(self.win_within)
            | (u64::from(self.no_win_below) << 8)
            | (u64::from(self.loss_within) << 16)
            | (u64::from(self.no_loss_below) << 24)
            | (u64::from(self.hint) << 32)
    }

    fn unpack(data: u64) -> Bounds {
        Bounds {
            win_within: data as u8,
            no_win_below: (data >> 8) as u8,
            loss_within: (data >> 16) as u8,
            no_loss_below: (data >> 24) as u8,
            hint: (data >> 32) as u16,
        }
    }

    /// Both sets of facts together (each bound at its tightest).
    fn merge(self, other: Bounds) -> Bounds {
        Bounds {
            win_within: self.win_within.min(other.win_within),
            no_win_below: self.no_win_below.max(other.no_win_below),
            loss_within: self.loss_within.min(other.loss_within),
            no_loss_below: self.no_loss_below.max(other.no_loss_below),
            // the newer hint, if it has one
            hint: if other.hint != 0 {
                other.hint
            } else {
                self.hint
            },
        }
    }

    /// How much search the entry saves, to choose which entry of a bucket to replace.
    fn worth(self) -> u8 {
        let proven = |d: u8| if d == u8::MAX { 0 } else { d };
        self.no_win_below
            .max(self.no_loss_below)
            .max(proven(self.win_within))
            .max(proven(self.loss_within))
    }
}

/// Entries a bucket holds; a key may sit in either.
const WAYS: usize = 4;
/// Bytes of one entry.
pub(crate) const ENTRY_BYTES: usize = 16;

pub(crate) struct TransTable {
    words: Words,
    /// Buckets minus one (a power of two minus one).
    mask: u64,
    /// The size in bytes the table may grow to ([`TransTable::grown`]).
    limit: usize,
}

impl TransTable {
    /// A table of at most `bytes` bytes (at least one bucket), which may grow to
    /// `limit` bytes, or `None` if the memory cannot be had.
    pub fn with_bytes(bytes: usize, limit: usize) -> Option<TransTable> {
        let bucket_bytes = WAYS * ENTRY_BYTES;
        let buckets = (bytes / bucket_bytes).max(1);
        // round down to a power of two
        let buckets = 1usize << (usize::BITS - 1 - buckets.leading_zeros());
        let words = Words::zeroed(buckets * WAYS * 2)?;
        Some(TransTable {
            words,
            mask: buckets as u64 - 1,
            limit,
        })
    }

    /// Entries the table holds at most.
    pub fn entries(&self) -> usize {
        self.words.len / 2
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.words.len * 8
    }

    /// Whether it cannot grow any more (doubling would pass its limit).
    pub fn is_full_size(&self) -> bool {
        self.bytes() * 2 > self.limit
    }

    /// A table of `bytes` bytes (at most the limit) holding every entry of this one that
    /// finds room, or `None` if the memory cannot be had. Not to be called while other
    /// threads use the table.
    pub fn grown(&self, bytes: usize) -> Option<TransTable> {
        let bigger = TransTable::with_bytes(bytes.min(self.limit), self.limit)?;
        let words = self.words.as_slice();
        for pair in words.chunks_exact(2) {
            let check = pair[0].load(Ordering::Relaxed);
            let data = pair[1].load(Ordering::Relaxed);
            if data != 0 {
                bigger.add(check ^ data, Bounds::unpack(data));
            }
        }
        Some(bigger)
    }

    fn bucket(&self, key: u64) -> usize {
        // the low bits choose the bucket; the key is a good mix already
        ((key & self.mask) as usize) * WAYS * 2
    }

    /// Asks the processor to start loading the bucket of `key` (a hint: no effect on
    /// what any call answers), so that several lookups' memory latencies overlap.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if let Some(w) = self.words.as_slice().get(self.bucket(key)) {
            crate::prefetch::prefetch(w);
        }
    }

    /// What is proven about the position of `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Bounds {
        let b = self.bucket(key);
        for way in 0..WAYS {
            let i = b + way * 2;
            let check = self.words.as_slice()[i].load(Ordering::Relaxed);
            let data = self.words.as_slice()[i + 1].load(Ordering::Relaxed);
            if check ^ data == key && data != 0 {
                return Bounds::unpack(data);
            }
        }
        Bounds::UNKNOWN
    }

    /// Adds facts about the position of `key` to what is stored.
    #[inline]
    pub fn add(&self, key: u64, facts: Bounds) {
        let b = self.bucket(key);
        let mut victim = b;
        let mut victim_worth = u8::MAX;
        for way in 0..WAYS {
            let i = b + way * 2;
            let check = self.words.as_slice()[i].load(Ordering::Relaxed);
            let data = self.words.as_slice()[i + 1].load(Ordering::Relaxed);
            if check ^ data == key && data != 0 {
                let merged = Bounds::unpack(data).merge(facts);
                self.put(i, key, merged);
                return;
            }
            let worth = if data == 0 {
                0
            } else {
                Bounds::unpack(data).worth()
            };
            if worth < victim_worth {
                victim = i;
                victim_worth = worth;
            }
        }
        self.put(victim, key, facts);
    }

    fn put(&self, i: usize, key: u64, facts: Bounds) {
        let data = facts.pack();
        debug_assert_ne!(
            data, 0,
            "packed bounds are never zero (win_within 0 means Win(0))"
        );
        self.words.as_slice()[i].store(key ^ data, Ordering::Relaxed);
        self.words.as_slice()[i + 1].store(data, Ordering::Relaxed);
    }
}

/// `len` zeroed words in an anonymous memory mapping: the operating system hands out its
/// pages lazily, already zeroed, so a large table costs nothing until it is written (an
/// allocator may write zeros over every page of a table a small problem hardly uses).
/// `None` if the mapping fails.
struct Words {
    map: memmap2::MmapMut,
    /// The start of the mapping, taken from a mutable borrow so that writes through it
    /// are allowed.
    ptr: *const AtomicU64,
    len: usize,
}

// SAFETY: the words are only ever accessed through atomic operations (`AtomicU64` is
// `Sync`), and the mapping is owned by the struct and never handed out.
#[allow(unsafe_code)]
unsafe impl Send for Words {}
// SAFETY: as for `Send`: shared access is atomic.
#[allow(unsafe_code)]
unsafe impl Sync for Words {}

impl Words {
    fn zeroed(len: usize) -> Option<Words> {
        let bytes = len.checked_mul(8)?.max(8);
        let mut map = memmap2::MmapMut::map_anon(bytes).ok()?;
        // Probes hit the table at random: huge pages spare most TLB misses (a hint only).
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        let ptr = map.as_mut_ptr().cast::<AtomicU64>().cast_const();
        Some(Words { map, ptr, len })
    }

    #[allow(unsafe_code)]
    fn as_slice(&self) -> &[AtomicU64] {
        debug_assert!(self.map.len() >= self.len * 8);
        // SAFETY: the mapping is page-aligned (more than `AtomicU64`'s alignment of 8),
        // at least `len * 8` bytes long and alive as long as `self`; the operating system
        // zeroed it, and zero bytes are a valid `AtomicU64`; every access through the
        // slice is atomic, so shared access from many threads is sound.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_merge_and_survive() {
        let tt = TransTable::with_bytes(1 << 12, 1 << 12).unwrap();
        let key = 0x1234_5678_9abc_def0;
        assert_eq!(tt.get(key), Bounds::UNKNOWN);
        tt.add(
            key,
            Bounds {
                no_win_below: 6,
                ..Bounds::UNKNOWN
            },
        );
        tt.add(
            key,
            Bounds {
                win_within: 9,
                ..Bounds::UNKNOWN
            },
        );
        let b = tt.get(key);
        assert_eq!((b.no_win_below, b.win_within), (6, 9));
        // a different key in the same bucket does not see it
        assert_eq!(tt.get(key ^ (1 << 40)), Bounds::UNKNOWN);
    }

    #[test]
    fn growing_keeps_the_facts() {
        let tt = TransTable::with_bytes(1 << 10, 1 << 14).unwrap();
        let facts = |k: u64| Bounds {
            no_win_below: (k % 200) as u8 + 1,
            ..Bounds::UNKNOWN
        };
        let keys: Vec<u64> = (1..20u64)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for &k in &keys {
            tt.add(k, facts(k));
        }
        let kept: Vec<u64> = keys
            .iter()
            .copied()
            .filter(|&k| tt.get(k) != Bounds::UNKNOWN)
            .collect();
        assert!(!kept.is_empty());
        let big = tt.grown(1 << 14).unwrap();
        assert_eq!(big.bytes(), 1 << 14);
        assert!(big.is_full_size() && !tt.is_full_size());
        for k in kept {
            assert_eq!(big.get(k), facts(k));
        }
    }

    #[test]
    fn pack_round_trips() {
        let b = Bounds {
            win_within: 3,
            no_win_below: 2,
            loss_within: 255,
            no_loss_below: 7,
            hint: 1 + 12 * 64 + 28,
        };
        assert_eq!(Bounds::unpack(b.pack()), b);
    }
}
