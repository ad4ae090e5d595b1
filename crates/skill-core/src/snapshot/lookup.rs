//! One lookup answered from the snapshot's stamps and keys alone: the skills
//! a query names are decoded, the other ten thousand are not.
//!
//! A `skill_manage` write only needs to know which skill a name stands for
//! (and that it stands for one only), yet proving that still takes every
//! stamp: a skill anywhere may have been added or renamed by hand since.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{
    REWRITE_AFTER, StampTable, StoredKey, StoredSkill, StoredStamp, open_for, reparse_unchanged,
    unchanged_shape, written_at,
};
use crate::discovery::SkillPlace;
use crate::roots::DiscoveryOptions;
use crate::skill::{QualifiedId, Skill};
use crate::skill_set::{Lookup, LookupKey, SkillSet, resolve_among};
use crate::stamp::StampKind;

/// A set of just the skills `query` matches, read from the snapshot in
/// `cache_dir`: `resolve(query)` on it answers exactly as it would on the
/// whole set. It is for that one question: its other fields (doctor
/// entries, roots, ambiguous names) are left empty. `None` when the
/// snapshot cannot answer (missing, written for other options, or changed
/// in a way only a full load can apply); load the whole set then.
///
/// Only the stamps, the keys and the matching skills' records are read.
/// Changes are applied as a full load applies them (`refresh`): a folder
/// whose shape held, or a SKILL.md edited in place with the same name, id
/// and gate; such a skill is returned as parsed now.
pub fn skills_answering(
    options: &DiscoveryOptions,
    cache_dir: &Path,
    query: &str,
) -> Option<SkillSet> {
    let started = std::time::Instant::now();
    let (file, header, header_len) = open_for(options, cache_dir)?;
    let stamps_len = usize::try_from(header.stamps_len).ok()?;
    let keys_len = usize::try_from(header.lookup_len).ok()?;
    let mut bytes = vec![0u8; stamps_len.checked_add(keys_len)?];
    file.read_exact_at(&mut bytes, header_len as u64).ok()?;
    let (stamp_bytes, key_bytes) = bytes.split_at(stamps_len);
    let stamps = StampTable::parse(stamp_bytes)?;
    let roots = &options.roots;
    let (changed, keys) = stamps.changed_beside(roots, written_at(&header), || {
        postcard::from_bytes::<Vec<StoredKey<'_>>>(key_bytes).ok()
    });
    let (changed, keys) = (changed?, keys?);
    if keys.iter().any(|k| root_of(k) >= roots.len()) {
        return None;
    }
    if changed.len() > REWRITE_AFTER {
        // Many changes: the full load applies them and writes them back.
        return None;
    }
    let mut reparsed: HashMap<usize, Skill> = HashMap::new();
    for &i in &changed {
        let stamp = &stamps.get(i)?;
        match stamp.kind {
            StampKind::Folder => {
                unchanged_shape(&stamp.path(roots)?, stamp.state, stamp.shape)?;
            }
            StampKind::SkillFile => {
                let (index, skill) = reparse_key(stamp, &keys, options)?;
                reparsed.insert(index, skill);
            }
            StampKind::CategoryFile => return None,
        }
    }
    let key = |i: usize| {
        let k = &keys[i];
        LookupKey {
            name: &k.name,
            id: &k.id,
            qualified: QualifiedId {
                namespace: roots[root_of(k)].scope.namespace(),
                id: &k.id,
            },
            gate: k.gate,
        }
    };
    let matched = match resolve_among(query, keys.len(), key) {
        Lookup::Found(i) | Lookup::Gated(i, _) => vec![i],
        Lookup::Ambiguous(list) => list,
        Lookup::NotFound => Vec::new(),
    };
    let body_at = header_len as u64 + header.stamps_len + header.lookup_len;
    let mut set = SkillSet::default();
    for i in matched {
        let skill = match reparsed.remove(&i) {
            Some(skill) => skill,
            None => {
                let key = &keys[i];
                read_record(&file, body_at, key)?.into_skill(options)?
            }
        };
        set.skills.push(skill);
        set.gates.push(keys[i].gate);
    }
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1000.0,
        stamps = stamps.len(),
        changed = changed.len(),
        matched = set.skills.len(),
        "skills snapshot answered a lookup"
    );
    Some(set)
}

fn root_of(key: &StoredKey<'_>) -> usize {
    usize::try_from(key.root).unwrap_or(usize::MAX)
}

/// One skill's record, read from the body that starts at `body_at`.
fn read_record(file: &std::fs::File, body_at: u64, key: &StoredKey<'_>) -> Option<StoredSkill> {
    let len = usize::try_from(key.end.checked_sub(key.start)?).ok()?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, body_at + u64::from(key.start))
        .ok()?;
    postcard::from_bytes(&bytes).ok()
}

/// The skill of a SKILL.md stamp that moved, parsed again, with its index
/// among `keys`; `None` unless it kept its name, id and gate.
fn reparse_key(
    stamp: &StoredStamp<'_>,
    keys: &[StoredKey<'_>],
    options: &DiscoveryOptions,
) -> Option<(usize, Skill)> {
    let root = stamp.root?;
    let id = stamp.rel.strip_suffix("/SKILL.md")?;
    let index = keys.iter().position(|k| k.root == root && k.id == id)?;
    let key = &keys[index];
    let root = options.roots.get(root_of(key))?;
    let skill_dir = root.path.join(id);
    let place = SkillPlace {
        root_index: root_of(key),
        skill_md: skill_dir.join("SKILL.md"),
        skill_dir,
        id: id.to_owned(),
    };
    let fresh = reparse_unchanged(place, &root.scope, &key.name, key.gate, options)?;
    Some((index, fresh.skill))
}
