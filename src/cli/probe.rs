//! `shatranj-tb probe FEN`: the value of a position and of every move.

use std::fmt::Write as _;

use clap::Args;
use shatranj_tb::probe::ProbeResult;
use shatranj_tb::{Color, Position, Value};

use super::common::{CacheArgs, TablesArgs, lookup_error, parse_fen, warn_of_damaged_files};

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The position: a FEN (at least board and side to move).
    pub fen: String,
    #[command(flatten)]
    pub tables: TablesArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &ProbeArgs) -> anyhow::Result<()> {
    let pos = parse_fen(&args.fen)?;
    let tb = args.tables.open_with(args.cache)?;
    let r = tb.probe(&pos).map_err(|e| lookup_error(e, &args.tables))?;
    warn_of_damaged_files(&tb, &pos);
    if args.json {
        println!("{}", serde_json::to_string(&r.to_json(&pos))?);
    } else {
        let sans = r
            .moves
            .iter()
            .map(|m| Ok(pos.san(&pos.play_uci(&m.uci)?.0)))
            .collect::<anyhow::Result<Vec<String>>>()?;
        print!("{}", board_diagram(&pos));
        println!("{}", verdict(&pos, &r));
        match r.dtz {
            Some(d) => println!("DTZ: {}", dtz_words(d)),
            None => println!(
                "DTZ: no DTZ file here for {} (generate the table again to make one)",
                r.rules
            ),
        }
        for (m, san) in r.moves.iter().zip(&sans) {
            let dtz = m
                .dtz
                .map(|d| format!("   DTZ {}", dtz_words(d)))
                .unwrap_or_default();
            println!("  {:<6} {:<8} {:<22}{dtz}", m.uci, san, in_words(m.value));
        }
    }
    Ok(())
}

/// "win in 39 plies", "win in 1 ply", "draw", "loss in 12 plies".
pub fn in_words(v: Value) -> String {
    match v {
        Value::Win(d) => format!("win in {}", plies(d)),
        Value::Draw => "draw".to_string(),
        Value::Loss(d) => format!("loss in {}", plies(d)),
    }
}

/// "win, zeroing in 12 plies", "cursed win, zeroing in 150 plies", "draw".
pub fn dtz_words(d: shatranj_tb::Dtz) -> String {
    match d.category {
        shatranj_tb::Category::Draw => "draw".to_string(),
        c => format!(
            "{}, {} to a zeroing move or the end",
            c.as_str().replace('-', " "),
            plies(d.plies)
        ),
    }
}

/// "1 ply", "39 plies".
pub fn plies(d: u32) -> String {
    if d == 1 {
        "1 ply".to_string()
    } else {
        format!("{d} plies")
    }
}

/// "White wins in 39 plies", "Black has lost (checkmate)", "Draw".
pub fn verdict(pos: &Position, r: &ProbeResult) -> String {
    let us = pos.turn();
    let them: Color = !us;
    match (r.value, r.end) {
        (Value::Draw, Some(end)) => format!("Draw ({end})"),
        (Value::Draw, None) => "Draw".to_string(),
        (Value::Win(_), Some(end)) => format!("{us} has won ({end})"),
        (Value::Loss(_), Some(end)) => format!("{them} has won ({end}): {us} to move has lost"),
        (Value::Win(d), None) => format!("{us} wins in {}", plies(d)),
        (Value::Loss(d), None) => format!("{them} wins in {}", plies(d)),
    }
}

/// A small board, rank 8 on top, and the side to move.
pub fn board_diagram(pos: &Position) -> String {
    let mut s = String::new();
    for rank in (0..8).rev() {
        let _ = write!(s, "{} ", rank + 1);
        for file in 0..8 {
            let sq = shatranj_tb::Square::from_coords(file, rank);
            let c = pos
                .board()
                .piece_at(sq)
                .map_or('.', shatranj_tb::Piece::char);
            let _ = write!(s, " {c}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "   a b c d e f g h   ({} to move)", pos.turn());
    s
}
