//! A lost or damaged manifest, interrupted updates, failures and the lock.

use pretty_assertions::assert_eq;
use skill_sync::{ManifestState, manifest};

use super::fixture::{Fixture, ids};

#[test]
fn a_lost_manifest_is_rebuilt_without_losing_an_edit() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_user("ops/alpha/SKILL.md", "edited\n");
    std::fs::remove_file(fx.skills().join(manifest::MANIFEST_FILE)).unwrap();

    let report = fx.sync_if_needed();
    assert_eq!(report.manifest, ManifestState::Missing);
    assert_eq!(report.customized, ids(&["ops/alpha"]));
    assert_eq!(report.adopted, ids(&["data/gamma", "ops/beta"]));
    assert!(report.added.is_empty());
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "edited\n");
    assert_eq!(fx.manifest().entries.len(), 3);

    // Afterwards the edit is still protected from updates, and untouched
    // copies still receive them.
    fx.write_src("ops/alpha/SKILL.md", "alpha v2\n");
    fx.write_src("ops/beta/SKILL.md", "beta v2\n");
    let report = fx.sync();
    assert_eq!(report.customized, ids(&["ops/alpha"]));
    assert_eq!(report.updated, ids(&["ops/beta"]));
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "edited\n");
    assert_eq!(fx.read_user("ops/beta/SKILL.md"), "beta v2\n");
}

#[test]
fn without_a_manifest_a_missing_bundled_skill_is_seeded() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    std::fs::remove_file(fx.skills().join(manifest::MANIFEST_FILE)).unwrap();
    let report = fx.sync();
    assert_eq!(report.added, ids(&["ops/beta"]));
}

#[test]
fn a_corrupt_manifest_keeps_good_lines_and_is_rewritten() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    fx.write_user("ops/alpha/SKILL.md", "edited\n");
    let path = fx.skills().join(manifest::MANIFEST_FILE);
    let good = std::fs::read_to_string(&path).unwrap();
    // Keep beta's line (the deletion must survive) and damage the others.
    let beta_line = good.lines().find(|l| l.starts_with("ops/beta:")).unwrap();
    std::fs::write(
        &path,
        format!("{beta_line}\nops/alpha:not-a-hash\n\u{0}\u{1}garbage\n"),
    )
    .unwrap();

    let report = fx.sync_if_needed();
    assert_eq!(report.manifest, ManifestState::Corrupt);
    assert_eq!(report.deleted, ids(&["ops/beta"]));
    assert_eq!(report.customized, ids(&["ops/alpha"]));
    assert_eq!(report.adopted, ids(&["data/gamma"]));
    assert!(!fx.user_exists("ops/beta"));
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "edited\n");
    assert!(report.problems().iter().any(|p| p.contains("damaged")));
    // The rewritten manifest is clean and current.
    assert_eq!(fx.manifest().entries.len(), 3);
    assert!(fx.sync_if_needed().fast_path);
}

#[test]
fn a_non_utf8_manifest_is_treated_as_corrupt() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::write(
        fx.skills().join(manifest::MANIFEST_FILE),
        [0xff, 0xfe, 0xfd],
    )
    .unwrap();
    let report = fx.sync();
    assert_eq!(report.manifest, ManifestState::Corrupt);
    assert_eq!(report.adopted.len(), 3);
}

#[test]
fn an_update_interrupted_between_renames_is_repaired() {
    let fx = Fixture::new();
    fx.sync();
    // Simulate a crash after the user's copy was moved aside.
    let aside = fx.skills().join(".sync-staging/old/ops/alpha");
    std::fs::create_dir_all(aside.parent().unwrap()).unwrap();
    std::fs::rename(fx.skills().join("ops/alpha"), &aside).unwrap();
    std::fs::create_dir_all(fx.skills().join(".sync-staging/new/ops/alpha")).unwrap();

    let report = fx.sync();
    assert_eq!(report.recovered, ids(&["ops/alpha"]));
    assert!(report.deleted.is_empty(), "the copy is back, not deleted");
    assert!(fx.user_exists("ops/alpha/SKILL.md"));
    assert!(!fx.user_exists(".sync-staging"));
}

#[test]
fn a_failed_skill_is_retried_and_blocks_the_fast_path() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.skills()).unwrap();
    // A file where the `data` category folder must go.
    std::fs::write(fx.skills().join("data"), "in the way").unwrap();
    let report = skill_sync::sync(&fx.skills(), &fx.bundle());
    assert!(
        report.errors.iter().any(|e| e.starts_with("data/gamma")),
        "{:?}",
        report.errors
    );
    assert_eq!(report.added, ids(&["ops/alpha", "ops/beta"]));
    assert!(!report.problems().is_empty());
    assert!(!skill_sync::is_current(&fx.skills(), &fx.bundle()));

    std::fs::remove_file(fx.skills().join("data")).unwrap();
    let retry = fx.sync_if_needed();
    assert!(!retry.fast_path);
    assert_eq!(retry.added, ids(&["data/gamma"]));
    assert!(fx.sync_if_needed().fast_path);
}

#[test]
fn a_sync_already_running_elsewhere_is_left_alone() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.skills()).unwrap();
    let held = std::fs::File::create(fx.skills().join(skill_sync::sync::LOCK_FILE)).unwrap();
    held.lock().unwrap();
    let report = fx.sync_if_needed();
    assert!(report.busy);
    assert!(!fx.user_exists("ops/alpha"));
    held.unlock().unwrap();
    assert_eq!(fx.sync_if_needed().added.len(), 3);
}
