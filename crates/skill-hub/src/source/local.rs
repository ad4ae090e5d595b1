//! Local paths and `file://` URLs: a skill folder, a SKILL.md, a `.tar.gz`, or a
//! folder holding several skills. Trust `community`.

use std::path::Path;

use futures::future::BoxFuture;

use super::{FetchContext, Fetched, SkillMeta, SkillSource, list_tree, select_skill};
use crate::identifier::Identifier;
use crate::safe_tree::unpack_tar_gz;
use crate::{Error, Result};

pub(crate) struct LocalSource {
    id: Identifier,
}

impl LocalSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn path(&self) -> &Path {
        match &self.id {
            Identifier::Local { path } => path,
            _ => Path::new(""),
        }
    }

    /// A folder the skill (or skills) can be read from: the path itself, or
    /// the archive or single SKILL.md placed in the scratch folder.
    fn materialize(&self, ctx: &FetchContext<'_>) -> Result<std::path::PathBuf> {
        let path = self.path();
        let meta = std::fs::metadata(path).map_err(|e| match subdir_written(path) {
            Some(meant) => Error::Identifier(format!(
                "{} does not exist; a folder on disk takes the path of the skill inside it, not #subdir (that is for git+ identifiers): {}",
                path.display(),
                meant.display()
            )),
            None => Error::Fetch(format!("cannot read {}: {e}", path.display())),
        })?;
        if meta.is_dir() {
            return Ok(path.to_path_buf());
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            let out = ctx.scratch.join("unpacked");
            std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
            let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            unpack_tar_gz(std::io::BufReader::new(file), &out, ctx.limits)?;
            return Ok(out);
        }
        if name == "SKILL.md" {
            let out = ctx.scratch.join("single").join(
                path.parent()
                    .and_then(|p| p.file_name())
                    .unwrap_or_else(|| std::ffi::OsStr::new("skill")),
            );
            std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
            if meta.len() > ctx.limits.max_bytes {
                return Err(Error::Unsafe(format!("{} is too large", path.display())));
            }
            std::fs::copy(path, out.join("SKILL.md")).map_err(|e| Error::io(path, e))?;
            return Ok(out);
        }
        Err(Error::Identifier(format!(
            "{} is neither a folder, a SKILL.md nor a .tar.gz",
            path.display()
        )))
    }
}

/// `/dir#sub/skill` written as for a git repository, when `/dir` exists:
/// the path that was meant, `/dir/sub/skill`.
fn subdir_written(path: &Path) -> Option<std::path::PathBuf> {
    let text = path.to_str()?;
    let (dir, sub) = text.rsplit_once('#')?;
    let sub = sub.trim_matches('/');
    (!dir.is_empty() && !sub.is_empty() && Path::new(dir).is_dir())
        .then(|| Path::new(dir).join(sub))
}

impl SkillSource for LocalSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let root = self.materialize(ctx)?;
            // Skills inside an archive or a lone SKILL.md all install through the path itself.
            if root.starts_with(&ctx.scratch) {
                let dir = select_skill(&root, &self.id)?;
                let mut metas = list_tree(&dir, &self.id, self.id.trust(ctx.config));
                metas.truncate(1);
                return Ok(metas);
            }
            Ok(list_tree(&root, &self.id, self.id.trust(ctx.config)))
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let root = self.materialize(ctx)?;
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
        Box::pin(async move { self.materialize(ctx).map(Some) })
    }
}
