//! Rough cost of the start-up check when nothing changed (printed, not asserted).

use super::fixture::Fixture;
use test_support::print_bench;

#[test]
fn no_op_sync_cost_is_printed() {
    let fx = Fixture::new();
    fx.sync();
    let bundle = fx.bundle();
    let rounds = 200;
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        assert!(skill_sync::sync_if_needed(&fx.skills(), &bundle).fast_path);
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    // The compiled-in bundle: its set hash is computed at build time.
    let embedded = skill_bundle::bundled();
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(skill_sync::is_current(&fx.skills(), embedded));
    }
    let check = start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    eprintln!("no-op sync: {per:.1} µs per call; set-hash check alone: {check:.1} µs");
}

/// The start-up hook on a home seeded before: what every knack command pays
/// when the bundle has not changed. `cargo xtask bench sync` runs this in
/// release and reads the `BENCH` lines (median, min and max in ms).
#[test]
#[ignore = "measurement: run in release via `cargo xtask bench sync`"]
fn bench_noop_sync() {
    let dir = tempfile::tempdir().unwrap();
    let home = knack_config::KnackHome::at(dir.path().join("home"));
    let config = knack_config::Config::default();
    let first = skill_sync::seed_on_start(&home, &config).unwrap().unwrap();
    assert!(first.errors.is_empty(), "{:?}", first.errors);
    assert!(!first.fast_path && !first.added.is_empty(), "{first:?}");

    let samples = time_each(2_000, || {
        let report = skill_sync::seed_on_start(&home, &config).unwrap().unwrap();
        assert!(report.fast_path, "{report:?}");
    });
    print_bench("noop_seed_on_start", samples);

    let bundle = skill_bundle::bundled();
    let skills = home.skills_dir();
    let samples = time_each(2_000, || {
        assert!(skill_sync::sync_if_needed(&skills, bundle).fast_path);
    });
    print_bench("noop_sync_if_needed", samples);
}

fn time_each(rounds: usize, mut work: impl FnMut()) -> Vec<std::time::Duration> {
    (0..rounds)
        .map(|_| {
            let start = std::time::Instant::now();
            work();
            start.elapsed()
        })
        .collect()
}
