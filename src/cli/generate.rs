//! `shatranj-tb generate [MATERIAL..]`: build tables in dependency order.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use shatranj_tb::Material;
use shatranj_tb::generate::GenError;
use shatranj_tb::generate::budget::{Limits, parse_size};
use shatranj_tb::generate::files::{TableOutcome, generate_into_within};
use shatranj_tb::generate::manifest::write_manifest;
use shatranj_tb::index::TableIndex;
use shatranj_tb::probe::MAX_MEN;

use super::UserError;
use super::common::{Bars, Folder, TablesArgs, cancel_on_signal, check_folder, human_rate_text};
use super::plan::{PlanFormat, run_no_deps, run_plan};

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Materials of up to 6 men such as KRvKQ or KRRvKRR (default: every table up to --men
    /// men). Tables they need are built first.
    pub materials: Vec<Material>,
    /// Build every table with at most this many men (when no material is named; at most
    /// 6, or 7 with --plan).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(3..=7))]
    pub men: u32,
    /// Memory the run may use, such as 14G, 14GiB, 900M or plain bytes (a one-letter
    /// unit is binary: 14G is 14 GiB; 14GB is decimal). Before a run, and before each
    /// table, its estimated peak memory (the --plan figure) is compared with this limit,
    /// and its files with the folder's free disk: a table that would not fit is refused
    /// with a message naming what it needs, and nothing is written. Default: the
    /// machine's memory (the cgroup's limit if one is set, else the memory installed).
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_limit, conflicts_with = "plan")]
    pub memory_limit: Option<u64>,
    #[command(flatten)]
    pub tables: TablesArgs,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the plan of the run (one job a table: what it reads and writes, estimated
    /// memory, CPU time and disk, in dependency order) instead of running it.
    #[arg(long, conflicts_with = "no_deps")]
    pub plan: bool,
    /// How --plan prints the plan.
    #[arg(long, value_enum, default_value_t, requires = "plan")]
    pub format: PlanFormat,
    /// Build the named tables only, as one job of a run spread over many processes:
    /// every table they read must be there already (else an error names it), and no
    /// other file (no sub-table, no MANIFEST) is written.
    #[arg(long)]
    pub no_deps: bool,
}

impl GenerateArgs {
    /// What the run may use: `--memory-limit`, or the machine's memory; the disk is
    /// checked either way.
    pub fn limits(&self) -> Limits {
        match self.memory_limit {
            Some(memory_bytes) => Limits {
                memory_bytes,
                check_disk: true,
            },
            None => Limits::of_machine(),
        }
    }
}

fn parse_memory_limit(text: &str) -> Result<u64, String> {
    parse_size(text)
}

/// A table refused for want of memory or disk is the user's to fix (exit code 1); other
/// errors pass unchanged.
pub fn refused_is_users(e: GenError) -> anyhow::Error {
    match e {
        GenError::Refused(r) => UserError::new(r.to_string()).into(),
        other => other.into(),
    }
}

/// The error of a run stopped by SIGTERM or Ctrl-C (`so_far`: what it had done).
fn cancelled(args: &GenerateArgs, so_far: &str) -> anyhow::Error {
    UserError::new(format!(
        "generation cancelled by a signal{so_far}: the table under way was not written ({})",
        args.tables.tables.display()
    ))
    .into()
}

pub fn run(args: &GenerateArgs) -> anyhow::Result<()> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("starting worker threads")?;
    }
    let materials = if args.materials.is_empty() {
        if args.plan {
            return run_plan(args, &Material::all_with_tables(args.men));
        }
        if args.men > MAX_MEN {
            return Err(UserError::new(format!(
                "--men {}: at most {MAX_MEN} men are generated (--plan prints a plan for up to 7)",
                args.men
            ))
            .into());
        }
        if args.no_deps {
            return run_no_deps(args, &Bars::new());
        }
        Material::all_with_tables(args.men)
    } else {
        if args.plan {
            for m in &args.materials {
                if m.is_decided_by_rules() {
                    return Err(UserError::new(format!(
                        "{m} needs no table: a side is bare, so the rules decide every position"
                    ))
                    .into());
                }
            }
            return run_plan(args, &args.materials);
        }
        for m in &args.materials {
            if m.is_decided_by_rules() {
                return Err(UserError::new(format!(
                    "{m} needs no table: a side is bare, so the rules decide every position"
                ))
                .into());
            }
            if m.men() > MAX_MEN {
                return Err(UserError::new(format!(
                    "{m} has {} men; tables hold at most {MAX_MEN}",
                    m.men()
                ))
                .into());
            }
        }
        args.materials.clone()
    };
    check_folder(&args.tables.tables, Folder::MayBeCreated)?;
    let start = Instant::now();
    // SIGTERM or Ctrl-C cancel the run: the table under way is not written (its
    // temporary files are removed), the tables already written stay whole.
    let cancel = Arc::new(AtomicBool::new(false));
    cancel_on_signal(Arc::clone(&cancel))?;
    let bars = Bars::with_cancel(Arc::clone(&cancel)).announcing_needs();
    if args.no_deps {
        let result = run_no_deps(args, &bars);
        bars.finish();
        if cancel.load(Ordering::Relaxed) {
            return Err(cancelled(args, ""));
        }
        return result;
    }
    let mut written = 0;
    let mut kept = 0;
    // a table's whole time (made, written, checked): from the report before its own
    let mut last = Instant::now();
    let result = generate_into_within(
        &args.tables.tables,
        &materials,
        args.tables.rules,
        &args.limits(),
        &bars,
        |outcome| match outcome {
            TableOutcome::Kept(m) => {
                last = Instant::now();
                kept += 1;
                bars.println(&format!("{m}: present and intact, kept"));
            }
            TableOutcome::Written {
                table,
                wdl_bytes,
                dtm_bytes,
                dtz_bytes,
                dtz,
                dtz_seconds,
                dtz_file_seconds,
            } => {
                written += 1;
                let whole = last.elapsed().as_secs_f64();
                last = Instant::now();
                let s = &table.stats;
                let positions = s.white.legal + s.black.legal;
                let longest = s
                    .white
                    .longest_win
                    .iter()
                    .chain(s.black.longest_win.iter())
                    .map(|l| l.plies)
                    .max();
                bars.println(&format!(
                    "{}: {} positions (win/draw/loss, White to move {}/{}/{}, Black to move {}/{}/{}), longest win {}, {:.1} s, {} positions, WDL {} bytes, DTM {} bytes",
                    table.material,
                    positions,
                    s.white.win,
                    s.white.draw,
                    s.white.loss,
                    s.black.win,
                    s.black.draw,
                    s.black.loss,
                    longest.map_or("none".to_string(), |p| format!("{p} plies")),
                    table.seconds,
                    human_rate_text(
                        2.0 * TableIndex::new(table.material).size() as f64
                            / table.seconds.max(1e-9)
                    ),
                    wdl_bytes,
                    dtm_bytes
                ));
                bars.println(&format!(
                    "{}: DTZ (move rule {}) {:.1} s, its file {dtz_file_seconds:.1} s, {dtz_bytes} bytes, longest {} plies, {} cursed wins, {} blessed losses; {whole:.1} s in all with the files written and checked",
                    table.material,
                    dtz.move_rule,
                    dtz_seconds,
                    dtz.white.longest_win.max(dtz.black.longest_win).max(dtz.white.longest_loss).max(dtz.black.longest_loss),
                    dtz.white.cursed_wins + dtz.black.cursed_wins,
                    dtz.white.blessed_losses + dtz.black.blessed_losses,
                ));
            }
        },
    );
    bars.finish();
    if cancel.load(Ordering::Relaxed) {
        return Err(cancelled(
            args,
            &format!(" after {written} tables written, {kept} kept"),
        ));
    }
    result.map_err(refused_is_users)?;
    write_manifest(&args.tables.tables)
        .with_context(|| format!("writing the MANIFEST of {}", args.tables.tables.display()))?;
    eprintln!(
        "{written} tables written, {kept} kept, in {:.1} s ({} rules, {})",
        start.elapsed().as_secs_f64(),
        args.tables.rules,
        args.tables.tables.display()
    );
    Ok(())
}
