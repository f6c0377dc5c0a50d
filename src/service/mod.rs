//! The gRPC probe service (`shatranj.tablebase.v1.Tablebase`, see
//! `proto/shatranj/tablebase/v1/tablebase.proto`), with the standard `grpc.health.v1`
//! health service and server reflection (v1 and v1alpha), so that stock tools (grpcurl, grpc_health_probe,
//! a Kubernetes readiness probe) can use it.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use shatranj_tb::RuleSet;
//! use shatranj_tb::probe::Tablebase;
//!
//! let tables = Arc::new(Tablebase::open("tables", RuleSet::default())?);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:50051").await?;
//! shatranj_tb::service::serve(tables, listener, shatranj_tb::service::shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! Health: the overall status (`""`) and `shatranj.tablebase.v1.Tablebase` are NOT_SERVING
//! until the tables are open (see [`serve_with`]: the server may listen while the tables
//! are still being prepared), then SERVING, and NOT_SERVING again once shutdown begins.
//!
//! With [`crate::http::serve_with_http`] the same server also answers HTTP on a second listener: a JSON
//! API in the lichess tablebase shape (`/api/v1/probe`, `/api/v1/line`, `/api/v1/tables`,
//! `/healthz`) and the explorer page at `/`, over the same tables and probe budget.
//!
//! Shutdown: when the shutdown future completes, the server stops accepting connections
//! and new calls, lets the calls in flight finish, ends open `ProbeMany` streams after
//! the answers already under way (with UNAVAILABLE), and returns once every connection is
//! closed, or after [`Limits::shutdown_grace`] at the latest.

mod convert;
pub(crate) mod handler;

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;

pub use convert::{ServiceError, value_from_wire};
pub use handler::TablebaseService;

use crate::probe::Tablebase;

/// The generated protobuf messages, server and client.
pub mod pb {
    #![allow(missing_docs, clippy::all, clippy::pedantic)]
    tonic::include_proto!("shatranj.tablebase.v1");

    /// The encoded descriptor set of `tablebase.proto`, published by server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("tablebase_descriptor");
}

/// The full name of the service, as health checks and reflection know it.
pub const SERVICE_NAME: &str = "shatranj.tablebase.v1.Tablebase";

/// The server's limits. [`Limits::default`] suits a server for a few hundred clients.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest request message accepted (bytes); a FEN request needs a few hundred.
    pub max_request_bytes: usize,
    /// Largest response message sent (bytes); `ListTables` is the biggest answer.
    pub max_response_bytes: usize,
    /// HTTP/2 streams (calls) open at once on one connection.
    pub max_concurrent_streams: u32,
    /// Calls being handled at once on one connection; more wait.
    pub concurrency_per_connection: usize,
    /// Tasks on tokio's blocking pool at once over the whole server (probes that must read
    /// a table file, `Line`, `ListTables`); more wait. Probes answered from memory run on
    /// the async runtime and do not count.
    pub max_blocking_probes: usize,
    /// Requests of one `ProbeMany` stream read and answered in one batch, at most.
    pub stream_window: usize,
    /// A unary call (or the start of a stream) taking longer is ended with CANCELLED,
    /// "Timeout expired" (tonic's code for it); a shorter `grpc-timeout` from the client
    /// wins.
    pub request_timeout: Duration,
    /// How long shutdown waits for calls in flight before giving up on them.
    pub shutdown_grace: Duration,
    /// `Solve`: the largest bound on plies a request may ask for.
    pub max_solve_plies: u32,
    /// `Solve`: the longest search; a request's own time limit may be shorter.
    pub max_solve_time: Duration,
    /// `Solve`: searches at once over the whole server (each one thread); more are
    /// refused with RESOURCE_EXHAUSTED.
    pub max_solves: usize,
    /// `Solve`: the transposition table of each search, in MiB.
    pub solve_hash_mb: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Limits {
            max_request_bytes: 64 * 1024,
            max_response_bytes: 16 * 1024 * 1024,
            max_concurrent_streams: 256,
            concurrency_per_connection: 64,
            max_blocking_probes: 2 * cores,
            stream_window: 32,
            request_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(10),
            max_solve_plies: 40,
            max_solve_time: Duration::from_secs(60),
            max_solves: cores,
            solve_hash_mb: 64,
        }
    }
}

/// Why the server stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// The transport failed (e.g. the listener broke).
    Transport(tonic::transport::Error),
    /// Preparing the tables failed; the server was stopped.
    Tables(Box<dyn StdError + Send + Sync>),
    /// The reflection service could not be built from the descriptor set (a build bug).
    Reflection(tonic_reflection::server::Error),
    /// The HTTP server failed.
    Http(std::io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Transport(_) => f.write_str("gRPC transport failed"),
            ServeError::Tables(_) => f.write_str("could not open the tables"),
            ServeError::Reflection(_) => f.write_str("could not build the reflection service"),
            ServeError::Http(_) => f.write_str("the HTTP server failed"),
        }
    }
}

impl StdError for ServeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            ServeError::Transport(e) => Some(e),
            ServeError::Tables(e) => Some(&**e),
            ServeError::Reflection(e) => Some(e),
            ServeError::Http(e) => Some(e),
        }
    }
}

/// Serves `tables` on `listener` with the default [`Limits`] until `shutdown` completes.
pub async fn serve(
    tables: Arc<Tablebase>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let ready = async move { Ok::<_, std::convert::Infallible>(tables) };
    serve_with(&Limits::default(), ready, listener, shutdown).await
}

/// Serves on `listener` until `shutdown` completes. The server answers at once; the
/// tables come from `tables`, a future that may take long (opening, or generating missing
/// tables first): until it completes, health says NOT_SERVING and probes get UNAVAILABLE.
/// If it fails, the server stops and returns [`ServeError::Tables`].
pub async fn serve_with<T, E>(
    limits: &Limits,
    tables: T,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    T: Future<Output = Result<Arc<Tablebase>, E>>,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    serve_with_front(limits, tables, listener, None, shutdown).await
}

/// A second front served beside gRPC on the same state (the HTTP API, see
/// `crate::http::serve_with_http`): started with the shared state, the request timeout and
/// a receiver that fires when shutdown begins; its task's end is awaited on shutdown.
pub(crate) type Front = Box<
    dyn FnOnce(
            Arc<handler::State>,
            Duration,
            tokio::sync::oneshot::Receiver<()>,
        ) -> tokio::task::JoinHandle<std::io::Result<()>>
        + Send,
>;

/// [`serve_with`], and with `front` a second server on the same tables, budget, health and
/// shutdown, on the same runtime.
pub(crate) async fn serve_with_front<T, E>(
    limits: &Limits,
    tables: T,
    listener: TcpListener,
    front: Option<Front>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    T: Future<Output = Result<Arc<Tablebase>, E>>,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    let (health, health_service) = tonic_health::server::health_reporter();
    set_health(&health, ServingStatus::NotServing).await;

    // Reflection v1, and v1alpha for older clients (grpcio-reflection, older grpcurl).
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection().build_v1().map_err(ServeError::Reflection)?;
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .map_err(ServeError::Reflection)?;

    let (draining_tx, draining_rx) = watch::channel(false);
    let state = Arc::new(handler::State::new(limits, draining_rx));
    let tablebase =
        pb::tablebase_server::TablebaseServer::new(TablebaseService::new(Arc::clone(&state)))
            .max_decoding_message_size(limits.max_request_bytes)
            .max_encoding_message_size(limits.max_response_bytes);

    let (http_stop_tx, http_stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mut http_task =
        front.map(|start| start(Arc::clone(&state), limits.request_timeout, http_stop_rx));

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = Server::builder()
        .timeout(limits.request_timeout)
        .concurrency_limit_per_connection(limits.concurrency_per_connection)
        .max_concurrent_streams(limits.max_concurrent_streams)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(tablebase)
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = stop_rx.await;
        });

    tokio::pin!(server, tables, shutdown);
    let mut tables_pending = true;
    let mut failure = None;
    loop {
        tokio::select! {
            finished = &mut server => {
                if let Some(task) = http_task.take() {
                    task.abort();
                }
                return finished.map_err(ServeError::Transport);
            }
            finished = http_finished(&mut http_task) => {
                http_task = None;
                failure = Some(ServeError::Http(finished.err().unwrap_or_else(|| {
                    std::io::Error::other("the HTTP server stopped by itself")
                })));
                break;
            }
            opened = &mut tables, if tables_pending => {
                tables_pending = false;
                match opened {
                    Ok(tb) => {
                        state.set_tables(tb);
                        set_health(&health, ServingStatus::Serving).await;
                    }
                    Err(e) => {
                        failure = Some(ServeError::Tables(e.into()));
                        break;
                    }
                }
            }
            () = &mut shutdown => break,
        }
    }

    set_health(&health, ServingStatus::NotServing).await;
    let _ = draining_tx.send(true);
    let _ = stop_tx.send(());
    let _ = http_stop_tx.send(());
    // Past the grace period the remaining connections are left to die with the process.
    let deadline = tokio::time::Instant::now() + limits.shutdown_grace;
    let grpc = tokio::time::timeout_at(deadline, &mut server).await;
    if let Some(task) = &mut http_task {
        let finished = tokio::time::timeout_at(deadline, &mut *task).await;
        task.abort();
        if let Ok(Ok(Err(e))) = finished {
            failure.get_or_insert(ServeError::Http(e));
        }
    }
    if let Ok(finished) = grpc {
        finished.map_err(ServeError::Transport)?;
    }
    failure.map_or(Ok(()), Err)
}

/// Completes when the HTTP server's task ends (never if there is none), with its result:
/// `Ok` if it stopped by itself, an error if it failed or panicked.
async fn http_finished(
    task: &mut Option<tokio::task::JoinHandle<std::io::Result<()>>>,
) -> std::io::Result<()> {
    match task {
        Some(task) => match task.await {
            Ok(result) => result,
            Err(e) => Err(std::io::Error::other(format!(
                "the HTTP server failed: {e}"
            ))),
        },
        None => std::future::pending().await,
    }
}

async fn set_health(health: &tonic_health::server::HealthReporter, status: ServingStatus) {
    health.set_service_status("", status).await;
    health.set_service_status(SERVICE_NAME, status).await;
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM. If a handler cannot be installed,
/// that signal is ignored and the other one still works.
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_name_matches_the_generated_server() {
        use tonic::server::NamedService;
        assert_eq!(
            <pb::tablebase_server::TablebaseServer<TablebaseService> as NamedService>::NAME,
            SERVICE_NAME
        );
    }

    #[test]
    fn descriptor_set_is_embedded() {
        assert!(pb::FILE_DESCRIPTOR_SET.len() > 100);
    }
}
