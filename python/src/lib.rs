//! The Python module `shatranj_tb` (its native part, `shatranj_tb._native`): a
//! [`Tablebase`] over a directory of table files, answering for FENs.
//!
//! Every probe releases the GIL, so Python threads probe in parallel. Errors become
//! Python exceptions: `ValueError` for a bad FEN or an illegal position (or rule set),
//! `LookupError` for a missing table, `OSError` for a damaged or unreadable file.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use pyo3::exceptions::{PyFileNotFoundError, PyLookupError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shatranj_tb::probe::{LineStep, ProbeError, Tablebase as Tables};
use shatranj_tb::solve;
use shatranj_tb::{FenError, Position, RuleSet, Wdl};

/// Why a call failed, before it becomes a Python exception (built without the GIL).
enum Error {
    Fen(FenError),
    Probe(ProbeError),
    /// The solver's options are out of range, or its table cannot be had.
    Solve(String),
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Fen(e) => PyValueError::new_err(e.to_string()),
            Error::Probe(e @ (ProbeError::MissingTable { .. } | ProbeError::TooManyMen { .. })) => {
                PyLookupError::new_err(e.to_string())
            }
            Error::Probe(e @ (ProbeError::Corrupt { .. } | ProbeError::Io { .. })) => {
                PyOSError::new_err(e.to_string())
            }
            Error::Solve(message) => PyValueError::new_err(message),
        }
    }
}

fn parse(fen: &str) -> Result<Position, Error> {
    Position::from_fen(fen).map_err(Error::Fen)
}

fn wdl_int(w: Wdl) -> i8 {
    match w {
        Wdl::Win => 1,
        Wdl::Draw => 0,
        Wdl::Loss => -1,
    }
}

/// A tables directory for one rule set.
///
/// `Tablebase(path, rules=None, cache_mb=None)`: `path` is the directory of table files,
/// `rules` a rule set such as `"bare-king=counter,stalemate=loss"` (None for that
/// default), `cache_mb` the memory in MiB the decompressed blocks of all its tables may
/// take together (None for 1024; 0 keeps none). Only the directory is listed here; each
/// table file is opened and checked on first use. Safe to share between threads.
#[pyclass(module = "shatranj_tb", frozen)]
struct Tablebase {
    tb: Tables,
}

#[pymethods]
impl Tablebase {
    #[new]
    #[pyo3(signature = (path, rules = None, cache_mb = None))]
    fn new(path: PathBuf, rules: Option<&str>, cache_mb: Option<usize>) -> PyResult<Tablebase> {
        let rules = match rules {
            None => RuleSet::default(),
            Some(r) => r
                .parse::<RuleSet>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        };
        if !path.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "tables directory {} does not exist or is not a directory",
                path.display()
            )));
        }
        let tb = Tables::open(&path, rules).map_err(Error::Probe)?;
        if let Some(mb) = cache_mb {
            tb.set_cache_bytes(mb.saturating_mul(1 << 20));
        }
        Ok(Tablebase { tb })
    }

    /// The cache of decompressed blocks: a dict of `capacity` (its bound in bytes),
    /// `resident_bytes` (held now, never above the bound), `peak_bytes` (the most held
    /// at once) and `blocks` (held now).
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.tb.cache_stats();
        let d = PyDict::new(py);
        d.set_item("capacity", stats.capacity)?;
        d.set_item("resident_bytes", stats.resident_bytes)?;
        d.set_item("peak_bytes", stats.peak_bytes)?;
        d.set_item("blocks", stats.blocks)?;
        Ok(d)
    }

    /// The tables directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.tb.dir().to_path_buf()
    }

    /// The rule set, as `"bare-king=counter,stalemate=loss"`.
    #[getter]
    fn rules(&self) -> &'static str {
        self.tb.rules().name()
    }

    /// The tables here (stored form, e.g. `"KRvKQ"`), smaller ones first.
    fn materials(&self) -> Vec<String> {
        self.tb
            .materials()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Win (1), draw (0) or loss (-1) for the side to move. The fast path: reads the small
    /// WDL files only (and the smaller tables for captures).
    fn wdl(&self, py: Python<'_>, fen: &str) -> PyResult<i8> {
        let tb = &self.tb;
        let w = py.detach(|| {
            let pos = parse(fen)?;
            tb.wdl(&pos).map_err(Error::Probe)
        })?;
        Ok(wdl_int(w))
    }

    /// Plies to the end of the game under perfect play (the winner hurrying, the loser
    /// delaying), 0 if it has ended, None for a draw.
    fn dtm(&self, py: Python<'_>, fen: &str) -> PyResult<Option<u32>> {
        let tb = &self.tb;
        let v = py.detach(|| {
            let pos = parse(fen)?;
            tb.value(&pos).map_err(Error::Probe)
        })?;
        Ok(v.dtm())
    }

    /// The DTZ for the side to move, under the move rule of the rule set: the plies to
    /// the next zeroing move (a capture or a pawn move) or to the end of the game, the
    /// winner hurrying to a zeroing move that keeps the win, the loser delaying it;
    /// positive for a win (cursed or not), negative for a loss, 0 for a draw or a finished
    /// game. Reads the DTZ file (`MATERIAL.RULES.tbz`): LookupError without one.
    fn dtz(&self, py: Python<'_>, fen: &str) -> PyResult<i64> {
        let tb = &self.tb;
        let d = py.detach(|| {
            let pos = parse(fen)?;
            tb.dtz(&pos).map_err(Error::Probe)
        })?;
        Ok(d.signed())
    }

    /// The result for the side to move under the move rule of the rule set: `"win"`,
    /// `"cursed-win"` (won, but not within the move rule), `"draw"`, `"blessed-loss"` (lost,
    /// but saved by the move rule) or `"loss"` (only the plain three under
    /// `move-rule=none`). From the DTZ file, as `dtz()`.
    fn category(&self, py: Python<'_>, fen: &str) -> PyResult<&'static str> {
        let tb = &self.tb;
        let d = py.detach(|| {
            let pos = parse(fen)?;
            tb.dtz(&pos).map_err(Error::Probe)
        })?;
        Ok(d.category.as_str())
    }

    /// The value and every legal move with its value, best first: a dict with the fields
    /// of `shatranj-tb probe --json` (fen, material, rules, wdl, dtm, dtz, category, end,
    /// best_move, moves[{uci, san, wdl, dtm, dtz, zeroing}]). `dtz` and `category` are
    /// None, and each move's `dtz` too, where the table has no DTZ file; a move's `dtz` is
    /// the DTZ for the side that plays it, counted from before the move.
    fn probe<'py>(&self, py: Python<'py>, fen: &str) -> PyResult<Bound<'py, PyAny>> {
        let tb = &self.tb;
        // The same object as the command line's: built once, in the library.
        let json: String = py.detach(|| {
            let pos = parse(fen)?;
            let r = tb.probe(&pos).map_err(Error::Probe)?;
            Ok::<_, Error>(r.to_json(&pos).to_string())
        })?;
        py.import("json")?.call_method1("loads", (json,))
    }

    /// An optimal line to the end of the game (the winner hurrying, the loser delaying):
    /// a list of {uci, fen, wdl, dtm, end}, each the position after the move from its
    /// side to move's view; empty for a draw or a finished game.
    fn line<'py>(&self, py: Python<'py>, fen: &str) -> PyResult<Bound<'py, PyList>> {
        let tb = &self.tb;
        let steps: Vec<LineStep> = py.detach(|| {
            let pos = parse(fen)?;
            tb.line(&pos).map_err(Error::Probe)
        })?;
        let out = PyList::empty(py);
        for s in &steps {
            let item = PyDict::new(py);
            item.set_item("uci", &s.uci)?;
            item.set_item("fen", &s.fen)?;
            item.set_item("wdl", s.value.wdl().as_str())?;
            item.set_item("dtm", s.value.dtm())?;
            item.set_item("end", s.end.map(|e| e.as_str()))?;
            out.append(item)?;
        }
        Ok(out)
    }

    /// Proves the shortest forced win (or the longest defence) of the side to move
    /// within `plies`, searching above the tables (any number of men): a dict with the
    /// fields of `shatranj-tb solve --json` (result, plies, end, keys, line, tree, proved,
    /// nodes, ...). `time` stops the search after so many seconds with what is proven.
    #[pyo3(signature = (fen, plies = 30, time = None, hash_mb = 64, threads = 0, tree_depth = 5))]
    #[allow(clippy::too_many_arguments)]
    fn solve<'py>(
        &self,
        py: Python<'py>,
        fen: &str,
        plies: u32,
        time: Option<f64>,
        hash_mb: usize,
        threads: usize,
        tree_depth: u32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tb = &self.tb;
        let json: String = py.detach(|| {
            let pos = parse(fen)?;
            let time_limit = match time {
                None => None,
                Some(t) if t.is_finite() && t > 0.0 => {
                    Some(std::time::Duration::from_secs_f64(t.min(1e7)))
                }
                Some(t) => {
                    return Err(Error::Solve(format!(
                        "time must be a positive number of seconds, not {t}"
                    )));
                }
            };
            let opts = solve::SolveOptions {
                max_plies: plies,
                hash_mb,
                threads,
                time_limit,
                tree_depth,
            };
            let stop = AtomicBool::new(false);
            let s =
                solve::solve(tb, &pos, &opts, &solve::NoProgress, &stop).map_err(|e| match e {
                    solve::SolveError::Probe(e) => Error::Probe(e),
                    other => Error::Solve(other.to_string()),
                })?;
            Ok(s.to_json().to_string())
        })?;
        py.import("json")?.call_method1("loads", (json,))
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase({:?}, rules={:?})",
            self.tb.dir().display().to_string(),
            self.tb.rules().name()
        )
    }
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tablebase>()?;
    m.add("WIN", 1)?;
    m.add("DRAW", 0)?;
    m.add("LOSS", -1)?;
    m.add("DEFAULT_RULES", RuleSet::default().name())?;
    Ok(())
}
