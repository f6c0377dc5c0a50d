//! The `shatranj.tablebase.v1.Tablebase` service: request handlers over a shared
//! [`Tablebase`]. Probes are CPU (and sometimes disk) work: they run on tokio's blocking
//! pool, at most [`Limits::max_blocking_probes`] at once over the whole server.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::Limits;
use super::convert::{self, ServiceError};
use super::pb;
use crate::probe::Tablebase;
use crate::{Position, RuleSet};

/// The service's shared state: the tables once open, and the probe budget.
#[derive(Debug)]
pub(crate) struct State {
    tables: OnceLock<Arc<Tablebase>>,
    probes: Arc<Semaphore>,
    stream_window: usize,
    draining: watch::Receiver<bool>,
}

impl State {
    pub(crate) fn new(limits: &Limits, draining: watch::Receiver<bool>) -> State {
        State {
            tables: OnceLock::new(),
            probes: Arc::new(Semaphore::new(limits.max_blocking_probes.max(1))),
            stream_window: limits.stream_window.max(1),
            draining,
        }
    }

    /// Makes the tables available to calls. Later calls keep the first tables.
    pub(crate) fn set_tables(&self, tables: Arc<Tablebase>) {
        let _ = self.tables.set(tables);
    }

    /// The tables. Calls that reach a handler while the server drains are still served:
    /// they were accepted before the shutdown (HTTP/2 GOAWAY refuses later ones).
    fn tables(&self) -> Result<Arc<Tablebase>, ServiceError> {
        self.tables.get().cloned().ok_or(ServiceError::NotReady)
    }
}

/// The gRPC service. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TablebaseService {
    state: Arc<State>,
}

impl TablebaseService {
    pub(crate) fn new(state: Arc<State>) -> TablebaseService {
        TablebaseService { state }
    }

    /// Runs `work` on the blocking pool once a probe permit is free. The permit goes with
    /// the work, so a call cancelled by its client still counts until its probe is done.
    async fn blocking<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&Tablebase) -> Result<T, ServiceError> + Send + 'static,
    {
        let tables = self.state.tables()?;
        let permit = acquire(&self.state.probes).await?;
        join(spawn_probe(permit, tables, work)).await
    }
}

async fn acquire(probes: &Arc<Semaphore>) -> Result<OwnedSemaphorePermit, ServiceError> {
    Arc::clone(probes)
        .acquire_owned()
        .await
        .map_err(|_| ServiceError::ShuttingDown)
}

fn spawn_probe<T, F>(
    permit: OwnedSemaphorePermit,
    tables: Arc<Tablebase>,
    work: F,
) -> JoinHandle<Result<T, ServiceError>>
where
    T: Send + 'static,
    F: FnOnce(&Tablebase) -> Result<T, ServiceError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work(&tables)
    })
}

async fn join<T>(handle: JoinHandle<Result<T, ServiceError>>) -> Result<T, ServiceError> {
    handle
        .await
        .map_err(|e| ServiceError::Internal(format!("probe worker failed: {e}")))?
}

/// Reads a request's FEN and checks its optional rule set against the server's.
fn position(tables: &Tablebase, fen: &str, rules: &str) -> Result<Position, ServiceError> {
    if !rules.trim().is_empty() {
        let requested: RuleSet = rules.parse().map_err(ServiceError::Rules)?;
        if requested != tables.rules() {
            return Err(ServiceError::RulesMismatch {
                requested,
                served: tables.rules(),
            });
        }
    }
    Position::from_fen(fen).map_err(|source| ServiceError::Fen {
        fen: fen.to_string(),
        source,
    })
}

fn probe(tables: &Tablebase, req: &pb::ProbeRequest) -> Result<pb::ProbeResponse, ServiceError> {
    let pos = position(tables, &req.fen, &req.rules)?;
    Ok(convert::probe_response(&tables.probe(&pos)?))
}

/// Completes once the server drains (or is gone).
async fn drained(draining: &mut watch::Receiver<bool>) {
    // The borrow guard must not live in the caller's future (it is not `Send`).
    let _ = draining.wait_for(|d| *d).await.map(|_| ());
}

type ProbeManyStream = Pin<Box<dyn Stream<Item = Result<pb::ProbeManyResponse, Status>> + Send>>;

/// One entry of a `ProbeMany` stream's pipeline, in request order.
enum Pending {
    Item {
        index: u64,
        fen: String,
        work: JoinHandle<Result<pb::ProbeResponse, ServiceError>>,
    },
    /// Ends the stream with this status after the answers before it.
    End(Status),
}

#[tonic::async_trait]
impl pb::tablebase_server::Tablebase for TablebaseService {
    async fn probe(
        &self,
        request: Request<pb::ProbeRequest>,
    ) -> Result<Response<pb::ProbeResponse>, Status> {
        let req = request.into_inner();
        let answer = self.blocking(move |tables| probe(tables, &req)).await?;
        Ok(Response::new(answer))
    }

    type ProbeManyStream = ProbeManyStream;

    /// A pipeline per stream: a reader task starts up to `stream_window` probes ahead, a
    /// writer task sends their answers in request order. Backpressure all the way: a client
    /// that does not read its answers stops the reader, and so HTTP/2 flow control stops
    /// the client's requests.
    async fn probe_many(
        &self,
        request: Request<Streaming<pb::ProbeRequest>>,
    ) -> Result<Response<Self::ProbeManyStream>, Status> {
        let tables = self.state.tables()?;
        let mut inbound = request.into_inner();
        let window = self.state.stream_window;
        let (pending_tx, mut pending_rx) = mpsc::channel::<Pending>(window);
        let (out_tx, out_rx) = mpsc::channel(window);
        let probes = Arc::clone(&self.state.probes);
        let mut draining = self.state.draining.clone();

        tokio::spawn(async move {
            let mut index = 0u64;
            loop {
                let next = tokio::select! {
                    biased;
                    () = drained(&mut draining) => {
                        Pending::End(ServiceError::ShuttingDown.into())
                    }
                    next = inbound.message() => match next {
                        Ok(Some(req)) => match acquire(&probes).await {
                            Ok(permit) => {
                                let fen = req.fen.clone();
                                let tables = Arc::clone(&tables);
                                let work = spawn_probe(permit, tables, move |t| probe(t, &req));
                                Pending::Item { index, fen, work }
                            }
                            Err(e) => Pending::End(e.into()),
                        },
                        Ok(None) => break,
                        Err(status) => Pending::End(status),
                    },
                };
                let end = matches!(next, Pending::End(_));
                if pending_tx.send(next).await.is_err() || end {
                    break;
                }
                index += 1;
            }
        });

        tokio::spawn(async move {
            while let Some(pending) = pending_rx.recv().await {
                let answer = match pending {
                    Pending::Item { index, fen, work } => {
                        let outcome = match join(work).await {
                            Ok(result) => pb::probe_many_response::Outcome::Result(result),
                            Err(e) => pb::probe_many_response::Outcome::Error(convert::item_error(
                                &Status::from(e),
                            )),
                        };
                        Ok(pb::ProbeManyResponse {
                            index,
                            request_fen: fen,
                            outcome: Some(outcome),
                        })
                    }
                    Pending::End(status) => Err(status),
                };
                let end = answer.is_err();
                if out_tx.send(answer).await.is_err() || end {
                    break;
                }
            }
        });

        Ok(Response::new(Box::pin(ReceiverStream::new(out_rx))))
    }

    async fn line(
        &self,
        request: Request<pb::LineRequest>,
    ) -> Result<Response<pb::LineResponse>, Status> {
        let req = request.into_inner();
        let answer = self
            .blocking(move |tables| {
                let pos = position(tables, &req.fen, &req.rules)?;
                let start = tables.probe(&pos)?;
                let steps = tables.line(&pos)?;
                Ok(convert::line_response(&start, &steps))
            })
            .await?;
        Ok(Response::new(answer))
    }

    async fn list_tables(
        &self,
        _request: Request<pb::ListTablesRequest>,
    ) -> Result<Response<pb::ListTablesResponse>, Status> {
        let tables = self
            .blocking(|tables| {
                Ok(tables
                    .tables()?
                    .iter()
                    .map(convert::table_info)
                    .collect::<Vec<_>>())
            })
            .await?;
        Ok(Response::new(pb::ListTablesResponse { tables }))
    }
}
