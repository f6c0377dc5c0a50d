//! `shatranj-tb manifest [--tables DIR]`: the MANIFEST of a table folder.

use anyhow::Context;
use clap::Args;
use shatranj_tb::generate::manifest::{MANIFEST, write_manifest};

use super::common::{Folder, check_folder};

#[derive(Debug, Args)]
pub struct ManifestArgs {
    /// Directory of the table files.
    #[arg(long, env = "SHATRANJ_TB_PATH", default_value = super::common::DEFAULT_TABLES, value_name = "DIR")]
    pub tables: std::path::PathBuf,
}

pub fn run(args: &ManifestArgs) -> anyhow::Result<()> {
    check_folder(&args.tables, Folder::MustExist)?;
    let text = write_manifest(&args.tables)
        .with_context(|| format!("writing the MANIFEST of {}", args.tables.display()))?;
    let files = text.lines().filter(|l| !l.starts_with('#')).count();
    eprintln!(
        "{}: {files} table files",
        args.tables.join(MANIFEST).display()
    );
    Ok(())
}
