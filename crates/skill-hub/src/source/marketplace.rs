//! `marketplace:<repository>[::<plugin>[/<skill>]]`: a Claude Code plugin
//! marketplace. Its `.claude-plugin/marketplace.json` lists plugins, each in
//! the marketplace's own repository or in another one (git, GitHub); the
//! skills of a plugin are its `skills/` folders.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde_json::Value;

use super::{
    FetchContext, Fetched, FetchedMember, Member, SkillMeta, SkillSource, open, read_meta,
};
use crate::identifier::{Identifier, is_plugin_part};
use crate::safe_tree::skills_in_tree;
use crate::{Error, Result};

/// Where a marketplace keeps its list, relative to the repository root.
pub const MARKETPLACE_FILE: &str = ".claude-plugin/marketplace.json";

/// Largest marketplace.json read (the official one is about 130 KB).
const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

pub(crate) struct MarketplaceSource {
    id: Identifier,
}

/// One plugin entry of marketplace.json, as knack reads it.
#[derive(Debug, Clone, PartialEq)]
struct PluginEntry {
    name: String,
    description: String,
    origin: PluginOrigin,
    /// The entry's `skills` paths (relative to the plugin's folder); empty
    /// means the plugin's `skills/` folder.
    skill_paths: Vec<String>,
}

/// Where a plugin's files are.
#[derive(Debug, Clone, PartialEq)]
enum PluginOrigin {
    /// A folder of the marketplace's own repository.
    Here(String),
    /// Another repository, fetched like any identifier of that kind.
    Remote(Identifier),
    /// A kind knack does not fetch (npm, pip), with the reason.
    Unsupported(String),
}

/// One skill of a plugin, found on disk.
struct FoundSkill {
    plugin: String,
    /// The skill's folder name, which names it in identifiers.
    folder: String,
    name: String,
    description: String,
    tags: Vec<String>,
    dir: PathBuf,
}

impl MarketplaceSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn parts(&self) -> (&Identifier, Option<&str>, Option<&str>) {
        match &self.id {
            Identifier::Marketplace {
                repository,
                plugin,
                skill,
            } => (repository, plugin.as_deref(), skill.as_deref()),
            other => (other, None, None),
        }
    }

    fn child(&self, plugin: &str, skill: Option<&str>) -> Identifier {
        let (repository, _, _) = self.parts();
        Identifier::Marketplace {
            repository: Box::new(repository.clone()),
            plugin: Some(plugin.to_owned()),
            skill: skill.map(str::to_owned),
        }
    }

    /// The marketplace's repository, fetched, and its plugin entries.
    async fn manifest(&self, ctx: &FetchContext<'_>) -> Result<(PathBuf, Vec<PluginEntry>)> {
        let (repository, _, _) = self.parts();
        let scratch = sub_scratch(ctx, "marketplace")?;
        let repo_ctx = FetchContext { scratch, ..*ctx };
        let root = open(repository.clone())
            .fetch_root(&repo_ctx)
            .await?
            .ok_or_else(|| {
                Error::Identifier(format!(
                    "{repository} cannot hold a marketplace; use a folder, a git+ repository or github:owner/repo"
                ))
            })?;
        let file = root.join(MARKETPLACE_FILE);
        let meta = std::fs::metadata(&file).map_err(|_| {
            Error::Invalid(format!(
                "{repository} has no {MARKETPLACE_FILE}; it is not a Claude Code plugin marketplace"
            ))
        })?;
        if meta.len() > MAX_MANIFEST_BYTES {
            return Err(Error::Unsafe(format!(
                "{MARKETPLACE_FILE} of {repository} is larger than {MAX_MANIFEST_BYTES} bytes"
            )));
        }
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        let entries = parse_manifest(&text, &repository.to_string())?;
        Ok((root, entries))
    }

    /// The plugin entry this identifier names, or every entry.
    fn selected<'e>(&self, entries: &'e [PluginEntry]) -> Result<Vec<&'e PluginEntry>> {
        let (repository, plugin, _) = self.parts();
        match plugin {
            None => Ok(entries.iter().collect()),
            Some(p) => entries
                .iter()
                .find(|e| e.name == p)
                .map(|e| vec![e])
                .ok_or_else(|| {
                    Error::Fetch(format!(
                        "the marketplace {repository} lists no plugin named '{p}'"
                    ))
                }),
        }
    }

    /// The folder of `entry`'s plugin: inside the marketplace, or fetched
    /// from its own repository into a scratch folder of its own.
    async fn plugin_dir(
        &self,
        ctx: &FetchContext<'_>,
        root: &Path,
        entry: &PluginEntry,
        nth: usize,
    ) -> Result<PathBuf> {
        match &entry.origin {
            PluginOrigin::Here(rel) => {
                let dir = if rel.is_empty() {
                    root.to_path_buf()
                } else {
                    root.join(rel)
                };
                crate::source::sub_dir(&dir, None, &self.child(&entry.name, None))
            }
            PluginOrigin::Remote(id) => {
                let scratch = sub_scratch(ctx, &format!("plugin-{nth}"))?;
                let plugin_ctx = FetchContext { scratch, ..*ctx };
                open(id.clone())
                    .fetch_root(&plugin_ctx)
                    .await?
                    .ok_or_else(|| Error::Fetch(format!("{id} cannot be fetched as a whole")))
            }
            PluginOrigin::Unsupported(why) => {
                Err(Error::Fetch(format!("plugin '{}': {why}", entry.name)))
            }
        }
    }

    /// The skills of every selected plugin (each plugin fetched once). A
    /// plugin that cannot be fetched fails the whole when it was named,
    /// and is left out (with a log line) when the whole marketplace was.
    async fn found(&self, ctx: &FetchContext<'_>) -> Result<Vec<FoundSkill>> {
        let (root, entries) = self.manifest(ctx).await?;
        let (_, plugin, skill) = self.parts();
        let mut out = Vec::new();
        for (nth, entry) in self.selected(&entries)?.into_iter().enumerate() {
            let dir = match self.plugin_dir(ctx, &root, entry, nth).await {
                Ok(d) => d,
                Err(e) if plugin.is_none() => {
                    tracing::warn!("marketplace plugin '{}' skipped: {e}", entry.name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            out.extend(skills_of_plugin(entry, &dir)?);
        }
        if let Some(s) = skill {
            out.retain(|f| f.folder == s);
            if out.is_empty() {
                return Err(Error::Fetch(format!("{} holds no skill '{s}'", self.id)));
            }
        }
        Ok(out)
    }

    fn meta(&self, f: FoundSkill, ctx: &FetchContext<'_>) -> SkillMeta {
        SkillMeta {
            identifier: self.child(&f.plugin, Some(&f.folder)).to_string(),
            name: format!("{}:{}", f.plugin, f.name),
            description: f.description,
            source: self.id.source_kind().to_owned(),
            trust: self.id.trust(ctx.config),
            tags: f.tags,
        }
    }
}

/// A fresh folder `name` inside the context's scratch folder.
fn sub_scratch(ctx: &FetchContext<'_>, name: &str) -> Result<PathBuf> {
    let dir = ctx.scratch.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    Ok(dir)
}

/// The skills of one plugin whose files are in `dir`.
fn skills_of_plugin(entry: &PluginEntry, dir: &Path) -> Result<Vec<FoundSkill>> {
    let mut folders: Vec<PathBuf> = Vec::new();
    let bases: Vec<PathBuf> = if entry.skill_paths.is_empty() {
        let skills = dir.join("skills");
        vec![if skills.is_dir() {
            skills
        } else {
            dir.to_path_buf()
        }]
    } else {
        entry.skill_paths.iter().map(|p| dir.join(p)).collect()
    };
    for base in bases {
        if !base.is_dir() {
            continue;
        }
        for rel in skills_in_tree(&base) {
            let skill_dir = if rel.is_empty() {
                base.clone()
            } else {
                base.join(&rel)
            };
            if !folders.contains(&skill_dir) {
                folders.push(skill_dir);
            }
        }
    }
    let mut out = Vec::new();
    for skill_dir in folders {
        let folder = skill_dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if !is_plugin_part(&folder) {
            continue;
        }
        let (name, description, tags) =
            read_meta(&skill_dir).unwrap_or_else(|| (folder.clone(), String::new(), Vec::new()));
        out.push(FoundSkill {
            plugin: entry.name.clone(),
            folder,
            name,
            description,
            tags,
            dir: skill_dir,
        });
    }
    Ok(out)
}

/// The plugin entries of a marketplace.json (lenient: unknown keys are
/// ignored, as Claude Code ignores them; an entry without a usable name is
/// left out).
fn parse_manifest(text: &str, repository: &str) -> Result<Vec<PluginEntry>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        Error::Invalid(format!(
            "{MARKETPLACE_FILE} of {repository} is not valid JSON (line {}): {e}",
            e.line()
        ))
    })?;
    let plugins = doc
        .get("plugins")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "{MARKETPLACE_FILE} of {repository} has no \"plugins\" list"
            ))
        })?;
    let plugin_root = doc
        .pointer("/metadata/pluginRoot")
        .and_then(Value::as_str)
        .map(|r| r.trim_start_matches("./").trim_matches('/').to_owned())
        .filter(|r| !r.is_empty());
    let mut out = Vec::new();
    for p in plugins {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        // The plugin name becomes a folder and half of a lock name.
        if skill_core::validate::validate_name(name).is_err() {
            tracing::warn!("marketplace plugin name '{name}' is not usable; skipped");
            continue;
        }
        let text = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_owned);
        let skill_paths = match p.get("skills") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        let skill_paths = skill_paths
            .iter()
            .filter_map(|s| plain_relative(s))
            .collect();
        out.push(PluginEntry {
            name: name.to_owned(),
            description: text("description").unwrap_or_default(),
            origin: plugin_origin(p.get("source"), plugin_root.as_deref()),
            skill_paths,
        });
    }
    Ok(out)
}

/// A relative path inside a repository (`./x/y`, `x/y`), or `None` for one
/// that is absolute or climbs out.
fn plain_relative(path: &str) -> Option<String> {
    let trimmed = path.trim().trim_start_matches("./").trim_end_matches('/');
    if trimmed == "." || trimmed.is_empty() {
        return Some(String::new());
    }
    let ok = !trimmed.starts_with('/')
        && !trimmed.contains('\\')
        && trimmed
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..");
    ok.then(|| trimmed.to_owned())
}

/// Where a plugin entry's `source` says its files are.
fn plugin_origin(source: Option<&Value>, plugin_root: Option<&str>) -> PluginOrigin {
    let unusable =
        |what: &str| PluginOrigin::Unsupported(format!("its source {what} is not usable"));
    match source {
        Some(Value::String(path)) => {
            // A bare name is relative to `metadata.pluginRoot`; `./x` to the
            // marketplace root.
            let joined = match plugin_root {
                Some(base) if !path.starts_with("./") && !path.starts_with('/') => {
                    format!("{base}/{path}")
                }
                _ => path.clone(),
            };
            match plain_relative(&joined) {
                Some(rel) => PluginOrigin::Here(rel),
                None => unusable(&format!("'{path}'")),
            }
        }
        Some(Value::Object(obj)) => {
            let field = |k: &str| obj.get(k).and_then(Value::as_str).map(str::trim);
            let reference = field("ref")
                .or_else(|| field("sha"))
                .filter(|r| !r.is_empty())
                .map(str::to_owned);
            let subdir = match field("path").map(plain_relative) {
                Some(Some(p)) if !p.is_empty() => Some(p),
                Some(None) => return unusable("path"),
                _ => None,
            };
            match field("source") {
                Some("github") => {
                    let Some((owner, repo)) = field("repo").and_then(|r| r.split_once('/')) else {
                        return unusable("repo");
                    };
                    PluginOrigin::Remote(Identifier::GitHub {
                        owner: owner.to_owned(),
                        repo: repo.trim_end_matches(".git").to_owned(),
                        path: subdir,
                        reference,
                    })
                }
                Some("url" | "git" | "git-subdir") => {
                    let Some(url) = field("url") else {
                        return unusable("url");
                    };
                    let allowed = ["https://", "http://", "ssh://", "file://"]
                        .iter()
                        .any(|s| url.starts_with(s));
                    if !allowed {
                        return PluginOrigin::Unsupported(format!(
                            "its git URL '{url}' uses a transport knack does not fetch (https, http, ssh or file)"
                        ));
                    }
                    PluginOrigin::Remote(Identifier::Git {
                        url: url.to_owned(),
                        reference,
                        subdir,
                    })
                }
                Some(other) => PluginOrigin::Unsupported(format!(
                    "its source kind '{other}' is not one knack fetches (a path, github, url or git-subdir)"
                )),
                None => unusable("object"),
            }
        }
        _ => PluginOrigin::Unsupported("it has no source".into()),
    }
}

impl SkillSource for MarketplaceSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let found = self.found(ctx).await?;
            Ok(found.into_iter().map(|f| self.meta(f, ctx)).collect())
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let (_, plugin, skill) = self.parts();
            if plugin.is_none() {
                // The marketplace as a whole: its plugins, with their
                // descriptions, each installable by its own identifier.
                let (_, entries) = self.manifest(ctx).await?;
                let members = entries
                    .iter()
                    .map(|e| Member {
                        name: e.name.clone(),
                        description: e.description.clone(),
                        path: e.name.clone(),
                        identifier: Some(self.child(&e.name, None).to_string()),
                        tags: Vec::new(),
                    })
                    .collect();
                return Err(Error::Collection {
                    identifier: self.id.to_string(),
                    members,
                });
            }
            let mut found = self.found(ctx).await?;
            if skill.is_some() && found.len() == 1 {
                let f = found.remove(0);
                return Ok(Fetched {
                    dir: f.dir,
                    category: None,
                });
            }
            if found.is_empty() {
                return Err(Error::Invalid(format!("{} holds no skills", self.id)));
            }
            let members = found
                .into_iter()
                .map(|f| Member {
                    identifier: Some(self.child(&f.plugin, Some(&f.folder)).to_string()),
                    name: format!("{}:{}", f.plugin, f.name),
                    description: f.description,
                    path: f.folder,
                    tags: f.tags,
                })
                .collect();
            Err(Error::Collection {
                identifier: self.id.to_string(),
                members,
            })
        })
    }

    fn fetch_members<'a>(
        &'a self,
        ctx: &'a FetchContext<'a>,
    ) -> BoxFuture<'a, Result<Option<Vec<FetchedMember>>>> {
        Box::pin(async move {
            let found = self.found(ctx).await?;
            Ok(Some(
                found
                    .into_iter()
                    .map(|f| {
                        let member = Member {
                            identifier: Some(self.child(&f.plugin, Some(&f.folder)).to_string()),
                            name: format!("{}:{}", f.plugin, f.name),
                            description: f.description,
                            path: f.folder,
                            tags: f.tags,
                        };
                        (member, f.dir)
                    })
                    .collect(),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_sources_of_every_kind_are_read() {
        let text = r#"{
          "name": "team", "owner": {"name": "t"},
          "metadata": {"pluginRoot": "./plugins"},
          "plugins": [
            {"name": "here", "description": "Local one", "source": "./plugins/here"},
            {"name": "bare", "source": "bare"},
            {"name": "gh", "source": {"source": "github", "repo": "acme/tools", "ref": "v2"}},
            {"name": "sub", "source": {"source": "git-subdir", "url": "https://example.com/r.git",
                                       "path": "plugins/sub", "ref": "main", "sha": "abc"}},
            {"name": "pinned", "source": {"source": "url", "url": "https://example.com/p.git", "sha": "0123abc"}},
            {"name": "npm", "source": {"source": "npm", "package": "@x/y"}},
            {"name": "escape", "source": "../outside"},
            {"name": "Bad Name", "source": "./x"},
            {"name": "listed", "source": "./listed", "skills": ["./skills/a", "/abs", "../up"]}
          ]}"#;
        let entries = parse_manifest(text, "repo").unwrap();
        let by = |n: &str| entries.iter().find(|e| e.name == n).unwrap();
        assert_eq!(by("here").origin, PluginOrigin::Here("plugins/here".into()));
        assert_eq!(by("here").description, "Local one");
        assert_eq!(by("bare").origin, PluginOrigin::Here("plugins/bare".into()));
        assert_eq!(
            by("gh").origin,
            PluginOrigin::Remote(Identifier::GitHub {
                owner: "acme".into(),
                repo: "tools".into(),
                path: None,
                reference: Some("v2".into()),
            })
        );
        assert_eq!(
            by("sub").origin,
            PluginOrigin::Remote(Identifier::Git {
                url: "https://example.com/r.git".into(),
                reference: Some("main".into()),
                subdir: Some("plugins/sub".into()),
            })
        );
        assert!(matches!(
            &by("pinned").origin,
            PluginOrigin::Remote(Identifier::Git { reference: Some(r), .. }) if r == "0123abc"
        ));
        assert!(matches!(by("npm").origin, PluginOrigin::Unsupported(_)));
        assert!(matches!(by("escape").origin, PluginOrigin::Unsupported(_)));
        assert!(entries.iter().all(|e| e.name != "Bad Name"));
        assert_eq!(by("listed").skill_paths, ["skills/a"]);
        let err = parse_manifest("{\"plugins\": 3}", "repo").unwrap_err();
        assert!(err.to_string().contains("\"plugins\""), "{err}");
        let err = parse_manifest("{\n  nope", "repo").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
