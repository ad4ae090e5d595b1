//! The `SkillSource` trait and what every source shares: skill metadata, the
//! fetch context, and finding the one skill a fetched tree holds.

mod git;
mod github;
mod local;
pub(crate) mod marketplace;
mod official;
mod url;
mod well_known;

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use knack_config::HubConfig;
use serde::Serialize;
use skill_guard::TrustLevel;

use crate::identifier::Identifier;
use crate::net::Net;
use crate::safe_tree::{Limits, skills_in_tree};
use crate::{Error, Result};

/// One skill as a source lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillMeta {
    pub name: String,
    pub description: String,
    /// What `knack skills install` takes to install exactly this skill.
    pub identifier: String,
    /// `official`, `local`, `git`, `well-known`, `url` or `github`.
    pub source: String,
    pub trust: TrustLevel,
    #[serde(skip)]
    pub tags: Vec<String>,
}

impl SkillMeta {
    /// Every word of the query appears in the name, description, tags or identifier.
    pub fn matches(&self, query: &str) -> bool {
        let hay = format!(
            "{} {} {} {}",
            self.name,
            self.description,
            self.tags.join(" "),
            self.identifier
        )
        .to_lowercase();
        query
            .split_whitespace()
            .all(|word| hay.contains(&word.to_lowercase()))
    }
}

/// One skill of a collection, as the list of choices shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub name: String,
    pub description: String,
    /// The skill's folder inside the collection (`/`-separated, empty for
    /// the collection's own folder).
    pub path: String,
    /// What installs exactly this skill; `None` when the source cannot name
    /// one skill of several (an archive holding many).
    pub identifier: Option<String>,
    #[serde(skip)]
    pub tags: Vec<String>,
}

/// One skill of a collection and the folder it was fetched into.
pub type FetchedMember = (Member, PathBuf);

/// What a fetch needs: the network, the caps, the config and a private scratch folder.
pub struct FetchContext<'a> {
    pub(crate) net: &'a Net,
    pub limits: Limits,
    pub config: &'a HubConfig,
    /// An empty folder inside the quarantine the source may fill.
    pub scratch: PathBuf,
}

/// A fetched skill: its folder (inside the scratch folder, or a local folder
/// the hub copies from) and the category the source suggests.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub dir: PathBuf,
    pub category: Option<String>,
}

/// A place skills come from. One instance serves one identifier, which may
/// name a single skill or a collection of them.
pub trait SkillSource: Send + Sync {
    fn identifier(&self) -> &Identifier;

    /// Every skill this identifier covers.
    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>>;

    /// Fetches the one skill this identifier names; a collection of several
    /// is [`Error::Collection`].
    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>>;

    /// Fetches everything the identifier covers as one folder, so a whole
    /// collection is installed from one clone or download. `None`: the
    /// source serves its skills one by one (an index, the official skills).
    fn fetch_root<'a>(
        &'a self,
        _ctx: &'a FetchContext<'a>,
    ) -> BoxFuture<'a, Result<Option<PathBuf>>> {
        Box::pin(async { Ok(None) })
    }

    /// Every skill the identifier covers, each with its folder, from one
    /// fetch of each place they live in, for a source whose skills are not
    /// under one root (a marketplace's plugins live in several
    /// repositories). `None`: use [`fetch_root`](Self::fetch_root).
    fn fetch_members<'a>(
        &'a self,
        _ctx: &'a FetchContext<'a>,
    ) -> BoxFuture<'a, Result<Option<Vec<FetchedMember>>>> {
        Box::pin(async { Ok(None) })
    }

    /// The skills whose metadata matches `query` (all of them for an empty query).
    fn search<'a>(
        &'a self,
        ctx: &'a FetchContext<'a>,
        query: &'a str,
    ) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let all = self.list(ctx).await?;
            Ok(all.into_iter().filter(|m| m.matches(query)).collect())
        })
    }

    /// The content hash of the skill as the source has it now (for update checks).
    fn content_hash<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<String>> {
        Box::pin(async move {
            let fetched = self.fetch(ctx).await?;
            let staged = ctx.scratch.join(".hash-copy");
            crate::safe_tree::copy_tree(&fetched.dir, &staged, ctx.limits)?;
            crate::safe_tree::tree_hash(&staged)
        })
    }
}

/// The source that serves `id`.
pub fn open(id: Identifier) -> Box<dyn SkillSource> {
    match id {
        Identifier::Official { .. } => Box::new(official::OfficialSource::new(id)),
        Identifier::Local { .. } => Box::new(local::LocalSource::new(id)),
        Identifier::Git { .. } => Box::new(git::GitSource::new(id)),
        Identifier::WellKnown { .. } => Box::new(well_known::WellKnownSource::new(id)),
        Identifier::Url { .. } => Box::new(url::UrlSource::new(id)),
        Identifier::GitHub { .. } => Box::new(github::GitHubSource::new(id)),
        Identifier::Marketplace { .. } => Box::new(marketplace::MarketplaceSource::new(id)),
    }
}

/// Name, description and tags of the skill in `dir` (the folder name when the
/// frontmatter has no name).
pub(crate) fn read_meta(dir: &Path) -> Option<(String, String, Vec<String>)> {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).ok()?;
    meta_from_text(&text, dir.file_name().and_then(|n| n.to_str()))
}

pub(crate) fn meta_from_text(
    text: &str,
    fallback_name: Option<&str>,
) -> Option<(String, String, Vec<String>)> {
    let text = skill_core::frontmatter::strip_bom(text);
    let parsed = skill_core::frontmatter::parse_skill_md(text).ok()?;
    let fm = parsed.frontmatter;
    let name = fm.name.or_else(|| fallback_name.map(str::to_owned))?;
    let description = fm.description.unwrap_or_else(|| {
        skill_core::frontmatter::first_body_line(&text[parsed.body_offset..])
            .unwrap_or_default()
            .to_owned()
    });
    Some((name, description, fm.tags))
}

/// The skills of a tree on disk (found as [`skills_in_tree`] finds them),
/// each with the identifier that installs it alone. A SKILL.md that cannot
/// be read is listed under its folder name, so the refusal names it later.
pub(crate) fn members_of(root: &Path, id: &Identifier) -> Vec<Member> {
    read_members(root, id).into_iter().map(|(m, _)| m).collect()
}

/// [`members_of`], each with whether its SKILL.md could be read.
fn read_members(root: &Path, id: &Identifier) -> Vec<(Member, bool)> {
    skills_in_tree(root)
        .into_iter()
        .map(|rel| {
            let meta = read_meta(&root.join(&rel));
            let readable = meta.is_some();
            let (name, description, tags) = meta.unwrap_or_else(|| {
                let folder = rel.rsplit('/').next().unwrap_or_default().to_owned();
                (folder, String::new(), Vec::new())
            });
            let identifier = if rel.is_empty() {
                Some(id.clone())
            } else {
                id.child(&rel)
            };
            let member = Member {
                name,
                description,
                identifier: identifier.map(|i| i.to_string()),
                path: rel,
                tags,
            };
            (member, readable)
        })
        .collect()
}

/// The skills of a tree on disk that read well and can be installed by
/// their own identifier, as search lists them.
pub(crate) fn list_tree(root: &Path, id: &Identifier, trust: TrustLevel) -> Vec<SkillMeta> {
    read_members(root, id)
        .into_iter()
        .filter(|(_, readable)| *readable)
        .filter_map(|(m, _)| {
            Some(SkillMeta {
                identifier: m.identifier?,
                name: m.name,
                description: m.description,
                source: id.source_kind().to_owned(),
                trust,
                tags: m.tags,
            })
        })
        .collect()
}

/// The single skill of a tree: the root itself when it holds SKILL.md, else
/// its only skill; several skills is [`Error::Collection`], which lists them.
pub(crate) fn select_skill(root: &Path, id: &Identifier) -> Result<PathBuf> {
    if root.join("SKILL.md").is_file() {
        return Ok(root.to_path_buf());
    }
    let mut members = members_of(root, id);
    match members.len() {
        0 => Err(Error::Invalid(format!("{id} holds no SKILL.md"))),
        1 => Ok(root.join(members.remove(0).path)),
        _ => Err(Error::Collection {
            identifier: id.to_string(),
            members,
        }),
    }
}

/// `rel` under `root`, which must be an existing folder.
pub(crate) fn sub_dir(root: &Path, rel: Option<&str>, id: &Identifier) -> Result<PathBuf> {
    let dir = match rel {
        Some(r) => root.join(r),
        None => root.to_path_buf(),
    };
    let real = std::fs::symlink_metadata(&dir);
    match real {
        Ok(m) if m.is_dir() => Ok(dir),
        _ => Err(Error::Fetch(format!(
            "{id}: the path '{}' does not exist in the source",
            rel.unwrap_or("")
        ))),
    }
}
