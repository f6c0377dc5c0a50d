//! Command-line arguments and dispatch.
//!
//! One variant of [`Command`] and one file per subcommand: to add `probe`, write
//! `cli/probe.rs` with a clap `Args` struct and a `run` function, add the variant
//! `Probe(probe::ProbeArgs)` and its arm in [`Command::run`].
//!
//! Errors: subcommands return `anyhow::Result`. An error the user caused (a bad FEN, an
//! illegal position, a bad argument value) is recognised by [`exit_code`] from the
//! library's error types found in the chain, or marked with [`UserError`]; everything
//! else is an internal failure.

mod common;
mod generate;
mod info;
mod line;
mod manifest;
mod perft;
mod plan;
mod probe;
mod serve;
mod solve;
mod verify;

use std::fmt;
use std::io;

use clap::{Parser, Subcommand};
use shatranj_tb::material::ParseMaterialError;
use shatranj_tb::probe::ProbeError;
use shatranj_tb::role::LEGEND;
use shatranj_tb::rules::ParseRuleSetError;
use shatranj_tb::{FenError, ParseFenError, PlayError, PositionError};

/// Exit code of a user error (bad arguments, bad FEN, illegal position).
pub const EXIT_USER: u8 = 1;
/// Exit code of an internal failure.
pub const EXIT_INTERNAL: u8 = 2;

/// Endgame tablebases for shatranj, the Persian and Arabic ancestor of chess.
#[derive(Debug, Parser)]
#[command(name = "shatranj-tb", version, about, long_about = None, after_help = LEGEND)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the legal move paths of DEPTH plies from FEN (pure move generation: no
    /// game-end rule stops it).
    #[command(after_help = LEGEND)]
    Perft(perft::PerftArgs),
    /// Build tables by retrograde analysis, smaller ones first.
    #[command(after_help = LEGEND)]
    Generate(generate::GenerateArgs),
    /// Write the MANIFEST of a table folder (name, size and CRC-32 of every table file),
    /// as `generate` does at the end of a run: for runs made of one job a table.
    Manifest(manifest::ManifestArgs),
    /// The value of a position (win, draw or loss and the plies to the end) and of
    /// every move.
    #[command(after_help = LEGEND)]
    Probe(probe::ProbeArgs),
    /// An optimal line from a position to the end of the game (`--metric dtz`: the line
    /// an engine under the move rule plays, hurrying to zeroing moves).
    #[command(after_help = LEGEND)]
    Line(line::LineArgs),
    /// The figures of tables: positions, wins, draws, losses, longest wins, file sizes.
    #[command(after_help = LEGEND)]
    Info(info::InfoArgs),
    /// Re-derive every value of tables from their children with the forward move
    /// generator; exits non-zero on any mismatch.
    #[command(after_help = LEGEND)]
    Verify(verify::VerifyArgs),
    /// Serve probes over gRPC (shatranj.tablebase.v1.Tablebase, with health and
    /// reflection) until Ctrl-C or SIGTERM.
    #[command(after_help = LEGEND)]
    Serve(serve::ServeArgs),
    /// Prove the shortest forced win (or the longest defence) from a position of any
    /// size, searching above the tables and taking every table position as exact.
    #[command(after_help = LEGEND)]
    Solve(solve::SolveArgs),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Perft(args) => perft::run(&args),
            Command::Generate(args) => generate::run(&args),
            Command::Manifest(args) => manifest::run(&args),
            Command::Probe(args) => probe::run(&args),
            Command::Line(args) => line::run(&args),
            Command::Info(args) => info::run(&args),
            Command::Verify(args) => verify::run(&args),
            Command::Serve(args) => serve::run(&args),
            Command::Solve(args) => solve::run(&args),
        }
    }
}

impl Command {
    /// Whether the command was asked for JSON output (`--json`): its errors are then JSON
    /// objects too.
    pub fn wants_json(&self) -> bool {
        match self {
            Command::Probe(args) => args.json,
            Command::Line(args) => args.probe.json,
            Command::Info(args) => args.json,
            Command::Solve(args) => args.json,
            _ => false,
        }
    }
}

/// The JSON object an error is printed as under `--json` (on stdout, where the answer
/// would have been): `{"error": MESSAGE, "kind": KIND}`.
pub fn json_error(message: &str, kind: &str) -> String {
    serde_json::json!({ "error": message, "kind": kind }).to_string()
}

/// The kind of an error, for `--json`: `invalid-fen`, `illegal-position`,
/// `missing-table`, `too-many-men`, `missing-folder`, `not-a-folder`,
/// `unreadable-folder`, `damaged-table`, `unreadable-table`, `invalid-argument` (another
/// user error), `usage` (a command line that does not parse), or `internal`.
pub fn error_kind(err: &anyhow::Error) -> &'static str {
    for e in err.chain() {
        if e.is::<ParseFenError>() {
            return "invalid-fen";
        }
        if e.is::<PositionError>() || e.is::<PlayError>() {
            return "illegal-position";
        }
        if let Some(e) = e.downcast_ref::<FenError>() {
            return match e {
                FenError::Parse(_) => "invalid-fen",
                FenError::Position(_) => "illegal-position",
            };
        }
        if let Some(kind) = e.downcast_ref::<UserError>().and_then(|u| u.kind) {
            return kind;
        }
        match e.downcast_ref::<ProbeError>() {
            Some(ProbeError::MissingTable { .. }) => return "missing-table",
            Some(ProbeError::TooManyMen { .. }) => return "too-many-men",
            Some(ProbeError::Corrupt { .. }) => return "damaged-table",
            Some(ProbeError::Io { .. }) => return "unreadable-table",
            None => {}
        }
    }
    if exit_code(err) == EXIT_USER {
        "invalid-argument"
    } else {
        "internal"
    }
}

/// Marks an error as the user's (exit code 1), for cases the library's own error types
/// do not cover.
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    /// The kind `--json` reports, when more precise than `invalid-argument`.
    pub kind: Option<&'static str>,
}

impl UserError {
    /// A user error with this message.
    pub fn new(message: String) -> UserError {
        UserError {
            message,
            kind: None,
        }
    }

    /// The same error with a `--json` kind.
    pub fn kind(mut self, kind: &'static str) -> UserError {
        self.kind = Some(kind);
        self
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}

/// The process exit code for an error: [`EXIT_USER`] if anything in its chain is an
/// error the user caused, else [`EXIT_INTERNAL`].
pub fn exit_code(err: &anyhow::Error) -> u8 {
    let user = err.chain().any(|e| {
        e.is::<UserError>()
            || e.is::<FenError>()
            || e.is::<ParseFenError>()
            || e.is::<PositionError>()
            || e.is::<PlayError>()
            || e.is::<ParseRuleSetError>()
            || e.is::<ParseMaterialError>()
            || matches!(
                e.downcast_ref::<ProbeError>(),
                Some(ProbeError::MissingTable { .. } | ProbeError::TooManyMen { .. })
            )
    });
    if user { EXIT_USER } else { EXIT_INTERNAL }
}

/// Whether the error comes from writing to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn error_classes() {
        let fen = shatranj_tb::Position::from_fen("8/8/8 w").unwrap_err();
        let err = anyhow::Error::new(fen).context("reading the FEN");
        assert_eq!(exit_code(&err), EXIT_USER);
        let err = anyhow::anyhow!("disk on fire");
        assert_eq!(exit_code(&err), EXIT_INTERNAL);
        let err = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&err));
    }
}
