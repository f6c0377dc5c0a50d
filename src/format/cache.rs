//! A bounded cache of decompressed blocks, shared by all threads using one table file.
//!
//! **Reads take no lock and write no shared memory.** Each block has its own atomic
//! pointer: a warm hit pins the current thread in an epoch (a write to a thread-local
//! slot only), loads the pointer and reads the block. Blocks are spread over up to
//! [`MAX_SHARDS`] shards by block number (`block % shards`), each behind its own `Mutex`
//! that only inserts and evictions take. Evictions use CLOCK (second chance); the
//! "recently used" bit of a block is written by a reader only when it is clear, so a
//! hot block's cache line stays shared between the cores that read it. An evicted block
//! is unlinked at once and freed when every thread that might still be reading it has
//! left its epoch (epoch-based reclamation, `crossbeam-epoch`).
//!
//! Memory bound: each shard keeps at most `capacity / shards` bytes, but always keeps at
//! least the one block it was just asked for, so the true bound is
//! `max(capacity, shards × block bytes)`, plus evicted blocks not yet freed (those still
//! being read, and those whose epoch has not yet been collected: a few per thread).

// Epoch-based reclamation needs `unsafe` to dereference the shared pointers and to
// retire them; each use states its invariant.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_epoch::{self as epoch, Atomic, Owned};

/// Upper bound on the number of shards.
pub const MAX_SHARDS: u32 = 64;

/// A decompressed block and its CLOCK bit.
struct Block {
    referenced: AtomicBool,
    data: Box<[u8]>,
}

/// The eviction state of one shard: which of its blocks are resident, in CLOCK order.
#[derive(Default)]
struct Shard {
    resident: Vec<u32>,
    hand: usize,
    bytes: usize,
}

/// One shard on its own cache line(s), so neighbouring locks do not false-share.
#[repr(align(128))]
#[derive(Default)]
struct PaddedShard(Mutex<Shard>);

pub struct BlockCache {
    /// For each block, the cached copy or null. Non-null pointers are set and cleared
    /// only under the lock of the block's shard; readers only load them.
    blocks: Box<[Atomic<Block>]>,
    shards: Box<[PaddedShard]>,
    n_shards: u32,
    capacity: AtomicUsize,
}

impl Shard {
    /// Evicts one block chosen by CLOCK. No-op if the shard is empty.
    fn evict_one(&mut self, blocks: &[Atomic<Block>], guard: &epoch::Guard) {
        while !self.resident.is_empty() {
            if self.hand >= self.resident.len() {
                self.hand = 0;
            }
            let b = self.resident[self.hand] as usize;
            let shared = blocks[b].load(Ordering::Acquire, guard);
            // SAFETY: a resident block's pointer is non-null and points to a live Block:
            // it was stored by `insert_with` under this shard's lock (which we hold) and
            // is cleared (and the Block retired) only below, under the same lock.
            let block = unsafe { shared.deref() };
            if block.referenced.load(Ordering::Relaxed) {
                block.referenced.store(false, Ordering::Relaxed);
                self.hand += 1;
                continue;
            }
            self.resident.swap_remove(self.hand);
            self.bytes -= block.data.len();
            let old = blocks[b].swap(epoch::Shared::null(), Ordering::AcqRel, guard);
            // SAFETY: `old` is now unreachable from `blocks` (we just cleared the only
            // pointer to it, under the lock), so only readers pinned before the swap
            // can hold it; `defer_destroy` frees it after all of them have unpinned.
            unsafe { guard.defer_destroy(old) };
            return;
        }
    }

    fn trim(&mut self, budget: usize, blocks: &[Atomic<Block>], guard: &epoch::Guard) {
        while self.bytes > budget && !self.resident.is_empty() {
            self.evict_one(blocks, guard);
        }
    }
}

impl BlockCache {
    pub fn new(block_count: u32, capacity: usize) -> BlockCache {
        let n_shards = block_count.clamp(1, MAX_SHARDS);
        let blocks = (0..block_count).map(|_| Atomic::null()).collect();
        let shards = (0..n_shards).map(|_| PaddedShard::default()).collect();
        BlockCache {
            blocks,
            shards,
            n_shards,
            capacity: AtomicUsize::new(capacity),
        }
    }

    fn shard(&self, block: u32) -> MutexGuard<'_, Shard> {
        // Nothing panics while a shard is locked; should it ever, the shard's data is
        // still consistent (every mutation completes before the next may fail).
        self.shards[(block % self.n_shards) as usize]
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn budget(&self) -> usize {
        self.capacity.load(Ordering::Relaxed) / self.n_shards as usize
    }

    /// Calls `f` on block `block` if it is cached. Takes no lock.
    #[inline]
    pub fn with<R>(&self, block: u32, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let slot = self.blocks.get(block as usize)?;
        let guard = epoch::pin();
        let shared = slot.load(Ordering::Acquire, &guard);
        // SAFETY: a non-null pointer in `blocks` points to a Block that was fully
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
    /// case its copy is kept) and calls `f` on the cached block.
    pub fn insert_with<R>(&self, block: u32, data: Box<[u8]>, f: impl FnOnce(&[u8]) -> R) -> R {
        let Some(slot) = self.blocks.get(block as usize) else {
            // Not reachable for blocks < block_count; serve without caching.
            return f(&data);
        };
        let budget = self.budget();
        let guard = epoch::pin();
        let mut shard = self.shard(block);
        let present = slot.load(Ordering::Acquire, &guard);
        // SAFETY: as in `with`: non-null pointers in `blocks` are live while pinned.
        if let Some(cached) = unsafe { present.as_ref() } {
            cached.referenced.store(true, Ordering::Relaxed);
            return f(&cached.data);
        }
        let len = data.len();
        while shard.bytes + len > budget && !shard.resident.is_empty() {
            shard.evict_one(&self.blocks, &guard);
        }
        let new = Owned::new(Block {
            referenced: AtomicBool::new(false),
            data,
        })
        .into_shared(&guard);
        slot.store(new, Ordering::Release);
        shard.resident.push(block);
        shard.bytes += len;
        drop(shard);
        // SAFETY: `new` was just published and can only be retired by an eviction,
        // which frees it after `guard` unpins.
        f(&unsafe { new.deref() }.data)
    }

    /// Sets the capacity in bytes of decompressed data, evicting at once if it shrank.
    pub fn set_capacity(&self, bytes: usize) {
        self.capacity.store(bytes, Ordering::Relaxed);
        let budget = self.budget();
        let guard = epoch::pin();
        for shard in self.shards.iter() {
            shard.0.lock().unwrap_or_else(PoisonError::into_inner).trim(
                budget,
                &self.blocks,
                &guard,
            );
        }
        // hand the evicted blocks to the collector now rather than at the next pins
        guard.flush();
    }

    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Bytes of decompressed data held now (not counting evicted blocks not yet freed).
    pub fn resident_bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.0.lock().unwrap_or_else(PoisonError::into_inner).bytes)
            .sum()
    }
}

impl Drop for BlockCache {
    fn drop(&mut self) {
        for slot in self.blocks.iter() {
            // SAFETY: `&mut self`: no thread can be reading the cache, so no guard is
            // needed, and each non-null pointer is owned by this cache alone (evicted
            // blocks were unlinked before being retired, so none is freed twice).
            unsafe {
                let p = slot.load(Ordering::Relaxed, epoch::unprotected());
                if !p.is_null() {
                    drop(p.into_owned());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(b: u32, len: usize) -> Box<[u8]> {
        vec![b as u8; len].into_boxed_slice()
    }

    #[test]
    fn hits_misses_and_bound() {
        // 200 blocks -> 64 shards.
        let cache = BlockCache::new(200, 64 * 2 * 100);
        assert_eq!(cache.with(5, |d| d[0]), None);
        assert_eq!(cache.insert_with(5, block(5, 100), |d| d[0]), 5);
        assert_eq!(cache.with(5, |d| d.len()), Some(100));
        // Blocks 5, 69, 133, 197 share a shard whose budget is 200 bytes = 2 blocks.
        cache.insert_with(69, block(69, 100), |_| ());
        cache.insert_with(133, block(133, 100), |_| ());
        let present: Vec<u32> = [5, 69, 133]
            .into_iter()
            .filter(|&b| cache.with(b, |d| assert_eq!(d[0], b as u8)).is_some())
            .collect();
        assert_eq!(present.len(), 2, "{present:?}");
        assert!(present.contains(&133));
        assert_eq!(cache.resident_bytes(), 200);
        // A racing insert keeps the first copy.
        assert_eq!(cache.insert_with(133, block(7, 100), |d| d[0]), 133);
        cache.set_capacity(0);
        assert_eq!(cache.resident_bytes(), 0);
        // Capacity 0 still serves (and keeps) the block just inserted.
        assert_eq!(cache.insert_with(197, block(197, 10), |d| d[0]), 197);
        assert_eq!(cache.insert_with(5, block(5, 10), |d| d[0]), 5);
        assert_eq!(cache.with(197, |_| ()), None);
    }

    #[test]
    fn clock_gives_a_second_chance() {
        let c = BlockCache::new(64 * 4, 64 * 300);
        // Shard 0 holds blocks 0, 64, 128, 192; budget 300 = three blocks of 100.
        for b in [0, 64, 128] {
            c.insert_with(b, block(b, 100), |_| ());
        }
        c.with(0, |_| ()).unwrap(); // referenced: survives the next eviction
        c.insert_with(192, block(192, 100), |_| ());
        assert!(c.with(0, |_| ()).is_some());
        assert_eq!(
            [64, 128]
                .iter()
                .filter(|&&b| c.with(b, |_| ()).is_some())
                .count(),
            1
        );
        assert_eq!(c.capacity(), 64 * 300);
    }

    #[test]
    fn threads_read_while_others_evict() {
        // 256 blocks over 64 shards, room for about one block a shard: nearly every
        // insert evicts, while other threads read. Every read must see its own block.
        let cache = BlockCache::new(256, 64 * 64);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let cache = &cache;
                s.spawn(move || {
                    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ t;
                    for _ in 0..20_000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let b = (x % 256) as u32;
                        let ok = |d: &[u8]| d.len() == 64 && d.iter().all(|&v| v == b as u8);
                        let seen = match cache.with(b, ok) {
                            Some(seen) => seen,
                            None => cache.insert_with(b, block(b, 64), ok),
                        };
                        assert!(seen, "block {b} read back wrong");
                    }
                });
            }
        });
        assert!(cache.resident_bytes() <= 64 * 64 * 2);
    }
}
