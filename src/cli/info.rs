//! `shatranj-tb info [MATERIAL..]`: the figures of tables.

use clap::Args;
use serde_json::json;
use shatranj_tb::Material;
use shatranj_tb::probe::TableInfo;

use super::common::{TablesArgs, generate_command, lookup_error, side_json};

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Materials such as KRvKQ (default: every table in the directory).
    pub materials: Vec<Material>,
    #[command(flatten)]
    pub tables: TablesArgs,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &InfoArgs) -> anyhow::Result<()> {
    let tb = args.tables.open()?;
    let infos: Vec<TableInfo> = if args.materials.is_empty() {
        tb.tables()?
    } else {
        args.materials
            .iter()
            .map(|m| tb.table_info(*m).map_err(|e| lookup_error(e, &args.tables)))
            .collect::<Result<_, _>>()?
    };
    if args.json {
        let tables: Vec<_> = infos
            .iter()
            .map(|t| {
                json!({
                    "material": t.material.to_string(),
                    "rules": t.rules.to_string(),
                    "wdl_bytes": t.wdl_bytes,
                    "dtm_bytes": t.dtm_bytes,
                    "white": side_json(&t.white),
                    "black": side_json(&t.black),
                    "dtz_bytes": t.dtz_bytes,
                    "dtz": t.dtz.as_ref().map(|d| json!({
                        "move_rule": d.move_rule,
                        "white": dtz_side_json(&d.white),
                        "black": dtz_side_json(&d.black),
                    })),
                })
            })
            .collect();
        println!("{}", serde_json::to_string(&json!({ "tables": tables }))?);
        return Ok(());
    }
    if infos.is_empty() {
        println!(
            "no tables for {} in {} (generate them with `{}`)",
            tb.rules(),
            tb.dir().display(),
            generate_command(&args.tables)
        );
    }
    for t in &infos {
        let positions = t.white.legal + t.black.legal;
        println!(
            "{} ({}): WDL {} bytes, DTM {} bytes ({:.4} DTM bytes per position)",
            t.material,
            t.rules,
            t.wdl_bytes,
            t.dtm_bytes,
            t.dtm_bytes as f64 / positions.max(1) as f64
        );
        for (side, s) in [("White", &t.white), ("Black", &t.black)] {
            let longest = |l: &Option<shatranj_tb::probe::Longest>| {
                l.as_ref().map_or("-".to_string(), |l| {
                    format!("{} plies ({})", l.plies, l.fen)
                })
            };
            println!(
                "  {side} to move: {} legal, {} win, {} draw, {} loss; longest win {}; longest loss {}",
                s.legal,
                s.win,
                s.draw,
                s.loss,
                longest(&s.longest_win),
                longest(&s.longest_loss)
            );
        }
        match (&t.dtz, t.dtz_bytes) {
            (Some(d), Some(bytes)) => {
                println!(
                    "  DTZ (move rule {}): {bytes} bytes ({:.4} bytes per position)",
                    d.move_rule,
                    bytes as f64 / positions.max(1) as f64
                );
                for (side, s) in [("White", &d.white), ("Black", &d.black)] {
                    println!(
                        "  {side} to move: longest DTZ of a win {} plies, of a loss {} plies; {} cursed wins, {} blessed losses",
                        s.longest_win, s.longest_loss, s.cursed_wins, s.blessed_losses
                    );
                }
            }
            _ => println!(
                "  DTZ: no DTZ file for {} (generate the table again to make one)",
                t.rules
            ),
        }
    }
    Ok(())
}

/// The JSON of one side's DTZ figures.
fn dtz_side_json(s: &shatranj_tb::generate::dtz::DtzSideStats) -> serde_json::Value {
    json!({
        "longest_win": s.longest_win,
        "longest_loss": s.longest_loss,
        "cursed_wins": s.cursed_wins,
        "blessed_losses": s.blessed_losses,
    })
}
