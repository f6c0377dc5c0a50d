//! `shatranj-tb solve FEN`: prove the shortest forced win (or the longest defence) from a
//! position of any size, with the tables as exact leaves.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;
use indicatif::{HumanCount, ProgressBar, ProgressStyle};
use shatranj_tb::Value;
use shatranj_tb::solve::{
    self, DEFAULT_HASH_MB, DEFAULT_MAX_PLIES, DEFAULT_TREE_DEPTH, Solution, SolveError,
    SolveOptions, SolveProgress, TreeNode,
};

use super::UserError;
use super::common::{CacheArgs, TablesArgs, parse_fen};
use super::probe::board_diagram;

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The position: a FEN (at least board and side to move), of any number of men.
    pub fen: String,
    /// Prove wins (and losses) of at most this many plies.
    #[arg(long, default_value_t = DEFAULT_MAX_PLIES, value_name = "N")]
    pub plies: u32,
    #[command(flatten)]
    pub tables: TablesArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = DEFAULT_HASH_MB, value_name = "MB")]
    pub hash: usize,
    /// Search threads (default: one per core).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// Stop after this many seconds with what is proven so far.
    #[arg(long, value_name = "SECS")]
    pub time: Option<f64>,
    /// Plies of the solution tree to print.
    #[arg(long, default_value_t = DEFAULT_TREE_DEPTH, value_name = "N")]
    pub tree_depth: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A spinner on a terminal saying how deep the proof has come.
struct Spinner(ProgressBar);

impl SolveProgress for Spinner {
    fn depth_done(&self, plies: u32, nodes: u64, _elapsed: Duration) {
        let secs = self.0.elapsed().as_secs_f64().max(1e-3);
        let side = if plies % 2 == 1 { "win" } else { "loss" };
        self.0.set_message(format!(
            "no {side} within {plies} plies; {} nodes, {} nodes/s",
            HumanCount(nodes),
            HumanCount((nodes as f64 / secs) as u64)
        ));
    }
}

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let pos = parse_fen(&args.fen)?;
    let time_limit = match args.time {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t <= 1e7 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(UserError::new(format!(
                "--time must be a positive number of seconds, not {t}"
            ))
            .into());
        }
    };
    let opts = SolveOptions {
        max_plies: args.plies,
        hash_mb: args.hash,
        threads: args.threads,
        time_limit,
        tree_depth: args.tree_depth,
    };
    solve::check_options(&opts).map_err(|e| UserError::new(e.to_string()))?;
    let tb = args.tables.open_with(args.cache)?;
    let bar = if std::io::stderr().is_terminal() && !args.json {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} solving [{elapsed}] {msg}")
                .expect("a valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let result = solve::solve(&tb, &pos, &opts, &Spinner(bar.clone()), &stop);
    bar.finish_and_clear();
    let solution = result.map_err(|e| match e {
        SolveError::Probe(e) => anyhow::Error::new(e),
        other => UserError::new(other.to_string()).into(),
    })?;
    if args.json {
        println!("{}", serde_json::to_string(&solution.to_json())?);
    } else {
        print!("{}", solution_text(&solution));
    }
    Ok(())
}

/// The value for the side to move, in words.
fn value_words(v: Option<Value>) -> String {
    match v {
        Some(Value::Win(d)) => format!("wins in {d}"),
        Some(Value::Loss(d)) => format!("loses in {d}"),
        Some(Value::Draw) => "draw".to_string(),
        None => "not proven".to_string(),
    }
}

/// The text output of `solve`.
pub fn solution_text(s: &Solution) -> String {
    let mut out = String::new();
    out.push_str(&board_diagram(&s.position));
    let _ = writeln!(out, "{}", s.in_words());
    if s.from_table {
        let _ = writeln!(out, "(answered by the tables: no search needed)");
    }
    if !s.keys.is_empty() {
        let what = match s.verdict {
            solve::Verdict::Loss => "Longest defences",
            _ if s.keys.len() == 1 => "Key (unique)",
            _ => "Keys (every first move winning as fast)",
        };
        let keys: Vec<String> = s
            .keys
            .iter()
            .map(|k| {
                format!(
                    "{} {} ({} plies)",
                    s.position.san(&k.mv),
                    k.mv.to_uci(),
                    k.plies
                )
            })
            .collect();
        let _ = writeln!(out, "{what}: {}", keys.join(", "));
    }
    if !s.line.is_empty() {
        let line: Vec<String> = s.line.iter().map(|m| m.to_uci()).collect();
        let end = s.end.map(|e| format!(" ({e})")).unwrap_or_default();
        let _ = writeln!(out, "Main line: {}{end}", s.line_text());
        let _ = writeln!(out, "      UCI: {}", line.join(" "));
    }
    if let Some(tree) = &s.tree {
        if !tree.moves.is_empty() {
            let _ = writeln!(
                out,
                "Solution tree (the winner's answer, every defence of the loser):"
            );
            tree_text(&mut out, tree, 1);
        }
    }
    let rate = s.nodes as f64 / s.seconds.max(1e-6);
    let _ = writeln!(
        out,
        "{} nodes, {} table probes, {:.2} s ({} nodes/s)",
        HumanCount(s.nodes),
        HumanCount(s.table_hits),
        s.seconds,
        HumanCount(rate as u64)
    );
    out
}

fn tree_text(out: &mut String, node: &TreeNode, indent: usize) {
    for (m, child) in &node.moves {
        let mut note = format!(
            "{} to move {}",
            child.position.turn().name(),
            value_words(child.value)
        );
        if let Some(end) = child.end {
            let _ = write!(note, ", {end}");
        }
        if child.table {
            note.push_str(", table");
        }
        if child.truncated && child.end.is_none() && !child.table {
            note.push_str(", ...");
        }
        let _ = writeln!(
            out,
            "{:width$}{:<7} {:<6} {note}",
            "",
            node.position.san(m),
            m.to_uci(),
            width = indent * 2
        );
        tree_text(out, child, indent + 1);
    }
}
