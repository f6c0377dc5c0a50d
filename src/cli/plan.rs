//! `shatranj-tb generate --plan`: the jobs of a run, printed as JSON or as a Snakefile,
//! and `generate MATERIAL --no-deps`, the command each job runs.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use clap::ValueEnum;
use serde_json::json;
use shatranj_tb::Material;
use shatranj_tb::format::Metric;
use shatranj_tb::generate::GenError;
use shatranj_tb::generate::budget::{Needs, check_table};
use shatranj_tb::generate::files::{TableOutcome, generate_one_within, paths};
use shatranj_tb::generate::plan::{Job, plan};
use shatranj_tb::probe::table_path;
use shatranj_tb::rules::RuleSet;

use super::UserError;
use super::common::{Bars, Folder, check_folder};
use super::generate::{GenerateArgs, refused_is_users};

/// How `generate --plan` prints the plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// One JSON object: the rules, the folder, the jobs in dependency order, the totals.
    #[default]
    Json,
    /// A Snakefile: one rule a table and one that writes the MANIFEST at the end.
    Snakemake,
}

/// Most men a plan may have (a plan is only printed; generation takes at most 6).
pub const PLAN_MAX_MEN: u32 = 7;

/// Prints the plan of the run `args` describes.
pub fn run_plan(args: &GenerateArgs, materials: &[Material]) -> anyhow::Result<()> {
    for m in materials {
        if m.men() > PLAN_MAX_MEN {
            return Err(UserError::new(format!(
                "{m} has {} men; a plan takes at most {PLAN_MAX_MEN}",
                m.men()
            ))
            .into());
        }
    }
    let dir = &args.tables.tables;
    let jobs = plan(dir, materials, args.tables.rules);
    let text = match args.format {
        PlanFormat::Json => {
            let mut s = serde_json::to_string_pretty(&plan_json(dir, args.tables.rules, &jobs))?;
            s.push('\n');
            s
        }
        PlanFormat::Snakemake => snakefile(dir, args.tables.rules, &jobs),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn file_names(job: &Job) -> Vec<String> {
    job.files.iter().map(|f| f.display().to_string()).collect()
}

/// The JSON plan.
fn plan_json(dir: &Path, rules: RuleSet, jobs: &[Job]) -> serde_json::Value {
    let list: Vec<_> = jobs
        .iter()
        .map(|j| {
            json!({
                "material": j.material.to_string(),
                "reads": j.reads.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "files": file_names(j),
                "slots": j.slots,
                "memory_bytes": j.memory_bytes,
                "cpu_seconds": round(j.cpu_seconds),
                "disk_bytes": j.disk_bytes,
                "threads": j.threads,
            })
        })
        .collect();
    json!({
        "rules": rules.to_string(),
        "tables": dir.display().to_string(),
        "jobs": list,
        "total": {
            "tables": jobs.len(),
            "slots": jobs.iter().map(|j| j.slots).sum::<u64>(),
            "disk_bytes": jobs.iter().map(|j| j.disk_bytes).sum::<u64>(),
            "cpu_seconds": round(jobs.iter().map(|j| j.cpu_seconds).sum::<f64>()),
            "max_memory_bytes": jobs.iter().map(|j| j.memory_bytes).max().unwrap_or(0),
        },
    })
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// A string as a Python literal (the paths and rule sets here are plain ASCII; anything
/// else is escaped by JSON's rules, which Python reads the same way).
fn py(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Memory a job asks for, in MiB: the estimate with a quarter more (the estimate errs by
/// less than that on the tables it was measured on), times the attempt, so that a job
/// killed for its memory is retried with more.
fn mem_mib(job: &Job) -> u64 {
    (job.memory_bytes + job.memory_bytes / 4).div_ceil(1 << 20)
}

/// Minutes a job asks for: four times the estimate on its threads (a slower or busier
/// node), at least ten.
fn runtime_minutes(job: &Job) -> u64 {
    let wall = job.cpu_seconds / f64::from(job.threads);
    ((4.0 * wall / 60.0).ceil() as u64).max(10)
}

/// The Snakefile of a plan. Paths are built from `TABLES`, which `--config
/// tables=DIR` changes, and jobs run `BIN` (`--config bin=PATH`, default `shatranj-tb`
/// on the PATH).
fn snakefile(dir: &Path, rules: RuleSet, jobs: &[Job]) -> String {
    let mut s = String::new();
    let dir_text = dir.display().to_string();
    let rel = |f: &Path| -> String {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        format!("TABLES + {}", py(&format!("/{name}")))
    };
    let _ = writeln!(
        s,
        "# The plan of a shatranj-tb run as a Snakefile: one rule a table, each running\n\
         # `shatranj-tb generate MATERIAL --no-deps`, and a last one writing the MANIFEST.\n\
         # Made by `shatranj-tb generate --plan --format snakemake`; {} tables.\n\
         # --config tables=DIR changes the folder, --config bin=PATH the binary.\n",
        jobs.len()
    );
    let _ = writeln!(s, "TABLES = config.get(\"tables\", {})", py(&dir_text));
    let _ = writeln!(s, "BIN = config.get(\"bin\", \"shatranj-tb\")");
    let _ = writeln!(s, "RULES = {}\n", py(&rules.to_string()));
    let _ = writeln!(
        s,
        "# The files of every table of the plan.\nTABLE_FILES = ["
    );
    for j in jobs {
        for f in &j.files {
            let _ = writeln!(s, "    {},", rel(f));
        }
    }
    let _ = writeln!(s, "]\n");
    // Every file is asked for, not only the MANIFEST: a table deleted after the MANIFEST
    // was written is remade. Inputs are `ancient`: a remade table is byte for byte what it
    // was (generation is deterministic), so what reads it is not redone.
    let _ = writeln!(
        s,
        "rule all:\n    input: TABLE_FILES, TABLES + \"/MANIFEST\"\n    default_target: True\n"
    );
    let _ = writeln!(
        s,
        "rule manifest:\n    input: [ancient(f) for f in TABLE_FILES]\n    output: TABLES + \"/MANIFEST\"\n    localrule: True\n    params: bin=BIN, tables=TABLES\n    shell: \"{{params.bin:q}} manifest --tables {{params.tables:q}}\"\n"
    );
    for j in jobs {
        let _ = writeln!(s, "rule table_{}:", j.material);
        if !j.reads.is_empty() {
            let _ = writeln!(s, "    input:");
            for r in &j.reads {
                let (wdl, dtm) = paths(dir, *r, rules);
                let dtz = table_path(dir, *r, rules, Metric::Dtz);
                for f in [&wdl, &dtm, &dtz] {
                    let _ = writeln!(s, "        ancient({}),", rel(f));
                }
            }
        }
        let _ = writeln!(
            s,
            "    output:\n        {},\n        {},\n        {},",
            rel(&j.files[0]),
            rel(&j.files[1]),
            rel(&j.files[2])
        );
        let _ = writeln!(s, "    threads: {}", j.threads);
        let _ = writeln!(
            s,
            "    resources:\n        mem_mb=lambda wildcards, attempt: {} * attempt,\n        runtime=lambda wildcards, attempt: {} * attempt,\n        disk_mb={},",
            mem_mib(j),
            runtime_minutes(j),
            j.disk_bytes.div_ceil(1 << 20).max(1)
        );
        let _ = writeln!(s, "    params: bin=BIN, tables=TABLES, rules=RULES");
        let _ = writeln!(
            s,
            "    shell: \"{{params.bin:q}} generate {} --no-deps --tables {{params.tables:q}} --rules {{params.rules:q}} --threads {{threads}}\"\n",
            j.material
        );
    }
    s
}

/// `generate MATERIAL.. --no-deps`: each named table alone, its sub-tables already there.
pub fn run_no_deps(args: &GenerateArgs, bars: &Bars) -> anyhow::Result<()> {
    if args.materials.is_empty() {
        return Err(UserError::new(
            "--no-deps builds the named tables only: name at least one material".into(),
        )
        .into());
    }
    check_folder(&args.tables.tables, Folder::MayBeCreated)?;
    // In a folder not made yet, the memory of every table first, so that a refusal
    // creates no folder (in one that exists, a table present is kept whatever it needs:
    // `generate_one_within` checks the others).
    let limits = args.limits();
    if !args.tables.tables.exists() {
        for m in &args.materials {
            check_table(&Needs::of(*m), &limits, None)
                .map_err(|r| refused_is_users(GenError::Refused(r)))?;
        }
    }
    std::fs::create_dir_all(&args.tables.tables).map_err(|e| {
        UserError::new(format!(
            "cannot create the table folder {}: {e}",
            args.tables.tables.display()
        ))
    })?;
    for m in &args.materials {
        match generate_one_within(&args.tables.tables, *m, args.tables.rules, &limits, bars) {
            Ok(TableOutcome::Kept(m)) => bars.println(&format!("{m}: present and intact, kept")),
            Ok(TableOutcome::Written {
                table,
                wdl_bytes,
                dtm_bytes,
                dtz_bytes,
                dtz_seconds,
                dtz_file_seconds,
                ..
            }) => bars.println(&format!(
                "{}: {:.1} s, WDL {wdl_bytes} bytes, DTM {dtm_bytes} bytes, DTZ {dtz_bytes} bytes ({dtz_seconds:.1} s, its file {dtz_file_seconds:.1} s)",
                table.material, table.seconds
            )),
            Err(e @ shatranj_tb::generate::GenError::SubTable(_)) => {
                return Err(UserError::new(e.to_string()).kind("missing-table").into());
            }
            Err(e) => return Err(refused_is_users(e)),
        }
    }
    Ok(())
}
