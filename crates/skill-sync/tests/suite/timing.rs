//! The no-op start-up sync: what it must do (a plain test) and what it costs
//! (an ignored measurement that `cargo xtask bench sync` runs in release).

use super::fixture::Fixture;
use test_support::print_bench;

/// The behaviour the measurement below relies on; its cost is not checked
/// here, since `cargo test` runs on machines of every speed and load.
#[test]
fn repeated_no_op_syncs_stay_on_the_fast_path() {
    let fx = Fixture::new();
    fx.sync();
    let bundle = fx.bundle();
    for _ in 0..3 {
        assert!(skill_sync::sync_if_needed(&fx.skills(), &bundle).fast_path);
        assert!(skill_sync::is_current(&fx.skills(), &bundle));
    }
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

    // The compiled-in bundle's set hash is computed at build time, so this
    // is the manifest read and compare alone.
    let samples = time_each(2_000, || {
        assert!(std::hint::black_box(skill_sync::is_current(
            &skills, bundle
        )));
    });
    print_bench("noop_is_current", samples);
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
