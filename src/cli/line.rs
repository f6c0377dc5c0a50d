//! `shatranj-tb line FEN`: an optimal line to the end of the game.

use serde_json::json;

use super::common::{dtm_json, parse_fen};
use super::probe::{ProbeArgs, in_words, position_json, verdict};

/// Takes the same arguments as `probe`.
pub fn run(args: &ProbeArgs) -> anyhow::Result<()> {
    let pos = parse_fen(&args.fen)?;
    let tb = args.tables.open()?;
    let r = tb.probe(&pos)?;
    let line = tb.line(&pos)?;
    if args.json {
        let mut out = position_json(&r);
        out.insert(
            "line".into(),
            line.iter()
                .map(|s| {
                    json!({
                        "uci": s.uci,
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
    if line.is_empty() && r.end.is_none() {
        println!("(a draw has no end to play to)");
    }
    for (i, step) in line.iter().enumerate() {
        let end = step.end.map(|e| format!("  {e}")).unwrap_or_default();
        println!(
            "{:>3}. {:<6} {:<50} side to move: {}{end}",
            i + 1,
            step.uci,
            step.fen,
            in_words(step.value)
        );
    }
    Ok(())
}
