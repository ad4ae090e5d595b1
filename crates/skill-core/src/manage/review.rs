//! What the background review may do: only skills the agent created on the
//! user root and the user has not pinned, and only files it has read with
//! skill_view in this review.

use std::fs;
use std::path::Path;

use knack_config::KnackHome;

use super::{Actor, Refusal, WriteOrigin, provenance};
use crate::skill::{Scope, Skill};

pub(crate) fn check_may_touch(
    home: &KnackHome,
    origin: &WriteOrigin<'_>,
    skill: &Skill,
) -> Result<(), Refusal> {
    if origin.actor != Actor::Review {
        return Ok(());
    }
    let why = match crate::pins::pin_status(home, &skill.qualified_id()) {
        crate::pins::PinStatus::NotPinned => None,
        crate::pins::PinStatus::Pinned => Some(format!(
            "'{}' is pinned: the background review may not change it in any way",
            skill.name
        )),
        unknown => unknown.refusal(&skill.name, "changed by the background review"),
    };
    if let Some(why) = why {
        return Err(Refusal::new(why).hint(crate::pins::unpin_hint(&skill.name)));
    }
    if skill.scope != Scope::User {
        return Err(Refusal::new(format!(
            "the background review may only change skills in the user skills folder; '{}' is a {} skill ({})",
            skill.name,
            skill.scope.label(),
            skill.qualified_id()
        )));
    }
    let created_by = provenance(&skill.skill_dir).created_by;
    if created_by != "agent" {
        return Err(Refusal::new(format!(
            "the background review may only change skills the agent created; '{}' was created by {created_by}",
            skill.name
        )));
    }
    Ok(())
}

/// The review must have read the exact file it is about to change.
pub(crate) fn check_viewed(
    origin: &WriteOrigin<'_>,
    skill: &Skill,
    path: &Path,
    label: &str,
) -> Result<(), Refusal> {
    if origin.actor != Actor::Review {
        return Ok(());
    }
    let canon = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let seen = origin.viewed.is_some_and(|set| {
        set.iter()
            .any(|p| p == path || *p == canon || fs::canonicalize(p).is_ok_and(|c| c == canon))
    });
    if seen {
        return Ok(());
    }
    let how = if label == "SKILL.md" {
        format!("skill_view('{}')", skill.name)
    } else {
        format!("skill_view('{}', file_path='{label}')", skill.name)
    };
    Err(Refusal::new(format!(
        "the background review must read {label} of '{}' in this review before changing it",
        skill.name
    ))
    .hint(format!(
        "Call {how}, then retry using the text it returned."
    )))
}
