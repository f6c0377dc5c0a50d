//! `shatranj-tb serve`: the gRPC probe service, and with `--http` the HTTP JSON API and
//! the explorer page (see the README's "gRPC service" and "Explorer and HTTP API").

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use shatranj_tb::RuleSet;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::{self, Limits};

use shatranj_tb::Material;
use shatranj_tb::generate::files::{TableOutcome, generate_into};

use super::UserError;
use super::common::{Bars, CacheArgs, Folder, TablesArgs, check_folder};

/// Serve probes over gRPC (service shatranj.tablebase.v1.Tablebase, with health and
/// reflection). Stops on Ctrl-C or SIGTERM after the calls in flight.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    pub tables: TablesArgs,
    #[command(flatten)]
    pub cache: CacheArgs,

    /// Address to listen on, HOST:PORT; the host may be a name (`localhost`) or an IP
    /// address. Port 0 picks a free port; the address is printed.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "ADDR")]
    pub listen: String,

    /// Also serve the HTTP JSON API (lichess tablebase shape) and the explorer page at
    /// http://ADDR/ (off by default; port 0 picks a free port; the address is printed).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// Probes that read table files (and Line/ListTables calls) running at once on the
    /// blocking pool [default: twice the cores]; probes answered from memory do not count.
    #[arg(long, value_name = "N")]
    pub max_probes: Option<usize>,

    /// Serve the directory as it is: do not generate the default tables (every table up
    /// to 4 men) when some are missing. The directory must exist.
    #[arg(long)]
    pub no_generate: bool,

    /// Seconds a call may take before the server cancels it.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub request_timeout: u64,
}

/// Runs the server. Unless `--no-generate` is given, first makes sure the default table
/// set (every table up to 4 men) is in the directory, generating what is missing or
/// damaged, with progress, while health answers NOT_SERVING. A shutdown signal during
/// that generation cancels it: the table under way is not written.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    if args.no_generate {
        check_folder(&args.tables.tables, Folder::MustExist)?;
        let cache = args.cache;
        run_with(args, move |dir, rules, _cancel| {
            open_tables(dir, rules, cache)
        })
    } else {
        check_folder(&args.tables.tables, Folder::MayBeCreated)?;
        let cache = args.cache;
        run_with(args, move |dir, rules, cancel| {
            generate_default_then_open(dir, rules, cancel, cache)
        })
    }
}

/// Generates the missing tables of the default set, then opens the directory with the
/// cache bound `cache`. Stops with an error (a cancelled generation) soon after `cancel`
/// is set.
pub fn generate_default_then_open(
    dir: &Path,
    rules: RuleSet,
    cancel: Arc<AtomicBool>,
    cache: CacheArgs,
) -> anyhow::Result<Tablebase> {
    let bars = Bars::with_cancel(cancel);
    let mut written = 0;
    let generated = generate_into(dir, &Material::all_with_tables(4), rules, &bars, |o| {
        if let TableOutcome::Written { table, .. } = o {
            written += 1;
            bars.println(&format!(
                "shatranj-tb: generated {} in {:.1} s",
                table.material, table.seconds
            ));
        }
    });
    bars.finish();
    generated.with_context(|| format!("generating the default tables in {}", dir.display()))?;
    if written > 0 {
        eprintln!(
            "shatranj-tb: {written} tables generated in {}",
            dir.display()
        );
    }
    open_tables(dir, rules, cache)
}

/// Opens the tables of `dir` under `rules` with the cache bound `cache`, warning loudly
/// if there are none.
pub fn open_tables(dir: &Path, rules: RuleSet, cache: CacheArgs) -> anyhow::Result<Tablebase> {
    let tb = Tablebase::open(dir, rules)?;
    tb.set_cache_bytes(cache.bytes());
    if tb.materials().is_empty() {
        eprintln!(
            "shatranj-tb: WARNING: no tables for {rules} in {}: every probe that needs a table \
             will answer NOT_FOUND until tables are generated or copied there (they are found \
             without a restart)",
            dir.display()
        );
    }
    Ok(tb)
}

/// The first address `listen` (HOST:PORT, the host a name or an IP address) resolves to
/// that can be bound.
async fn bind(listen: &str, flag: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(listen).await.map_err(|e| {
        UserError::new(format!(
            "cannot listen on {listen}: {e} (expected HOST:PORT, e.g. 127.0.0.1:50051 or localhost:50051)"
        ))
    })?.collect();
    let mut last = None;
    for addr in &addrs {
        match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some((addr, e)),
        }
    }
    Err(match last {
        Some((addr, e)) => {
            let hint = match e.kind() {
                std::io::ErrorKind::AddrInUse => format!(
                    "; another process uses that port: pick another with {flag} (port 0 picks a free one)"
                ),
                std::io::ErrorKind::PermissionDenied => {
                    format!("; ports below 1024 need privileges: pick another with {flag}")
                }
                _ => String::new(),
            };
            UserError::new(format!("cannot listen on {addr}: {e}{hint}"))
        }
        None => UserError::new(format!("cannot listen on {listen}: it resolves to no address")),
    }
    .into())
}

/// Runs the server; `prepare` makes the tables ready (the hook for "generate the default
/// tables first if missing"), and should stop early once its flag is set (a shutdown
/// signal arrived). It runs on a blocking thread while the server already listens,
/// answering health checks with NOT_SERVING and probes with UNAVAILABLE.
pub fn run_with<F>(args: &ServeArgs, prepare: F) -> anyhow::Result<()>
where
    F: FnOnce(&Path, RuleSet, Arc<AtomicBool>) -> anyhow::Result<Tablebase> + Send + 'static,
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
    let cancel = Arc::new(AtomicBool::new(false));
    let result = runtime.block_on(async {
        let listener = bind(&args.listen, "--listen").await?;
        let addr = listener.local_addr().context("no local address")?;
        eprintln!(
            "shatranj-tb: listening on {addr}; health says NOT_SERVING until the tables in {} are ready",
            args.tables.tables.display()
        );
        let http = match &args.http {
            Some(at) => {
                let listener = bind(at, "--http").await?;
                let addr = listener.local_addr().context("no local address")?;
                eprintln!("shatranj-tb: serving the explorer and the HTTP API on http://{addr}/");
                Some(listener)
            }
            None => None,
        };
        let (dir, rules) = (args.tables.tables.clone(), args.tables.rules);
        let flag = Arc::clone(&cancel);
        let tables = async move {
            let opened = tokio::task::spawn_blocking(move || prepare(&dir, rules, flag))
                .await
                .context("table preparation panicked")??;
            eprintln!(
                "shatranj-tb: serving shatranj.tablebase.v1.Tablebase on {addr} (tables {}, rules {})",
                opened.dir().display(),
                opened.rules()
            );
            anyhow::Ok(Arc::new(opened))
        };
        let cancel_on_signal = Arc::clone(&cancel);
        let shutdown = async move {
            service::shutdown_signal().await;
            eprintln!("shatranj-tb: stopping");
            cancel_on_signal.store(true, Ordering::Relaxed);
        };
        shatranj_tb::http::serve_with_http(&limits, tables, listener, http, shutdown)
            .await
            .context("the server failed")?;
        anyhow::Ok(())
    });
    // The preparation thread is not waited for by the server; it stops within a block of
    // positions once cancelled, and writes no partial table. Dropping the runtime waits
    // for it (bounded: the generator checks the flag every few milliseconds).
    runtime.shutdown_timeout(Duration::from_secs(5));
    match result {
        Ok(()) => {
            eprintln!("shatranj-tb: stopped");
            Ok(())
        }
        // A shutdown that came while the tables were prepared cancelled the preparation:
        // its error is the cancellation, not a failure.
        Err(_) if cancel.load(Ordering::Relaxed) => {
            eprintln!("shatranj-tb: stopped (table generation cancelled)");
            Ok(())
        }
        Err(e) => Err(e),
    }
}
