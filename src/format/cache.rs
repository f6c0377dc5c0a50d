//! A bounded cache of decompressed blocks, shared by all threads using one table file.
//!
//! Blocks are spread over up to [`MAX_SHARDS`] shards by block number (`block % shards`),
//! each behind its own `Mutex`, so threads probing different blocks rarely meet. A shard
//! finds a block by direct indexing (`block / shards`), without hashing, and evicts with
//! CLOCK (second chance). A warm hit locks one shard, reads a value and unlocks: no heap
//! allocation, no reference counting.
//!
//! Memory bound: each shard keeps at most `capacity / shards` bytes, but always keeps at
//! least the one block it was just asked for, so the true bound is
//! `max(capacity, shards × block bytes)`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Upper bound on the number of shards.
pub const MAX_SHARDS: u32 = 64;

const NONE: u32 = u32::MAX;

struct Slot {
    block: u32,
    referenced: bool,
    data: Box<[u8]>,
}

#[derive(Default)]
struct Shard {
    /// For local block number `block / shards`: index into `slots`, or `NONE`.
    slot_of: Vec<u32>,
    slots: Vec<Slot>,
    hand: usize,
    bytes: usize,
}

/// One shard on its own cache line(s), so neighbouring locks do not false-share.
#[repr(align(128))]
#[derive(Default)]
struct PaddedShard(Mutex<Shard>);

pub struct BlockCache {
    shards: Box<[PaddedShard]>,
    n_shards: u32,
    capacity: AtomicUsize,
}

impl Shard {
    fn slot(&self, local: usize) -> Option<usize> {
        match self.slot_of.get(local) {
            Some(&i) if i != NONE => usize::try_from(i).ok(),
            _ => None,
        }
    }

    /// Evicts one block chosen by CLOCK. No-op if the shard is empty.
    fn evict_one(&mut self, n_shards: u32) {
        if self.slots.is_empty() {
            return;
        }
        loop {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let slot = &mut self.slots[self.hand];
            if slot.referenced {
                slot.referenced = false;
                self.hand += 1;
                continue;
            }
            let victim = self.slots.swap_remove(self.hand);
            self.bytes -= victim.data.len();
            self.set_slot_of(victim.block / n_shards, NONE);
            if let Some(moved) = self.slots.get(self.hand) {
                let (block, idx) = (moved.block, self.hand as u32);
                self.set_slot_of(block / n_shards, idx);
            }
            return;
        }
    }

    fn set_slot_of(&mut self, local: u32, value: u32) {
        if let Some(entry) = self.slot_of.get_mut(local as usize) {
            *entry = value;
        }
    }

    fn trim(&mut self, budget: usize, n_shards: u32) {
        while self.bytes > budget && !self.slots.is_empty() {
            self.evict_one(n_shards);
        }
    }
}

impl BlockCache {
    pub fn new(block_count: u32, capacity: usize) -> BlockCache {
        let n_shards = block_count.clamp(1, MAX_SHARDS);
        let per_shard = block_count.div_ceil(n_shards) as usize;
        let shards = (0..n_shards)
            .map(|_| {
                PaddedShard(Mutex::new(Shard {
                    slot_of: vec![NONE; per_shard],
                    ..Shard::default()
                }))
            })
            .collect();
        BlockCache {
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

    /// Calls `f` on block `block` if it is cached.
    #[inline]
    pub fn with<R>(&self, block: u32, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let mut shard = self.shard(block);
        let i = shard.slot((block / self.n_shards) as usize)?;
        let slot = shard.slots.get_mut(i)?;
        // Written only when it changes: then a warm hit leaves the slot's cache line
        // shared between the cores instead of pulling it to this one, which helps
        // threads probing at once (the shard's lock word still moves).
        if !slot.referenced {
            slot.referenced = true;
        }
        Some(f(&slot.data))
    }

    /// Caches `data` as block `block` (unless another thread got there first, in which
    /// case its copy is kept) and calls `f` on the cached block.
    pub fn insert_with<R>(&self, block: u32, data: Box<[u8]>, f: impl FnOnce(&[u8]) -> R) -> R {
        let n_shards = self.n_shards;
        let local = (block / n_shards) as usize;
        let budget = self.budget();
        let mut shard = self.shard(block);
        if let Some(i) = shard.slot(local) {
            if let Some(slot) = shard.slots.get_mut(i) {
                slot.referenced = true;
                return f(&slot.data);
            }
        }
        let len = data.len();
        while shard.bytes + len > budget && !shard.slots.is_empty() {
            shard.evict_one(n_shards);
        }
        if local >= shard.slot_of.len() {
            // Not reachable for blocks < block_count; serve without caching.
            return f(&data);
        }
        let idx = shard.slots.len() as u32;
        shard.slot_of[local] = idx;
        shard.bytes += len;
        shard.slots.push(Slot {
            block,
            referenced: false,
            data,
        });
        f(&shard.slots[idx as usize].data)
    }

    /// Sets the capacity in bytes of decompressed data, evicting at once if it shrank.
    pub fn set_capacity(&self, bytes: usize) {
        self.capacity.store(bytes, Ordering::Relaxed);
        let budget = self.budget();
        for shard in self.shards.iter() {
            shard
                .0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .trim(budget, self.n_shards);
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Bytes of decompressed data held now.
    pub fn resident_bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.0.lock().unwrap_or_else(PoisonError::into_inner).bytes)
            .sum()
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
}
