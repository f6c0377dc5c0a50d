//! Probing: a directory of table files answering for positions.
//!
//! [`Tablebase::open`] only lists the directory; each file is opened and validated the
//! first time a position needs it, and all of them share one bound on the decompressed
//! blocks they keep ([`Tablebase::set_cache_bytes`], [`Tablebase::cache_stats`]). Positions the rules decide alone (a bare side, K v K,
//! a finished game) are answered without files. A `Tablebase` is `Send + Sync`: share it
//! between threads behind an `Arc`.
//!
//! Files are named `{MATERIAL}.{RULES}.tbw` (WDL) and `.tbd` (DTM), for example
//! `KRvKQ.counter-loss.tbd`, with the material in its stored form (the stronger side as
//! White; `KQvKR` is answered from `KRvKQ` with colours swapped). A file holds the values
//! for White to move, then for Black to move, each in index order; a material that is
//! its own mirror (`KQvKQ`) holds White to move only.
//!
//! The files of this module: `registry.rs` (which tables are here, opening files),
//! `lookup.rs` (the value of one position), `moves.rs` (every move with its value),
//! `line.rs` (lines of play), `info.rs` (table figures), `answer.rs` (the answer types),
//! `error.rs` ([`ProbeError`]), `json.rs` (the `probe --json` object), `hasher.rs` (the
//! table map's hasher).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::format::{CacheBudget, Metric};
use crate::material::Material;
use crate::rules::RuleSet;

pub use crate::format::CacheStats;
pub use crate::stats::{Longest, SideStats};

/// Most men a table may have (6: every table this generator makes; a position of 7 men
/// or more is [`ProbeError::TooManyMen`]).
pub const MAX_MEN: u32 = 6;

/// Default bound on the decompressed blocks a [`Tablebase`] keeps, all its files together:
/// 1 GiB, room for four whole 5-man DTM tables (about 240 MB each at one byte a
/// position), so random probes stay warm. The cache fills only with blocks actually
/// probed.
pub const DEFAULT_CACHE_BYTES: usize = 1 << 30;

/// File extension of WDL tables.
pub const WDL_EXT: &str = "tbw";
/// File extension of DTM tables.
pub const DTM_EXT: &str = "tbd";

/// The extension of DTZ files.
pub const DTZ_EXT: &str = "tbz";

mod answer;
mod dtz;
mod error;
mod hasher;
mod info;
mod json;
mod line;
mod lookup;
mod moves;
mod registry;

pub use answer::{LineStep, MoveProbe, MoveValue, ProbeResult, TableInfo};
pub use dtz::{DtzProbe, dtz_of_move, is_zeroing};
pub use error::ProbeError;
pub(crate) use lookup::stored_slot;
pub use registry::RESCAN_INTERVAL;

/// The path of a table file. WDL and DTM files are named by the rules without their move
/// rule (the move rule changes neither), DTZ files by the whole rule set.
#[must_use]
pub fn table_path(dir: &Path, material: Material, rules: RuleSet, metric: Metric) -> PathBuf {
    let (ext, rules) = match metric {
        Metric::Wdl => (WDL_EXT, rules.base()),
        Metric::Dtm => (DTM_EXT, rules.base()),
        Metric::Dtz => (DTZ_EXT, rules),
    };
    dir.join(format!("{}.{}.{ext}", material.normalized(), rules.slug()))
}

/// A directory of tables for one rule set.
///
/// Tables that appear in the directory after it was opened (generated or copied in) are
/// found without reopening: a lookup that finds no table lists the directory again, at
/// most once every [`RESCAN_INTERVAL`], and [`Tablebase::refresh`] does it at once. A
/// table already found costs a map lookup and an atomic load, no lock and no system
/// call.
pub struct Tablebase {
    dir: PathBuf,
    rules: RuleSet,
    slots: HashMap<Material, registry::Slot, hasher::BuildMaterialHasher>,
    /// The one bound on the decompressed blocks of every file of this tablebase.
    budget: Arc<CacheBudget>,
    /// When the tablebase was opened: the origin of `next_scan_ms`.
    opened: Instant,
    /// Milliseconds after `opened` before which a miss does not list the directory again.
    next_scan_ms: AtomicU64,
    /// Held while the directory is listed (one listing at a time).
    scanning: Mutex<()>,
}

impl fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tablebase")
            .field("dir", &self.dir)
            .field("rules", &self.rules)
            .field(
                "tables",
                &self.slots.values().filter(|s| s.is_present()).count(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Tablebase>();
    }
}
