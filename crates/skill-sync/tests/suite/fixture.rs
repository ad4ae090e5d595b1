//! A bundle source folder and a user home, both in temp dirs.

use std::path::{Path, PathBuf};

use skill_bundle::BundleTree;
use skill_sync::{Manifest, SyncReport, manifest};

pub const BASE: &[(&str, &str)] = &[
    ("ops/DESCRIPTION.md", "Keeping services alive.\n"),
    (
        "ops/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Use when alpha things happen\n---\n# Alpha\nstep one\nstep two\n",
    ),
    ("ops/alpha/references/notes.md", "note\n"),
    (
        "ops/beta/SKILL.md",
        "---\nname: beta\ndescription: Use when beta\n---\n# Beta\n",
    ),
    ("data/DESCRIPTION.md", "Working with data.\n"),
    (
        "data/gamma/SKILL.md",
        "---\nname: gamma\ndescription: Use when gamma\n---\n# Gamma\n",
    ),
    ("data/gamma/scripts/run.sh", "#!/bin/sh\necho gamma\n"),
];

pub struct Fixture {
    pub src: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let fx = Fixture {
            src: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        };
        for (rel, text) in BASE {
            fx.write_src(rel, text);
        }
        fx
    }

    pub fn bundle(&self) -> BundleTree {
        BundleTree::from_dir(self.src.path()).unwrap()
    }

    pub fn skills(&self) -> PathBuf {
        self.home.path().join("skills")
    }

    pub fn sync(&self) -> SyncReport {
        let report = skill_sync::sync(&self.skills(), &self.bundle());
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        report
    }

    pub fn sync_if_needed(&self) -> SyncReport {
        skill_sync::sync_if_needed(&self.skills(), &self.bundle())
    }

    pub fn write_src(&self, rel: &str, text: &str) {
        write(&self.src.path().join(rel), text);
    }

    pub fn write_user(&self, rel: &str, text: &str) {
        write(&self.skills().join(rel), text);
    }

    pub fn read_user(&self, rel: &str) -> String {
        std::fs::read_to_string(self.skills().join(rel)).unwrap()
    }

    pub fn user_exists(&self, rel: &str) -> bool {
        self.skills().join(rel).exists()
    }

    pub fn manifest(&self) -> Manifest {
        match manifest::read(&self.skills()).unwrap() {
            manifest::Loaded::Ok(m) => m,
            other => panic!("manifest not clean: {other:?}"),
        }
    }

    pub fn hash_of(&self, id: &str) -> String {
        self.bundle().skill(id).unwrap().hash.clone()
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}
