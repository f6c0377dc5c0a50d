//! Rewrites a table file with other compression settings and reports size and time.
//! `cargo run --release --example recompress -- FILE LEVEL BLOCK_KIB`
use std::path::Path;
use std::time::Instant;

use shatranj_tb::format::{self, TableFile, WriteOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t = TableFile::open(Path::new(&args[1])).expect("a table file");
    let values: Vec<u16> = t.read_all().expect("values");
    let options = WriteOptions {
        zstd_level: args[2].parse().expect("a level"),
        block_bytes: args[3].parse::<usize>().expect("KiB") << 10,
        ..WriteOptions::default()
    };
    let start = Instant::now();
    let out =
        format::write_table_with(Path::new("/tmp/recompress.tb"), t.meta(), &values, &options)
            .expect("written");
    println!(
        "level {} block {} KiB: {} bytes in {:.2}s",
        options.zstd_level,
        args[3],
        out.file_bytes,
        start.elapsed().as_secs_f64()
    );
}
