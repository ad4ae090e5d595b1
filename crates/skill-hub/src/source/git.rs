//! `git+<url>[@ref][#subdir]`: a shallow clone with the `git` command into the
//! quarantine, never prompting, within the fetch timeout.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;

use super::{FetchContext, Fetched, SkillMeta, SkillSource, list_tree, select_skill, sub_dir};
use crate::identifier::Identifier;
use crate::{Error, Result};

pub(crate) struct GitSource {
    id: Identifier,
}

impl GitSource {
    pub(crate) fn new(id: Identifier) -> Self {
        Self { id }
    }

    fn parts(&self) -> (&str, Option<&str>, Option<&str>) {
        match &self.id {
            Identifier::Git {
                url,
                reference,
                subdir,
            } => (url, reference.as_deref(), subdir.as_deref()),
            _ => ("", None, None),
        }
    }

    /// Clones into the scratch folder and returns the folder `#subdir` names.
    async fn checkout(&self, ctx: &FetchContext<'_>) -> Result<PathBuf> {
        let (url, reference, subdir) = self.parts();
        let dest = ctx.scratch.join("clone");
        let timeout = Duration::from_secs(ctx.config.fetch_timeout_secs.max(1));
        let spinner = ctx.net.spinner(&format!("cloning {url}"));
        let mut args: Vec<String> = vec![
            "clone".into(),
            "--quiet".into(),
            "--depth".into(),
            "1".into(),
        ];
        if let Some(r) = reference {
            args.push("--branch".into());
            args.push(r.into());
        }
        args.push("--".into());
        args.push(url.into());
        args.push(dest.to_string_lossy().into_owned());
        let shallow = run_git(&args, timeout).await;
        let result = match (shallow, reference) {
            (Ok(()), _) => Ok(()),
            // `--branch` takes branches and tags only; a commit needs a full clone.
            (Err(_), Some(r)) if looks_like_commit(r) => {
                let _ = std::fs::remove_dir_all(&dest);
                let d = dest.to_string_lossy().into_owned();
                match run_git(
                    &[
                        "clone".into(),
                        "--quiet".into(),
                        "--".into(),
                        url.into(),
                        d.clone(),
                    ],
                    timeout,
                )
                .await
                {
                    Ok(()) => {
                        run_git(
                            &[
                                "-C".into(),
                                d,
                                "checkout".into(),
                                "--quiet".into(),
                                "--detach".into(),
                                r.into(),
                            ],
                            timeout,
                        )
                        .await
                    }
                    Err(e) => Err(e),
                }
            }
            (Err(e), _) => Err(e),
        };
        spinner.finish_and_clear();
        result.map_err(|e| Error::Fetch(format!("cannot clone {}: {e}", self.id)))?;
        sub_dir(&dest, subdir, &self.id)
    }
}

fn looks_like_commit(r: &str) -> bool {
    (7..=40).contains(&r.len()) && r.chars().all(|c| c.is_ascii_hexdigit())
}

/// Runs git without a terminal prompt; the error is git's last words.
async fn run_git(args: &[String], timeout: Duration) -> std::result::Result<(), String> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", "https:http:ssh:file")
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run git ({e}); is it installed?"))?;
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Err(_) => Err(format!(
            "git did not finish within {}s (hub.fetch_timeout_secs)",
            timeout.as_secs()
        )),
        Ok(Err(e)) => Err(format!("git failed: {e}")),
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => {
            let text = String::from_utf8_lossy(&out.stderr);
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("git exited with an error")
                .trim();
            Err(last.to_owned())
        }
    }
}

impl SkillSource for GitSource {
    fn identifier(&self) -> &Identifier {
        &self.id
    }

    fn list<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Vec<SkillMeta>>> {
        Box::pin(async move {
            let root = self.checkout(ctx).await?;
            Ok(list_tree(&root, &self.id, self.id.trust(ctx.config)))
        })
    }

    fn fetch<'a>(&'a self, ctx: &'a FetchContext<'a>) -> BoxFuture<'a, Result<Fetched>> {
        Box::pin(async move {
            let root = self.checkout(ctx).await?;
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
        Box::pin(async move { self.checkout(ctx).await.map(Some) })
    }
}
