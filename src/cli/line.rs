//! `shatranj-tb line FEN`: an optimal line to the end of the game, or for a draw a
//! line of [`DRAW_PLIES`] plies that keeps the draw.

use serde_json::json;
use shatranj_tb::Value;
use shatranj_tb::probe::LineStep;

use super::common::{dtm_json, lookup_error, parse_fen, warn_of_damaged_files};
use super::probe::{ProbeArgs, in_words, verdict};

/// Plies shown of a drawn position: a draw has no end to play to.
pub const DRAW_PLIES: usize = 20;

/// Which distance the line is optimal for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LineMetric {
    /// The shortest win (the loser: the longest defence) to the end of the game.
    Dtm,
    /// At every move the shortest way (the loser: the longest) to a zeroing move that
    /// keeps the win: what an engine under the move rule must play.
    Dtz,
}

/// The arguments of `probe`, and the metric.
#[derive(Debug, clap::Args)]
pub struct LineArgs {
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// The distance the line is optimal for.
    #[arg(long, value_enum, default_value = "dtm")]
    pub metric: LineMetric,
}

pub fn run(args: &LineArgs) -> anyhow::Result<()> {
    let metric = args.metric;
    let args = &args.probe;
    let pos = parse_fen(&args.fen)?;
    let tb = args.tables.open_with(args.cache)?;
    let lookup = |e| lookup_error(e, &args.tables);
    let r = tb.probe(&pos).map_err(lookup)?;
    warn_of_damaged_files(&tb, &pos);
    if metric == LineMetric::Dtz && r.dtz.is_none() {
        return Err(lookup(shatranj_tb::probe::ProbeError::MissingTable {
            material: r.material,
            rules: r.rules,
        }));
    }
    let line: Vec<LineStep> = if r.value == Value::Draw {
        tb.drawing_line(&pos, DRAW_PLIES).map_err(lookup)?
    } else if metric == LineMetric::Dtz {
        tb.dtz_line(&pos).map_err(lookup)?
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
                        "dtz": s.dtz.map(|d| d.signed()),
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
        let mut end = step.end.map(|e| format!("  {e}")).unwrap_or_default();
        if let Some(d) = step.dtz {
            end = format!("  DTZ {}{end}", super::probe::dtz_words(d));
        }
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
