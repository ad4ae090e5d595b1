//! `knack skills trust|untrust [PATH]`: which git repositories may add their
//! project skills (`.knack/skills`, `.agents/skills`) to discovery. A cloned
//! repository is somebody else's code, so its skills are only used once the
//! user says so; the list is `skills.trusted_projects` in config.yaml, which
//! nothing the model runs can write (see docs/security.md).

use std::path::{Path, PathBuf};

use skill_core::roots::{find_git_root, is_trusted, names_repo, project_skill_dirs};

use crate::cli::TrustArgs;
use crate::context::Context;
use crate::exit;

const KEY: &str = "skills.trusted_projects";

pub fn trust(ctx: &Context, args: TrustArgs) -> anyhow::Result<u8> {
    let Some((start, repo)) = repository_of(ctx, args.path.as_deref())? else {
        return Ok(exit::FAILED);
    };
    let listed = &ctx.config.skills.trusted_projects;
    if is_trusted(&repo, listed) {
        println!("{} is already trusted.", repo.display());
        return Ok(exit::OK);
    }
    let mut entries = listed.clone();
    entries.push(repo.to_string_lossy().into_owned());
    super::config::set_key(&ctx.home, KEY, &serde_json::to_string(&entries)?)?;
    println!(
        "Trusted {}: knack now uses the project skills it finds there.",
        repo.display()
    );
    let present: Vec<PathBuf> = project_skill_dirs(&repo, &start)
        .into_iter()
        .filter(|dir| dir.is_dir())
        .collect();
    if present.is_empty() {
        println!(
            "It has no .knack/skills or .agents/skills folder yet (from its root down to {}).",
            start.display()
        );
    }
    for dir in present {
        println!("  {}", dir.display());
    }
    Ok(exit::OK)
}

pub fn untrust(ctx: &Context, args: TrustArgs) -> anyhow::Result<u8> {
    let Some((_, repo)) = repository_of(ctx, args.path.as_deref())? else {
        return Ok(exit::FAILED);
    };
    let listed = &ctx.config.skills.trusted_projects;
    let kept: Vec<&String> = listed
        .iter()
        .filter(|entry| !names_repo(entry, &repo))
        .collect();
    if kept.len() == listed.len() {
        println!("{} was not trusted; nothing changed.", repo.display());
        return Ok(exit::OK);
    }
    super::config::set_key(&ctx.home, KEY, &serde_json::to_string(&kept)?)?;
    println!(
        "{} is no longer trusted: its project skills are ignored from now on.",
        repo.display()
    );
    Ok(exit::OK)
}

/// The folder the user meant (default: the working directory) and the root of
/// the git repository holding it; `None` after saying why there is none.
fn repository_of(ctx: &Context, path: Option<&Path>) -> anyhow::Result<Option<(PathBuf, PathBuf)>> {
    let given = path.map_or_else(|| ctx.cwd.clone(), |p| ctx.cwd.join(p));
    let start = match given.canonicalize() {
        Ok(start) => start,
        Err(e) => {
            eprintln!("knack: cannot read {}: {e}", given.display());
            return Ok(None);
        }
    };
    match find_git_root(&start) {
        Some(repo) => Ok(Some((start, repo))),
        None => {
            eprintln!(
                "knack: {} is not inside a git repository; project skills are only looked for in git repositories (the folder holding .git, and the folders from there down to where knack runs)",
                start.display()
            );
            Ok(None)
        }
    }
}
