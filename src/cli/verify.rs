//! `shatranj-tb verify [MATERIAL..] [--sample N]`: re-derive every value (or N random
//! ones) from its children.

use anyhow::bail;
use clap::Args;
use shatranj_tb::Material;
use shatranj_tb::generate::files::verify_with;

use super::UserError;
use super::common::{Bars, CacheArgs, TablesArgs, generate_command, lookup_error};

/// Most men of a table `verify` checks whole; larger ones take `--sample N`.
const WHOLE_VERIFY_MAX_MEN: u32 = 5;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Materials such as KRvKQ (default: every table in the directory).
    pub materials: Vec<Material>,
    /// Check N random positions of each table instead of every one (for tables too
    /// large to verify whole: a table of 6 men takes --sample).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,
    #[command(flatten)]
    pub tables: TablesArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

pub fn run(args: &VerifyArgs) -> anyhow::Result<()> {
    let tb = args.tables.open_with(args.cache)?;
    let materials = if args.materials.is_empty() {
        tb.materials()
    } else {
        args.materials.clone()
    };
    if materials.is_empty() {
        return Err(UserError::new(format!(
            "no tables for {} in {} to verify (generate them with `{}`)",
            tb.rules(),
            args.tables.tables.display(),
            generate_command(&args.tables)
        ))
        .into());
    }
    if args.sample.is_none() {
        if let Some(m) = materials.iter().find(|m| m.men() > WHOLE_VERIFY_MAX_MEN) {
            return Err(UserError::new(format!(
                "{m} has {} men: a table of more than {WHOLE_VERIFY_MAX_MEN} men is too large                  to verify whole; check random positions of it with `--sample N` (for                  example --sample 1000000)",
                m.men()
            ))
            .into());
        }
    }
    // a fresh sample each run
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let sample = args.sample.map(|n| (n, seed));
    let what = if sample.is_some() {
        "random positions"
    } else {
        "positions"
    };
    let bars = Bars::new();
    let mut failed = Vec::new();
    for m in materials {
        let report =
            verify_with(&tb, m, sample, &bars).map_err(|e| lookup_error(e, &args.tables))?;
        if report.mismatch_count == 0 {
            bars.println(&format!(
                "{m}: {} {what} checked, all agree",
                report.checked
            ));
        } else {
            bars.println(&format!(
                "{m}: {} {what} checked, {} MISMATCHES",
                report.checked, report.mismatch_count
            ));
            for line in &report.mismatches {
                bars.println(&format!("  {line}"));
            }
            failed.push(m);
        }
    }
    bars.finish();
    if !failed.is_empty() {
        let names: Vec<String> = failed.iter().map(ToString::to_string).collect();
        bail!("verification failed for {}", names.join(", "));
    }
    Ok(())
}
