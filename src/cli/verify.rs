//! `shatranj-tb verify [MATERIAL..]`: re-derive every value from its children.

use anyhow::bail;
use clap::Args;
use shatranj_tb::Material;
use shatranj_tb::generate::files::verify;

use super::UserError;
use super::common::{Bars, CacheArgs, TablesArgs, generate_command, lookup_error};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Materials such as KRvKQ (default: every table in the directory).
    pub materials: Vec<Material>,
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
    let bars = Bars::new();
    let mut failed = Vec::new();
    for m in materials {
        let report = verify(&tb, m, &bars).map_err(|e| lookup_error(e, &args.tables))?;
        if report.mismatch_count == 0 {
            bars.println(&format!(
                "{m}: {} positions checked, all agree",
                report.checked
            ));
        } else {
            bars.println(&format!(
                "{m}: {} positions checked, {} MISMATCHES",
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
