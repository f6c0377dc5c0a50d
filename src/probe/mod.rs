//! Probing: a directory of table files answering for positions.
//!
//! [`Tablebase::open`] only lists the directory; each file is mapped and validated the
//! first time a position needs it. Positions the rules decide alone (a bare side, K v K,
//! a finished game) are answered without files. A `Tablebase` is `Send + Sync`: share it
//! between threads behind an `Arc`.
//!
//! Files are named `{MATERIAL}.{RULES}.tbw` (WDL) and `.tbd` (DTM), for example
//! `KRvKQ.counter-loss.tbd`, with the material in its stored form (the stronger side as
//! White; `KQvKR` is answered from `KRvKQ` with colours swapped). A file holds the values
//! for White to move, then for Black to move, each in index order; a material that is
//! its own mirror (`KQvKQ`) holds White to move only.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::board::Board;
use crate::color::Color;
use crate::fen::Fen;
use crate::format::{FormatError, Metric, TableFile};
use crate::generate::stats::TableStats;
use crate::index::{INDEX_SCHEME, MoveFrame, TableIndex};
use crate::material::Material;
use crate::position::{Move, Position};
use crate::role::{Piece, Role};
use crate::rules::{EndReason, RuleSet};
use crate::value::{Value, Wdl};

pub use crate::generate::stats::{Longest, SideStats};

/// Most men a table may have.
pub const MAX_MEN: u32 = 5;

/// Default bound on each table file's cache of decompressed blocks: room for a whole
/// 5-man DTM table (about 240 MB at one byte a position), so random probes stay warm. The
/// cache fills only with blocks actually probed.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// File extension of WDL tables.
pub const WDL_EXT: &str = "tbw";
/// File extension of DTM tables.
pub const DTM_EXT: &str = "tbd";

/// The path of a table file.
#[must_use]
pub fn table_path(dir: &Path, material: Material, rules: RuleSet, metric: Metric) -> PathBuf {
    let ext = match metric {
        Metric::Wdl => WDL_EXT,
        Metric::Dtm => DTM_EXT,
    };
    dir.join(format!("{}.{}.{ext}", material.normalized(), rules.slug()))
}

/// Why a probe failed.
#[derive(Debug)]
pub enum ProbeError {
    /// No table for this material and rule set in the directory.
    MissingTable { material: Material, rules: RuleSet },
    /// The file could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is damaged, of another format version, or of another rule set.
    Corrupt { path: PathBuf, message: String },
    /// More men than any table holds.
    TooManyMen { men: u32 },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::MissingTable { material, rules } => {
                if material.is_decided_by_rules() {
                    return write!(
                        f,
                        "{material} has no table and needs none: a side is bare, so the rules decide every position"
                    );
                }
                if material.men() > MAX_MEN {
                    return write!(
                        f,
                        "{material} has {} men; tables hold at most {MAX_MEN}",
                        material.men()
                    );
                }
                let flag = if *rules == RuleSet::default() {
                    String::new()
                } else {
                    format!(" --rules {rules}")
                };
                write!(
                    f,
                    "missing table {material} for rules {rules}: generate it with `shatranj-tb generate {material}{flag}`"
                )
            }
            ProbeError::Io { path, source } => {
                let what = if is_table_file(path) {
                    "table file"
                } else {
                    "table folder"
                };
                write!(f, "cannot read the {what} {}: {source}", path.display())
            }
            ProbeError::Corrupt { path, message } => {
                write!(f, "damaged table file {}: {message}", path.display())
            }
            ProbeError::TooManyMen { men } => {
                write!(f, "position has {men} men; tables hold at most {MAX_MEN}")
            }
        }
    }
}

/// The message already says what the operating system reported, so no `source` is
/// given: a chain printer (`anyhow`'s `{:#}`) would print it a second time.
impl std::error::Error for ProbeError {}

/// Whether `path` names a table file (rather than the folder of the tables).
fn is_table_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == WDL_EXT || e == DTM_EXT)
}

impl From<FormatError> for ProbeError {
    fn from(e: FormatError) -> ProbeError {
        match e {
            FormatError::Io { path, source } => ProbeError::Io { path, source },
            other => {
                // The format layer's message starts with the file's name, which
                // `ProbeError` writes itself.
                let path = other.path().to_path_buf();
                let full = other.to_string();
                let prefix = format!("table file {}: ", path.display());
                let message = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
                ProbeError::Corrupt { path, message }
            }
        }
    }
}

/// One legal move and what it leads to, from the probed side's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// UCI notation (`e7e8q` for a promotion).
    pub uci: String,
    /// The probed side's result if it plays this move.
    pub value: Value,
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    pub fen: String,
    /// The material as on the board (White's pieces first).
    pub material: Material,
    pub rules: RuleSet,
    /// The value for the side to move.
    pub value: Value,
    /// How the game ended, if it has.
    pub end: Option<EndReason>,
    /// Every legal move with its value, best first (empty once the game has ended).
    pub moves: Vec<MoveValue>,
}

impl ProbeResult {
    #[must_use]
    pub fn wdl(&self) -> Wdl {
        self.value.wdl()
    }

    #[must_use]
    pub fn dtm(&self) -> Option<u32> {
        self.value.dtm()
    }

    /// The best move, if the game goes on.
    #[must_use]
    pub fn best_move(&self) -> Option<&MoveValue> {
        self.moves.first()
    }

    /// Every move that keeps the position's value.
    pub fn best_moves(&self) -> impl Iterator<Item = &MoveValue> {
        self.moves.iter().filter(|m| m.value == self.value)
    }
}

/// The answer for one position with its moves as [`Move`]s, not text: what
/// [`Tablebase::probe_moves`] gives, for callers that write their own output (the gRPC
/// service); [`ProbeResult`] is the same answer with the FEN and UCI strings written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveProbe {
    /// The value for the side to move.
    pub value: Value,
    /// How the game ended, if it has.
    pub end: Option<EndReason>,
    /// Every legal move with the probed side's result if it plays it, best first, moves
    /// of equal value in the order of their UCI names (empty once the game has ended).
    pub moves: Vec<(Move, Value)>,
}

/// Moves a probe handles in fixed-size arrays (a position of a table with up to 5 men
/// has fewer legal moves); beyond, it falls back to slower ways.
const BATCH: usize = 64;

/// The moves best first, moves of equal value in UCI order: sorted as one integer a
/// move (value, then name, then the move's place in `moves`).
fn sorted(moves: Vec<(Move, Value)>) -> Vec<(Move, Value)> {
    if moves.len() > BATCH {
        let mut moves = moves;
        moves.sort_unstable_by_key(|(m, v)| (std::cmp::Reverse(v.rank()), uci_order(m)));
        return moves;
    }
    let mut keys = [0u64; BATCH];
    for (k, (key, (m, v))) in keys.iter_mut().zip(&moves).enumerate() {
        // rank() lies within ±2^33: better values get smaller keys
        let worse = u64::try_from((1i64 << 33) - v.rank()).expect("a rank within ±2^33");
        *key = (worse << 24) | (u64::from(uci_order(m)) << 8) | k as u64;
    }
    let keys = &mut keys[..moves.len()];
    keys.sort_unstable();
    keys.iter()
        .map(|key| moves[(key & 0xff) as usize])
        .collect()
}

/// A key that orders moves as their UCI names sort (`a1b2` < `a1b2q` < `a1b3`).
fn uci_order(m: &Move) -> u32 {
    (m.from.file() << 12)
        | (m.from.rank() << 9)
        | (m.to.file() << 6)
        | (m.to.rank() << 3)
        | u32::from(m.promotion)
}

/// What the quiet moves (no capture, no promotion) of one position share: their
/// successors are in the same table, so no material is looked up for them. The index of
/// a successor after a move of a piece other than a shah is computed from the position's
/// own ([`MoveFrame::index_after_move`]), and after a shah move that keeps the symmetry
/// too ([`MoveFrame::index_after_shah_move`]); after other shah moves the board is
/// encoded.
struct QuietMoves<'a> {
    file: &'a TableFile,
    index: &'a TableIndex,
    /// `None` if the symmetry is ambiguous: then every successor is encoded.
    frame: Option<MoveFrame<'a>>,
    /// The position's board in the colours the successors are stored in.
    board: Board,
    /// Whether that board has colours swapped (and ranks flipped).
    swapped: bool,
    /// The slot of index 0 for the successors' side to move, as stored.
    first_slot: u64,
}

/// One move of an optimal line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineStep {
    pub uci: String,
    /// The position after the move.
    pub fen: String,
    /// The value for the side to move after the move.
    pub value: Value,
    /// How the game ended with this move, if it did.
    pub end: Option<EndReason>,
}

/// The figures of one table, as `info` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// As asked for (White's pieces first), whichever way it is stored.
    pub material: Material,
    pub rules: RuleSet,
    pub wdl_bytes: u64,
    pub dtm_bytes: u64,
    pub white: SideStats,
    pub black: SideStats,
}

/// Whether a lookup may read table files, or answers from memory only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// Open files and decompress blocks as needed.
    Read,
    /// Files already open and blocks already cached only; otherwise no answer.
    Cached,
}

/// One material a table may exist for. Every such material has a slot from the start;
/// `present` says whether a file of it was found in the directory (it is set once and
/// never cleared), so registering a new table needs no change to the map.
struct Slot {
    index: TableIndex,
    present: AtomicBool,
    wdl: OnceLock<TableFile>,
    dtm: OnceLock<TableFile>,
}

impl Slot {
    fn is_present(&self) -> bool {
        self.present.load(Ordering::Acquire)
    }
}

/// How often, at most, a lookup that finds no table lists the directory again.
pub const RESCAN_INTERVAL: Duration = Duration::from_secs(1);

/// Hashes a [`Material`] (a dozen small counts) for the table map, which every probe of
/// every move consults: a multiply-rotate hash (as rustc's FxHash), several times cheaper
/// than the default SipHash. The keys are the tables of a local directory, not input an
/// attacker chooses, so flooding resistance is not needed.
#[derive(Clone, Copy, Default)]
struct BuildMaterialHasher;

#[derive(Default)]
struct MaterialHasher(u64);

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

/// The slot of `pos`, of material `m` as it stands, in the table of `index` (the index of
/// `m`'s stored form): in stored colours, where a symmetric material keeps White to move
/// only. `None` if the board has no index (not a legal position of the material).
pub(crate) fn stored_slot(index: &TableIndex, m: Material, pos: &Position) -> Option<u64> {
    let pos = if m.is_mirrored_form() || (m.is_symmetric() && pos.turn() == Color::Black) {
        pos.swap_colors()
    } else {
        *pos
    };
    let i = index.encode(pos.board())?;
    Some(pos.turn().index() as u64 * index.size() + i)
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
    slots: HashMap<Material, Slot, BuildMaterialHasher>,
    cache_bytes: usize,
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

impl Tablebase {
    /// Lists the tables of `rules` in `dir` (a missing directory holds no tables, until
    /// some are put there). Files are opened when first needed.
    pub fn open(dir: impl AsRef<Path>, rules: RuleSet) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        let slots = Material::all_with_tables(MAX_MEN)
            .into_iter()
            .map(|m| {
                let slot = Slot {
                    index: TableIndex::new(m),
                    present: AtomicBool::new(false),
                    wdl: OnceLock::new(),
                    dtm: OnceLock::new(),
                };
                (m, slot)
            })
            .collect();
        let tb = Tablebase {
            dir,
            rules,
            slots,
            cache_bytes: DEFAULT_CACHE_BYTES,
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
    fn rescan_if_due(&self) -> bool {
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
    fn present_slot(&self, stored: Material) -> Option<&Slot> {
        let slot = self.slots.get(&stored)?;
        if slot.is_present() || (self.rescan_if_due() && slot.is_present()) {
            Some(slot)
        } else {
            None
        }
    }

    /// Registers every table file of the directory. The caller holds `scanning`.
    fn scan(&self) -> Result<(), ProbeError> {
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
            format!(".{}.{DTM_EXT}", self.rules.slug()),
            format!(".{}.{WDL_EXT}", self.rules.slug()),
        ];
        for entry in entries {
            let entry = entry.map_err(|source| ProbeError::Io {
                path: self.dir.clone(),
                source,
            })?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
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

    /// Empties the decompressed-block cache of every open table file (their bound stays).
    /// A long generation calls it between tables: each table reads other sub-tables, and
    /// caches left warm by earlier ones would add up to gigabytes.
    pub fn clear_caches(&self) {
        for slot in self.slots.values() {
            for file in [slot.wdl.get(), slot.dtm.get()].into_iter().flatten() {
                let capacity = file.cache_capacity();
                file.set_cache_capacity(0);
                file.set_cache_capacity(capacity);
            }
        }
    }

    /// Bounds the decompressed-block cache of each table file opened from now on.
    pub fn set_cache_bytes(&mut self, bytes: usize) {
        self.cache_bytes = bytes;
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

    fn file<'a>(
        &self,
        slot: &'a Slot,
        material: Material,
        metric: Metric,
    ) -> Result<&'a TableFile, ProbeError> {
        let cell = match metric {
            Metric::Wdl => &slot.wdl,
            Metric::Dtm => &slot.dtm,
        };
        if let Some(f) = cell.get() {
            return Ok(f);
        }
        let path = table_path(&self.dir, material, self.rules, metric);
        // A missing file of a registered table is named (the other file is there).
        let file = TableFile::open_with_cache(&path, self.cache_bytes)?;
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
        if meta.rules_code != self.rules.code() {
            let theirs = RuleSet::from_code(meta.rules_code).map_or_else(
                || format!("unknown code {}", meta.rules_code),
                |r| r.to_string(),
            );
            return Err(corrupt(format!(
                "wrong rule set: the file was generated for {theirs}, not {}",
                self.rules
            )));
        }
        if meta.material != material.to_string() {
            return Err(corrupt(format!(
                "holds material {}, not {material}",
                meta.material
            )));
        }
        let expected_len = if material.is_symmetric() {
            slot.index.size()
        } else {
            2 * slot.index.size()
        };
        if meta.index_scheme != INDEX_SCHEME || file.len() != expected_len {
            return Err(corrupt(format!(
                "index scheme {} with {} values, expected scheme {INDEX_SCHEME} with {expected_len}",
                meta.index_scheme,
                file.len(),
            )));
        }
        let _ = cell.set(file);
        Ok(cell.get().expect("just set"))
    }

    /// The table slot, the stored material and the slot number of a position that needs a
    /// table.
    fn locate(&self, pos: &Position) -> Result<(&Slot, Material, u64), ProbeError> {
        let m = Material::from_board(pos.board());
        if m.men() > MAX_MEN {
            return Err(ProbeError::TooManyMen { men: m.men() });
        }
        let stored = m.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material: m,
            rules: self.rules,
        })?;
        let s = stored_slot(&slot.index, m, pos)
            .expect("a legal position of the table's material has an index");
        Ok((slot, stored, s))
    }

    /// Every DTM code of the table of `material` (stored form), in slot order, read
    /// whole (see [`TableFile::read_all`]): for a caller that reads a small table often.
    pub fn read_dtm_codes(&self, material: Material) -> Result<Vec<u16>, ProbeError> {
        let slot = self
            .present_slot(material)
            .ok_or(ProbeError::MissingTable {
                material,
                rules: self.rules,
            })?;
        Ok(self.file(slot, material, Metric::Dtm)?.read_all()?)
    }

    /// The value (WDL and DTM) of a position for the side to move.
    pub fn value(&self, pos: &Position) -> Result<Value, ProbeError> {
        Ok(self
            .value_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::value`] from memory only: `Ok(None)` if the answer needs a table file
    /// that is not open yet or a block that is not in the cache (see
    /// [`Tablebase::probe_cached`]).
    pub fn value_cached(&self, pos: &Position) -> Result<Option<Value>, ProbeError> {
        self.value_with(pos, Access::Cached)
    }

    /// The value of a position, or `None` if `access` is [`Access::Cached`] and the
    /// answer is not in memory.
    fn value_with(&self, pos: &Position, access: Access) -> Result<Option<Value>, ProbeError> {
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(Some(v));
        }
        let (slot, stored, s) = self.locate(pos)?;
        let file = match access {
            Access::Read => self.file(slot, stored, Metric::Dtm)?,
            Access::Cached => {
                let Some(file) = slot.dtm.get() else {
                    return Ok(None);
                };
                file
            }
        };
        Self::dtm_value(file, s, access)
    }

    /// The value at slot `s` of a DTM file, or `None` if `access` is [`Access::Cached`]
    /// and its block is not in the cache.
    #[inline]
    fn dtm_value(file: &TableFile, s: u64, access: Access) -> Result<Option<Value>, ProbeError> {
        let code = match access {
            Access::Read => file.get(s)?,
            Access::Cached => match file.get_cached(s)? {
                Some(code) => code,
                None => return Ok(None),
            },
        };
        Self::dtm_code_value(file.path(), s, code).map(Some)
    }

    /// The value of the code at slot `s` of the DTM file at `path`; an error naming the
    /// file if the code is no value.
    #[inline]
    pub(crate) fn dtm_code_value(path: &Path, s: u64, code: u16) -> Result<Value, ProbeError> {
        let value = Value::from_dtm_code(code);
        if code == crate::format::UNUSED || value.to_dtm_code() != Some(code) {
            return Err(ProbeError::Corrupt {
                path: path.to_path_buf(),
                message: format!("value code {code} at index {s} is not a value"),
            });
        }
        Ok(value)
    }

    /// What the quiet moves of `pos` share ([`QuietMoves`]), or `None` if they must be
    /// looked up one by one: no table for the material (the lookups report why), or
    /// `access` is [`Access::Cached`] and the DTM file is not open.
    fn quiet_moves(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<QuietMoves<'_>>, ProbeError> {
        let m = Material::from_board(pos.board());
        if m.men() > MAX_MEN || m.is_decided_by_rules() {
            return Ok(None);
        }
        let stored = m.normalized();
        let Some(slot) = self.slots.get(&stored).filter(|s| s.is_present()) else {
            return Ok(None);
        };
        // as `locate` stores the successors, whose side to move is the other one
        let turn = !pos.turn();
        let swapped = m.is_mirrored_form() || (m.is_symmetric() && turn == Color::Black);
        let board = if swapped {
            pos.board().swap_colors()
        } else {
            *pos.board()
        };
        let frame = slot.index.move_frame(&board);
        let file = match access {
            Access::Read => self.file(slot, stored, Metric::Dtm)?,
            Access::Cached => match slot.dtm.get() {
                Some(file) => file,
                None => return Ok(None),
            },
        };
        let stored_turn = if swapped { !turn } else { turn };
        Ok(Some(QuietMoves {
            file,
            index: &slot.index,
            frame,
            board,
            swapped,
            first_slot: slot.index.slot(stored_turn, 0),
        }))
    }

    /// The DTM slot of the position after `m` (a legal move of `pos`), if it is a quiet
    /// move (then the slot is in `q.file`).
    #[inline]
    fn slot_after(pos: &Position, m: &Move, q: &QuietMoves<'_>) -> Option<u64> {
        if m.is_conversion() {
            return None;
        }
        let (color, from, to) = if q.swapped {
            (!pos.turn(), m.from.flip_vertical(), m.to.flip_vertical())
        } else {
            (pos.turn(), m.from, m.to)
        };
        let by_arithmetic = q.frame.and_then(|frame| {
            if m.role == Role::Shah {
                frame.index_after_shah_move(&q.board, color, to)
            } else {
                let piece = Piece {
                    color,
                    role: m.role,
                };
                Some(frame.index_after_move(&q.board, piece, from, to))
            }
        });
        let i = match by_arithmetic {
            Some(i) => i,
            None => {
                let mut board = q.board;
                board.move_piece(color, m.role, from, to, m.role);
                q.index
                    .encode(&board)
                    .expect("a legal position of the table's material has an index")
            }
        };
        Some(q.first_slot + i)
    }

    /// Win, draw or loss for the side to move, from the (smaller) WDL file.
    ///
    /// A WDL file may store, for a position whose best capture or promotion achieves its
    /// value, any value no better (see [`crate::generate::Generated::wdl_file_values`]);
    /// so unless the file says "win", the position's conversions are probed too and the
    /// better result is the answer.
    pub fn wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        self.wdl_below(pos, Wdl::Win)
    }

    /// The WDL of `pos` if it is below `beta`; otherwise some value at least `beta`
    /// (an alpha-beta search over conversions, which stops as soon as the answer is known
    /// to be at least `beta`).
    fn wdl_below(&self, pos: &Position, beta: Wdl) -> Result<Wdl, ProbeError> {
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(v.wdl());
        }
        let (slot, stored, s) = self.locate(pos)?;
        let file = self.file(slot, stored, Metric::Wdl)?;
        let mut best = match file.get(s)? {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            2 => Wdl::Win,
            code => {
                return Err(ProbeError::Corrupt {
                    path: file.path().to_path_buf(),
                    message: format!("WDL code {code} at index {s} is not a value"),
                });
            }
        };
        if best >= beta {
            return Ok(best);
        }
        let mut error = None;
        pos.for_each_conversion(|m| {
            // the child's value matters only if it is below the mirror of `best`
            match self.wdl_below(&pos.play_unchecked(&m), best.flip()) {
                Ok(v) => {
                    best = best.max(v.flip());
                    best < beta
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(best),
        }
    }

    /// The value, how the game ended (if it has) and every legal move with its value.
    pub fn probe(&self, pos: &Position) -> Result<ProbeResult, ProbeError> {
        Ok(self
            .probe_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::probe`] from memory only: `Ok(None)` if the answer needs a table file
    /// that is not open yet or a block that is not in the cache. It never touches the
    /// disk (no file opened, no page of a mapping read, no block decompressed), so it
    /// takes microseconds and cannot block on I/O: fit to run on an async runtime, with
    /// [`Tablebase::probe`] on a blocking thread as the fallback. Errors that need no file
    /// (a missing table, too many men) are reported as by `probe`.
    pub fn probe_cached(&self, pos: &Position) -> Result<Option<ProbeResult>, ProbeError> {
        self.probe_with(pos, Access::Cached)
    }

    fn probe_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<ProbeResult>, ProbeError> {
        let Some(probe) = self.moves_with(pos, access)? else {
            return Ok(None);
        };
        Ok(Some(ProbeResult {
            fen: pos.fen(),
            material: Material::from_board(pos.board()),
            rules: self.rules,
            value: probe.value,
            end: probe.end,
            moves: probe
                .moves
                .iter()
                .map(|(m, value)| MoveValue {
                    uci: m.to_uci(),
                    value: *value,
                })
                .collect(),
        }))
    }

    /// [`Tablebase::probe`] with the moves as [`Move`]s: no FEN or UCI text written.
    pub fn probe_moves(&self, pos: &Position) -> Result<MoveProbe, ProbeError> {
        Ok(self
            .moves_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::probe_moves`] from memory only, as [`Tablebase::probe_cached`].
    pub fn probe_moves_cached(&self, pos: &Position) -> Result<Option<MoveProbe>, ProbeError> {
        self.moves_with(pos, Access::Cached)
    }

    fn moves_with(&self, pos: &Position, access: Access) -> Result<Option<MoveProbe>, ProbeError> {
        let Some(value) = self.value_with(pos, access)? else {
            return Ok(None);
        };
        // With a bare side the rules may have ended the game though moves remain; without
        // one, it has ended exactly when there is no legal move (see `outcome`).
        let bare = pos.is_bare(Color::White) || pos.is_bare(Color::Black);
        let ended = |moves: &[(Move, Value)]| {
            if bare || moves.is_empty() {
                pos.outcome(self.rules).map(|o| o.reason())
            } else {
                None
            }
        };
        if bare {
            if let Some(end) = ended(&[]) {
                return Ok(Some(MoveProbe {
                    value,
                    end: Some(end),
                    moves: Vec::new(),
                }));
            }
        }
        // The successors of the first `BATCH` quiet moves are looked up together
        // (`get_many`), the others one by one.
        let quiet = self.quiet_moves(pos, access)?;
        let mut moves: Vec<(Move, Value)> = Vec::with_capacity(BATCH / 2);
        let mut slots = [0u64; BATCH];
        let mut slot_of = [u8::MAX; BATCH];
        let mut n = 0;
        let mut failed = None;
        pos.for_each_legal_move(|m| {
            let k = moves.len();
            if k < BATCH {
                if let Some(s) = quiet.as_ref().and_then(|q| Self::slot_after(pos, &m, q)) {
                    slots[n] = s;
                    slot_of[k] = n as u8;
                    n += 1;
                    moves.push((m, Value::Draw));
                    return true;
                }
            }
            match self.value_with(&pos.play_unchecked(&m), access) {
                Ok(Some(v)) => {
                    moves.push((m, v.parent()));
                    true
                }
                other => {
                    failed = Some(other.map(|_| None));
                    false
                }
            }
        });
        if let Some(failed) = failed {
            return failed;
        }
        if let Some(q) = quiet.as_ref().filter(|_| n > 0) {
            let mut codes = [0u16; BATCH];
            if !q
                .file
                .get_many(&slots[..n], &mut codes[..n], access == Access::Read)?
            {
                return Ok(None);
            }
            for (entry, &b) in moves.iter_mut().zip(&slot_of) {
                if b != u8::MAX {
                    let b = usize::from(b);
                    entry.1 = Self::dtm_code_value(q.file.path(), slots[b], codes[b])?.parent();
                }
            }
        }
        let end = ended(&moves);
        Ok(Some(MoveProbe {
            value,
            end,
            moves: sorted(moves),
        }))
    }

    /// An optimal line from `pos` to the end of the game: the winner hurries, the loser
    /// delays. Empty for a draw or a finished game.
    pub fn line(&self, pos: &Position) -> Result<Vec<LineStep>, ProbeError> {
        let mut line = Vec::new();
        let mut pos = *pos;
        let mut value = self.value(&pos)?;
        while value != Value::Draw && pos.outcome(self.rules).is_none() {
            let mut best: Option<(Value, crate::position::Move, Position)> = None;
            for m in pos.legal_moves().iter() {
                let child = pos.play_unchecked(m);
                let v = self.value(&child)?;
                if best
                    .as_ref()
                    .is_none_or(|(b, _, _)| v.parent() > b.parent())
                {
                    best = Some((v, *m, child));
                }
            }
            let Some((v, m, child)) = best else { break };
            if v.parent() != value {
                return Err(ProbeError::Corrupt {
                    path: self.dir.clone(),
                    message: format!(
                        "the best move in {} gives {}, not the position's {value}",
                        Fen::from_position(&pos),
                        v.parent()
                    ),
                });
            }
            line.push(LineStep {
                uci: m.to_uci(),
                fen: Fen::from_position(&child).to_string(),
                value: v,
                end: child.outcome(self.rules).map(|o| o.reason()),
            });
            pos = child;
            value = v;
        }
        Ok(line)
    }

    /// A line of at most `max_plies` moves from a drawn position that keeps the draw:
    /// at each step the first move (in UCI order) that keeps it. A draw has no end to
    /// play to, so the length is the caller's choice. Empty if `pos` is not a draw or
    /// the game has ended.
    pub fn drawing_line(
        &self,
        pos: &Position,
        max_plies: usize,
    ) -> Result<Vec<LineStep>, ProbeError> {
        let mut line = Vec::new();
        let mut pos = *pos;
        while line.len() < max_plies {
            let probe = self.probe_moves(&pos)?;
            if probe.value != Value::Draw || probe.end.is_some() {
                break;
            }
            let Some(&(m, _)) = probe.moves.iter().find(|(_, v)| *v == Value::Draw) else {
                break;
            };
            let child = pos.play_unchecked(&m);
            line.push(LineStep {
                uci: m.to_uci(),
                fen: Fen::from_position(&child).to_string(),
                value: Value::Draw,
                end: child.outcome(self.rules).map(|o| o.reason()),
            });
            pos = child;
        }
        Ok(line)
    }

    /// The figures of one table, for `material` as written (White's pieces first).
    pub fn table_info(&self, material: Material) -> Result<TableInfo, ProbeError> {
        let stored = material.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })?;
        let dtm = self.file(slot, stored, Metric::Dtm)?;
        let wdl = self.file(slot, stored, Metric::Wdl)?;
        let stats: TableStats =
            serde_json::from_slice(&dtm.meta().extra).map_err(|e| ProbeError::Corrupt {
                path: dtm.path().to_path_buf(),
                message: format!("statistics unreadable: {e}"),
            })?;
        let stats = if material.is_mirrored_form() {
            stats.mirrored()
        } else {
            stats
        };
        Ok(TableInfo {
            material,
            rules: self.rules,
            wdl_bytes: wdl.file_len(),
            dtm_bytes: dtm.file_len(),
            white: stats.side(Color::White).clone(),
            black: stats.side(Color::Black).clone(),
        })
    }

    /// The figures of every table here.
    pub fn tables(&self) -> Result<Vec<TableInfo>, ProbeError> {
        self.materials()
            .into_iter()
            .map(|m| self.table_info(m))
            .collect()
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
        Ok(())
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
