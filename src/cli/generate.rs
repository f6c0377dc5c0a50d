//! `shatranj-tb generate [MATERIAL..]`: build tables in dependency order.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use shatranj_tb::Material;
use shatranj_tb::generate::files::{TableOutcome, generate_into};
use shatranj_tb::generate::manifest::write_manifest;
use shatranj_tb::index::TableIndex;

use super::UserError;
use super::common::{Bars, Folder, TablesArgs, cancel_on_signal, check_folder, human_rate_text};
use super::plan::{PlanFormat, run_no_deps, run_plan};

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Materials such as KRvKQ (default: every table up to --men men). Tables they need
    /// are built first.
    pub materials: Vec<Material>,
    /// Build every table with at most this many men (when no material is named; at most
    /// 5, or 7 with --plan).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(3..=7))]
    pub men: u32,
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
        if args.men > 5 {
            return Err(UserError::new(format!(
                "--men {}: at most 5 men are generated (--plan prints a plan for up to 7)",
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
            if m.men() > 5 {
                return Err(UserError::new(format!(
                    "{m} has {} men; at most 5 are supported",
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
    let bars = Bars::with_cancel(Arc::clone(&cancel));
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
    let result = generate_into(
        &args.tables.tables,
        &materials,
        args.tables.rules,
        &bars,
        |outcome| match outcome {
            TableOutcome::Kept(m) => {
                kept += 1;
                bars.println(&format!("{m}: present and intact, kept"));
            }
            TableOutcome::Written {
                table,
                wdl_bytes,
                dtm_bytes,
            } => {
                written += 1;
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
    result?;
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
