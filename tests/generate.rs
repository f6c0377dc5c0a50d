//! The generator against published results and the rules.

use shatranj_tb::generate::memory::MemoryTables;
use shatranj_tb::generate::{Generator, LossPasses, NoProgress, SubTables};
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

#[test]
fn bare_king_rules() {
    let counter = MemoryTables::new(RuleSet::default());
    let immediate = MemoryTables::new("bare-king=immediate".parse().unwrap());
    // Black takes the unguarded rook: a draw under counter, lost at once under immediate
    assert_eq!(value(&counter, "8/4k3/5R2/8/4K3/8/8/8 b"), Value::Draw);
    assert_eq!(value(&immediate, "8/4k3/5R2/8/4K3/8/8/8 b"), Value::Loss(0));
    // the rook is out of reach: lost at once under both
    assert_eq!(value(&counter, "8/3k4/5R2/8/4K3/8/8/8 b"), Value::Loss(0));
    assert_eq!(value(&immediate, "8/3k4/5R2/8/4K3/8/8/8 b"), Value::Loss(0));
    // two white men: taking one does not help
    assert_eq!(value(&counter, "8/4k3/5R2/8/4K3/2P5/8/8 b"), Value::Loss(0));
    // the rook is guarded by the white shah: cannot be taken
    assert_eq!(value(&counter, "8/8/4k3/4R3/4K3/8/8/8 b"), Value::Loss(0));
    // White to move against a bare shah has won
    assert_eq!(value(&counter, "8/3k4/5R2/8/4K3/8/8/8 w"), Value::Win(0));
    // K v K
    assert_eq!(value(&counter, "8/8/5k2/8/4K3/8/8/8 w"), Value::Draw);
    assert_eq!(value(&immediate, "8/8/5k2/8/4K3/8/8/8 w"), Value::Draw);
}

/// A naive solver: every position's value recomputed from its children's (forward moves
/// only, conversions from the sub-tables) in whole sweeps until nothing changes.
fn naive_solve(material: &str, rules: RuleSet) -> (Vec<Option<Value>>, MemoryTables) {
    use rayon::prelude::*;
    use shatranj_tb::index::TableIndex;
    use shatranj_tb::{Color, Material};
    let material: Material = material.parse().unwrap();
    let mut sub = MemoryTables::new(rules);
    for m in material.with_dependencies() {
        if m != material {
            sub.generate(m).unwrap();
        }
    }
    let index = TableIndex::new(material);
    let n = index.size();
    let slots = 2 * n as usize;
    // Per position (canonical ones only): the best of its conversions (their values are
    // known from the sub-tables), its quiet children's slots, or its value if it has no
    // move. Held compactly (a pawn table has some ten million positions).
    enum Node {
        Absent,
        Ended(Value),
        Open {
            conversions: Option<Value>,
            kids: Vec<u32>,
        },
    }
    let node_of = |slot: usize| -> Node {
        let (turn, i) = if (slot as u64) < n {
            (Color::White, slot as u64)
        } else {
            (Color::Black, slot as u64 - n)
        };
        let Some(pos) = index
            .decode(i)
            .filter(|b| index.encode(b) == Some(i))
            .and_then(|b| Position::from_board(b, turn).ok())
        else {
            return Node::Absent;
        };
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Node::Ended(Value::of_ended(&pos, rules).unwrap());
        }
        let mut conversions: Option<Value> = None;
        let mut kids = Vec::new();
        for m in moves.iter() {
            let child = pos.play_unchecked(m);
            if m.is_conversion() {
                let v = sub.value(&child).unwrap().parent();
                conversions = Some(conversions.map_or(v, |b| b.max(v)));
            } else {
                let slot = child.turn().index() as u64 * n + index.encode(child.board()).unwrap();
                kids.push(u32::try_from(slot).unwrap());
            }
        }
        Node::Open { conversions, kids }
    };
    let nodes: Vec<Node> = (0..slots).into_par_iter().map(node_of).collect();
    let mut values: Vec<Option<Value>> = vec![None; slots];
    for _sweep in 0..1000 {
        let next: Vec<Option<Value>> = nodes
            .par_iter()
            .map(|node| match node {
                Node::Absent => None,
                Node::Ended(v) => Some(*v),
                Node::Open { conversions, kids } => {
                    let mut best = *conversions;
                    let mut all_known = true;
                    for &s in kids {
                        match values[s as usize] {
                            Some(v) => best = Some(best.map_or(v.parent(), |b| b.max(v.parent()))),
                            None => all_known = false,
                        }
                    }
                    match best {
                        Some(Value::Win(d)) => Some(Value::Win(d)),
                        Some(v) if all_known => Some(v),
                        _ => None,
                    }
                }
            })
            .collect();
        if next == values {
            // undecided at the fixpoint: drawn; a draw by a conversion is already known
            return (
                values
                    .into_iter()
                    .zip(&nodes)
                    .map(|(v, node)| match node {
                        Node::Absent => None,
                        _ => Some(v.unwrap_or(Value::Draw)),
                    })
                    .collect(),
                sub,
            );
        }
        values = next;
    }
    panic!("naive solver did not converge");
}

fn assert_generator_equals_naive(material: &str, rules: RuleSet) {
    use shatranj_tb::Color;
    let (naive, tables) = naive_solve(material, rules);
    // loss passes pushing from every loss, and pulling from every open position
    for how in [LossPasses::Push, LossPasses::Pull] {
        let g = Generator::new(material.parse().unwrap(), rules, &tables, &NoProgress)
            .loss_passes(how)
            .run()
            .unwrap();
        let n = naive.len() as u64 / 2;
        let mut compared = 0;
        for (slot, want) in naive.iter().enumerate() {
            let turn = if (slot as u64) < n {
                Color::White
            } else {
                Color::Black
            };
            let got = g.value_at(turn, slot as u64 % n);
            assert_eq!(got, *want, "{material} {rules} {how:?} slot {slot}");
            compared += u64::from(want.is_some());
        }
        assert!(compared > 100_000, "{compared}");
    }
}

#[test]
fn generator_equals_naive_solver() {
    assert_generator_equals_naive("KNvKB", RuleSet::default());
}

/// With a pawn (pushes, promotion to ferz) and stalemates drawn.
#[test]
fn generator_equals_naive_solver_with_a_pawn_and_stalemate_draw() {
    assert_generator_equals_naive("KBvKP", "stalemate=draw".parse().unwrap());
}

/// Every table `material` reads, generated in memory.
fn sub_tables(material: shatranj_tb::Material, rules: RuleSet) -> MemoryTables {
    let mut sub = MemoryTables::new(rules);
    for m in material.with_dependencies() {
        if m != material {
            sub.generate(m).unwrap();
        }
    }
    sub
}

/// The two ways of a loss pass give the same table: with pawns, a material that is its
/// own mirror, and other rule sets. (Every other test generates with the generator's
/// own choice between them.)
#[test]
fn pulled_and_pushed_loss_passes_agree() {
    use shatranj_tb::Material;
    for (material, rules) in [
        ("KPvKQ", RuleSet::default()),
        (
            "KQvKQ",
            "bare-king=immediate,stalemate=draw".parse().unwrap(),
        ),
    ] {
        let material: Material = material.parse().unwrap();
        let sub = sub_tables(material, rules);
        let run = |how| {
            Generator::new(material, rules, &sub, &NoProgress)
                .loss_passes(how)
                .run()
                .unwrap()
        };
        let (push, pull) = (run(LossPasses::Push), run(LossPasses::Pull));
        assert!(
            push.codes == pull.codes && push.conversions == pull.conversions,
            "{material} {rules}: pulled and pushed loss passes differ"
        );
    }
}

/// The generator's state is a byte a slot with the rest spilled to a map: the table is
/// the same whatever the byte holds. Here the byte holds distances below 3 plies and
/// counts below 3 only, so that most states of every pass go through the map, on both
/// threads at once (with pawns, a material that is its own mirror, another rule set).
#[test]
fn a_table_is_the_same_when_most_states_spill() {
    use shatranj_tb::Material;
    use shatranj_tb::generate::gen_alphabet;
    for (material, rules) in [
        ("KRvKN", RuleSet::default()),
        ("KPvKQ", RuleSet::default()),
        (
            "KQvKQ",
            "bare-king=immediate,stalemate=draw".parse().unwrap(),
        ),
    ] {
        let material: Material = material.parse().unwrap();
        let sub = sub_tables(material, rules);
        let wide = Generator::new(material, rules, &sub, &NoProgress)
            .run()
            .unwrap();
        let narrow = Generator::new(material, rules, &sub, &NoProgress)
            .alphabet(gen_alphabet(4, 2))
            .run()
            .unwrap();
        // the narrow run's table still spills its longer values
        assert!(
            narrow.codes.spilled() > 1000,
            "{material}: {}",
            narrow.codes.spilled()
        );
        assert!(
            wide.codes == narrow.codes && wide.conversions == narrow.conversions,
            "{material} {rules}: the tables differ"
        );
        assert_eq!(wide.stats, narrow.stats, "{material}");
    }
}

/// A WDL file never stores a value above the true one, stores a lower one only where the
/// position's best capture or promotion gives the true value (checked here with the
/// forward move generator and the sub-tables, not the generator's own record), and does
/// so often: it is what keeps WDL files small.
#[test]
fn wdl_file_values_are_exact_or_resolved_by_a_conversion() {
    use shatranj_tb::Wdl;
    use shatranj_tb::generate::wdl_code;
    use shatranj_tb::index::TableIndex;
    let mut tb = MemoryTables::new(RuleSet::default());
    let material = "KRvKQ".parse().unwrap();
    let g = tb.generate(material).unwrap().clone();
    let index = TableIndex::new(material);
    let file = g.wdl_file_values();
    let (mut used, mut lowered) = (0u64, 0u64);
    for (slot, &stored) in file.iter().enumerate() {
        let (turn, i) = index.split_slot(slot as u64);
        let Some(exact) = g.value_at(turn, i) else {
            assert_eq!(stored, u16::MAX, "slot {slot}");
            continue;
        };
        used += 1;
        let exact_code = wdl_code(exact.wdl());
        assert!(stored <= exact_code, "slot {slot}: {stored} above {exact}");
        if stored == exact_code {
            continue;
        }
        lowered += 1;
        let pos = Position::from_board(index.decode(i).unwrap(), turn).unwrap();
        let best = pos
            .legal_moves()
            .iter()
            .filter(|m| m.is_conversion())
            .map(|m| tb.value(&pos.play_unchecked(m)).unwrap().parent().wdl())
            .max();
        assert_eq!(best, Some(exact.wdl()), "slot {slot}: {exact}");
    }
    assert!(lowered * 20 > used, "{lowered} of {used} lowered");
    assert!(file.iter().any(|&v| v == wdl_code(Wdl::Loss)));
}

/// A table with a lone pawn is made a slice at a time (one a file pair of that pawn, in
/// index scheme 2) unless told to number it as its files do (scheme 1, whole): the table
/// is the same, value for value, conversion for conversion, and so are its figures.
#[test]
fn a_table_made_in_slices_is_the_table_made_whole() {
    use shatranj_tb::Material;
    use shatranj_tb::index::TableIndex;
    for (material, rules) in [
        ("KPvKR", RuleSet::default()),
        ("KNvKP", "bare-king=immediate".parse().unwrap()),
    ] {
        let material: Material = material.parse::<Material>().unwrap().normalized();
        assert_eq!(TableIndex::for_generation(material).slices().len(), 4);
        let sub = sub_tables(material, rules);
        let run = |g: Generator<'_>| g.run().unwrap();
        let sliced = run(Generator::new(material, rules, &sub, &NoProgress));
        let whole = run(Generator::new(material, rules, &sub, &NoProgress)
            .index_scheme(1)
            .unwrap());
        assert!(sliced.codes.len() > 1_000_000, "{material}");
        assert!(
            sliced.codes == whole.codes && sliced.conversions == whole.conversions,
            "{material} {rules}: the tables differ"
        );
        assert_eq!(sliced.stats, whole.stats, "{material}");
    }
}
