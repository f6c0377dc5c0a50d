//! The `shatranj-tb` command line: parse, dispatch, report.
//!
//! Exit codes (a contract, listed in the README): 0 success, 1 user error (bad arguments,
//! bad FEN, illegal position, missing or unreadable table folder), 2 internal failure. The
//! error chain is printed once, on stderr (as a JSON object with `--json`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than the system allocator: the server builds and drops a dozen small
/// strings a probe answer (FEN, move names) and HTTP/2 buffers a call, from several
/// threads; mimalloc's thread-local free lists take a fraction of glibc malloc's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(err) => {
            if !err.use_stderr() {
                // --help and --version end here; clap knows which stream they go to.
                let _ = err.print();
                return ExitCode::SUCCESS;
            }
            // A command line that did not parse: `--json` may still be among its words.
            if std::env::args().any(|a| a == "--json") {
                let message = err.kind().as_str().map_or_else(
                    || err.to_string().trim().to_string(),
                    |kind| format!("{kind}: {}", err.to_string().trim()),
                );
                println!("{}", cli::json_error(&message, "usage"));
            } else {
                let _ = err.print();
            }
            return ExitCode::from(cli::EXIT_USER);
        }
    };
    let json = args.command.wants_json();
    match args.command.run() {
        Ok(()) => ExitCode::SUCCESS,
        // `perft --divide | head` closes the pipe early: that is not a failure.
        Err(err) if cli::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let code = cli::exit_code(&err);
            if json {
                println!(
                    "{}",
                    cli::json_error(&format!("{err:#}"), cli::error_kind(&err))
                );
            } else {
                eprintln!("shatranj-tb: error: {err:#}");
            }
            ExitCode::from(code)
        }
    }
}
