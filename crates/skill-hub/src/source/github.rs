//! `github:owner/repo[/path][@ref]` through the GitHub REST API: the contents
//! endpoint lists skills, the tarball endpoint fetches them. Base URL from `hub.github_api`.

use std::path::PathBuf;

use futures::future::BoxFuture;
use serde::Deserialize;

use super::{FetchContext, Fetched, SkillMeta, SkillSource, meta_from_text, select_skill, sub_dir};
use crate::identifier::Identifier;
use crate::net::Request;
use crate::safe_tree::unpack_tar_gz;
use crate::{Error, Result};

const JSON: &str = "application/vnd.github+json";
const RAW: &str = "application/vnd.github.raw+json";
/// Directories checked concurrently while listing a repository.
const LIST_CONCURRENCY: usize = 8;

#[derive(Debug, Deserialize)]
struct ContentEntry {
    name: String,
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

pub(crate) struct GitHubSource {
    id: Identifier,
}

impl GitHubSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn parts(&self) -> (&str, &str, Option<&str>, Option<&str>) {
        match &self.id {
            Identifier::GitHub {
                owner,
                repo,
                path,
                reference,
            } => (owner, repo, path.as_deref(), reference.as_deref()),
            _ => ("", "", None, None),
        }
    }

    fn contents_url(&self, ctx: &FetchContext<'_>, path: &str) -> String {
        let (owner, repo, _, reference) = self.parts();
        let api = ctx.config.github_api.trim_end_matches('/');
        let mut url = format!(
            "{api}/repos/{owner}/{repo}/contents/{}",
            path.trim_matches('/')
        );
        if let Some(r) = reference {
            url.push_str(&format!("?ref={r}"));
        }
        url
    }

    /// The SKILL.md at `dir` (raw), or `None` when that folder holds none.
    async fn skill_md(&self, ctx: &FetchContext<'_>, dir: &str) -> Result<Option<String>> {
        let rel = if dir.is_empty() {
            "SKILL.md".to_owned()
        } else {
            format!("{dir}/SKILL.md")
        };
        let url = self.contents_url(ctx, &rel);
        let req = Request {
            accept: Some(RAW),
            github: true,
            progress: None,
        };
        Ok(ctx
            .net
            .get(&url, req)
            .await?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    fn meta(&self, ctx: &FetchContext<'_>, dir: &str, text: &str) -> Option<SkillMeta> {
        let folder = dir.rsplit('/').next().filter(|s| !s.is_empty());
        let (name, description, tags) = meta_from_text(text, folder)?;
        let (owner, repo, _, reference) = self.parts();
        let id = Identifier::GitHub {
            owner: owner.to_owned(),
            repo: repo.to_owned(),
            path: (!dir.is_empty()).then(|| dir.to_owned()),
            reference: reference.map(str::to_owned),
        };
        Some(SkillMeta {
            name,
            description,
            identifier: id.to_string(),
            source: "github".into(),
            trust: self.id.trust(ctx.config),
            tags,
        })
    }

    /// Downloads the repository's tarball into the scratch folder and
    /// returns the folder the identifier's path names inside it.
    async fn download_root(&self, ctx: &FetchContext<'_>) -> Result<PathBuf> {
        let (owner, repo, path, reference) = self.parts();
        let api = ctx.config.github_api.trim_end_matches('/');
        let mut url = format!("{api}/repos/{owner}/{repo}/tarball");
        if let Some(r) = reference {
            url.push_str(&format!("/{r}"));
        }
        let req = Request {
            accept: Some(JSON),
            github: true,
            progress: Some("downloading from GitHub"),
        };
        let bytes = ctx.net.get(&url, req).await?.ok_or_else(|| {
            Error::Fetch(format!(
                "github:{owner}/{repo}{} was not found (HTTP 404); a private repository needs GITHUB_TOKEN",
                reference.map(|r| format!("@{r}")).unwrap_or_default()
            ))
        })?;
        let out = ctx.scratch.join("tarball");
        std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
        unpack_tar_gz(&bytes[..], &out, ctx.limits)?;
        // GitHub wraps the tree in one `<owner>-<repo>-<sha>/` folder.
        let tops: Vec<PathBuf> = std::fs::read_dir(&out)
            .map_err(|e| Error::io(&out, e))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        let [top] = tops.as_slice() else {
            return Err(Error::Fetch(format!(
                "the tarball of github:{owner}/{repo} does not have one top-level folder"
            )));
        };
        sub_dir(top, path, &self.id)
    }
}

impl SkillSource for GitHubSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let (owner, repo, path, _) = self.parts();
            let base = path.unwrap_or("");
            let url = self.contents_url(ctx, base);
            let req = Request {
                accept: Some(JSON),
                github: true,
                progress: None,
            };
            let bytes = ctx.net.get(&url, req).await?.ok_or_else(|| {
                Error::Fetch(format!(
                    "github:{owner}/{repo} has no path '{base}' (HTTP 404)"
                ))
            })?;
            let listing: Vec<ContentEntry> =
                match serde_json::from_slice::<Vec<ContentEntry>>(&bytes) {
                    Ok(list) => list,
                    // A single file answers with an object: the path is not a folder.
                    Err(_) => {
                        return Err(Error::Fetch(format!(
                            "{url} did not answer with a folder listing"
                        )));
                    }
                };
            if listing
                .iter()
                .any(|e| e.kind == "file" && e.name == "SKILL.md")
            {
                let text = self.skill_md(ctx, base).await?.unwrap_or_default();
                return Ok(self.meta(ctx, base, &text).into_iter().collect());
            }
            let dirs: Vec<&ContentEntry> = listing
                .iter()
                .filter(|e| e.kind == "dir" && !e.name.starts_with('.'))
                .collect();
            let mut found = Vec::new();
            for chunk in dirs.chunks(LIST_CONCURRENCY) {
                let texts =
                    futures::future::join_all(chunk.iter().map(|e| self.skill_md(ctx, &e.path)))
                        .await;
                for (entry, text) in chunk.iter().zip(texts) {
                    if let Some(text) = text? {
                        found.extend(self.meta(ctx, &entry.path, &text));
                    }
                }
            }
            Ok(found)
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let root = self.download_root(ctx).await?;
            Ok(Fetched {
                dir: select_skill(&root, &self.id)?,
                category: None,
            })
        })
    }

    fn fetch_root<'a>(
        &'a self,
        ctx: &'a FetchContext<'a>,
    ) -> BoxFuture<'a, Result<Option<PathBuf>>> {
        Box::pin(async move { self.download_root(ctx).await.map(Some) })
    }
}
