//! Which tables a [`Tablebase`] has: every material a table may exist for has a slot
//! from the start, marked present once a file of it is found; files are opened and
//! validated on first use; the directory is listed again on a miss (rate-limited).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use super::{
    CacheStats, DEFAULT_CACHE_BYTES, DTM_EXT, DTZ_EXT, MAX_MEN, ProbeError, Tablebase, WDL_EXT,
    table_path,
};
use crate::color::Color;
use crate::format::{CacheBudget, Metric, TableFile};
use crate::index::{DIGIT_ORDER_SCHEME, DigitOrder, INDEX_SCHEME, TableIndex};
use crate::material::Material;
use crate::rules::RuleSet;

/// One material a table may exist for. Every such material has a slot from the start;
/// `present` says whether a file of it was found in the directory (it is set once and
/// never cleared), so registering a new table needs no change to the map.
pub(super) struct Slot {
    pub(super) index: TableIndex,
    pub(super) present: AtomicBool,
    pub(super) wdl: OnceLock<TableFile>,
    pub(super) dtm: OnceLock<TableFile>,
    pub(super) dtz: OnceLock<TableFile>,
    /// Which side to move the DTZ file holds when it holds one side of a table that is not
    /// its own mirror, and whether it leaves out that side's wins by a zeroing move
    /// (`None`: both sides, or the table is its own mirror); set before `dtz`.
    pub(super) dtz_side: OnceLock<Option<(Color, bool)>>,
    /// The order of digits the DTZ file keeps its values in (`None`: scheme 1's order);
    /// set before `dtz`.
    pub(super) dtz_order: OnceLock<Option<DigitOrder>>,
    /// Whether the directory held the DTZ file (under the tablebase's move rule) when it
    /// was last listed.
    pub(super) dtz_present: AtomicBool,
}

impl Slot {
    pub(super) fn is_present(&self) -> bool {
        self.present.load(Ordering::Acquire)
    }

    /// Where the DTZ file keeps the value of index `i` of the side to move it holds (in
    /// its digit order, if it has one).
    #[inline]
    pub(super) fn dtz_file_index(&self, i: u64) -> u64 {
        match self.dtz_order.get() {
            Some(Some(order)) => order.from_index(i),
            _ => i,
        }
    }
}

/// How often, at most, a lookup that finds no table lists the directory again.
pub const RESCAN_INTERVAL: Duration = Duration::from_secs(1);

impl Tablebase {
    /// Lists the tables of `rules` in `dir` (a missing directory holds no tables, until
    /// some are put there). Files are opened when first needed; their decompressed
    /// blocks share one budget of [`DEFAULT_CACHE_BYTES`].
    pub fn open(dir: impl AsRef<Path>, rules: RuleSet) -> Result<Tablebase, ProbeError> {
        Tablebase::open_with_budget(dir, rules, CacheBudget::new(DEFAULT_CACHE_BYTES))
    }

    /// [`Tablebase::open`] with the decompressed blocks of every file bounded by `budget`,
    /// which other tablebases (of other rule sets, say) may share: one bound for the
    /// process.
    pub fn open_with_budget(
        dir: impl AsRef<Path>,
        rules: RuleSet,
        budget: Arc<CacheBudget>,
    ) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        let slots = Material::all_with_tables(MAX_MEN)
            .into_iter()
            .map(|m| {
                let slot = Slot {
                    index: TableIndex::new(m),
                    present: AtomicBool::new(false),
                    wdl: OnceLock::new(),
                    dtm: OnceLock::new(),
                    dtz: OnceLock::new(),
                    dtz_side: OnceLock::new(),
                    dtz_order: OnceLock::new(),
                    dtz_present: AtomicBool::new(false),
                };
                (m, slot)
            })
            .collect();
        let tb = Tablebase {
            dir,
            rules,
            slots,
            budget,
            opened: Instant::now(),
            next_scan_ms: AtomicU64::new(0),
            scanning: Mutex::new(()),
        };
        tb.refresh()?;
        Ok(tb)
    }

    /// Lists the directory again (after tables were generated). The same as
    /// [`Tablebase::refresh`], kept for callers that hold the tablebase mutably.
    pub fn rescan(&mut self) -> Result<(), ProbeError> {
        self.refresh()
    }

    /// Lists the directory again and registers the tables that appeared since (tables
    /// are never unregistered). Safe to call while other threads probe.
    pub fn refresh(&self) -> Result<(), ProbeError> {
        let _listing = self.scanning.lock().unwrap_or_else(PoisonError::into_inner);
        self.scan()
    }

    /// After a miss: lists the directory again if the last listing is older than
    /// [`RESCAN_INTERVAL`] and no other thread is listing it. Returns whether it listed.
    #[cold]
    pub(super) fn rescan_if_due(&self) -> bool {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        if now < self.next_scan_ms.load(Ordering::Relaxed) {
            return false;
        }
        let Ok(_listing) = self.scanning.try_lock() else {
            return false;
        };
        let interval = u64::try_from(RESCAN_INTERVAL.as_millis()).unwrap_or(u64::MAX);
        self.next_scan_ms
            .store(now.saturating_add(interval), Ordering::Relaxed);
        // An unreadable directory is reported by `open` and `refresh`; here a miss stays
        // a miss.
        self.scan().is_ok()
    }

    /// The slot of a stored material, if its table is here (looking at the directory
    /// again, rate-limited, if it is not).
    #[inline]
    pub(super) fn present_slot(&self, stored: Material) -> Option<&Slot> {
        let slot = self.slots.get(&stored)?;
        if slot.is_present() || (self.rescan_if_due() && slot.is_present()) {
            Some(slot)
        } else {
            None
        }
    }

    /// Registers every table file of the directory. The caller holds `scanning`.
    pub(super) fn scan(&self) -> Result<(), ProbeError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(ProbeError::Io {
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        // A table is registered by either of its files: if the other one is missing, the
        // lookup that needs it names it.
        let suffixes = [
            format!(".{}.{DTM_EXT}", self.rules.base().slug()),
            format!(".{}.{WDL_EXT}", self.rules.base().slug()),
        ];
        let dtz_suffix = format!(".{}.{DTZ_EXT}", self.rules.slug());
        for entry in entries {
            let entry = entry.map_err(|source| ProbeError::Io {
                path: self.dir.clone(),
                source,
            })?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(stem) = name.strip_suffix(dtz_suffix.as_str()) {
                if let Some(slot) = stem
                    .parse::<Material>()
                    .ok()
                    .filter(|m| *m == m.normalized())
                    .and_then(|m| self.slots.get(&m))
                {
                    slot.dtz_present.store(true, Ordering::Release);
                }
                continue;
            }
            let Some(stem) = suffixes.iter().find_map(|s| name.strip_suffix(s.as_str())) else {
                continue;
            };
            let Ok(material) = stem.parse::<Material>() else {
                continue;
            };
            if material != material.normalized() {
                continue;
            }
            if let Some(slot) = self.slots.get(&material) {
                slot.present.store(true, Ordering::Release);
            }
        }
        Ok(())
    }

    /// Empties the decompressed-block cache of every open table file (the bound stays).
    /// A long generation calls it between tables: each table reads other sub-tables, and
    /// blocks left warm by earlier ones are of no use to the next.
    pub fn clear_caches(&self) {
        self.budget.clear();
    }

    /// Bounds the decompressed blocks of all the table files together, evicting at once
    /// if the bound shrank (safe while other threads probe). With 0 no block is kept.
    pub fn set_cache_bytes(&self, bytes: usize) {
        self.budget.set_capacity(bytes);
    }

    /// The cache's bound, the bytes it holds now and the most it held.
    #[must_use]
    pub fn cache_stats(&self) -> CacheStats {
        self.budget.stats()
    }

    /// The budget bounding the decompressed blocks of this tablebase's files.
    #[must_use]
    pub fn cache_budget(&self) -> &Arc<CacheBudget> {
        &self.budget
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    #[must_use]
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The materials with a table here, in stored form, in dependency order.
    #[must_use]
    pub fn materials(&self) -> Vec<Material> {
        Material::dependency_order(
            self.slots
                .iter()
                .filter(|(_, s)| s.is_present())
                .map(|(m, _)| *m)
                .collect(),
        )
    }

    /// Whether a table for `material` (either colour orientation) is here. A map lookup
    /// and an atomic load for a table already found; for one not found, the directory is
    /// listed again at most once every [`RESCAN_INTERVAL`].
    #[must_use]
    pub fn has_table(&self, material: Material) -> bool {
        self.present_slot(material.normalized()).is_some()
    }

    pub(super) fn file<'a>(
        &self,
        slot: &'a Slot,
        material: Material,
        metric: Metric,
    ) -> Result<&'a TableFile, ProbeError> {
        let cell = match metric {
            Metric::Wdl => &slot.wdl,
            Metric::Dtm => &slot.dtm,
            Metric::Dtz => &slot.dtz,
        };
        if let Some(f) = cell.get() {
            return Ok(f);
        }
        let path = table_path(&self.dir, material, self.rules, metric);
        // A missing file of a registered table is named (the other file is there).
        let file = TableFile::open_with_budget(&path, Arc::clone(&self.budget))?;
        let meta = file.meta();
        let corrupt = |message: String| ProbeError::Corrupt {
            path: path.clone(),
            message,
        };
        if meta.metric != metric {
            return Err(corrupt(format!(
                "holds {:?} values, not {metric:?}",
                meta.metric
            )));
        }
        // WDL and DTM files carry the rules without the move rule, DTZ files the whole set.
        let rules = match metric {
            Metric::Dtz => self.rules,
            Metric::Wdl | Metric::Dtm => self.rules.base(),
        };
        if meta.rules_code != rules.code() {
            let theirs = RuleSet::from_code(meta.rules_code).map_or_else(
                || format!("unknown code {}", meta.rules_code),
                |r| r.to_string(),
            );
            return Err(corrupt(format!(
                "wrong rule set: the file was generated for {theirs}, not {rules}"
            )));
        }
        if meta.material != material.to_string() {
            return Err(corrupt(format!(
                "holds material {}, not {material}",
                meta.material
            )));
        }
        let size = slot.index.size();
        let side_stored = |stats: &crate::stats::DtzStats| match stats.side_stored.as_deref() {
            Some("white") => Ok(Color::White),
            Some("black") => Ok(Color::Black),
            other => Err(corrupt(format!(
                "{} values (one side to move) but the side stored is {other:?}, not white \
                 or black",
                file.len()
            ))),
        };
        let dtz_stats = || -> Result<crate::stats::DtzStats, ProbeError> {
            serde_json::from_slice(&meta.extra)
                .map_err(|e| corrupt(format!("DTZ figures unreadable: {e}")))
        };
        // A DTZ file of a table that is not its own mirror holds both sides to move, or
        // one that its figures name; in scheme 1's order, or in the digit order its
        // figures name (always one side).
        let mut side = None;
        let mut order = None;
        let (scheme, expected_len) =
            if metric == Metric::Dtz && meta.index_scheme == DIGIT_ORDER_SCHEME {
                let stats = dtz_stats()?;
                let digits = stats.digit_order.as_deref().ok_or_else(|| {
                    corrupt(format!(
                        "index scheme {DIGIT_ORDER_SCHEME} but no digit order in its figures"
                    ))
                })?;
                let o = DigitOrder::new(&slot.index, digits).ok_or_else(|| {
                    corrupt(format!("digit order {digits:?} is not one of {material}'s"))
                })?;
                if !material.is_symmetric() {
                    side = Some((side_stored(&stats)?, stats.zeroing_wins_left_out));
                }
                let len = o.size();
                order = Some(o);
                (DIGIT_ORDER_SCHEME, len)
            } else if material.is_symmetric() {
                (INDEX_SCHEME, size)
            } else if metric == Metric::Dtz && file.len() == size {
                let stats = dtz_stats()?;
                side = Some((side_stored(&stats)?, stats.zeroing_wins_left_out));
                (INDEX_SCHEME, size)
            } else {
                (INDEX_SCHEME, 2 * size)
            };
        if meta.index_scheme != scheme || file.len() != expected_len {
            return Err(corrupt(format!(
                "index scheme {} with {} values, expected scheme {scheme} with {expected_len}",
                meta.index_scheme,
                file.len(),
            )));
        }
        if metric == Metric::Dtz {
            let _ = slot.dtz_side.set(side);
            let _ = slot.dtz_order.set(order);
        }
        let _ = cell.set(file);
        Ok(cell.get().expect("just set"))
    }

    /// Opens both files of a table now (each validated as when first used, without
    /// reading its blocks): an error names a missing or damaged file, the WDL file
    /// included, which a probe by DTM never reads.
    pub fn open_files(&self, material: Material) -> Result<(), ProbeError> {
        let stored = material.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })?;
        self.file(slot, stored, Metric::Dtm)?;
        self.file(slot, stored, Metric::Wdl)?;
        Ok(())
    }

    /// Opens both files of a table now and checks every block of each (for `verify`).
    pub fn check_files(&self, material: Material) -> Result<(), ProbeError> {
        let stored = material.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })?;
        self.file(slot, stored, Metric::Wdl)?.verify_blocks()?;
        self.file(slot, stored, Metric::Dtm)?.verify_blocks()?;
        if self.has_dtz_file(stored) {
            self.file(slot, stored, Metric::Dtz)?.verify_blocks()?;
        }
        Ok(())
    }

    /// Whether the DTZ file of a table (under this tablebase's move rule) was in the
    /// directory when it was last listed (not whether it is intact: opening it checks
    /// that). A map lookup and atomic loads, no system call.
    #[must_use]
    pub fn has_dtz_file(&self, material: Material) -> bool {
        self.slots
            .get(&material.normalized())
            .is_some_and(|s| s.dtz.get().is_some() || s.dtz_present.load(Ordering::Acquire))
    }

    /// Whether the table of `material` has a DTZ file here that opens and validates.
    #[must_use]
    pub fn has_dtz(&self, material: Material) -> bool {
        let stored = material.normalized();
        self.present_slot(stored)
            .is_some_and(|slot| self.file(slot, stored, Metric::Dtz).is_ok())
    }

    /// The values of the DTZ file of the table of `material` (stored form), read whole, in
    /// the order of scheme 1's indices of the side to move it holds (of both sides, White
    /// to move first, for a file of both): a file in a digit order read back into scheme
    /// 1's (see [`DigitOrder`]). For a caller that looks at a small table's values.
    pub fn read_dtz_values(&self, material: Material) -> Result<Vec<u16>, ProbeError> {
        let slot = self.table_slot(material)?;
        let values = self.file(slot, material, Metric::Dtz)?.read_all()?;
        Ok(match slot.dtz_order.get() {
            Some(Some(order)) => (0..slot.index.size())
                .map(|i| values[order.from_index(i) as usize])
                .collect(),
            _ => values,
        })
    }

    /// Every DTM code of the table of `material` (stored form), in slot order, read
    /// whole (see [`TableFile::read_all`]): for a caller that reads a small table often.
    pub fn read_dtm_codes(&self, material: Material) -> Result<Vec<u16>, ProbeError> {
        let slot = self.table_slot(material)?;
        Ok(self.file(slot, material, Metric::Dtm)?.read_all()?)
    }

    /// The slot of the table of `material` (stored form), or that it is missing here.
    fn table_slot(&self, material: Material) -> Result<&Slot, ProbeError> {
        self.present_slot(material).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })
    }
}
