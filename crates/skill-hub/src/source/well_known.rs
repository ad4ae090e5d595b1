//! `well-known:<site>[#name]`: a site's published skills index at
//! `/.well-known/agent-skills/index.json` (falling back to `/.well-known/skills/index.json`),
//! each entry a SKILL.md or an archive whose `sha256:` digest is checked before use.

use futures::future::BoxFuture;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{FetchContext, Fetched, Member, SkillMeta, SkillSource, select_skill};
use crate::identifier::Identifier;
use crate::net::Request;
use crate::safe_tree::unpack_tar_gz;
use crate::{Error, Result};

pub(crate) const INDEX_PATH: &str = "/.well-known/agent-skills/index.json";
pub(crate) const FALLBACK_INDEX_PATH: &str = "/.well-known/skills/index.json";

#[derive(Debug, Clone, Deserialize)]
struct Entry {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    digest: Option<String>,
    /// The older layout: files under `/.well-known/skills/<name>/`.
    #[serde(default)]
    files: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum IndexDoc {
    Wrapped { skills: Vec<Entry> },
    Bare(Vec<Entry>),
}

struct Index {
    url: String,
    fallback: bool,
    entries: Vec<Entry>,
}

pub(crate) struct WellKnownSource {
    id: Identifier,
}

impl WellKnownSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn parts(&self) -> (&str, Option<&str>) {
        match &self.id {
            Identifier::WellKnown { base, name } => (base, name.as_deref()),
            _ => ("", None),
        }
    }

    async fn index(&self, ctx: &FetchContext<'_>) -> Result<Index> {
        let (base, _) = self.parts();
        for (path, fallback) in [(INDEX_PATH, false), (FALLBACK_INDEX_PATH, true)] {
            let url = format!("{base}{path}");
            let Some(bytes) = ctx.net.get(&url, Request::default()).await? else {
                continue;
            };
            let doc: IndexDoc = serde_json::from_slice(&bytes).map_err(|e| {
                Error::Fetch(format!("the skills index at {url} is not valid JSON: {e}"))
            })?;
            let entries = match doc {
                IndexDoc::Wrapped { skills } => skills,
                IndexDoc::Bare(list) => list,
            };
            refuse_duplicate_names(&entries, &url)?;
            return Ok(Index {
                url,
                fallback,
                entries,
            });
        }
        Err(Error::Fetch(format!(
            "{base} publishes no skills index (neither {INDEX_PATH} nor {FALLBACK_INDEX_PATH} exists)"
        )))
    }

    /// The identifier of one skill of this site's index.
    fn named(&self, name: &str) -> Identifier {
        Identifier::WellKnown {
            base: self.parts().0.to_owned(),
            name: Some(name.to_owned()),
        }
    }

    fn usable(entry: &Entry, fallback: bool) -> bool {
        skill_core::validate::validate_name(&entry.name).is_ok()
            && match entry.kind.as_deref() {
                Some("skill-md") | Some("archive") => entry.url.is_some(),
                None => fallback && !entry.files.is_empty(),
                Some(_) => false,
            }
    }
}

/// Two entries of one index with the same name would let the second
/// shadow the first (which one installs depends on the reader); the whole
/// index is refused, naming both.
fn refuse_duplicate_names(entries: &[Entry], url: &str) -> Result<()> {
    let mut seen: std::collections::HashMap<&str, (usize, &Entry)> =
        std::collections::HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        if let Some((first, earlier)) = seen.insert(entry.name.as_str(), (i, entry)) {
            let place = |e: &Entry| {
                e.url
                    .clone()
                    .or_else(|| e.files.first().cloned())
                    .unwrap_or_else(|| "no url".to_owned())
            };
            return Err(Error::Unsafe(format!(
                "the skills index at {url} names two entries '{}': entry {} ({}) and entry {} ({}); names in an index must be unique",
                entry.name,
                first + 1,
                place(earlier),
                i + 1,
                place(entry)
            )));
        }
    }
    Ok(())
}

/// An index entry must name the package it points at: its SKILL.md's
/// `name` is what the skill installs as, so an entry called `a` whose
/// SKILL.md says `b` would install under another skill's name.
fn check_entry_names_package(dir: &std::path::Path, entry: &str, url: &str) -> Result<()> {
    let skill_md = dir.join("SKILL.md");
    let bytes = knack_config::regular_file::read(&skill_md).map_err(|e| Error::io(&skill_md, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let named = skill_core::frontmatter::parse_skill_md(&text)
        .ok()
        .and_then(|p| p.frontmatter.name)
        .map(|n| n.trim().to_owned());
    match named {
        Some(name) if name == entry => Ok(()),
        Some(name) => Err(Error::Unsafe(format!(
            "the skills index at {url} lists '{entry}', but that package's SKILL.md is named '{name}'; an index entry must name the package it points at"
        ))),
        None => Err(Error::Unsafe(format!(
            "the skills index at {url} lists '{entry}', but that package's SKILL.md gives no name, so it cannot be checked against the entry"
        ))),
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks `bytes` against a `sha256:<hex>` digest from the index.
pub(crate) fn verify_digest(bytes: &[u8], digest: Option<&str>, what: &str) -> Result<()> {
    let Some(digest) = digest.map(str::trim).filter(|d| !d.is_empty()) else {
        return Err(Error::Unsafe(format!(
            "the index gives no digest for {what}, so its content cannot be verified"
        )));
    };
    let Some(expected) = digest.strip_prefix("sha256:") else {
        return Err(Error::Unsafe(format!(
            "the digest '{digest}' for {what} is not a sha256: digest"
        )));
    };
    let actual = sha256_hex(bytes);
    if !actual.eq_ignore_ascii_case(expected) {
        return Err(Error::Unsafe(format!(
            "digest mismatch for {what}: the index says sha256:{expected}, the download is sha256:{actual}"
        )));
    }
    Ok(())
}

fn resolve(index_url: &str, target: &str) -> Result<String> {
    let base = reqwest::Url::parse(index_url)
        .map_err(|e| Error::Fetch(format!("bad index URL {index_url}: {e}")))?;
    base.join(target)
        .map(|u| u.to_string())
        .map_err(|e| Error::Fetch(format!("the index names a bad URL '{target}': {e}")))
}

/// A file path from an index: relative, plain segments only.
fn plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.starts_with('/')
        && !rel.contains('\\')
        && rel
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != "..")
}

impl SkillSource for WellKnownSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let (_, only) = self.parts();
            let index = self.index(ctx).await?;
            let trust = self.id.trust(ctx.config);
            Ok(index
                .entries
                .iter()
                .filter(|e| Self::usable(e, index.fallback))
                .filter(|e| only.is_none_or(|n| n == e.name))
                .map(|e| SkillMeta {
                    name: e.name.clone(),
                    description: e.description.clone(),
                    identifier: self.named(&e.name).to_string(),
                    source: "well-known".into(),
                    trust,
                    tags: Vec::new(),
                })
                .collect())
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let (base, wanted) = self.parts();
            let index = self.index(ctx).await?;
            let usable: Vec<&Entry> = index
                .entries
                .iter()
                .filter(|e| Self::usable(e, index.fallback))
                .collect();
            let entry = match wanted {
                Some(n) => usable
                    .iter()
                    .find(|e| e.name == n)
                    .copied()
                    .ok_or_else(|| {
                        Error::Fetch(format!("the index at {} lists no skill '{n}'", index.url))
                    })?,
                None if usable.len() == 1 => usable[0],
                None => {
                    let members = usable
                        .iter()
                        .map(|e| Member {
                            name: e.name.clone(),
                            description: e.description.clone(),
                            path: e.name.clone(),
                            identifier: Some(self.named(&e.name).to_string()),
                            tags: Vec::new(),
                        })
                        .collect();
                    return Err(Error::Collection {
                        identifier: self.id.to_string(),
                        members,
                    });
                }
            };
            let what = format!("'{}'", entry.name);
            let fetched: Result<Fetched> = match (entry.kind.as_deref(), entry.url.as_deref()) {
                (Some("skill-md"), Some(url)) => {
                    let url = resolve(&index.url, url)?;
                    let bytes = ctx
                        .net
                        .get_required(
                            &url,
                            Request {
                                progress: Some("downloading SKILL.md"),
                                ..Request::default()
                            },
                        )
                        .await?;
                    verify_digest(&bytes, entry.digest.as_deref(), &what)?;
                    let dir = ctx.scratch.join(&entry.name);
                    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                    std::fs::write(dir.join("SKILL.md"), &bytes)
                        .map_err(|e| Error::io(dir.join("SKILL.md"), e))?;
                    Ok(Fetched {
                        dir,
                        category: None,
                    })
                }
                (Some("archive"), Some(url)) => {
                    let url = resolve(&index.url, url)?;
                    let bytes = ctx
                        .net
                        .get_required(
                            &url,
                            Request {
                                progress: Some("downloading archive"),
                                ..Request::default()
                            },
                        )
                        .await?;
                    verify_digest(&bytes, entry.digest.as_deref(), &what)?;
                    let out = ctx.scratch.join("unpacked");
                    std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
                    unpack_tar_gz(&bytes[..], &out, ctx.limits)?;
                    Ok(Fetched {
                        dir: select_skill(&out, &self.id)?,
                        category: None,
                    })
                }
                _ => {
                    if entry.files.len() > ctx.limits.max_files {
                        return Err(Error::Unsafe(format!(
                            "{what} lists more than {} files (hub.max_package_files)",
                            ctx.limits.max_files
                        )));
                    }
                    let dir = ctx.scratch.join(&entry.name);
                    let mut total = 0u64;
                    for rel in &entry.files {
                        if !plain_relative(rel) {
                            return Err(Error::Unsafe(format!(
                                "{what} lists the unsafe file path '{rel}'"
                            )));
                        }
                        let url = format!("{base}/.well-known/skills/{}/{rel}", entry.name);
                        let bytes = ctx.net.get_required(&url, Request::default()).await?;
                        total += bytes.len() as u64;
                        if total > ctx.limits.max_bytes {
                            return Err(Error::Unsafe(format!(
                                "{what} is larger than {} bytes (hub.max_package_bytes)",
                                ctx.limits.max_bytes
                            )));
                        }
                        let target = dir.join(rel);
                        if let Some(parent) = target.parent() {
                            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
                        }
                        std::fs::write(&target, &bytes).map_err(|e| Error::io(&target, e))?;
                    }
                    Ok(Fetched {
                        dir,
                        category: None,
                    })
                }
            };
            let fetched = fetched?;
            check_entry_names_package(&fetched.dir, &entry.name, &index.url)?;
            Ok(fetched)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_checked() {
        let good = format!("sha256:{}", sha256_hex(b"abc"));
        assert!(verify_digest(b"abc", Some(&good), "x").is_ok());
        assert!(
            verify_digest(b"abd", Some(&good), "x")
                .unwrap_err()
                .to_string()
                .contains("mismatch")
        );
        assert!(verify_digest(b"abc", None, "x").is_err());
        assert!(verify_digest(b"abc", Some("md5:00"), "x").is_err());
        assert!(plain_relative("references/a.md"));
        assert!(!plain_relative("../../../escape.txt"));
    }

    fn entry(name: &str, url: &str) -> Entry {
        Entry {
            name: name.into(),
            description: String::new(),
            kind: Some("skill-md".into()),
            url: Some(url.into()),
            digest: None,
            files: Vec::new(),
        }
    }

    #[test]
    fn duplicate_names_in_an_index_are_an_error_naming_both() {
        let entries = [
            entry("a", "a.md"),
            entry("dup", "first.md"),
            entry("b", "b.md"),
            entry("dup", "second.md"),
        ];
        let err = refuse_duplicate_names(&entries, "https://x/index.json")
            .unwrap_err()
            .to_string();
        for part in [
            "'dup'",
            "entry 2 (first.md)",
            "entry 4 (second.md)",
            "https://x/index.json",
        ] {
            assert!(err.contains(part), "{part}: {err}");
        }
        assert!(refuse_duplicate_names(&entries[..3], "u").is_ok());
    }

    #[test]
    fn an_entry_must_name_the_package_it_points_at() {
        let dir = tempfile::tempdir().unwrap();
        let write = |text: &str| std::fs::write(dir.path().join("SKILL.md"), text).unwrap();
        write("---\nname: pdf\ndescription: Use when x\n---\nbody\n");
        assert!(check_entry_names_package(dir.path(), "pdf", "u").is_ok());
        let err = check_entry_names_package(dir.path(), "docx", "u")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("lists 'docx'") && err.contains("named 'pdf'"),
            "{err}"
        );
        write("no frontmatter at all\n");
        assert!(check_entry_names_package(dir.path(), "pdf", "u").is_err());
    }
}
