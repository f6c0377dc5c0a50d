//! Generates one table in memory (with its sub-tables) and prints the time: a quick check
//! of generator speed. `cargo run --release --example gen_one -- KRvKQ`
use shatranj_tb::RuleSet;
use shatranj_tb::generate::memory::MemoryTables;

fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "KRvKQ".to_string());
    let material = name.parse().expect("a material such as KRvKQ");
    let mut tb = MemoryTables::new(RuleSet::default());
    let start = std::time::Instant::now();
    let g = tb.generate(material).expect("generation");
    println!(
        "{} in {:.2}s (this table {:.2}s): {:?}",
        g.material,
        start.elapsed().as_secs_f64(),
        g.seconds,
        g.stats.white
    );
}
