//! `official/<category>/<name>`: the optional skills compiled into knack, trust
//! `builtin`. `KNACK_OPTIONAL_SKILLS` may point at a folder to use instead.

use std::borrow::Cow;

use futures::future::BoxFuture;
use skill_bundle::{BundleTree, BundledSkill, Lookup};
use skill_guard::TrustLevel;

use super::{FetchContext, Fetched, Member, SkillMeta, SkillSource, meta_from_text};
use crate::identifier::Identifier;
use crate::{Error, Result};

/// Replaces the compiled-in optional skills with a folder (tests, previews).
pub const OPTIONAL_OVERRIDE_ENV: &str = "KNACK_OPTIONAL_SKILLS";

pub(crate) struct OfficialSource {
    id: Identifier,
}

impl OfficialSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn path(&self) -> Option<&str> {
        match &self.id {
            Identifier::Official { path } => path.as_deref(),
            _ => None,
        }
    }

    /// The official skills this identifier covers: all of them, those of a
    /// category, or the one it names.
    fn covered<'t>(&'t self, tree: &'t BundleTree) -> impl Iterator<Item = &'t BundledSkill> + 't {
        let prefix = self.path().map(|p| format!("{p}/"));
        tree.skills()
            .iter()
            .filter(move |s| match (&prefix, self.path()) {
                (Some(pre), Some(p)) => s.id == p || s.id.starts_with(pre.as_str()),
                _ => true,
            })
    }
}

fn tree() -> Result<Cow<'static, BundleTree>> {
    match std::env::var_os(OPTIONAL_OVERRIDE_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => BundleTree::from_dir(std::path::Path::new(&dir))
            .map(Cow::Owned)
            .map_err(|e| Error::Fetch(format!("cannot read {OPTIONAL_OVERRIDE_ENV}: {e}"))),
        None => Ok(Cow::Borrowed(skill_bundle::optional())),
    }
}

fn meta(tree: &BundleTree, skill: &BundledSkill) -> SkillMeta {
    let text = tree
        .skill_files(skill)
        .find(|(p, _)| *p == "SKILL.md")
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let (name, description, tags) = meta_from_text(&text, Some(skill.name()))
        .unwrap_or_else(|| (skill.name().to_owned(), String::new(), Vec::new()));
    SkillMeta {
        name,
        description,
        identifier: format!("official/{}", skill.id),
        source: "official".into(),
        trust: TrustLevel::Builtin,
        tags,
    }
}

impl SkillSource for OfficialSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, _ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let tree = tree()?;
            Ok(self.covered(&tree).map(|s| meta(&tree, s)).collect())
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let tree = tree()?;
            let found = match self.path() {
                Some(path) => tree.find(path),
                None => Lookup::NotFound,
            };
            let skill = match found {
                Lookup::Found(s) => s,
                Lookup::Ambiguous(list) => {
                    let ids: Vec<String> =
                        list.iter().map(|s| format!("official/{}", s.id)).collect();
                    return Err(Error::Identifier(format!(
                        "{} is ambiguous: {}",
                        self.id,
                        ids.join(", ")
                    )));
                }
                // `official` or `official/<category>`: the skills it covers.
                Lookup::NotFound if self.covered(&tree).next().is_some() => {
                    let members = self
                        .covered(&tree)
                        .map(|s| {
                            let m = meta(&tree, s);
                            Member {
                                name: m.name,
                                description: m.description,
                                path: s.id.clone(),
                                identifier: Some(m.identifier),
                                tags: m.tags,
                            }
                        })
                        .collect();
                    return Err(Error::Collection {
                        identifier: self.id.to_string(),
                        members,
                    });
                }
                Lookup::NotFound => {
                    return Err(Error::Fetch(format!(
                        "there is no official skill '{}' (see `knack skills browse --source official`)",
                        self.path().unwrap_or_default()
                    )));
                }
            };
            let dir = ctx.scratch.join(skill.name());
            for (rel, bytes) in tree.skill_files(skill) {
                let target = dir.join(rel);
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
                }
                std::fs::write(&target, bytes).map_err(|e| Error::io(&target, e))?;
                if rel.starts_with("scripts/") {
                    make_executable(&target);
                }
            }
            Ok(Fetched {
                dir,
                category: skill.category().map(str::to_owned),
            })
        })
    }
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
}
