//! Generates one table against the tables already in a directory (its sub-tables must be
//! there), prints the time per kind of pass, then writes its files and times that too.
//! `cargo run --release --example gen_file -- KRQvKR DIR`
use std::sync::Mutex;
use std::time::Instant;

use shatranj_tb::RuleSet;
use shatranj_tb::generate::{Progress, files, generate};
use shatranj_tb::probe::Tablebase;

#[derive(Default)]
struct Timer {
    current: Mutex<Option<(String, Instant)>>,
    totals: Mutex<Vec<(String, f64)>>,
}

impl Progress for Timer {
    fn begin(&self, pass: &str, _total: u64) {
        let kind = pass.split(' ').nth(1).unwrap_or(pass).to_string();
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
    let mut args = std::env::args().skip(1);
    let material = args
        .next()
        .unwrap_or_else(|| "KRvKQ".to_string())
        .parse()
        .expect("a material such as KRvKQ");
    let dir = std::path::PathBuf::from(args.next().expect("a tables directory"));
    let rules = RuleSet::default();
    let tb = Tablebase::open(&dir, rules).expect("open tables");
    let timer = Timer::default();
    let start = Instant::now();
    let mut g = generate(material, rules, &tb, &timer).expect("generation");
    let gen_secs = start.elapsed().as_secs_f64();
    let t = Instant::now();
    let (w, d) = files::write(&dir, &mut g).expect("write");
    println!(
        "{} generated in {gen_secs:.2}s, written in {:.2}s (WDL {w} B, DTM {d} B)",
        g.material,
        t.elapsed().as_secs_f64()
    );
    for (kind, secs) in timer.totals.lock().unwrap().iter() {
        println!("  {kind:>12}: {secs:.2}s");
    }
}
