//! Arguments and output shared by the table subcommands.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value as Json, json};
use shatranj_tb::generate::Progress;
use shatranj_tb::probe::{SideStats, Tablebase};
use shatranj_tb::{Position, RuleSet, Value};

/// Where the tables are and which rule set they follow.
#[derive(Debug, Clone, Args)]
pub struct TablesArgs {
    /// Directory of the table files.
    #[arg(
        long,
        env = "SHATRANJ_TB_PATH",
        default_value = "tables",
        value_name = "DIR"
    )]
    pub tables: PathBuf,
    /// Rule set: bare-king=counter|immediate, stalemate=loss|draw.
    #[arg(
        long,
        default_value = "bare-king=counter,stalemate=loss",
        value_name = "RULES"
    )]
    pub rules: RuleSet,
}

impl TablesArgs {
    pub fn open(&self) -> anyhow::Result<Tablebase> {
        Tablebase::open(&self.tables, self.rules)
            .with_context(|| format!("opening tables in {}", self.tables.display()))
    }
}

/// Reads a FEN argument.
pub fn parse_fen(fen: &str) -> anyhow::Result<Position> {
    Position::from_fen(fen).with_context(|| format!("FEN '{fen}'"))
}

/// `null` for a draw, the plies otherwise.
pub fn dtm_json(v: Value) -> Json {
    v.dtm().map_or(Json::Null, |d| json!(d))
}

/// The JSON of one side's figures.
pub fn side_json(s: &SideStats) -> Json {
    let longest = |l: &Option<shatranj_tb::probe::Longest>| {
        l.as_ref()
            .map_or(Json::Null, |l| json!({"plies": l.plies, "fen": l.fen}))
    };
    json!({
        "legal": s.legal,
        "win": s.win,
        "draw": s.draw,
        "loss": s.loss,
        "longest_win": longest(&s.longest_win),
        "longest_loss": longest(&s.longest_loss),
    })
}

/// Progress bars on a terminal (stderr), nothing elsewhere.
pub struct Bars {
    bar: ProgressBar,
}

impl Bars {
    pub fn new() -> Bars {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:24} [{bar:32}] {percent:>3}% {per_sec:>14} eta {eta}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        Bars { bar }
    }

    /// Prints a line above the bar (or plainly when there is no terminal).
    pub fn println(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Bars {
    fn begin(&self, pass: &str, total: u64) {
        self.bar.reset();
        self.bar.set_length(total);
        self.bar.set_message(pass.to_string());
    }
    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
}
