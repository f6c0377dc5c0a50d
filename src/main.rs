//! THROWAWAY wiring so that the `grpc` branch has a `shatranj-tb serve` to test; the CLI
//! owner's `main.rs` and `cli/mod.rs` replace it at the merge.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli {
    pub mod serve;
}

#[derive(Parser)]
#[command(name = "shatranj-tb", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Serve(cli::serve::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => cli::serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shatranj-tb: {e:#}");
            ExitCode::from(2)
        }
    }
}
