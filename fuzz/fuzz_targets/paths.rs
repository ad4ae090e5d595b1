//! Fuzzes the two path gates: `validate_support_path` (what skill_manage may write)
//! and `skill_view`'s file refusal (what a model may read) against a fixture with a secret outside.
#![no_main]

use std::path::{Component, Path};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use skill_core::validate::validate_support_path;
use skill_core::{DiscoveryOptions, PreprocessOptions, Scope, SkillRoot, SkillSet, ViewContext};

const SECRET: &str = "FUZZ-SECRET-OUTSIDE-THE-SKILL";

struct Fixture {
    _dir: tempfile::TempDir,
    set: SkillSet,
    env: knack_config::EnvFile,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("skills");
        let skill = root.join("demo");
        std::fs::create_dir_all(skill.join("references")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: demo\ndescription: Use when fuzzing\n---\n# Demo\nbody\n",
        )
        .unwrap();
        std::fs::write(skill.join("references/ok.md"), "fine\n").unwrap();
        std::fs::write(dir.path().join("outside/secret.txt"), SECRET).unwrap();
        std::fs::write(dir.path().join("skills/secret.txt"), SECRET).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("../../../outside/secret.txt", skill.join("references/out"))
                .unwrap();
            std::os::unix::fs::symlink("../../outside", skill.join("references/dir")).unwrap();
            std::os::unix::fs::symlink("/", skill.join("assets")).unwrap();
        }
        let options = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: root,
            scope: Scope::User,
        }]);
        let (set, _) = skill_core::discover(&options);
        assert_eq!(set.skills.len(), 1, "fixture skill not found");
        Fixture {
            _dir: dir,
            set,
            env: knack_config::EnvFile::default(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let path = String::from_utf8_lossy(data);
    if validate_support_path(&path).is_ok() {
        let parts: Vec<Component> = Path::new(path.as_ref()).components().collect();
        assert!(parts.len() >= 2, "accepted {path:?}");
        assert!(
            parts.iter().all(|c| matches!(c, Component::Normal(_))),
            "accepted {path:?} with a non-plain part"
        );
    }
    let fx = fixture();
    let ctx = ViewContext {
        preprocess: PreprocessOptions::from_config(&knack_config::SkillsConfig::default()),
        session_id: None,
        env: &fx.env,
    };
    let view = skill_core::skill_view(&fx.set, "demo", Some(&path), &ctx);
    if view["success"] == serde_json::Value::Bool(true) {
        let content = view["content"].as_str().unwrap_or_default();
        assert!(
            !content.contains(SECRET),
            "{path:?} read a file outside the skill"
        );
    }
    // The name argument goes through its own checks.
    let by_name = skill_core::skill_view(&fx.set, &path, None, &ctx);
    if by_name["success"] == serde_json::Value::Bool(true) {
        assert_eq!(by_name["name"], "demo");
    }
});
