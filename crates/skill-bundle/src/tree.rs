//! A skill tree held in memory: its files sorted by path, the skills found in
//! it with their content hashes, and the hash of the whole set.

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

use crate::rules;
use crate::{Error, Result};

/// One file of a tree, its path relative to the tree root with `/` separators.
#[derive(Debug, Clone)]
pub struct BundleFile {
    pub path: Cow<'static, str>,
    pub bytes: Cow<'static, [u8]>,
}

/// A skill of a tree: its id is its folder relative to the root
/// (`devops/docker-compose-debug`); its hash covers its files.
#[derive(Debug, Clone)]
pub struct BundledSkill {
    pub id: String,
    pub hash: String,
    files: Range<usize>,
}

impl BundledSkill {
    /// The last segment of the id: the folder name, which is the skill name.
    pub fn name(&self) -> &str {
        self.id.rsplit('/').next().unwrap_or(&self.id)
    }

    /// The category path (`devops`, `a/b`), `None` for a skill at the root.
    pub fn category(&self) -> Option<&str> {
        self.id.rsplit_once('/').map(|(c, _)| c)
    }
}

/// The answer to "which bundled skill does this name mean?".
#[derive(Debug)]
pub enum Lookup<'a> {
    Found(&'a BundledSkill),
    Ambiguous(Vec<&'a BundledSkill>),
    NotFound,
}

#[derive(Debug, Clone)]
pub struct BundleTree {
    files: Vec<BundleFile>,
    skills: Vec<BundledSkill>,
    set_hash: String,
}

impl BundleTree {
    pub(crate) fn from_static(
        files: &'static [(&'static str, &'static [u8])],
        skills: &'static [(&'static str, &'static str)],
        set_hash: &'static str,
    ) -> Self {
        let files = files
            .iter()
            .map(|(path, bytes)| BundleFile {
                path: Cow::Borrowed(*path),
                bytes: Cow::Borrowed(*bytes),
            })
            .collect();
        let skills = skills
            .iter()
            .map(|(id, hash)| ((*id).to_owned(), (*hash).to_owned()))
            .collect();
        Self::assemble(files, Some(skills), Some(set_hash.to_owned()))
    }

    /// Builds a tree from files in any order; hashes are computed here.
    pub fn from_files(files: Vec<BundleFile>) -> Self {
        Self::assemble(files, None, None)
    }

    /// Reads a skill tree from disk with the same rules the build uses
    /// (no symlinks followed, caches and `.knack-*` files left out).
    pub fn from_dir(root: &Path) -> Result<Self> {
        if !root.is_dir() {
            return Err(Error::NotADirectory(root.to_path_buf()));
        }
        let mut files = Vec::new();
        for entry in walkdir::WalkDir::new(root).follow_links(false) {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(root).to_path_buf();
                Error::Io {
                    path,
                    source: e.into(),
                }
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let Some(rel) = relative(root, entry.path()) else {
                continue;
            };
            if rules::is_excluded(&rel) {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(|source| Error::Io {
                path: entry.path().to_path_buf(),
                source,
            })?;
            files.push(BundleFile {
                path: Cow::Owned(rel),
                bytes: Cow::Owned(bytes),
            });
        }
        Ok(Self::from_files(files))
    }

    fn assemble(
        mut files: Vec<BundleFile>,
        skills: Option<Vec<(String, String)>>,
        set_hash: Option<String>,
    ) -> Self {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let ids: Vec<(String, Option<String>)> = match skills {
            Some(known) => known.into_iter().map(|(id, h)| (id, Some(h))).collect(),
            None => rules::skill_ids(files.iter().map(|f| f.path.as_ref()))
                .into_iter()
                .map(|id| (id, None))
                .collect(),
        };
        let skills = ids
            .into_iter()
            .map(|(id, hash)| {
                let range = prefix_range(&files, &id);
                let hash = hash.unwrap_or_else(|| {
                    let lead_len = id.len() + 1;
                    rules::content_hash(
                        files[range.clone()]
                            .iter()
                            .map(|f| (&f.path[lead_len..], f.bytes.as_ref())),
                    )
                });
                BundledSkill {
                    id,
                    hash,
                    files: range,
                }
            })
            .collect();
        let set_hash = set_hash.unwrap_or_else(|| {
            rules::set_hash(files.iter().map(|f| (f.path.as_ref(), f.bytes.as_ref())))
        });
        Self {
            files,
            skills,
            set_hash,
        }
    }

    /// Every file of the tree, sorted by path.
    pub fn files(&self) -> &[BundleFile] {
        &self.files
    }

    /// The skills, sorted by id.
    pub fn skills(&self) -> &[BundledSkill] {
        &self.skills
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The hash of the whole tree (and the seeding rules version).
    pub fn set_hash(&self) -> &str {
        &self.set_hash
    }

    pub fn skill(&self, id: &str) -> Option<&BundledSkill> {
        self.skills
            .binary_search_by(|s| s.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.skills[i])
    }

    /// Resolves an id (`devops/x`), a qualified id (`user:devops/x`) or a bare
    /// name (`x`, when exactly one skill has it).
    pub fn find(&self, query: &str) -> Lookup<'_> {
        let query = query.trim().trim_matches('/');
        let query = query.split_once(':').map_or(query, |(_, rest)| rest);
        if let Some(skill) = self.skill(query) {
            return Lookup::Found(skill);
        }
        let matches: Vec<&BundledSkill> =
            self.skills.iter().filter(|s| s.name() == query).collect();
        match matches.len() {
            0 => Lookup::NotFound,
            1 => Lookup::Found(matches[0]),
            _ => Lookup::Ambiguous(matches),
        }
    }

    /// A skill's files as (path relative to the skill folder, bytes).
    pub fn skill_files<'a>(
        &'a self,
        skill: &'a BundledSkill,
    ) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        let lead_len = skill.id.len() + 1;
        self.files[skill.files.clone()]
            .iter()
            .map(move |f| (&f.path[lead_len..], f.bytes.as_ref()))
    }

    /// `DESCRIPTION.md` files of categories: (category path, bytes). Files of
    /// that name inside a skill folder belong to the skill and are not listed.
    pub fn category_descriptions(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().filter_map(|f| {
            let category = f.path.strip_suffix("/DESCRIPTION.md")?;
            let inside_skill = self.skills.iter().any(|s| {
                category == s.id
                    || (category.starts_with(s.id.as_str())
                        && category.as_bytes().get(s.id.len()) == Some(&b'/'))
            });
            (!inside_skill).then_some((category, f.bytes.as_ref()))
        })
    }
}

/// The contiguous run of sorted files under `dir/` (sorted strings sharing a
/// prefix are adjacent).
fn prefix_range(files: &[BundleFile], dir: &str) -> Range<usize> {
    let lead = format!("{dir}/");
    let start = files.partition_point(|f| f.path.as_ref() < lead.as_str());
    let len = files[start..]
        .iter()
        .take_while(|f| f.path.starts_with(lead.as_str()))
        .count();
    start..start + len
}

fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> BundleFile {
        BundleFile {
            path: Cow::Owned(path.to_owned()),
            bytes: Cow::Owned(text.as_bytes().to_vec()),
        }
    }

    fn sample() -> BundleTree {
        BundleTree::from_files(vec![
            file("devops/x/SKILL.md", "x"),
            file("devops/DESCRIPTION.md", "ops"),
            file("devops/x/references/nested/SKILL.md", "example"),
            file("devops/x-y/SKILL.md", "xy"),
            file("devops/x/DESCRIPTION.md", "part of x"),
            file("data/x/SKILL.md", "other x"),
            file("SKILL.md", "root file is not a skill"),
        ])
    }

    #[test]
    fn finds_skills_but_not_nested_examples_or_the_root() {
        let tree = sample();
        let ids: Vec<&str> = tree.skills().iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["data/x", "devops/x", "devops/x-y"]);
        let x = tree.skill("devops/x").unwrap();
        let files: Vec<&str> = tree.skill_files(x).map(|(p, _)| p).collect();
        assert_eq!(
            files,
            ["DESCRIPTION.md", "SKILL.md", "references/nested/SKILL.md"]
        );
    }

    #[test]
    fn category_descriptions_skip_files_inside_skills() {
        let tree = sample();
        let cats: Vec<&str> = tree.category_descriptions().map(|(c, _)| c).collect();
        assert_eq!(cats, ["devops"]);
    }

    #[test]
    fn lookup_by_id_qualified_id_and_unique_name() {
        let tree = sample();
        assert!(matches!(tree.find("devops/x"), Lookup::Found(s) if s.id == "devops/x"));
        assert!(matches!(tree.find("user:devops/x-y"), Lookup::Found(s) if s.id == "devops/x-y"));
        assert!(matches!(tree.find("x-y"), Lookup::Found(s) if s.id == "devops/x-y"));
        assert!(matches!(tree.find("x"), Lookup::Ambiguous(v) if v.len() == 2));
        assert!(matches!(tree.find("nope"), Lookup::NotFound));
    }

    #[test]
    fn skill_hash_covers_paths_and_bytes() {
        let a = sample();
        let mut files = a.files().to_vec();
        files.push(file("devops/x/templates/t.md", "t"));
        let b = BundleTree::from_files(files);
        assert_ne!(
            a.skill("devops/x").unwrap().hash,
            b.skill("devops/x").unwrap().hash
        );
        assert_eq!(
            a.skill("data/x").unwrap().hash,
            b.skill("data/x").unwrap().hash
        );
        assert_ne!(a.set_hash(), b.set_hash());
    }

    #[test]
    fn from_dir_matches_from_files_and_skips_private_and_cache_files() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("devops/x");
        std::fs::create_dir_all(skill.join("scripts/__pycache__")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "x").unwrap();
        std::fs::write(skill.join("scripts/a.py"), "print()").unwrap();
        std::fs::write(skill.join("scripts/__pycache__/a.pyc"), "junk").unwrap();
        std::fs::write(skill.join(".knack-provenance.json"), "{}").unwrap();
        let from_disk = BundleTree::from_dir(dir.path()).unwrap();
        let in_memory = BundleTree::from_files(vec![
            file("devops/x/scripts/a.py", "print()"),
            file("devops/x/SKILL.md", "x"),
        ]);
        assert_eq!(from_disk.files().len(), 2);
        assert_eq!(from_disk.set_hash(), in_memory.set_hash());
        assert_eq!(
            from_disk.skill("devops/x").unwrap().hash,
            in_memory.skill("devops/x").unwrap().hash
        );
    }

    #[test]
    fn compiled_in_hashes_match_a_recomputation() {
        for tree in [crate::bundled(), crate::optional()] {
            let again = BundleTree::from_files(tree.files().to_vec());
            assert_eq!(again.set_hash(), tree.set_hash());
            let ids: Vec<_> = again.skills().iter().map(|s| (&s.id, &s.hash)).collect();
            let built: Vec<_> = tree.skills().iter().map(|s| (&s.id, &s.hash)).collect();
            assert_eq!(ids, built);
        }
    }
}
