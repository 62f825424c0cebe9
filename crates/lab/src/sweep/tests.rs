//! The sweep directory's promises: shards merged equal the whole sweep row for row, a resumed
//! sweep writes every point once, and the rows do not depend on the number of threads.

use super::*;
use schedlab_report::shard::Shard;

fn plan() -> Plan {
    let grid: Grid = yaml_serde::from_str(
        "policies: [fcfs, 'rr:quantum=2ms', eevdf]\ngenerate: 'poisson:n=40,mean=4ms'\nvary: {rate: [60, 180]}\n\
         cpus: [1, 2]\nseeds: 3\n",
    )
    .unwrap();
    Plan::new(grid, vec![]).unwrap()
}

fn csv(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(ROWS)).unwrap()
}

#[test]
fn shards_merged_equal_the_whole_sweep_row_for_row() {
    let p = plan();
    let tmp = tempfile::tempdir().unwrap();
    let whole = run(&p, &tmp.path().join("whole"), false, None, 2, &mut |_, _| {}).unwrap();
    assert_eq!(whole.rows.rows.len(), 3 * 2 * 2 * 3, "policies × rates × cpus × seeds");
    let shards: Vec<PathBuf> = (1..=3).map(|k| tmp.path().join(format!("s{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let d = run(&p, dir, false, Some(Shard { k: k + 1, n: 3 }), 1, &mut |_, _| {}).unwrap();
        assert_eq!(d.rows.rows.len(), 12);
    }
    assert!(merge(&shards[..2], &tmp.path().join("partial")).unwrap_err().to_string().contains("missing"));
    let (m, merged) = merge(&shards, &tmp.path().join("merged")).unwrap();
    assert_eq!((m.shard, merged), (None, whole.rows));
    assert_eq!(csv(&tmp.path().join("merged")), csv(&tmp.path().join("whole")));
    assert!(tmp.path().join("merged").join(PARQUET).exists());
    let again = merge(&[shards[0].clone(), shards[0].clone(), shards[1].clone()], &tmp.path().join("twice"));
    assert!(again.unwrap_err().to_string().contains("two shards"));
}

#[test]
fn a_resumed_sweep_keeps_its_rows_and_runs_only_the_rest() {
    let p = plan();
    let tmp = tempfile::tempdir().unwrap();
    let whole_dir = tmp.path().join("whole");
    run(&p, &whole_dir, false, None, 2, &mut |_, _| {}).unwrap();
    // What a killed sweep leaves: the manifest, some rows in finishing order, a torn line.
    let dir = tmp.path().join("killed");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(whole_dir.join(MANIFEST), dir.join(MANIFEST)).unwrap();
    let text = csv(&whole_dir);
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    let kept: Vec<&str> = lines.iter().rev().step_by(2).copied().collect();
    let torn = &lines[1][..lines[1].len() / 2];
    std::fs::write(dir.join(ROWS), format!("{header}\n{}\n{torn}", kept.join("\n"))).unwrap();
    assert!(run(&p, &dir, false, None, 2, &mut |_, _| {}).unwrap_err().to_string().contains("--resume"));
    let d = run(&p, &dir, true, None, 2, &mut |_, _| {}).unwrap();
    assert_eq!((d.kept, d.ran.points, d.cut_bytes as usize), (kept.len(), lines.len() - kept.len(), torn.len()));
    assert_eq!(csv(&dir), text, "every point once, in order, the same values");
    let other = Plan::new(Grid { seeds: grid::Seeds::Count(2), ..p.grid.clone() }, vec![]).unwrap();
    assert!(run(&other, &dir, true, None, 2, &mut |_, _| {}).unwrap_err().to_string().contains("another sweep"));
}

#[test]
fn rows_do_not_depend_on_the_number_of_threads() {
    let p = plan();
    let all: Vec<usize> = (0..p.points.len()).collect();
    let (one, two, same) = measure_scaling(&p, &all, 2).unwrap();
    assert!(same);
    assert_eq!((one.points, two.points), (36, 36));
}
