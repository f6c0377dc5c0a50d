//! The plan of a generation run: one job a table, what it reads and writes, and
//! estimates of its memory, CPU time and disk, for running the jobs on many machines
//! (`shatranj-tb generate --plan`).
//!
//! The estimates are linear in the table's slots (positions of its index, both sides to
//! move), with constants measured on this generator; the figures they rest on are
//! beside each constant.

use std::path::Path;

use crate::format::Metric;
use crate::index::TableIndex;
use crate::material::Material;
use crate::probe::table_path;
use crate::rules::RuleSet;

/// Bytes a slot of a table without pawns, at the peak of its generation: the state (a
/// byte, and the few values spilled beside it), two bits of conversion code, two
/// frontier bits, the marks and the passes' lists. Against the peak resident memory of
/// `generate` with 2 threads (WDL, DTM and DTZ; estimates with 2 threads): KRvKQ (3.8 M
/// slots) 66.2 MiB for 72 estimated, KNNvKR (119 M) 300 MiB for 366, KRQvKR (242 M)
/// 474-513 MiB for 654, KQBvKB (242 M, 0.3 % of its slots spilled) 605 MiB for 654, KRRvKRR
/// (3.76 G) 5.91 GiB for 8.7 GiB.
const BYTES_PER_SLOT: f64 = 2.0;

/// Bytes a slot of a table with pawns (their promotions read large sub-tables through
/// the block cache, counted apart), of its largest slice where it is made in slices (see
/// [`slice_slots`]). Measured with 2 threads when these tables were made whole: KRPvKR
/// (710 M slots) 1.27 GiB and KBPvKB (710 M) 1.51 GiB for 2.5 GiB estimated, KQPvKP
/// (533 M) 1.26 GiB for 3.4 GiB; made in slices, KRPvKR 554 MiB for 1.36 GiB.
const BYTES_PER_SLOT_PAWNS: f64 = 2.5;

/// Tables without pawns of at most this many men may start their DTZ from their DTM (see
/// [`crate::generate::dtz`]): a byte a slot more, held beside the DTM codes while the DTZ is
/// made. Larger tables make it the other way, in the codes' memory, since their memory is
/// what keeps them off a machine; so do tables with pawns, where it was slower on every
/// 5-man table measured (most of their wins zero at once by a pawn's step, and where the
/// side with the pawn loses, each of its losses must read its replies again).
pub const DTZ_FROM_DTM_MAX_MEN: u32 = 5;

/// What a DTZ started from the DTM adds a slot (its own byte a slot beside the codes, and
/// a bit a slot for the positions it lowered). Measured with 2 threads (peak resident
/// memory): KNBvKB 653-667 MiB, where its DTZ made in the codes' memory peaked at 431 MiB;
/// with the bit, 684-690 MiB.
const DTZ_FROM_DTM_BYTES_PER_SLOT: f64 = 1.125;

/// Whether the DTZ of `material` may start from its DTM ([`DTZ_FROM_DTM_MAX_MEN`]).
#[must_use]
pub fn dtz_may_start_from_dtm(material: Material) -> bool {
    !material.has_pawns() && material.men() <= DTZ_FROM_DTM_MAX_MEN
}

/// A sub-table of at most this many slots is read whole into memory (two bytes a slot,
/// or one) while a table that captures into it is generated: every 4-man table.
const RESIDENT_MAX_SLOTS: u64 = 1 << 24;

/// A larger sub-table is read whole as well when the table that captures into it has at
/// least this many times its slots (the 5-man sub-tables of a 6-man table: KRRvKR has a
/// 31st of KRRvKRR's slots), where two bytes a sub-table slot (at most 4 % of the
/// generator's 3.3 bytes a slot or more; one byte where its codes are few) are a small
/// share, and the seed's lookups, one for every capture of every position, cost far less
/// in an array than through the block cache.
const RESIDENT_RATIO: u64 = 16;

/// Whether a sub-table of `sub_slots` slots is held whole in memory while a table of
/// `table_slots` slots is generated (see [`RESIDENT_MAX_SLOTS`], [`RESIDENT_RATIO`]).
#[must_use]
pub fn sub_table_is_resident(sub_slots: u64, table_slots: u64) -> bool {
    sub_slots <= RESIDENT_MAX_SLOTS || sub_slots.saturating_mul(RESIDENT_RATIO) <= table_slots
}

/// What the larger sub-tables of a table hold in memory, all of them together: the
/// decompressed blocks of the one block cache they share (the probe's default budget,
/// 1 GiB). Their files are read block by block (positioned reads, not mapped), so the
/// pages the kernel keeps of them are its page cache, which it takes back under pressure,
/// not the process's. (The estimate once added each one's DTM file, from when files were
/// mapped: 9.5 GiB for each 6-man table that a 6-man pawn table promotes into.)
const SUB_TABLE_CACHE_BYTES: u64 = crate::probe::DEFAULT_CACHE_BYTES as u64;

/// Memory a process takes before any table (binary, allocator, tables of attacks), and
/// [`THREAD_BYTES`] more for each worker thread (its stack and the allocator's heap of its
/// own). Measured peaks of `generate --no-deps` (resident set, `/usr/bin/time -v`) with 1,
/// 2, 4 and 8 threads: KRvKQ (3.8 M slots) 54.7, 67.6, 78.6 and 99.3 MB; KNNvKR (119 M
/// slots) 454 MB with 1 and 2, 469 MB with 4. The estimate is above every one of them
/// (KRvKQ by 17-31 %, KNNvKR by 9-12 %).
const BASE_BYTES: u64 = 50_000_000;

/// Memory of each worker thread: see [`BASE_BYTES`].
const THREAD_BYTES: u64 = 8_000_000;

/// Bytes of table files a slot, all three files: 7.23 GB for the 28.2 G slots of every
/// table up to 5 men (WDL 0.39 GB, DTM 5.82 GB, DTZ 1.02 GB; before DTZ files, 6.2 GB and
/// 0.22 a slot).
const FILE_BYTES_PER_SLOT: f64 = 0.26;

/// Share of a table's bytes in its DTM file (0.81 on every table up to 5 men).
const DTM_SHARE: f64 = 0.8;

/// CPU seconds a slot of a table without pawns, with its WDL, DTM and DTZ files written
/// and checked. Fitted to the 40 pawnless 5-man tables, each made by `generate --no-deps`
/// on 2 cores (user and system time): 3,469 core-seconds for their 7.7 G slots, 0.23 to
/// 0.83 microseconds a slot (median 0.48), so a table takes 0.52 to 1.83 times its
/// estimate. The constant before (2.5e-7) dated from before DTZ files: these tables took
/// 1.8 times it.
const CPU_SECONDS_PER_SLOT: f64 = 4.5e-7;

/// CPU seconds a slot of a table with pawns, as [`CPU_SECONDS_PER_SLOT`]. Fitted to the
/// last whole `--men 5` run (see docs/CLUSTER.md): its 35 tables with pawns took about
/// 8,070 core-seconds for their 20.4 G slots, at the speed of the day the pawnless
/// constant was fitted. They spread more widely, by how long their DTZ is: measured on 2
/// cores, KRPvKR 0.25 microseconds a slot, KBPvKB 0.54, KBBvKP 0.80, KNBvKP 0.90, KNPvKB
/// 0.89-0.97 (0.62 to 2.4 times their estimates). The constant before was 3.5e-7.
const CPU_SECONDS_PER_SLOT_PAWNS: f64 = 4.0e-7;

/// One job of a plan: one table.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The table's material, in stored form.
    pub material: Material,
    /// The tables it reads (those its captures and promotions lead to), in stored form;
    /// materials the rules decide need no table and are left out.
    pub reads: Vec<Material>,
    /// The files it writes: the WDL file, the DTM file, then the DTZ file (of the rule
    /// set's move rule).
    pub files: [std::path::PathBuf; 3],
    /// Slots of its index (positions, both sides to move).
    pub slots: u64,
    /// Estimated peak memory of the process that generates it, in bytes.
    pub memory_bytes: u64,
    /// Estimated CPU time, in core-seconds.
    pub cpu_seconds: f64,
    /// Estimated size of its three files, in bytes.
    pub disk_bytes: u64,
    /// Threads worth giving it.
    pub threads: u32,
}

/// The tables `material` reads while it is generated: its successors in stored form,
/// each once, without the ones the rules decide.
#[must_use]
pub fn reads(material: Material) -> Vec<Material> {
    let mut out: Vec<Material> = Vec::new();
    for s in material.normalized().successors() {
        let s = s.normalized();
        if !s.is_decided_by_rules() && !out.contains(&s) {
            out.push(s);
        }
    }
    Material::dependency_order(out)
}

/// The slots of a table.
#[must_use]
pub fn slots(material: Material) -> u64 {
    2 * TableIndex::new(material.normalized()).size()
}

/// Estimated bytes of both files of a table.
#[must_use]
pub fn disk_bytes(material: Material) -> u64 {
    (slots(material) as f64 * FILE_BYTES_PER_SLOT) as u64
}

/// Bytes of temporary files a slot of a table made a slice at a time (a table with
/// pawns, [`TableIndex::slices`]): its DTM codes and DTZ plies, two bytes each, and its
/// conversions, two bits.
const SCRATCH_BYTES_PER_SLOT: f64 = 4.25;

/// Estimated bytes of the temporary files a table needs while it is made (none for a
/// table made whole), a slot of the generator's index each (a split pair's index has
/// 1,440 pawn digits where the files' has 1,128).
#[must_use]
pub fn scratch_bytes(material: Material) -> u64 {
    let index = TableIndex::for_generation(material.normalized());
    if index.slices().len() > 1 {
        (2.0 * index.size() as f64 * SCRATCH_BYTES_PER_SLOT) as u64
    } else {
        0
    }
}

/// The slots of a table's largest slice ([`TableIndex::slices`]): what its generation
/// holds at once (all of them for a table made whole).
#[must_use]
pub fn slice_slots(material: Material) -> u64 {
    let index = TableIndex::for_generation(material.normalized());
    2 * index
        .slices()
        .iter()
        .map(|r| r.end - r.start)
        .max()
        .unwrap_or(0)
}

/// Estimated peak memory of generating `material` with the threads its job is given
/// ([`threads`]); see [`memory_bytes_on`].
#[must_use]
pub fn memory_bytes(material: Material) -> u64 {
    memory_bytes_on(material, threads(material) as usize)
}

/// Estimated peak memory of generating `material` with `threads` worker threads: the
/// generator's state (of its largest slice), the small sub-tables held whole and the
/// block cache the larger ones share ([`SUB_TABLE_CACHE_BYTES`]), the process's own (a
/// base and each thread's), and a margin of its DTM file's size. The files are written
/// as they are compressed, and a table made in slices keeps its wins by a zeroing move in
/// a temporary file, not in a bit array of the whole table; before, the estimate counted
/// the DTM file twice and that array (a bit a slot). Measured since (2 threads, peak
/// resident memory, estimates with 2 threads): KRPvKR 477 MiB (555 before) for 1.1 GiB,
/// KQBvKB 514 MiB (605 once) for 585 MiB, KNBvKB 476 MiB (504 before) for 585 MiB,
/// KRRvKRR 6.27 GiB for 8.0 GiB. A table of up to 5 men without pawns is counted a byte
/// and an eighth a slot more, for a DTZ that starts from its DTM
/// ([`dtz_may_start_from_dtm`]): KNBvKB, made so, 684-690 MiB for 847 MiB, KQBvKB 726-735
/// MiB for the same (2 threads; KRQvKR, whose DTZ is made the other way, 427-430 MiB, and
/// 491 MiB since that way keeps two bits a slot: the values not yet visited, the open).
#[must_use]
pub fn memory_bytes_on(material: Material, threads: usize) -> u64 {
    let n = slots(material);
    let per_slot = if material.has_pawns() {
        BYTES_PER_SLOT_PAWNS
    } else {
        BYTES_PER_SLOT
    };
    let dtm_file = |m| (disk_bytes(m) as f64 * DTM_SHARE) as u64;
    let (resident, read_through): (Vec<u64>, Vec<u64>) = reads(material)
        .into_iter()
        .map(slots)
        .partition(|&s| sub_table_is_resident(s, n));
    let subs = 2 * resident.iter().sum::<u64>()
        + SUB_TABLE_CACHE_BYTES.min(2 * read_through.iter().sum::<u64>());
    // a table made a slice at a time holds one slice's state
    let held = slice_slots(material);
    let from_dtm = if dtz_may_start_from_dtm(material) {
        (held as f64 * DTZ_FROM_DTM_BYTES_PER_SLOT) as u64
    } else {
        0
    };
    BASE_BYTES
        + from_dtm
        + THREAD_BYTES * threads.max(1) as u64
        + (held as f64 * per_slot) as u64
        + dtm_file(material)
        + subs
}

/// Estimated CPU time of generating `material`, in core-seconds.
#[must_use]
pub fn cpu_seconds(material: Material) -> f64 {
    let per_slot = if material.has_pawns() {
        CPU_SECONDS_PER_SLOT_PAWNS
    } else {
        CPU_SECONDS_PER_SLOT
    };
    slots(material) as f64 * per_slot
}

/// Threads worth giving a table: one for the small ones (a 4-man table takes about a
/// second, and separate jobs keep the cores busier than one job's threads), more for
/// the large ones.
#[must_use]
pub fn threads(material: Material) -> u32 {
    match slots(material) {
        s if s <= RESIDENT_MAX_SLOTS << 2 => 1,
        s if s <= 1 << 32 => 4,
        _ => 16,
    }
}

/// The job of one table whose files go into `dir`.
#[must_use]
pub fn job(dir: &Path, material: Material, rules: RuleSet) -> Job {
    let material = material.normalized();
    Job {
        material,
        reads: reads(material),
        files: [
            table_path(dir, material, rules, Metric::Wdl),
            table_path(dir, material, rules, Metric::Dtm),
            table_path(dir, material, rules, Metric::Dtz),
        ],
        slots: slots(material),
        memory_bytes: memory_bytes(material),
        cpu_seconds: cpu_seconds(material),
        disk_bytes: disk_bytes(material),
        threads: threads(material),
    }
}

/// The jobs of generating `materials` and every table they depend on into `dir`, each
/// table once, every job after the jobs of the tables it reads.
#[must_use]
pub fn plan(dir: &Path, materials: &[Material], rules: RuleSet) -> Vec<Job> {
    let mut all: Vec<Material> = Vec::new();
    for m in materials {
        for d in m.with_dependencies() {
            if !all.contains(&d) {
                all.push(d);
            }
        }
    }
    Material::dependency_order(all)
        .into_iter()
        .map(|m| job(dir, m, rules))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Material {
        s.parse().unwrap()
    }

    #[test]
    fn reads_are_the_stored_successors_with_tables() {
        assert!(reads(m("KRvKQ")).is_empty());
        assert_eq!(reads(m("KPvKP")), [m("KQvKP")]);
        // the rook taken leaves White bare: only a knight taken needs a table
        assert_eq!(reads(m("KRvKNN")), [m("KRvKN")]);
        // the pawn taken, the rook taken (stored as KRvKP), the pawn promoted; the
        // black rook taken leaves Black bare
        let r: Vec<String> = reads(m("KRPvKR")).iter().map(|m| m.to_string()).collect();
        assert_eq!(r, ["KRvKR", "KRvKP", "KRQvKR"]);
    }

    #[test]
    fn jobs_follow_what_they_read() {
        let jobs = plan(Path::new("t"), &[m("KRPvKR")], RuleSet::default());
        assert_eq!(jobs.last().unwrap().material, m("KRPvKR"));
        for (i, j) in jobs.iter().enumerate() {
            for r in &j.reads {
                let k = jobs.iter().position(|x| x.material == *r).unwrap();
                assert!(k < i, "{r} after {}", j.material);
            }
        }
        let last = jobs.last().unwrap();
        assert_eq!(
            last.files[0],
            Path::new("t/KRPvKR.counter-loss.tbw"),
            "{:?}",
            last.files
        );
        // above its peak measured with 2 threads (477 MiB, made a quarter at a time), and
        // above two bytes a slot of that quarter
        assert!(last.memory_bytes > 500 << 20);
        assert!(last.memory_bytes > 2 * slice_slots(m("KRPvKR")));
    }
}
