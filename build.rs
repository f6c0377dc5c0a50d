//! Compiles the gRPC service definition with protox (pure Rust: no `protoc` needed) and
//! hands the descriptors to tonic-prost-build; also writes the encoded descriptor set that
//! the server's reflection service publishes. Nothing else, and only with the `service`
//! feature (the library's core has no generated code).

#[cfg(feature = "service")]
use std::path::PathBuf;

#[cfg(feature = "service")]
const PROTO: &str = "proto/shatranj/tablebase/v1/tablebase.proto";

#[cfg(not(feature = "service"))]
fn main() {}

#[cfg(feature = "service")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={PROTO}");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);

    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler
        .include_source_info(true)
        .include_imports(true)
        .open_file(PROTO)?;
    std::fs::write(
        out_dir.join("tablebase_descriptor.bin"),
        compiler.encode_file_descriptor_set(),
    )?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
