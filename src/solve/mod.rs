//! The problem solver: proves the shortest forced win from positions too big for the
//! tables (the classical endgame studies, *mansubat*, of 6 to 20 men), searching the
//! moves above the tables and taking every position whose material has a table as an
//! exact, already solved leaf.
//!
//! # What it answers
//! [`solve`] finds, within a bound of `max_plies`, the shortest forced win for the side
//! to move by any end of the game (shah mat, stalemate, bare king, under the table set's
//! rules), every first move that achieves it (the key and any cooks), an optimal main
//! line and a solution tree; or that the side to move loses, and its longest defence; or
//! that no forced win exists within the bound. Distances follow the tables exactly:
//! plies to the end of the game, the winner hurrying and the loser delaying, a bare side
//! that cannot recapture having lost at distance 0 (under `bare-king=counter`). A
//! position covered by a table is answered from it.
//!
//! # How
//! Iterative deepening over exact distance bounds: for `d = 1, 2, 3, ...` the root
//! question is "does the side to move win within `d` plies" (odd `d`) or "does it lose
//! within `d` plies" (even `d`); the first yes is the exact distance, since every smaller
//! bound has been refuted. Each question is an AND/OR search with depth-first proofs
//! ([`search`]): at the attacker's nodes the first winning move ends the search, moves
//! ordered by checks first and then by how few replies they leave; at the defender's
//! nodes the defences that held elsewhere come first near the leaves, and further up
//! checks and captures of the attacker's men, which shrink what is left to refute.
//! Every answer is stored in a transposition table of bounded size as a proven bound
//! ("wins within 9", "does not win within 7"), so each deepening reuses the last one's
//! work and transpositions are searched once.
//!
//! Proof-number search finds deep wins with fewer nodes, but proves no minimality: to
//! show that a win is the shortest and to find *every* key, each shorter bound must be
//! refuted anyway, which is what the deepening does. The root's moves are searched in
//! parallel (each thread of a rayon pool taking the next from a queue, the costliest
//! at the last bound first) over the shared lockless table, which also gives each first
//! move its own answer, so all keys come out of the final iteration at no extra cost.
//! With one thread they are searched in turn on the caller's thread, and no pool is
//! started.

mod json;
mod search;
mod tt;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::fen::Fen;
use crate::material::Material;
use crate::position::{Move, Position};
use crate::probe::{ProbeError, Tablebase};
use crate::rules::{EndReason, RuleSet};
use crate::value::Value;

use search::{Interrupt, Search, Shared, no_move_value};
use tt::TransTable;

/// The default bound on the length of a win, in plies.
pub const DEFAULT_MAX_PLIES: u32 = 30;
/// The largest bound accepted (distances are stored in a byte).
pub const MAX_PLIES: u32 = 250;
/// The default transposition table size, in MiB.
pub const DEFAULT_HASH_MB: usize = 64;
/// The largest transposition table accepted, in MiB.
pub const MAX_HASH_MB: usize = 1 << 14;
/// The default depth of the solution tree, in plies.
pub const DEFAULT_TREE_DEPTH: u32 = 5;
/// Most nodes in a solution tree; beyond, branches are cut (and marked so).
pub const MAX_TREE_NODES: usize = 4000;

/// How to solve.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// Prove wins and losses of at most this many plies (1..=[`MAX_PLIES`]).
    pub max_plies: u32,
    /// Size of the transposition table in MiB (1..=[`MAX_HASH_MB`]).
    pub hash_mb: usize,
    /// Search threads (0: one per core).
    pub threads: usize,
    /// Stop after this long with what is proven so far.
    pub time_limit: Option<Duration>,
    /// Plies of the solution tree to write out (0: none).
    pub tree_depth: u32,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            max_plies: DEFAULT_MAX_PLIES,
            hash_mb: DEFAULT_HASH_MB,
            threads: 0,
            time_limit: None,
            tree_depth: DEFAULT_TREE_DEPTH,
        }
    }
}

/// Why a solve failed.
#[derive(Debug)]
pub enum SolveError {
    /// An option is out of range (the message says which and why).
    InvalidOptions(String),
    /// The transposition table could not be allocated.
    OutOfMemory { mb: usize },
    /// A table could not be read (a damaged file, for example).
    Probe(ProbeError),
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::InvalidOptions(msg) => f.write_str(msg),
            SolveError::OutOfMemory { mb } => write!(
                f,
                "cannot allocate {mb} MiB for the transposition table: use a smaller --hash"
            ),
            SolveError::Probe(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SolveError::Probe(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ProbeError> for SolveError {
    fn from(e: ProbeError) -> SolveError {
        SolveError::Probe(e)
    }
}

/// The verdict for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A forced win, proven shortest.
    Win,
    /// Every move loses; the longest defence is proven.
    Loss,
    /// A draw (only where a table or the rules say so).
    Draw,
    /// No forced win or loss within the bound (or within what the time allowed).
    Unknown,
}

impl Verdict {
    /// `win`, `loss`, `draw` or `unknown`, as in the JSON output.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Win => "win",
            Verdict::Loss => "loss",
            Verdict::Draw => "draw",
            Verdict::Unknown => "unknown",
        }
    }
}

/// A first move that keeps the position's value: for a win, a winning move of the
/// shortest length (the key, and any cooks); for a loss, a longest defence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub mv: Move,
    /// Plies to the end of the game after playing it, counting it.
    pub plies: u32,
}

/// A node of the solution tree: the winner's one answer, or every defence of the loser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    pub position: Position,
    /// The value for the side to move here (`None` if not proven: a cut branch).
    pub value: Option<Value>,
    /// How the game ended here, if it has.
    pub end: Option<EndReason>,
    /// The value is a table's (the search stopped here: the table knows the rest).
    pub table: bool,
    /// The tree was cut here (`tree_depth` or [`MAX_TREE_NODES`] reached).
    pub truncated: bool,
    pub moves: Vec<(Move, TreeNode)>,
}

/// The answer of [`solve`].
#[derive(Clone, Debug)]
pub struct Solution {
    pub position: Position,
    pub rules: RuleSet,
    pub verdict: Verdict,
    /// The proven distance, for a win or a loss.
    pub plies: Option<u32>,
    /// How the main line ends.
    pub end: Option<EndReason>,
    /// Every first move keeping the value, shortest win (or longest defence) first.
    pub keys: Vec<Key>,
    /// An optimal line to the end of the game.
    pub line: Vec<Move>,
    pub tree: Option<TreeNode>,
    /// The root is covered by a table (or decided by the rules): no search was needed.
    pub from_table: bool,
    /// The largest bound within which a win for the side to move was refuted.
    pub no_win_within: Option<u32>,
    /// The largest bound within which a loss for the side to move was refuted.
    pub no_loss_within: Option<u32>,
    /// The bound asked for.
    pub max_plies: u32,
    /// The time limit (or the caller) stopped the search before the bound.
    pub stopped: bool,
    pub nodes: u64,
    pub table_hits: u64,
    pub seconds: f64,
}

impl Solution {
    /// The verdict in words: "White wins in 11 plies by shah mat".
    #[must_use]
    pub fn in_words(&self) -> String {
        let side = self.position.turn();
        let how = |end: Option<EndReason>| match end {
            Some(EndReason::Checkmate) => " by shah mat",
            Some(EndReason::Stalemate) => " by stalemate",
            Some(EndReason::BareKing) => " by bare king",
            None => "",
        };
        let plural = |n: u32| if n == 1 { "ply" } else { "plies" };
        match (self.verdict, self.plies) {
            (Verdict::Win, Some(n)) => {
                format!("{} wins in {n} {}{}", side.name(), plural(n), how(self.end))
            }
            (Verdict::Loss, Some(n)) => format!(
                "{} loses in {n} {}{} (longest defence)",
                side.name(),
                plural(n),
                how(self.end)
            ),
            (Verdict::Draw, _) => "draw".to_string(),
            _ => {
                let mut s = self.no_win_within.map_or_else(
                    || format!("no forced win proved for {}", side.name()),
                    |n| format!("no forced win within {n} {}", plural(n)),
                );
                if self.stopped {
                    s.push_str(&format!(
                        " (stopped by the time limit before the bound of {} plies)",
                        self.max_plies
                    ));
                }
                s
            }
        }
    }
}

/// Told of the search's progress.
pub trait SolveProgress: Sync {
    /// Bound `plies` was refuted (no win or no loss within it) after `nodes` nodes.
    fn depth_done(&self, plies: u32, nodes: u64, elapsed: Duration) {
        let _ = (plies, nodes, elapsed);
    }
}

/// Progress that nobody watches.
pub struct NoProgress;

impl SolveProgress for NoProgress {}

/// Checks the options; the error names the one out of range.
pub fn check_options(opts: &SolveOptions) -> Result<(), SolveError> {
    if opts.max_plies == 0 || opts.max_plies > MAX_PLIES {
        return Err(SolveError::InvalidOptions(format!(
            "the bound on plies must be 1 to {MAX_PLIES}, not {}",
            opts.max_plies
        )));
    }
    if opts.hash_mb == 0 || opts.hash_mb > MAX_HASH_MB {
        return Err(SolveError::InvalidOptions(format!(
            "the hash size must be 1 to {MAX_HASH_MB} MiB, not {}",
            opts.hash_mb
        )));
    }
    if opts.threads > 1024 {
        return Err(SolveError::InvalidOptions(format!(
            "at most 1024 threads, not {}",
            opts.threads
        )));
    }
    Ok(())
}

/// Solves `pos` with the tables of `tb` as exact leaves, under `tb`'s rules. `stop`,
/// when set by another thread, ends the search as the time limit does.
pub fn solve(
    tb: &Tablebase,
    pos: &Position,
    opts: &SolveOptions,
    progress: &dyn SolveProgress,
    stop: &AtomicBool,
) -> Result<Solution, SolveError> {
    check_options(opts)?;
    let start = Instant::now();
    let max_bytes = opts.hash_mb << 20;
    let mut tt = TransTable::with_bytes(INITIAL_TT_BYTES.min(max_bytes), max_bytes)
        .ok_or(SolveError::OutOfMemory { mb: opts.hash_mb })?;
    let deadline = opts.time_limit.map(|t| start + t);
    let rules = tb.rules();
    // a fn, not a closure: each call may borrow another table
    #[allow(clippy::items_after_statements)]
    fn shared<'b>(
        tb: &'b Tablebase,
        tt: &'b TransTable,
        stop: &'b AtomicBool,
        deadline: Option<Instant>,
        counters: &'b (AtomicU64, AtomicU64),
    ) -> Shared<'b> {
        Shared {
            tb,
            rules: tb.rules(),
            tt,
            stop,
            deadline,
            nodes: &counters.0,
            table_hits: &counters.1,
        }
    }
    let counters = (AtomicU64::new(0), AtomicU64::new(0));
    let mut solution = Solution {
        position: *pos,
        rules: tb.rules(),
        verdict: Verdict::Unknown,
        plies: None,
        end: None,
        keys: Vec::new(),
        line: Vec::new(),
        tree: None,
        from_table: false,
        no_win_within: None,
        no_loss_within: None,
        max_plies: opts.max_plies,
        stopped: false,
        nodes: 0,
        table_hits: 0,
        seconds: 0.0,
    };

    let root_value = {
        let root = shared(tb, &tt, stop, deadline, &counters);
        let mut s = Search::new(&root);
        let leaf = s.leaf(pos).map_err(interrupt_error)?;
        match leaf {
            Some(v) => Some(v),
            None if !pos.has_legal_move() => Some(no_move_value(pos, rules)),
            None => None,
        }
    };
    let value = match root_value {
        Some(v) => {
            solution.from_table = true;
            solution.keys =
                root_keys_from_values(&shared(tb, &tt, stop, deadline, &counters), pos, v)?;
            Some(v)
        }
        None => {
            // One thread searches on the caller's thread: no pool to start.
            let threads = match opts.threads {
                0 => std::thread::available_parallelism().map_or(1, usize::from),
                n => n,
            };
            let pool = if threads > 1 {
                Some(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .map_err(|e| {
                            SolveError::InvalidOptions(format!("cannot start threads: {e}"))
                        })?,
                )
            } else {
                None
            };
            let mut root = RootMoves::new(pos);
            let mut value = None;
            let mut next = Some(1);
            while let Some(from) = next {
                let step = shared(tb, &tt, stop, deadline, &counters);
                let (v, resume) = deepen(
                    &step,
                    pool.as_ref(),
                    from,
                    &mut root,
                    opts,
                    progress,
                    &mut solution,
                )?;
                value = v;
                next = resume;
                if let Some(bigger) = resume.and_then(|_| grow_to(&tt, max_bytes, &counters.0)) {
                    tt = bigger;
                }
            }
            value
        }
    };

    // The line and the tree read what the search proved; they run without a deadline
    // (they only look up bounds the table holds, or re-prove short ones).
    let no_stop = AtomicBool::new(false);
    let explain = shared(tb, &tt, &no_stop, None, &counters);
    if let Some(v) = value {
        solution.verdict = match v {
            Value::Win(_) => Verdict::Win,
            Value::Loss(_) => Verdict::Loss,
            Value::Draw => Verdict::Draw,
        };
        solution.plies = v.dtm();
        if v != Value::Draw {
            let mut s = Search::new(&explain);
            let (line, end) = main_line(&mut s, pos, v).map_err(interrupt_error)?;
            solution.line = line;
            solution.end = end;
            if opts.tree_depth > 0 {
                let mut budget = MAX_TREE_NODES;
                solution.tree = Some(
                    tree(&mut s, pos, v, opts.tree_depth, &mut budget).map_err(interrupt_error)?,
                );
            }
        } else {
            solution.end = pos.outcome(rules).map(|o| o.reason());
        }
    }
    solution.nodes = counters.0.load(Ordering::Relaxed);
    solution.table_hits = counters.1.load(Ordering::Relaxed);
    solution.seconds = start.elapsed().as_secs_f64();
    Ok(solution)
}

fn interrupt_error(e: Interrupt) -> SolveError {
    match e {
        Interrupt::Probe(e) => SolveError::Probe(e),
        // only the explanation and the root's leaf call this: they run without deadline
        // or node limit, and nobody else holds their stop flag
        Interrupt::Stopped => SolveError::InvalidOptions("stopped".to_string()),
    }
}

/// The root's moves, sorted by UCI name (the order keys are listed in at equal length).
fn root_moves(pos: &Position) -> Vec<(Move, Position)> {
    let mut moves: Vec<(Move, Position)> = pos
        .legal_moves()
        .iter()
        .map(|m| (*m, pos.play_unchecked(m)))
        .collect();
    moves.sort_by_key(|(m, _)| m.to_uci());
    moves
}

/// The keys of a root whose value is known without search (a table, the rules): the
/// moves keeping it.
fn root_keys_from_values(
    shared: &Shared<'_>,
    pos: &Position,
    v: Value,
) -> Result<Vec<Key>, SolveError> {
    if v == Value::Draw {
        return Ok(Vec::new());
    }
    let mut s = Search::new(shared);
    let mut keys = Vec::new();
    for (m, child) in root_moves(pos) {
        let cv = s.leaf(&child).map_err(interrupt_error)?;
        if let Some(cv) = cv {
            if cv.parent() == v {
                keys.push(Key {
                    mv: m,
                    plies: v.dtm().unwrap_or(0),
                });
            }
        }
    }
    Ok(keys)
}

/// The iterative deepening at the root. Fills the solution's bounds and keys; the
/// exact value if one was proven within the bound.
///
/// The bounds go up one ply at a time: a win is asked for at odd bounds, a loss at even
/// ones, so the first yes is exact whichever side is winning. (Running the two questions
/// side by side under node budgets, so that a won position would not pay for refuting
/// losses, was tried: the interrupted steps lost more work than the refutations cost,
/// which stay a fraction of the win proofs.)
fn deepen(
    shared: &Shared<'_>,
    pool: Option<&rayon::ThreadPool>,
    from: u32,
    root: &mut RootMoves,
    opts: &SolveOptions,
    progress: &dyn SolveProgress,
    solution: &mut Solution,
) -> Result<(Option<Value>, Option<u32>), SolveError> {
    let start = Instant::now();
    for d in from..=opts.max_plies {
        let mut step = |parallel| {
            if d % 2 == 1 {
                win_step(shared, root, d, parallel)
            } else {
                loss_step(shared, root, d, parallel)
            }
        };
        let outcome = match pool {
            Some(pool) => pool.install(|| step(true)),
            None => step(false),
        };
        match outcome {
            Ok(Some((v, keys))) => {
                solution.keys = keys;
                return Ok((Some(v), None));
            }
            Ok(None) => {
                if d % 2 == 1 {
                    solution.no_win_within = Some(d);
                } else {
                    solution.no_loss_within = Some(d);
                }
                progress.depth_done(d, shared.nodes.load(Ordering::Relaxed), start.elapsed());
                if d < opts.max_plies && wants_growth(shared.tt, shared.nodes) {
                    return Ok((None, Some(d + 1)));
                }
            }
            Err(Interrupt::Stopped) => {
                solution.stopped = true;
                return Ok((None, None));
            }
            Err(Interrupt::Probe(e)) => return Err(e.into()),
        }
    }
    Ok((None, None))
}

/// The transposition table starts small (a small problem then touches little memory)
/// and grows between two steps of the deepening, up to `--hash`, once the nodes searched
/// so far outnumber its entries.
const INITIAL_TT_BYTES: usize = 64 << 10;

fn wants_growth(tt: &TransTable, nodes: &AtomicU64) -> bool {
    nodes.load(Ordering::Relaxed) > tt.entries() as u64 && !tt.is_full_size()
}

/// A table four times larger (at most `max_bytes`) holding what `tt` holds, if `tt`
/// wants to grow and the memory can be had.
fn grow_to(tt: &TransTable, max_bytes: usize, nodes: &AtomicU64) -> Option<TransTable> {
    if nodes.load(Ordering::Relaxed) <= tt.entries() as u64 {
        return None;
    }
    let bytes = (tt.bytes() * 4).min(max_bytes);
    (bytes > tt.bytes()).then(|| tt.grown(bytes)).flatten()
}

/// The root's moves, with what each cost the last step of the deepening.
struct RootMoves {
    /// The moves and the positions after them, in the order keys are listed in.
    children: Vec<(Move, Position)>,
    /// The nodes each move's search took at the last bound it was searched to.
    work: Vec<u64>,
}

impl RootMoves {
    fn new(pos: &Position) -> RootMoves {
        let children = root_moves(pos);
        let work = vec![0; children.len()];
        RootMoves { children, work }
    }

    /// Searches the position after each root move with `question`, the moves that cost
    /// most at the last step first, until one answers `Ok(stop_at)`, or an error: the
    /// answer of each move searched (in the moves' own order), `None` for the others.
    ///
    /// In parallel each thread of the current pool takes the next move as it finishes
    /// one, so the longest searches start first and the threads finish together (the
    /// longest processing time first rule); a move's search runs on one thread.
    fn search_each(
        &mut self,
        shared: &Shared<'_>,
        parallel: bool,
        stop_at: Option<bool>,
        question: impl Fn(&mut Search<'_, '_>, &Position) -> search::Result<bool> + Sync,
    ) -> Vec<Option<search::Result<bool>>> {
        let mut order: Vec<usize> = (0..self.children.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.work[i]));
        let next = AtomicUsize::new(0);
        let done = AtomicBool::new(false);
        let answers: Vec<Mutex<Option<Searched>>> =
            self.children.iter().map(|_| Mutex::new(None)).collect();
        let worker = || {
            while !done.load(Ordering::Relaxed) {
                let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                let mut s = Search::new(shared);
                let answer = question(&mut s, &self.children[i].1);
                if answer.as_ref().map_or(true, |&a| Some(a) == stop_at) {
                    done.store(true, Ordering::Relaxed);
                }
                let nodes = s.searched();
                *answers[i].lock().unwrap_or_else(PoisonError::into_inner) = Some((answer, nodes));
            }
        };
        if parallel {
            rayon::scope(|scope| {
                for _ in 0..rayon::current_num_threads() {
                    scope.spawn(|_| worker());
                }
            });
        } else {
            worker();
        }
        answers
            .into_iter()
            .zip(self.work.iter_mut())
            .map(|(slot, work)| {
                let (answer, nodes) = slot.into_inner().unwrap_or_else(PoisonError::into_inner)?;
                *work = nodes;
                Some(answer)
            })
            .collect()
    }
}

/// A root move's answer and the nodes its search took.
type Searched = (search::Result<bool>, u64);

/// Does a root move leave the opponent lost within `d - 1` plies? The value and every
/// such move if so.
fn win_step(
    shared: &Shared<'_>,
    root: &mut RootMoves,
    d: u32,
    parallel: bool,
) -> search::Result<Option<(Value, Vec<Key>)>> {
    let wins = root.search_each(shared, parallel, None, |s, child| {
        s.lose_within(child, d - 1)
    });
    let mut keys = Vec::new();
    for ((m, _), w) in root.children.iter().zip(wins) {
        // every move is searched unless one fails with an error
        if w.transpose()? == Some(true) {
            keys.push(Key { mv: *m, plies: d });
        }
    }
    Ok((!keys.is_empty()).then_some((Value::Win(d), keys)))
}

/// Does every root move let the opponent win within `d - 1` plies? The value and the
/// longest defences if so.
fn loss_step(
    shared: &Shared<'_>,
    root: &mut RootMoves,
    d: u32,
    parallel: bool,
) -> search::Result<Option<(Value, Vec<Key>)>> {
    // (each first move gets a search of its own, with its own killer defences, as the
    // threads do: killers carried from one first move to the next were found to mislead)
    let wins = root.search_each(shared, parallel, Some(false), |s, child| {
        s.win_within(child, d - 1)
    });
    // a move the opponent does not win against, or an error, ended the search
    for w in wins.into_iter().flatten() {
        if !w? {
            return Ok(None);
        }
    }
    // the longest defences: those the opponent cannot win against within d - 3
    let mut s = Search::new(shared);
    let mut keys = Vec::new();
    for (m, child) in &root.children {
        if d < 3 || !s.win_within(child, d - 3)? {
            keys.push(Key { mv: *m, plies: d });
        }
    }
    Ok(Some((Value::Loss(d), keys)))
}

/// The exact value of `child`, a position after a move from a position of exact value
/// `parent`, if that move keeps the parent's value or the parent is lost (then every
/// move's value is wanted); `None` for a move of a won position that wins slower or not
/// at all.
fn child_value(
    s: &mut Search<'_, '_>,
    child: &Position,
    parent: Value,
) -> search::Result<Option<Value>> {
    if let Some(cv) = s.leaf(child)? {
        return Ok(Some(cv));
    }
    if !child.has_legal_move() {
        return Ok(Some(no_move_value(child, s.rules())));
    }
    match parent {
        // The child cannot lose faster than in k - 1, or the parent would win faster.
        Value::Win(k) => Ok(s.lose_within(child, k - 1)?.then_some(Value::Loss(k - 1))),
        // Every move of a lost position lets the opponent win within k - 1: find how fast.
        Value::Loss(k) => {
            let mut d = 1;
            while d < k {
                if s.win_within(child, d)? {
                    return Ok(Some(Value::Win(d)));
                }
                d += 2;
            }
            Ok(None)
        }
        Value::Draw => Ok(None),
    }
}

/// The moves of `pos` that keep its exact value `v` (for a win, those winning as fast;
/// for a loss, the longest defences), with the position and value each leads to, in the
/// order of their UCI names.
fn best_moves(
    s: &mut Search<'_, '_>,
    pos: &Position,
    v: Value,
) -> search::Result<Vec<(Move, Position, Value)>> {
    let mut best = Vec::new();
    for (m, child) in root_moves(pos) {
        if let Some(cv) = child_value(s, &child, v)? {
            if cv.parent() == v {
                best.push((m, child, cv));
            }
        }
    }
    Ok(best)
}

/// An optimal line from `pos` of value `v` to the end of the game, and how it ends.
fn main_line(
    s: &mut Search<'_, '_>,
    pos: &Position,
    v: Value,
) -> search::Result<(Vec<Move>, Option<EndReason>)> {
    let mut line = Vec::new();
    let mut pos = *pos;
    let mut v = v;
    loop {
        if let Some(o) = pos.outcome(s.rules()) {
            return Ok((line, Some(o.reason())));
        }
        let Some((m, child, cv)) = best_moves(s, &pos, v)?.into_iter().next() else {
            // cannot happen for a proven value; end the line rather than loop
            return Ok((line, None));
        };
        line.push(m);
        pos = child;
        v = cv;
    }
}

/// The solution tree below `pos` of value `v`, `depth` plies deep: at the winner's
/// nodes its fastest move (the first by UCI name), at the loser's every defence, the
/// longest first.
fn tree(
    s: &mut Search<'_, '_>,
    pos: &Position,
    v: Value,
    depth: u32,
    budget: &mut usize,
) -> search::Result<TreeNode> {
    *budget = budget.saturating_sub(1);
    let end = pos.outcome(s.rules()).map(|o| o.reason());
    let table = end.is_none() && s.is_table_position(pos);
    let mut node = TreeNode {
        position: *pos,
        value: Some(v),
        end,
        table,
        truncated: false,
        moves: Vec::new(),
    };
    if end.is_some() || table || v == Value::Draw {
        return Ok(node);
    }
    if depth == 0 || *budget == 0 {
        node.truncated = true;
        return Ok(node);
    }
    let next: Vec<(Move, Position, Option<Value>)> = match v {
        Value::Win(_) => best_moves(s, pos, v)?
            .into_iter()
            .take(1)
            .map(|(m, child, cv)| (m, child, Some(cv)))
            .collect(),
        _ => {
            let mut all = Vec::new();
            for (m, child) in root_moves(pos) {
                let cv = child_value(s, &child, v)?;
                all.push((m, child, cv));
            }
            all.sort_by_key(|(_, _, cv)| std::cmp::Reverse(cv.map(Value::parent)));
            all
        }
    };
    for (m, child, cv) in next {
        let sub = match cv {
            Some(cv) => tree(s, &child, cv, depth - 1, budget)?,
            None => TreeNode {
                position: child,
                value: None,
                end: None,
                table: false,
                truncated: true,
                moves: Vec::new(),
            },
        };
        node.moves.push((m, sub));
    }
    Ok(node)
}

/// The position in FEN (for output).
#[must_use]
pub fn fen_of(pos: &Position) -> String {
    Fen::from_position(pos).to_string()
}

/// Whether `material` has a table here (or needs none), so that `solve` answers from it.
#[must_use]
pub fn covered(tb: &Tablebase, material: Material) -> bool {
    material.is_decided_by_rules() || tb.has_table(material)
}
