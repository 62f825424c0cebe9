//! Unit tests of the rt-app reader and writer's inner steps.

use super::export::burst_groups;
use super::*;

const MS: Dur = 1_000_000;

#[test]
fn comments_and_trailing_commas_are_stripped_outside_strings() {
    let text = "{ /* a */ \"a\" : [1, 2,], // b\n \"s\": \"/* kept */ // kept,}\", }";
    let node = parse_document(text).unwrap();
    assert_eq!(
        node,
        Node::obj(vec![
            ("a", Node::Arr(vec![Node::Int(1), Node::Int(2)])),
            ("s", Node::Str("/* kept */ // kept,}".into()))
        ])
    );
    assert_eq!(parse_document("{ /* open").unwrap_err().key, "json");
}

#[test]
fn objects_keep_document_order() {
    let Node::Obj(e) = parse_document(r#"{"sleep": 1, "run": 2, "a": 3}"#).unwrap() else { panic!() };
    assert_eq!(e.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["sleep", "run", "a"]);
}

#[test]
fn events_match_by_prefix_as_in_rt_app() {
    assert_eq!(event_name("run0"), Some("run"));
    assert_eq!(event_name("runtime2"), Some("runtime"));
    assert_eq!(event_name("sleep_b"), Some("sleep"));
    assert_eq!(event_name("unlock"), Some("unlock"));
    assert_eq!(event_name("membind_nodes"), Some("mem"));
    assert_eq!(event_name("loop"), None);
    assert_eq!(event_name("delay"), None);
}

#[test]
fn sleeps_merge_lead_and_trail() {
    let w = import(
        r#"{"tasks": {"t": {"loop": 2, "sleep0": 5000, "run0": 1000, "run1": 2000, "sleep1": 0, "sleep2": 4000}}}"#,
    )
    .unwrap();
    let t = &w.tasks[0];
    // sleep 5, run 3, sleep 4, sleep 5, run 3, sleep 4 → arrival 5, [3, 9, 3].
    assert_eq!(t.arrival, 5 * MS);
    assert_eq!(t.bursts.to_vec(), vec![3 * MS, 9 * MS, 3 * MS]);
}

#[test]
fn burst_groups_are_runs_of_equal_pairs() {
    let g = burst_groups(&[1, 2, 1, 2, 3, 4, 5], &vec![Vec::new(); 7]);
    let lens: Vec<(u64, Vec<Dur>)> = g.into_iter().map(|(n, b)| (n, b.into_iter().map(|x| x.1).collect())).collect();
    assert_eq!(lens, vec![(2, vec![1, 2]), (1, vec![3, 4]), (1, vec![5])]);
}
