//! The generator against published results and the rules.

use shatranj_tb::generate::SubTables;
use shatranj_tb::generate::memory::MemoryTables;
use shatranj_tb::{Position, RuleSet, Value};

fn value(tables: &MemoryTables, fen: &str) -> Value {
    tables.value(&Position::from_fen(fen).unwrap()).unwrap()
}

#[test]
fn al_sulis_diamond_is_won_in_39_plies() {
    let mut tb = MemoryTables::new(RuleSet::default());
    tb.generate("KQvKQ".parse().unwrap()).unwrap();
    assert_eq!(
        value(&tb, "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1"),
        Value::Win(39)
    );
    // Tromp's line: 1.Kb4 Kd6 2.Kc4 Ke6 3.Kd4 Kf6 4.Kd5 Kf7, the value falling by one a ply
    let mut pos = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1").unwrap();
    let mut expected = 39;
    for uci in [
        "b3b4", "d5d6", "b4c4", "d6e6", "c4d4", "e6f6", "d4d5", "f6f7",
    ] {
        pos = pos.play_uci(uci).unwrap().1;
        expected -= 1;
        let v = tb.value(&pos).unwrap();
        assert_eq!(v.dtm(), Some(expected), "after {uci}: {v}");
    }
}
