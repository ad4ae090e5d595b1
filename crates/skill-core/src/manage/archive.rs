//! Archiving and restoring: a retired skill moves whole into
//! `skills/.archive/`, where no surface sees it (discovery skips
//! dot-folders), with a small record beside it saying where it came from.
//! Restoring moves the same folder back, so the skill returns byte for byte.
//! Both steps are versioned in history like every other write.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use knack_config::KnackHome;
use serde::{Deserialize, Serialize};

use super::{
    Actor, ManageContext, Refusal, Refused, Step, atomic, check_delete_target, find_skill,
    internal, lock, paths,
};
use crate::beneath::{self, Base};
use crate::history::{self, SkillIdentity};
use crate::pins;
use crate::skill::{Scope, Skill};
use crate::skill_set::Resolution;

/// The folder under the user skills root that holds archived skills.
pub const ARCHIVE_DIR: &str = ".archive";
/// Ends the name of the record kept beside each archived folder.
const RECORD_SUFFIX: &str = ".archived.json";

/// Where an archived skill came from, kept beside its folder in `.archive/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveRecord {
    pub name: String,
    /// The skill's path below the user skills root, where restore puts it back.
    pub id: String,
    pub qualified_id: String,
    pub skill_dir: PathBuf,
    /// RFC 3339, UTC.
    pub archived_at: String,
    pub actor: Actor,
    /// The skill its content was merged into, when a consolidation archived it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absorbed_into: Option<String>,
}

/// One skill in the archive: its record and the folder that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedSkill {
    pub record: ArchiveRecord,
    pub path: PathBuf,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub record: ArchiveRecord,
    /// The archive folder it came from (gone now).
    pub from: PathBuf,
    pub skill_dir: PathBuf,
}

pub fn archive_dir(home: &KnackHome) -> PathBuf {
    home.skills_dir().join(ARCHIVE_DIR)
}

/// Every archived skill that has a record, sorted by qualified id, then
/// oldest first.
pub fn archived_skills(home: &KnackHome) -> Vec<ArchivedSkill> {
    let dir = archive_dir(home);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(folder) = file_name.strip_suffix(RECORD_SUFFIX) else {
            continue;
        };
        let path = dir.join(folder);
        let record = std::fs::read_to_string(entry.path())
            .ok()
            .and_then(|text| serde_json::from_str::<ArchiveRecord>(&text).ok());
        match record {
            Some(record) if path.is_dir() => out.push(ArchivedSkill { record, path }),
            _ => {
                tracing::debug!(record = %entry.path().display(), "archive record without a readable record or folder; skipped")
            }
        }
    }
    out.sort_by(|a, b| {
        (&a.record.qualified_id, &a.record.archived_at)
            .cmp(&(&b.record.qualified_id, &b.record.archived_at))
    });
    out
}

/// A fresh archive folder name for `skill`: its folder name and the time.
fn entry_name(ctx: &ManageContext, skill: &Skill) -> String {
    let base = skill
        .skill_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| skill.name.clone());
    let stamp = crate::clock::compact(std::time::SystemTime::now());
    let dir = ctx.user_root().join(ARCHIVE_DIR);
    let mut candidate = format!("{base}-{stamp}");
    let mut n = 2;
    while dir.join(&candidate).exists() {
        candidate = format!("{base}-{stamp}-{n}");
        n += 1;
    }
    candidate
}

/// Moves the skill folder `folder_name` (in the open `parent`) into the
/// archive and writes its record. On failure nothing has moved. Returns the
/// archive folder's name.
pub(super) fn move_into_archive(
    ctx: &ManageContext,
    skill: &Skill,
    parent: &Base,
    folder_name: &str,
    actor: Actor,
    absorbed_into: Option<&str>,
) -> std::io::Result<String> {
    let entry = entry_name(ctx, skill);
    let record = ArchiveRecord {
        name: skill.name.clone(),
        id: skill.id.clone(),
        qualified_id: skill.qualified_id(),
        skill_dir: skill.skill_dir.clone(),
        archived_at: crate::clock::now_rfc3339(),
        actor,
        absorbed_into: absorbed_into.map(str::to_owned),
    };
    let mut text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
    text.push('\n');
    let user_root = Base::open(&ctx.user_root())?;
    let (archive, _) = beneath::create_dirs_at(user_root.fd.as_fd(), &[ARCHIVE_DIR])?;
    let record_name = format!("{entry}{RECORD_SUFFIX}");
    atomic::write_at(archive.as_fd(), &record_name, text.as_bytes())?;
    let moved = rustix::fs::renameat_with(
        &parent.fd,
        folder_name,
        &archive,
        entry.as_str(),
        rustix::fs::RenameFlags::NOREPLACE,
    );
    if let Err(e) = moved {
        let _ = rustix::fs::unlinkat(&archive, record_name.as_str(), rustix::fs::AtFlags::empty());
        return Err(e.into());
    }
    rustix::fs::fsync(&archive)?;
    Ok(entry)
}

/// Removes an archive entry (folder and record) after a rollback brought
/// the skill back from history: the copy is no longer needed.
pub(crate) fn forget_entry(home: &KnackHome, entry: &str) {
    let Ok(user_root) = Base::open(&home.skills_dir()) else {
        return;
    };
    let Ok(archive) = user_root.open_dir(ARCHIVE_DIR) else {
        return;
    };
    let _ = beneath::remove_tree_at(archive.fd.as_fd(), entry);
    let _ = rustix::fs::unlinkat(
        &archive.fd,
        format!("{entry}{RECORD_SUFFIX}").as_str(),
        rustix::fs::AtFlags::empty(),
    );
}

/// `knack skills archive NAME`: moves a skill of the user skills folder into
/// the archive, versioned in history. A pinned skill is refused.
pub fn archive(ctx: &ManageContext, name: &str, actor: Actor) -> Result<ArchivedSkill, Refused> {
    let skill = find_skill(ctx, name)?;
    if skill.scope != Scope::User {
        return Err(Refusal::new(format!(
            "only skills in the user skills folder can be archived; '{}' is a {} skill at {}",
            skill.name,
            skill.scope.label(),
            skill.skill_dir.display()
        ))
        .hint("Move or delete that folder yourself, or disable the skill with skills.disabled.")
        .into());
    }
    if let Some(why) =
        pins::pin_status(&ctx.home, &skill.qualified_id()).refusal(&skill.name, "archived")
    {
        return Err(Refusal::new(why)
            .hint(format!("Run `knack skills unpin {}` first.", skill.name))
            .into());
    }
    check_delete_target(ctx, &skill)?;
    let (_, path) = super::take_away(ctx, &skill, actor, super::Removal::Archive(None))?;
    let entry = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let record_path = archive_dir(&ctx.home).join(format!("{entry}{RECORD_SUFFIX}"));
    let record = std::fs::read_to_string(&record_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .ok_or_else(|| {
            Refused::from(Refusal::new(format!(
                "archived '{}' to {} but cannot read back its record",
                skill.name,
                path.display()
            )))
        })?;
    Ok(ArchivedSkill { record, path })
}

/// The archived skills `query` names: by qualified id, else by id, else by
/// name (the same order of precedence as history's look-up).
pub fn archived_matching(home: &KnackHome, query: &str) -> Vec<ArchivedSkill> {
    matching(&archived_skills(home), query)
}

fn matching(all: &[ArchivedSkill], query: &str) -> Vec<ArchivedSkill> {
    let by = |f: &dyn Fn(&ArchiveRecord) -> bool| -> Vec<ArchivedSkill> {
        all.iter().filter(|a| f(&a.record)).cloned().collect()
    };
    let mut found = by(&|r| r.qualified_id == query);
    if found.is_empty() {
        found = by(&|r| r.id == query);
    }
    if found.is_empty() {
        found = by(&|r| r.name == query);
    }
    found
}

/// The one archived skill `query` names (see [`archived_matching`]).
fn find_archived(home: &KnackHome, query: &str) -> Step<ArchivedSkill> {
    let all = archived_skills(home);
    let mut found = matching(&all, query);
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => {
            let names: Vec<String> = all.iter().map(|a| a.record.qualified_id.clone()).collect();
            let refusal = Refusal::new(format!("no archived skill named '{query}'"));
            Err(if names.is_empty() {
                refusal.hint(
                    "The archive is empty; `knack skills stats` lists every skill and its state.",
                )
            } else {
                refusal.hint(format!("Archived skills: {}.", names.join(", ")))
            })
        }
        n => {
            let lines: Vec<String> = found
                .iter()
                .map(|a| {
                    format!(
                        "{} (archived {}, {})",
                        a.record.qualified_id,
                        a.record.archived_at,
                        a.path.display()
                    )
                })
                .collect();
            Err(Refusal::new(format!(
                "'{query}' is ambiguous: it names {n} archived skills: {}",
                lines.join("; ")
            ))
            .hint("Name one by its qualified id (e.g. 'user:category/name'); when one skill was archived more than once, restore it, then archive the copy you do not want."))
        }
    }
}

/// `knack skills restore NAME`: moves an archived skill back to where it
/// was, unchanged. Refused when a skill of that name exists again.
pub fn restore(ctx: &ManageContext, query: &str, actor: Actor) -> Result<Restored, Refused> {
    paths::check_skill_query(query).map_err(Refusal::new)?;
    let archived = find_archived(&ctx.home, query)?;
    let record = archived.record.clone();
    let root = ctx.user_root();
    if root.join(&record.id) != record.skill_dir
        || record
            .id
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err(Refusal::new(format!(
            "the archive record of '{}' names the folder {} and the id '{}', which do not fit together; restore it by hand from {}",
            record.name,
            record.skill_dir.display(),
            record.id,
            archived.path.display()
        ))
        .into());
    }
    let set = ctx.skills_answering(&record.name);
    let existing = match set.resolve(&record.name) {
        Resolution::Found(s) | Resolution::Gated(s, _) => vec![s.skill_dir.clone()],
        Resolution::Ambiguous(list) => list.iter().map(|s| s.skill_dir.clone()).collect(),
        Resolution::NotFound => Vec::new(),
    };
    if let Some(current) = existing.first().cloned().or_else(|| {
        std::fs::symlink_metadata(&record.skill_dir)
            .is_ok()
            .then(|| record.skill_dir.clone())
    }) {
        return Err(Refusal::new(format!(
            "a skill named '{}' exists again at {}; the archived copy stays at {}",
            record.name,
            current.display(),
            archived.path.display()
        ))
        .hint("Archive or rename the current skill first, or copy what you need from the archived folder by hand.")
        .into());
    }
    let _lock = lock(ctx, &record.skill_dir)?;
    let identity = SkillIdentity {
        name: record.name.clone(),
        id: record.id.clone(),
        qualified_id: record.qualified_id.clone(),
        skill_dir: record.skill_dir.clone(),
    };
    let pending = history::begin(&ctx.home, &identity, None)
        .map_err(|e| internal("cannot keep history", e))?;
    let entry = archived
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let moved = move_back(&root, &entry, &record.id);
    if let Err(e) = moved {
        pending.discard();
        return Err(internal(&format!("cannot move {} back", archived.path.display()), e).into());
    }
    pending.commit("restore", actor, None).map_err(|e| {
        Refusal::new(format!(
            "restored '{}' but could not record it in history: {e}",
            record.name
        ))
    })?;
    Ok(Restored {
        skill_dir: record.skill_dir.clone(),
        from: archived.path,
        record,
    })
}

/// Moves `.archive/<entry>` to `<id>` below the user root, creating the
/// category folders, through no link; then drops the entry's record.
fn move_back(root: &Path, entry: &str, id: &str) -> std::io::Result<()> {
    let root = Base::open(root)?;
    let archive = root.open_dir(ARCHIVE_DIR)?;
    // The entry itself must be a real folder, not a link planted there.
    archive.open_dir(entry)?;
    let parts: Vec<&str> = id.split('/').collect();
    let (base, categories) = parts
        .split_last()
        .ok_or_else(|| std::io::Error::other("the record has an empty id"))?;
    let (parent, created) = beneath::create_dirs_at(root.fd.as_fd(), categories)?;
    let moved = rustix::fs::renameat_with(
        &archive.fd,
        entry,
        &parent,
        *base,
        rustix::fs::RenameFlags::NOREPLACE,
    );
    if let Err(e) = moved {
        if let Some((top_parent, top)) = created {
            let _ = beneath::remove_tree_at(top_parent.as_fd(), &top);
        }
        return Err(e.into());
    }
    let _ = rustix::fs::fsync(&parent);
    let _ = rustix::fs::unlinkat(
        &archive.fd,
        format!("{entry}{RECORD_SUFFIX}").as_str(),
        rustix::fs::AtFlags::empty(),
    );
    let _ = rustix::fs::fsync(&archive.fd);
    Ok(())
}
