//! `shatranj-tb line FEN`: an optimal line to the end of the game, or for a draw a
//! line of [`DRAW_PLIES`] plies that keeps the draw.

use serde_json::json;
use shatranj_tb::Value;
use shatranj_tb::probe::LineStep;

use super::common::{dtm_json, lookup_error, parse_fen, warn_of_damaged_files};
use super::probe::{ProbeArgs, in_words, verdict};

/// Plies shown of a drawn position: a draw has no end to play to.
pub const DRAW_PLIES: usize = 20;

/// Takes the same arguments as `probe`.
pub fn run(args: &ProbeArgs) -> anyhow::Result<()> {
    let pos = parse_fen(&args.fen)?;
    let tb = args.tables.open_with(args.cache)?;
    let lookup = |e| lookup_error(e, &args.tables);
    let r = tb.probe(&pos).map_err(lookup)?;
    warn_of_damaged_files(&tb, &pos);
    let line: Vec<LineStep> = if r.value == Value::Draw {
        tb.drawing_line(&pos, DRAW_PLIES).map_err(lookup)?
    } else {
        tb.line(&pos).map_err(lookup)?
    };
    // SAN needs the position before each move.
    let mut sans = Vec::with_capacity(line.len());
    let mut at = pos;
    for step in &line {
        let (m, next) = at.play_uci(&step.uci)?;
        sans.push(at.san(&m));
        at = next;
    }
    if args.json {
        let mut out = r.position_json();
        out.insert(
            "line".into(),
            line.iter()
                .zip(&sans)
                .map(|(s, san)| {
                    json!({
                        "uci": s.uci,
                        "san": san,
                        "fen": s.fen,
                        "wdl": s.value.wdl().as_str(),
                        "dtm": dtm_json(s.value),
                        "end": s.end.map(|e| e.as_str()),
                    })
                })
                .collect(),
        );
        println!("{}", serde_json::to_string(&out)?);
        return Ok(());
    }
    println!("{}", verdict(&pos, &r));
    if r.value == Value::Draw && r.end.is_none() {
        if line.is_empty() {
            println!("(no move keeps the draw)");
        } else {
            println!(
                "(a draw has no end to play to: {} plies that keep it, each the first such move in UCI order)",
                line.len()
            );
        }
    }
    for (i, (step, san)) in line.iter().zip(&sans).enumerate() {
        let end = step.end.map(|e| format!("  {e}")).unwrap_or_default();
        println!(
            "{:>3}. {:<6} {:<8} {:<50} side to move: {}{end}",
            i + 1,
            step.uci,
            san,
            step.fen,
            in_words(step.value)
        );
    }
    Ok(())
}
