//! `shatranj-tb perft FEN DEPTH [--divide]`: count legal move paths.

use std::io::{self, Write};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use shatranj_tb::Position;

use super::UserError;

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// The position: a FEN (at least board and side to move), or `startpos`.
    pub fen: String,
    /// Number of plies (at most 12).
    pub depth: u32,
    /// Print one line per legal move, `UCI COUNT`, then `total N`.
    #[arg(long)]
    pub divide: bool,
    /// Also print the node count, time and nodes per second on stderr.
    #[arg(long)]
    pub stats: bool,
}

/// Deepest perft accepted: from the start position each ply multiplies the move paths
/// (and the time) by about 20, so depth 12 is already far beyond any useful run.
pub const MAX_DEPTH: u32 = 12;

pub fn run(args: &PerftArgs) -> anyhow::Result<()> {
    if args.depth > MAX_DEPTH {
        return Err(UserError::new(format!(
            "depth {} is too deep: perft counts every move path, about 20 times as many a ply; at most {MAX_DEPTH} is accepted",
            args.depth
        ))
        .into());
    }
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
