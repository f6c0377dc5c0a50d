//! A bounded cache of decompressed blocks. Each table file has its own [`BlockCache`]
//! (the blocks it holds); every cache opened with the same [`CacheBudget`] shares one
//! bound on their bytes together, so a process probing hundreds of tables holds at most
//! the budget, not a bound per file.
//!
//! **Reads take no lock and write no shared memory.** Each block has its own atomic
//! pointer: a warm hit pins the current thread in an epoch (a write to a thread-local
//! slot only), loads the pointer and reads the block. Inserts and evictions take the
//! budget's lock (a miss has just read, checksummed and decompressed a block, tens of
//! microseconds next to which the lock is short). Evictions use CLOCK (second chance)
//! over every block of the budget, whichever file it belongs to; the "recently used"
//! bit of a block is written by a reader only when it is clear, so a hot block's cache
//! line stays shared between the cores that read it. An evicted block is unlinked at
//! once and freed when every thread that might still be reading it has left its epoch
//! (epoch-based reclamation, `crossbeam-epoch`).
//!
//! Memory bound: the blocks held (resident) never exceed the budget's capacity (a block
//! larger than the whole capacity is served without being kept), plus evicted blocks
//! not yet freed (those still being read, and those whose epoch has not yet been
//! collected: a few per thread).

// Epoch-based reclamation needs `unsafe` to dereference the shared pointers and to
// retire them; each use states its invariant.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crossbeam_epoch::{self as epoch, Atomic, Owned};

/// A decompressed block and its CLOCK bit.
struct Block {
    referenced: AtomicBool,
    data: Box<[u8]>,
}

/// The blocks of one file: for each block, the cached copy or null. Non-null pointers
/// are set and cleared only under the lock of the budget the file's cache uses; readers
/// only load them. (The slots are the `Arc`'s own allocation, so a read follows one
/// pointer from the cache to them, as it would from a `Box`.)
type Slots = Arc<[Atomic<Block>]>;

/// One resident block: its file's slots, their byte count, and its number there.
struct Entry {
    slots: Slots,
    bytes: Arc<AtomicUsize>,
    block: u32,
}

/// The eviction state of a budget: every resident block, in CLOCK order.
#[derive(Default)]
struct Ring {
    entries: Vec<Entry>,
    hand: usize,
    bytes: usize,
    peak: usize,
    capacity: usize,
}

/// A bound in bytes on the decompressed blocks held by every [`BlockCache`] made with
/// it, shared between them (behind an `Arc`). `Send + Sync`.
pub struct CacheBudget {
    ring: Mutex<Ring>,
}

/// What a [`CacheBudget`] holds now.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// The bound, in bytes of decompressed blocks.
    pub capacity: usize,
    /// Bytes of decompressed blocks held now (never above `capacity`).
    pub resident_bytes: usize,
    /// The most bytes held at once since the budget was made (never above the largest
    /// capacity it had).
    pub peak_bytes: usize,
    /// Blocks held now.
    pub blocks: usize,
}

/// The cache of one table file, bounded by its [`CacheBudget`].
pub struct BlockCache {
    slots: Slots,
    /// Bytes of this file's blocks held now (written under the budget's lock).
    bytes: Arc<AtomicUsize>,
    budget: Arc<CacheBudget>,
}

impl Ring {
    /// Evicts one block chosen by CLOCK. Returns false if there is none.
    fn evict_one(&mut self, guard: &epoch::Guard) -> bool {
        while !self.entries.is_empty() {
            if self.hand >= self.entries.len() {
                self.hand = 0;
            }
            let e = &self.entries[self.hand];
            let slot = &e.slots[e.block as usize];
            let shared = slot.load(Ordering::Acquire, guard);
            // SAFETY: a resident block's pointer is non-null and points to a live Block:
            // it was stored by `insert_with` under this ring's lock (which we hold) and
            // is cleared (and the Block retired) only below or in `BlockCache::drop`,
            // under the same lock, which also removes its entry.
            let block = unsafe { shared.deref() };
            if block.referenced.load(Ordering::Relaxed) {
                block.referenced.store(false, Ordering::Relaxed);
                self.hand += 1;
                continue;
            }
            let len = block.data.len();
            let e = self.entries.swap_remove(self.hand);
            let old =
                e.slots[e.block as usize].swap(epoch::Shared::null(), Ordering::AcqRel, guard);
            // SAFETY: `old` is now unreachable from the slots (we just cleared the only
            // pointer to it, under the lock), so only readers pinned before the swap
            // can hold it; `defer_destroy` frees it after all of them have unpinned.
            unsafe { guard.defer_destroy(old) };
            self.bytes -= len;
            e.bytes.fetch_sub(len, Ordering::Relaxed);
            return true;
        }
        false
    }

    fn trim(&mut self, budget: usize, guard: &epoch::Guard) {
        while self.bytes > budget && self.evict_one(guard) {}
    }
}

impl CacheBudget {
    /// A budget of `capacity` bytes of decompressed blocks.
    #[must_use]
    pub fn new(capacity: usize) -> Arc<CacheBudget> {
        Arc::new(CacheBudget {
            ring: Mutex::new(Ring {
                capacity,
                ..Ring::default()
            }),
        })
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        // Nothing panics while the ring is locked; should it ever, its data is still
        // consistent (every mutation completes before the next may fail).
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the capacity, evicting at once if it shrank.
    pub fn set_capacity(&self, bytes: usize) {
        let guard = epoch::pin();
        let mut ring = self.ring();
        ring.capacity = bytes;
        ring.trim(bytes, &guard);
        drop(ring);
        // hand the evicted blocks to the collector now rather than at the next pins
        guard.flush();
    }

    /// Evicts every block (the capacity stays).
    pub fn clear(&self) {
        let guard = epoch::pin();
        self.ring().trim(0, &guard);
        guard.flush();
    }

    #[must_use]
    pub fn capacity(&self) -> usize {
        self.ring().capacity
    }

    /// Bytes of decompressed data held now (not counting evicted blocks not yet freed).
    #[must_use]
    pub fn resident_bytes(&self) -> usize {
        self.ring().bytes
    }

    #[must_use]
    pub fn stats(&self) -> CacheStats {
        let ring = self.ring();
        CacheStats {
            capacity: ring.capacity,
            resident_bytes: ring.bytes,
            peak_bytes: ring.peak,
            blocks: ring.entries.len(),
        }
    }
}

impl std::fmt::Debug for CacheBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CacheBudget").field(&self.stats()).finish()
    }
}

impl BlockCache {
    pub fn new(block_count: u32, budget: Arc<CacheBudget>) -> BlockCache {
        BlockCache {
            slots: (0..block_count).map(|_| Atomic::null()).collect(),
            bytes: Arc::new(AtomicUsize::new(0)),
            budget,
        }
    }

    /// Calls `f` on block `block` if it is cached. Takes no lock.
    #[inline]
    pub fn with<R>(&self, block: u32, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let slot = self.slots.get(block as usize)?;
        let guard = epoch::pin();
        let shared = slot.load(Ordering::Acquire, &guard);
        // SAFETY: a non-null pointer in the slots points to a Block that was fully
        // written before it was published (Release store, Acquire load); an evicted
        // Block is retired with `defer_destroy`, which frees it only after every thread
        // pinned when it was unlinked (as we are, by `guard`, until we return) unpins.
        let cached = unsafe { shared.as_ref() }?;
        // Written only when it changes: a warm hit then leaves the block's cache line
        // shared between the cores instead of pulling it to this one.
        if !cached.referenced.load(Ordering::Relaxed) {
            cached.referenced.store(true, Ordering::Relaxed);
        }
        Some(f(&cached.data))
    }

    /// Caches `data` as block `block` (unless another thread got there first, in which
    /// case its copy is kept), evicting blocks of any file of the budget to make room,
    /// and calls `f` on the cached block. A block larger than the whole capacity is
    /// served without being kept.
    pub fn insert_with<R>(&self, block: u32, data: Box<[u8]>, f: impl FnOnce(&[u8]) -> R) -> R {
        let Some(slot) = self.slots.get(block as usize) else {
            // Not reachable for blocks < block_count; serve without caching.
            return f(&data);
        };
        let guard = epoch::pin();
        let mut ring = self.budget.ring();
        let present = slot.load(Ordering::Acquire, &guard);
        // SAFETY: as in `with`: non-null pointers in the slots are live while pinned.
        if let Some(cached) = unsafe { present.as_ref() } {
            cached.referenced.store(true, Ordering::Relaxed);
            return f(&cached.data);
        }
        let len = data.len();
        if len > ring.capacity {
            drop(ring);
            return f(&data);
        }
        let room = ring.capacity - len;
        ring.trim(room, &guard);
        let new = Owned::new(Block {
            referenced: AtomicBool::new(false),
            data,
        })
        .into_shared(&guard);
        slot.store(new, Ordering::Release);
        ring.entries.push(Entry {
            slots: Arc::clone(&self.slots),
            bytes: Arc::clone(&self.bytes),
            block,
        });
        ring.bytes += len;
        ring.peak = ring.peak.max(ring.bytes);
        self.bytes.fetch_add(len, Ordering::Relaxed);
        drop(ring);
        // SAFETY: `new` was just published and can only be retired by an eviction,
        // which frees it after `guard` unpins.
        f(&unsafe { new.deref() }.data)
    }

    /// The budget this cache counts against.
    pub fn budget(&self) -> &Arc<CacheBudget> {
        &self.budget
    }

    /// Bytes of this file's blocks held now.
    pub fn resident_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl Drop for BlockCache {
    fn drop(&mut self) {
        if self.bytes.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut ring = self.budget.ring();
        let mut freed = 0;
        ring.entries.retain(|e| {
            if !Arc::ptr_eq(&e.slots, &self.slots) {
                return true;
            }
            let slot = &e.slots[e.block as usize];
            // SAFETY: `&mut self`: no thread can be reading this file's cache, and its
            // pointers change only under the ring's lock, which we hold, so no guard is
            // needed; each non-null pointer is owned by this cache alone (an evicted
            // block was unlinked before being retired, so none is freed twice).
            unsafe {
                let p = slot.swap(
                    epoch::Shared::null(),
                    Ordering::Relaxed,
                    epoch::unprotected(),
                );
                if !p.is_null() {
                    freed += p.deref().data.len();
                    drop(p.into_owned());
                }
            }
            false
        });
        ring.bytes -= freed;
        self.bytes.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(b: u32, len: usize) -> Box<[u8]> {
        vec![b as u8; len].into_boxed_slice()
    }

    #[test]
    fn one_bound_for_every_file_of_a_budget() {
        let budget = CacheBudget::new(250);
        let a = BlockCache::new(10, Arc::clone(&budget));
        let b = BlockCache::new(10, Arc::clone(&budget));
        assert_eq!(a.with(5, |d| d[0]), None);
        assert_eq!(a.insert_with(5, block(5, 100), |d| d[0]), 5);
        assert_eq!(a.with(5, |d| d.len()), Some(100));
        assert_eq!(b.insert_with(5, block(7, 100), |d| d[0]), 7);
        assert_eq!(budget.resident_bytes(), 200);
        // a third block of either file evicts one: 300 bytes would exceed 250
        assert_eq!(b.insert_with(6, block(6, 100), |d| d[0]), 6);
        let stats = budget.stats();
        assert_eq!((stats.resident_bytes, stats.blocks), (200, 2), "{stats:?}");
        assert_eq!(stats.peak_bytes, 200);
        assert_eq!(a.resident_bytes() + b.resident_bytes(), 200);
        assert_eq!(b.with(6, |d| d[0]), Some(6));
        // A racing insert keeps the first copy.
        assert_eq!(b.insert_with(6, block(9, 100), |d| d[0]), 6);
        // a block larger than the whole budget is served, not kept
        assert_eq!(a.insert_with(1, block(1, 251), |d| d.len()), 251);
        assert_eq!(a.with(1, |_| ()), None);
        assert_eq!(budget.resident_bytes(), 200);
        budget.set_capacity(0);
        assert_eq!(budget.resident_bytes(), 0);
        assert_eq!((a.resident_bytes(), b.resident_bytes()), (0, 0));
        assert_eq!(a.insert_with(2, block(2, 10), |d| d[0]), 2);
        assert_eq!(a.with(2, |_| ()), None);
        budget.set_capacity(1000);
        a.insert_with(2, block(2, 10), |_| ());
        b.insert_with(3, block(3, 20), |_| ());
        // a dropped file gives its bytes back
        drop(b);
        assert_eq!(budget.stats().resident_bytes, 10);
        assert_eq!(budget.stats().blocks, 1);
        budget.clear();
        assert_eq!(budget.resident_bytes(), 0);
        assert_eq!(budget.capacity(), 1000);
    }

    #[test]
    fn clock_gives_a_second_chance() {
        let budget = CacheBudget::new(300);
        let c = BlockCache::new(4, Arc::clone(&budget));
        for b in [0, 1, 2] {
            c.insert_with(b, block(b, 100), |_| ());
        }
        c.with(0, |_| ()).unwrap(); // referenced: survives the next eviction
        c.insert_with(3, block(3, 100), |_| ());
        assert!(c.with(0, |_| ()).is_some());
        assert!(c.with(3, |_| ()).is_some());
        assert_eq!(
            [1, 2]
                .iter()
                .filter(|&&b| c.with(b, |_| ()).is_some())
                .count(),
            1
        );
        assert_eq!(budget.capacity(), 300);
    }

    #[test]
    fn threads_read_while_others_evict() {
        // Two files of 128 blocks share room for 64 blocks: most inserts evict, while
        // other threads read. Every read must see its own block, and the bound holds.
        let budget = CacheBudget::new(64 * 64);
        let files = [
            BlockCache::new(128, Arc::clone(&budget)),
            BlockCache::new(128, Arc::clone(&budget)),
        ];
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let files = &files;
                let budget = &budget;
                s.spawn(move || {
                    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ t;
                    for i in 0..20_000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let f = (x >> 40) as usize % 2;
                        let b = (x % 128) as u32;
                        let tag = b as u8 ^ (f as u8 * 0x80);
                        let ok = |d: &[u8]| d.len() == 64 && d.iter().all(|&v| v == tag);
                        let cache = &files[f];
                        let seen = match cache.with(b, ok) {
                            Some(seen) => seen,
                            None => cache.insert_with(b, vec![tag; 64].into(), ok),
                        };
                        assert!(seen, "file {f} block {b} read back wrong");
                        if i % 1000 == 0 {
                            assert!(budget.resident_bytes() <= 64 * 64);
                        }
                    }
                });
            }
        });
        let stats = budget.stats();
        assert!(stats.peak_bytes <= 64 * 64, "{stats:?}");
        assert_eq!(stats.resident_bytes, 64 * 64, "{stats:?}");
        assert_eq!(
            files[0].resident_bytes() + files[1].resident_bytes(),
            stats.resident_bytes
        );
    }
}
