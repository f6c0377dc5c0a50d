//! Generates one table in memory (with its sub-tables) and prints the time spent in each
//! kind of pass (the ply passes of losses, of wins, and the pulls apart): a quick check
//! of generator speed.
//! `cargo run --release --example gen_one -- KRvKQ [DIR]`: with `DIR`, the sub-tables
//! are read from the table files there (as `generate` reads them), else generated first.
use std::sync::Mutex;
use std::time::Instant;

use shatranj_tb::RuleSet;
use shatranj_tb::generate::memory::MemoryTables;
use shatranj_tb::generate::{Progress, generate};
use shatranj_tb::probe::Tablebase;

#[derive(Default)]
struct Timer {
    current: Mutex<Option<(String, Instant)>>,
    totals: Mutex<Vec<(String, f64)>>,
}

impl Progress for Timer {
    fn begin(&self, pass: &str, _total: u64) {
        // "KRvKQ ply 12" and "KRvKQ ply 12 (pull)": the ply passes by kind
        let words: Vec<&str> = pass.split(' ').collect();
        let kind = match words[..] {
            [_, "ply", _, _] => "ply pull".to_string(),
            [_, "ply", n] if n.parse::<u32>().is_ok_and(|n| n % 2 == 0) => "ply losses".into(),
            [_, "ply", _] => "ply wins".to_string(),
            _ => words.get(1).unwrap_or(&pass).to_string(),
        };
        *self.current.lock().unwrap() = Some((kind, Instant::now()));
    }
    fn end(&self) {
        if let Some((kind, t)) = self.current.lock().unwrap().take() {
            let mut totals = self.totals.lock().unwrap();
            match totals.iter_mut().find(|(k, _)| *k == kind) {
                Some(e) => e.1 += t.elapsed().as_secs_f64(),
                None => totals.push((kind, t.elapsed().as_secs_f64())),
            }
        }
    }
}

fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "KRvKQ".to_string());
    let material = name.parse().expect("a material such as KRvKQ");
    let timer = Timer::default();
    let start = std::time::Instant::now();
    let mut memory = MemoryTables::new(RuleSet::default());
    let from_files;
    let g = match std::env::args().nth(2) {
        Some(dir) => {
            let tb = Tablebase::open(dir, RuleSet::default()).expect("a table directory");
            from_files = generate(material, RuleSet::default(), &tb, &timer).expect("generation");
            &from_files
        }
        None => memory
            .generate_with_dependencies(material, &timer)
            .expect("generation"),
    };
    println!(
        "{} in {:.2}s (this table {:.2}s, {} slots, {} spilled): {:?}",
        g.material,
        start.elapsed().as_secs_f64(),
        g.seconds,
        g.codes.len(),
        g.spilled,
        g.stats.white
    );
    for (kind, secs) in timer.totals.lock().unwrap().iter() {
        println!("  {kind:>12}: {secs:.2}s");
    }
}
