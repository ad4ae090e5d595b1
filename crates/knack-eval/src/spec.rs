//! The inputs of the three modes: a triggers file, a tasks file, and a folder
//! of task families. Paths inside a file are read relative to that file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Error, Result};

/// One line of a triggers file: a prompt and the skill that should fire (`None` for `none`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerCase {
    pub prompt: String,
    pub expected: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrigger {
    prompt: String,
    skill: String,
}

/// Reads a triggers file: a YAML list of `{prompt, skill: NAME | none}`.
pub fn load_triggers(path: &Path) -> Result<Vec<TriggerCase>> {
    let raw: Vec<RawTrigger> = read_yaml(path, "a list of {prompt: \"...\", skill: NAME | none}")?;
    if raw.is_empty() {
        return Err(Error::spec(
            path,
            "the file lists no prompts; add at least one {prompt: \"...\", skill: NAME | none}",
        ));
    }
    raw.into_iter()
        .enumerate()
        .map(|(i, t)| {
            if t.prompt.trim().is_empty() {
                return Err(Error::spec(
                    path,
                    format!("entry {}: the prompt is empty", i + 1),
                ));
            }
            let skill = t.skill.trim();
            if skill.is_empty() {
                return Err(Error::spec(
                    path,
                    format!(
                        "entry {}: `skill` is empty; write a skill name or `none`",
                        i + 1
                    ),
                ));
            }
            Ok(TriggerCase {
                prompt: t.prompt,
                expected: (!skill.eq_ignore_ascii_case("none")).then(|| skill.to_owned()),
            })
        })
        .collect()
}

/// One task of a tasks file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSpec {
    pub prompt: String,
    /// Copied as the workspace; an empty workspace when absent.
    pub fixture: Option<PathBuf>,
    /// A shell command run in the workspace after the session; exit 0 = pass.
    pub verify: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    prompt: String,
    #[serde(default)]
    fixture: Option<PathBuf>,
    verify: String,
}

/// Reads a tasks file: a YAML list of `{prompt, fixture (optional), verify}`.
pub fn load_tasks(path: &Path) -> Result<Vec<TaskSpec>> {
    let raw: Vec<RawTask> = read_yaml(
        path,
        "a list of {prompt: \"...\", fixture: DIR (optional), verify: \"shell command\"}",
    )?;
    if raw.is_empty() {
        return Err(Error::spec(path, "the file lists no tasks"));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    raw.into_iter()
        .enumerate()
        .map(|(i, t)| {
            if t.prompt.trim().is_empty() || t.verify.trim().is_empty() {
                return Err(Error::spec(
                    path,
                    format!("task {}: `prompt` and `verify` must not be empty", i + 1),
                ));
            }
            let fixture = t.fixture.map(|f| base.join(f));
            if let Some(dir) = &fixture
                && !dir.is_dir()
            {
                return Err(Error::spec(
                    path,
                    format!(
                        "task {}: the fixture {} is not a folder",
                        i + 1,
                        dir.display()
                    ),
                ));
            }
            Ok(TaskSpec {
                prompt: t.prompt,
                fixture,
                verify: t.verify,
            })
        })
        .collect()
}

/// A task family: several instances of one procedure on different inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: String,
    pub description: String,
    /// A control family measures whether learned skills hurt unrelated work.
    pub control: bool,
    /// A skill folder given to the `curated` arm from the start.
    pub curated_skill: Option<PathBuf>,
    /// That skill's name, from its frontmatter.
    pub curated_name: Option<String>,
    pub dir: PathBuf,
    pub instances: Vec<Instance>,
}

/// One instance of a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub name: String,
    pub prompt: String,
    pub fixture: Option<PathBuf>,
    pub verify: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFamily {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    control: bool,
    #[serde(default)]
    curated_skill: Option<PathBuf>,
}

/// The fewest instances a family needs: the learning curve needs repetitions.
pub const MIN_INSTANCES: usize = 2;

/// Reads every family under `dir` (folders holding a `family.yaml`), sorted by name.
pub fn load_families(dir: &Path) -> Result<Vec<Family>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut families = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        if path.join("family.yaml").is_file() {
            families.push(load_family(&path)?);
        }
    }
    if families.is_empty() {
        return Err(Error::spec(
            dir,
            "no task families here: each family is a folder with a family.yaml (see docs/eval.md)",
        ));
    }
    families.sort_by(|a, b| a.name.cmp(&b.name));
    for pair in families.windows(2) {
        if pair[0].name == pair[1].name {
            return Err(Error::spec(
                &pair[1].dir,
                format!("the family name '{}' is used twice", pair[1].name),
            ));
        }
    }
    Ok(families)
}

/// Reads one family folder.
pub fn load_family(dir: &Path) -> Result<Family> {
    let file = dir.join("family.yaml");
    let raw: RawFamily = read_yaml(
        &file,
        "a mapping with name, description, control: bool, curated_skill: PATH (optional)",
    )?;
    let curated_skill = raw.curated_skill.map(|p| dir.join(p));
    let curated_name = match &curated_skill {
        Some(skill) => Some(curated_name(&file, skill)?),
        None => None,
    };
    let mut instances = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.join("task.md").is_file() {
            instances.push(load_instance(&path)?);
        }
    }
    instances.sort_by(|a, b| a.name.cmp(&b.name));
    if instances.len() < MIN_INSTANCES {
        return Err(Error::spec(
            dir,
            format!(
                "the family has {} instance(s); it needs at least {MIN_INSTANCES} folders holding a task.md",
                instances.len()
            ),
        ));
    }
    Ok(Family {
        name: raw.name,
        description: raw.description,
        control: raw.control,
        curated_skill,
        curated_name,
        dir: dir.to_path_buf(),
        instances,
    })
}

/// The `name:` of the curated skill's frontmatter: the name the model sees and
/// loads, which the report needs to tell activation from bypass.
fn curated_name(family_file: &Path, skill: &Path) -> Result<String> {
    let path = skill.join("SKILL.md");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        Error::spec(
            family_file,
            format!("curated_skill: {} holds no SKILL.md", skill.display()),
        )
    })?;
    let parsed = skill_core::frontmatter::parse_skill_md(&text)
        .map_err(|e| Error::spec(&path, format!("the frontmatter cannot be read: {e:?}")))?;
    parsed
        .frontmatter
        .name
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| Error::spec(&path, "the curated skill has no `name:` in its frontmatter"))
}

fn load_instance(dir: &Path) -> Result<Instance> {
    let task = dir.join("task.md");
    let prompt = std::fs::read_to_string(&task).map_err(|e| Error::io(&task, e))?;
    if prompt.trim().is_empty() {
        return Err(Error::spec(&task, "the task is empty"));
    }
    let verify = dir.join("verify.sh");
    if !verify.is_file() {
        return Err(Error::spec(
            dir,
            "no verify.sh: every instance needs a verifier (exit 0 = pass)",
        ));
    }
    let fixture = dir.join("fixture");
    Ok(Instance {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        prompt,
        fixture: fixture.is_dir().then_some(fixture),
        verify,
    })
}

fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path, shape: &str) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_saphyr::from_str(&text).map_err(|e| {
        let name = path.display().to_string();
        let detail = e.render_with_options(serde_saphyr::render_options! {
            source_name: Some(name.as_str()),
        });
        Error::spec(path, format!("expected {shape}\n{detail}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn triggers_read_none_as_no_skill() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yaml");
        write(
            &file,
            "- {prompt: \"deploy it\", skill: deploy}\n- prompt: hello\n  skill: none\n",
        );
        let cases = load_triggers(&file).unwrap();
        assert_eq!(cases[0].expected.as_deref(), Some("deploy"));
        assert_eq!(cases[1].expected, None);
    }

    #[test]
    fn a_bad_triggers_file_names_the_file_and_the_shape() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yaml");
        write(&file, "- {prompt: x}\n");
        let err = load_triggers(&file).unwrap_err().to_string();
        assert!(err.contains("t.yaml"), "{err}");
        assert!(err.contains("skill: NAME | none"), "{err}");
    }

    #[test]
    fn tasks_resolve_fixtures_beside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fx")).unwrap();
        let file = dir.path().join("tasks.yaml");
        write(&file, "- {prompt: p, fixture: fx, verify: \"true\"}\n");
        let tasks = load_tasks(&file).unwrap();
        assert_eq!(
            tasks[0].fixture.as_deref(),
            Some(dir.path().join("fx").as_path())
        );
        write(&file, "- {prompt: p, fixture: missing, verify: \"true\"}\n");
        assert!(
            load_tasks(&file)
                .unwrap_err()
                .to_string()
                .contains("not a folder")
        );
    }

    #[test]
    fn families_need_instances_with_verifiers() {
        let dir = tempfile::tempdir().unwrap();
        let fam = dir.path().join("fam");
        write(
            &fam.join("family.yaml"),
            "name: fam\ndescription: d\ncontrol: false\n",
        );
        for i in ["a", "b"] {
            write(&fam.join(i).join("task.md"), "do it");
            write(&fam.join(i).join("verify.sh"), "true");
        }
        let families = load_families(dir.path()).unwrap();
        assert_eq!(families[0].instances.len(), 2);
        assert!(!families[0].control);
        std::fs::remove_file(fam.join("b").join("verify.sh")).unwrap();
        assert!(
            load_families(dir.path())
                .unwrap_err()
                .to_string()
                .contains("verify.sh")
        );
    }
}
