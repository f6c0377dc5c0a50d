//! `shatranj-tb serve`: the gRPC probe service (see the README's "gRPC service").

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use shatranj_tb::RuleSet;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::{self, Limits};

use shatranj_tb::Material;
use shatranj_tb::generate::files::{TableOutcome, generate_into};

use super::common::{Bars, TablesArgs};

/// Serve probes over gRPC (service shatranj.tablebase.v1.Tablebase, with health and
/// reflection). Stops on Ctrl-C or SIGTERM after the calls in flight.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    pub tables: TablesArgs,

    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Probes that read table files (and Line/ListTables calls) running at once on the
    /// blocking pool [default: twice the cores]; probes answered from memory do not count.
    #[arg(long, value_name = "N")]
    pub max_probes: Option<usize>,

    /// Serve the directory as it is: do not generate the default tables (every table up
    /// to 4 men) when some are missing.
    #[arg(long)]
    pub no_generate: bool,

    /// Seconds a call may take before the server cancels it.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub request_timeout: u64,
}

/// Runs the server. Unless `--no-generate` is given, first makes sure the default table
/// set (every table up to 4 men) is in the directory, generating what is missing or
/// damaged, with progress, while health answers NOT_SERVING.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    if args.no_generate {
        run_with(args, open_tables)
    } else {
        run_with(args, generate_default_then_open)
    }
}

/// Generates the missing tables of the default set, then opens the directory.
pub fn generate_default_then_open(dir: &Path, rules: RuleSet) -> anyhow::Result<Tablebase> {
    let bars = Bars::new();
    let mut written = 0;
    generate_into(dir, &Material::all_with_tables(4), rules, &bars, |o| {
        if let TableOutcome::Written { table, .. } = o {
            written += 1;
            bars.println(&format!(
                "shatranj-tb: generated {} in {:.1} s",
                table.material, table.seconds
            ));
        }
    })
    .with_context(|| format!("generating the default tables in {}", dir.display()))?;
    bars.finish();
    if written > 0 {
        eprintln!(
            "shatranj-tb: {written} tables generated in {}",
            dir.display()
        );
    }
    open_tables(dir, rules)
}

/// Opens the tables of `dir` under `rules`: the default preparation step.
pub fn open_tables(dir: &Path, rules: RuleSet) -> anyhow::Result<Tablebase> {
    Tablebase::open(dir, rules).with_context(|| format!("opening tables in {}", dir.display()))
}

/// Runs the server; `prepare` makes the tables ready (the hook for "generate the default
/// tables first if missing"). It runs on a blocking thread while the server already
/// listens, answering health checks with NOT_SERVING and probes with UNAVAILABLE.
pub fn run_with<F>(args: &ServeArgs, prepare: F) -> anyhow::Result<()>
where
    F: FnOnce(&Path, RuleSet) -> anyhow::Result<Tablebase> + Send + 'static,
{
    let mut limits = Limits {
        request_timeout: Duration::from_secs(args.request_timeout.max(1)),
        ..Limits::default()
    };
    if let Some(n) = args.max_probes {
        limits.max_blocking_probes = n.max(1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr().context("no local address")?;
        eprintln!(
            "shatranj-tb: serving shatranj.tablebase.v1.Tablebase on {addr} \
             (tables {}, rules {})",
            args.tables.tables.display(),
            args.tables.rules
        );
        let (dir, rules) = (args.tables.tables.clone(), args.tables.rules);
        let tables = async move {
            let opened = tokio::task::spawn_blocking(move || prepare(&dir, rules))
                .await
                .context("table preparation panicked")??;
            eprintln!("shatranj-tb: tables open, serving");
            anyhow::Ok(Arc::new(opened))
        };
        service::serve_with(&limits, tables, listener, service::shutdown_signal())
            .await
            .context("the gRPC server failed")?;
        eprintln!("shatranj-tb: stopped");
        Ok(())
    })
}
