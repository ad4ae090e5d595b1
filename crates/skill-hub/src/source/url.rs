//! A direct URL to a SKILL.md or a `.tar.gz`; trust `community`.

use futures::future::BoxFuture;

use super::{FetchContext, Fetched, SkillMeta, SkillSource, list_tree, select_skill};
use crate::identifier::Identifier;
use crate::net::Request;
use crate::safe_tree::unpack_tar_gz;
use crate::{Error, Result};

pub(crate) struct UrlSource {
    id: Identifier,
}

impl UrlSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn url(&self) -> &str {
        match &self.id {
            Identifier::Url { url } => url,
            _ => "",
        }
    }

    fn is_archive(&self) -> bool {
        let path = self.url().split(['?', '#']).next().unwrap_or_default();
        path.ends_with(".tar.gz") || path.ends_with(".tgz")
    }

    async fn download(&self, ctx: &FetchContext<'_>) -> Result<std::path::PathBuf> {
        let label = if self.is_archive() {
            "downloading archive"
        } else {
            "downloading SKILL.md"
        };
        let bytes = ctx
            .net
            .get_required(
                self.url(),
                Request {
                    progress: Some(label),
                    ..Request::default()
                },
            )
            .await?;
        if self.is_archive() {
            let out = ctx.scratch.join("unpacked");
            std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
            unpack_tar_gz(&bytes[..], &out, ctx.limits)?;
            return Ok(out);
        }
        // The folder is renamed after the frontmatter name once it is validated.
        let dir = ctx.scratch.join("downloaded");
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        std::fs::write(dir.join("SKILL.md"), &bytes).map_err(|e| Error::io(&dir, e))?;
        Ok(dir)
    }
}

impl SkillSource for UrlSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let root = self.download(ctx).await?;
            let dir = select_skill(&root, &self.id)?;
            let mut metas = list_tree(&dir, &self.id, self.id.trust(ctx.config));
            metas.truncate(1);
            Ok(metas)
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let root = self.download(ctx).await?;
            Ok(Fetched {
                dir: select_skill(&root, &self.id)?,
                category: None,
            })
        })
    }

    fn fetch_root<'a>(
        &'a self,
        ctx: &'a FetchContext<'a>,
    ) -> BoxFuture<'a, Result<Option<std::path::PathBuf>>> {
        Box::pin(async move { self.download(ctx).await.map(Some) })
    }
}
