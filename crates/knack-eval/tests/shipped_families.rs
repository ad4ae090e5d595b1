//! The task families shipped in the repository's `evals/`: enough of them,
//! each verifier rejects the untouched fixture and accepts the reference
//! solution, so a pass in `knack eval loop` means the chore was done.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use knack_eval::runner::{Verifier, verify};
use knack_eval::setup::{copy_tree, workspace};
use knack_eval::spec::load_families;

fn evals_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../evals")
}

#[test]
fn eight_task_families_and_two_controls_of_five_instances() {
    let families = load_families(&evals_dir()).unwrap();
    let tasks: Vec<_> = families.iter().filter(|f| !f.control).collect();
    let controls: Vec<_> = families.iter().filter(|f| f.control).collect();
    assert!(tasks.len() >= 8, "{} task families", tasks.len());
    assert!(controls.len() >= 2, "{} control families", controls.len());
    for family in &families {
        assert!(
            family.instances.len() >= 5,
            "{} has {} instances",
            family.name,
            family.instances.len()
        );
        assert!(!family.description.is_empty(), "{}", family.name);
        let folder = family.dir.file_name().unwrap().to_string_lossy();
        assert_eq!(family.name, folder, "a family's name is its folder's");
        if let Some(skill) = &family.curated_skill {
            let text = std::fs::read_to_string(skill.join("SKILL.md")).unwrap();
            assert!(
                text.contains("description:") && text.contains("Use when"),
                "{}",
                skill.display()
            );
        }
    }
}

#[test]
fn every_verifier_rejects_the_fixture_and_accepts_the_reference_solution() {
    for family in load_families(&evals_dir()).unwrap() {
        for instance in &family.instances {
            let label = format!("{}/{}", family.name, instance.name);
            let verifier = Verifier::Script(instance.verify.clone());
            let untouched = workspace(instance.fixture.as_deref()).unwrap();
            let verdict = verify(&verifier, untouched.path()).unwrap();
            assert!(
                !verdict.passed,
                "{label}: the untouched fixture passes its verifier"
            );

            let solved = tempfile::tempdir().unwrap();
            if let Some(fixture) = &instance.fixture {
                copy_tree(fixture, solved.path()).unwrap();
            }
            let solution = instance.verify.with_file_name("solution.sh");
            let status = std::process::Command::new("sh")
                .arg(&solution)
                .current_dir(solved.path())
                .status()
                .unwrap();
            assert!(status.success(), "{label}: solution.sh failed");
            let verdict = verify(&verifier, solved.path()).unwrap();
            assert!(
                verdict.passed,
                "{label}: the verifier rejects the reference solution: {}",
                verdict.output_tail
            );
        }
    }
}

#[test]
fn no_verifier_or_solution_is_inside_a_fixture() {
    for family in load_families(&evals_dir()).unwrap() {
        for instance in &family.instances {
            let Some(fixture) = &instance.fixture else {
                continue;
            };
            for entry in walkdir::WalkDir::new(fixture) {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                assert!(
                    name != "verify.sh" && name != "solution.sh",
                    "{}: {name} would be visible to the agent",
                    fixture.display()
                );
            }
        }
    }
}
