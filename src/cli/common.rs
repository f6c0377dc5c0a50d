//! Arguments and output shared by the table subcommands.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressState, ProgressStyle};
use serde_json::{Value as Json, json};
use shatranj_tb::generate::Progress;
use shatranj_tb::generate::budget::Needs;
use shatranj_tb::probe::{MAX_MEN, ProbeError, SideStats, Tablebase};
use shatranj_tb::{Material, Position, RuleSet, Value};

use super::UserError;

/// Where the tables are and which rule set they follow.
#[derive(Debug, Clone, Args)]
pub struct TablesArgs {
    /// Directory of the table files.
    #[arg(
        long,
        env = "SHATRANJ_TB_PATH",
        default_value = DEFAULT_TABLES,
        value_name = "DIR"
    )]
    pub tables: PathBuf,
    /// Rule set: bare-king=counter|immediate, stalemate=loss|draw, move-rule=none|70 (70: 140
    /// plies without a capture or a pawn move draw; DTZ then has cursed wins and blessed
    /// losses).
    #[arg(
        long,
        default_value = "bare-king=counter,stalemate=loss",
        value_name = "RULES"
    )]
    pub rules: RuleSet,
}

impl TablesArgs {
    /// Opens the tables of an existing, readable folder (a user error otherwise), with
    /// the default cache bound.
    pub fn open(&self) -> anyhow::Result<Tablebase> {
        check_folder(&self.tables, Folder::MustExist)?;
        Ok(Tablebase::open(&self.tables, self.rules)?)
    }

    /// [`TablesArgs::open`] with the decompressed blocks of all the tables bounded by
    /// `cache`.
    pub fn open_with(&self, cache: CacheArgs) -> anyhow::Result<Tablebase> {
        let tb = self.open()?;
        tb.set_cache_bytes(cache.bytes());
        Ok(tb)
    }
}

/// Default of `--cache-mb`: [`shatranj_tb::probe::DEFAULT_CACHE_BYTES`] in MiB.
pub const DEFAULT_CACHE_MB: usize = shatranj_tb::probe::DEFAULT_CACHE_BYTES >> 20;

/// How much memory the decompressed blocks of the tables may take.
#[derive(Debug, Clone, Copy, Args)]
pub struct CacheArgs {
    /// Memory for decompressed table blocks in MiB, all tables together (0 keeps none:
    /// every lookup then reads and decompresses its block).
    #[arg(long, default_value_t = DEFAULT_CACHE_MB, value_name = "MIB")]
    pub cache_mb: usize,
}

impl CacheArgs {
    /// The bound in bytes.
    pub fn bytes(self) -> usize {
        self.cache_mb.saturating_mul(1 << 20)
    }
}

/// The error of a failed lookup, for the user: a missing table's advice names this
/// folder and rule set, so that the command it suggests builds the table where it is
/// looked for.
pub fn lookup_error(e: ProbeError, args: &TablesArgs) -> anyhow::Error {
    match e {
        ProbeError::MissingTable { material, rules }
            if !material.is_decided_by_rules() && material.men() <= MAX_MEN =>
        {
            let command = generate_command(&TablesArgs {
                tables: args.tables.clone(),
                rules,
            })
            .replacen("generate", &format!("generate {material}"), 1);
            UserError::new(format!(
                "missing table {material} for rules {rules} in {}: generate it with `{command}`",
                args.tables.display()
            ))
            .kind("missing-table")
            .into()
        }
        other => other.into(),
    }
}

/// Warns on stderr if a file of the table of `pos` is missing or damaged though the
/// probe succeeded (a probe reads the DTM file; the WDL file may be the broken one).
pub fn warn_of_damaged_files(tb: &Tablebase, pos: &Position) {
    let m = Material::from_board(pos.board());
    if m.is_decided_by_rules() || m.men() > MAX_MEN {
        return;
    }
    if let Err(e) = tb.open_files(m) {
        eprintln!("shatranj-tb: warning: {e}");
    }
}

/// `shatranj-tb generate`, with `--tables` and `--rules` when they are not the defaults:
/// the command that builds the default tables where `args` looks for them.
pub fn generate_command(args: &TablesArgs) -> String {
    let mut command = "shatranj-tb generate".to_string();
    if args.tables != Path::new(DEFAULT_TABLES) {
        command.push_str(&format!(" --tables {}", args.tables.display()));
    }
    if args.rules != RuleSet::default() {
        command.push_str(&format!(" --rules {}", args.rules));
    }
    command
}

/// The folder `--tables` names by default.
pub const DEFAULT_TABLES: &str = "tables";

/// Whether a table folder must exist already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folder {
    /// Reading tables: the folder must be there.
    MustExist,
    /// Writing tables: a missing folder is created.
    MayBeCreated,
}

fn unreadable(dir: &Path, e: &io::Error) -> anyhow::Error {
    UserError::new(format!(
        "cannot read the table folder {}: {e}",
        dir.display()
    ))
    .kind("unreadable-folder")
    .into()
}

/// Checks that `dir` is a readable folder (or, with [`Folder::MayBeCreated`], does not
/// exist yet); the error names the folder and the cause, as a [`UserError`].
pub fn check_folder(dir: &Path, folder: Folder) -> anyhow::Result<()> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if folder == Folder::MayBeCreated {
                return Ok(());
            }
            let generate = if dir == Path::new(DEFAULT_TABLES) {
                "shatranj-tb generate".to_string()
            } else {
                format!("shatranj-tb generate --tables {shown}")
            };
            Err(UserError::new(format!(
                "the table folder {shown} does not exist (--tables or $SHATRANJ_TB_PATH names \
                 it; `{generate}` creates it with the tables)"
            ))
            .kind("missing-folder")
            .into())
        }
        Err(e) => Err(unreadable(dir, &e)),
        Ok(meta) if !meta.is_dir() => Err(UserError::new(format!(
            "{shown} is not a folder (--tables names the folder that holds the table files)"
        ))
        .kind("not-a-folder")
        .into()),
        Ok(_) => match std::fs::read_dir(dir) {
            Ok(_) => Ok(()),
            Err(e) => Err(unreadable(dir, &e)),
        },
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

/// Progress on a terminal (stderr), nothing elsewhere: a bar for the whole run (the
/// positions of the tables done against all those to generate, with the time left) and
/// a bar for the pass under way (positions a second in human units, time left). Can
/// carry a cancellation flag that generation checks ([`Progress::cancelled`]).
pub struct Bars {
    multi: MultiProgress,
    run: ProgressBar,
    pass: ProgressBar,
    /// The run bar is shown once a run of several tables starts.
    run_shown: AtomicBool,
    cancel: Option<Arc<AtomicBool>>,
    /// Whether each table, as it starts, prints what it needs (positions, memory, disk),
    /// on a terminal or not.
    announce_needs: bool,
}

/// Sets `flag` when SIGINT (Ctrl-C) or, on Unix, SIGTERM arrives, from a thread of its
/// own: the handlers are installed before this returns, so a signal from then on cancels
/// (a long run checks the flag through [`Bars::with_cancel`]) rather than killing the
/// process halfway through a file.
pub fn cancel_on_signal(flag: Arc<AtomicBool>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("cannot start the signal watcher")?;
    #[cfg(unix)]
    let signalled = {
        use tokio::signal::unix::{SignalKind, signal};
        let (mut int, mut term) = runtime
            .block_on(async {
                Ok::<_, io::Error>((
                    signal(SignalKind::interrupt())?,
                    signal(SignalKind::terminate())?,
                ))
            })
            .context("cannot watch for SIGINT and SIGTERM")?;
        async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        }
    };
    #[cfg(not(unix))]
    let signalled = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(signalled);
            eprintln!("shatranj-tb: stopping (signal received)");
            flag.store(true, Ordering::Relaxed);
        })
        .context("cannot start the signal watcher")?;
    Ok(())
}

/// A rate in units a second as "60.6 M/s", "812.0 k/s", "35.0/s".
pub fn human_rate_text(per_sec: f64) -> String {
    let (value, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, " G")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, " M")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, " k")
    } else {
        (per_sec, "")
    };
    format!("{value:.1}{unit}/s")
}

fn human_rate(state: &ProgressState, w: &mut dyn fmt::Write) {
    let _ = w.write_str(&human_rate_text(state.per_sec()));
}

impl Bars {
    pub fn new() -> Bars {
        let multi = MultiProgress::new();
        let run = ProgressBar::hidden();
        run.set_style(
            ProgressStyle::with_template(
                "{msg:28} [{bar:32}] {percent:>3}% of the run's positions, elapsed {elapsed}, eta {eta}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        let pass = multi.add(ProgressBar::new(0));
        pass.set_style(
            ProgressStyle::with_template(
                "{msg:28} [{bar:32}] {percent:>3}% {rate:>14} positions, eta {eta}",
            )
            .expect("a valid template")
            .with_key("rate", human_rate)
            .progress_chars("=> "),
        );
        Bars {
            multi,
            run,
            pass,
            run_shown: AtomicBool::new(false),
            cancel: None,
            announce_needs: false,
        }
    }

    /// These bars, with each table printing what it needs as it starts (`generate`).
    pub fn announcing_needs(self) -> Bars {
        Bars {
            announce_needs: true,
            ..self
        }
    }

    /// Bars whose [`Progress::cancelled`] reads `flag`.
    pub fn with_cancel(flag: Arc<AtomicBool>) -> Bars {
        Bars {
            cancel: Some(flag),
            ..Bars::new()
        }
    }

    /// Prints a line above the bars (or plainly when there is no terminal).
    pub fn println(&self, line: &str) {
        if self.pass.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.multi.println(line);
        }
    }

    pub fn finish(&self) {
        self.pass.finish_and_clear();
        self.run.finish_and_clear();
    }
}

impl Progress for Bars {
    fn begin(&self, pass: &str, total: u64) {
        self.pass.reset();
        self.pass.set_length(total);
        self.pass.set_message(pass.to_string());
    }
    fn advance(&self, n: u64) {
        self.pass.inc(n);
    }
    fn table(&self, material: Material, number: usize, count: usize, done: u64, remaining: u64) {
        if self.announce_needs {
            self.println(&format!("{} (estimated)", Needs::of(material).summary()));
        }
        if self.pass.is_hidden() {
            return;
        }
        if !self.run_shown.swap(true, Ordering::Relaxed) {
            let run = self.multi.insert(0, self.run.clone());
            run.set_length(done + remaining);
            run.reset_eta();
        }
        self.run.set_position(done);
        self.run
            .set_message(format!("table {number} of {count}: {material}"));
    }
    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::human_rate_text;

    #[test]
    fn rates_in_human_units() {
        assert_eq!(human_rate_text(60_649_203.205_9), "60.6 M/s");
        assert_eq!(human_rate_text(812_000.0), "812.0 k/s");
        assert_eq!(human_rate_text(2.5e9), "2.5 G/s");
        assert_eq!(human_rate_text(35.0), "35.0/s");
    }
}
