//! `shatranj-tb serve`: the gRPC probe service (see `docs/grpc.md`).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use shatranj_tb::RuleSet;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::{self, Limits};

use super::common::TablesArgs;

/// Serve probes over gRPC (service shatranj.tablebase.v1.Tablebase, with health and
/// reflection). Stops on Ctrl-C or SIGTERM after the calls in flight.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    pub tables: TablesArgs,

    /// Address to listen on (port 0 picks a free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Probes running at once over the whole server [default: twice the cores].
    #[arg(long, value_name = "N")]
    pub max_probes: Option<usize>,

    /// Seconds a call may take before the server cancels it.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub request_timeout: u64,
}

/// Runs the server, opening the tables with [`Tablebase::open`].
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    run_with(args, open_tables)
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
