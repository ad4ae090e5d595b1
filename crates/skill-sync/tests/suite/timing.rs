//! Rough cost of the start-up check when nothing changed (printed, not asserted).

use super::fixture::Fixture;

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
