//! `shatranj-tb perft FEN DEPTH [--divide]`: count legal move paths.

use std::io::{self, Write};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use shatranj_tb::Position;

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// The position: a FEN (at least board and side to move), or `startpos`.
    pub fen: String,
    /// Number of plies.
    pub depth: u32,
    /// Print one line per legal move, `UCI COUNT`, then `total N`.
    #[arg(long)]
    pub divide: bool,
    /// Also print the node count, time and nodes per second on stderr.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(args: &PerftArgs) -> anyhow::Result<()> {
    let pos = Position::from_fen(&args.fen).with_context(|| format!("FEN '{}'", args.fen))?;
    let start = Instant::now();
    let mut out = io::stdout().lock();
    let total = if args.divide && args.depth > 0 {
        let mut rows: Vec<(String, u64)> = pos
            .legal_moves()
            .iter()
            .map(|m| (m.to_uci(), pos.play_unchecked(m).perft(args.depth - 1)))
            .collect();
        rows.sort();
        for (uci, n) in &rows {
            writeln!(out, "{uci} {n}")?;
        }
        let total = rows.iter().map(|(_, n)| n).sum();
        writeln!(out, "total {total}")?;
        total
    } else {
        let total = pos.perft(args.depth);
        writeln!(out, "{total}")?;
        total
    };
    out.flush()?;
    if args.stats {
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "perft {}: {total} nodes in {secs:.3} s, {:.1} M nodes/s",
            args.depth,
            total as f64 / secs.max(1e-9) / 1e6
        );
    }
    Ok(())
}
