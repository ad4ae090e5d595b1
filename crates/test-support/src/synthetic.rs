//! Deterministic synthetic skill libraries for retrieval and scale tests: names,
//! descriptions (with a trigger clause), tags and bodies that share some words, like real ones.
//!
//! Each skill has a few words of its own; its description names some of them and
//! its body names more, so a query made from the body is a fair test of retrieval.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One generated skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntheticSkill {
    /// Folder and frontmatter name, unique in the library.
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    /// The category folder when the library is written nested.
    pub category: String,
    /// The Markdown body after the frontmatter.
    pub body: String,
    /// A sentence from the body, as a user might phrase the task.
    pub query: String,
}

impl SyntheticSkill {
    /// The whole SKILL.md text.
    pub fn skill_md(&self) -> String {
        format!(
            "---\nname: {}\ndescription: \"{}\"\ntags: [{}]\n---\n{}",
            self.name,
            self.description,
            self.tags.join(", "),
            self.body
        )
    }
}

/// How a library is laid out on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Every skill directly under the root (what `install --all` makes).
    Flat,
    /// Skills in category folders of about this many skills each.
    Nested(usize),
}

/// The small deterministic generator the tests share (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const ONSETS: &[&str] = &[
    "b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pl", "qu",
    "r", "s", "sh", "st", "t", "tr", "v", "w", "z",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ou", "ea"];
const CODAS: &[&str] = &["", "n", "r", "l", "x", "m", "st", "k"];
/// Words every kind of skill uses; they carry little signal, as in real libraries.
const COMMON: &[&str] = &[
    "file", "files", "data", "project", "report", "config", "test", "build", "run", "check",
    "update", "create", "review", "format", "export", "import", "script", "server", "table",
    "document", "output", "input", "error", "issue", "change", "release", "user", "team",
];
const VERBS: &[&str] = &[
    "convert",
    "validate",
    "summarise",
    "deploy",
    "migrate",
    "audit",
    "render",
    "clean",
    "sync",
    "index",
    "schedule",
    "monitor",
    "package",
    "compare",
    "merge",
    "split",
];
const CATEGORY_WORDS: &[&str] = &[
    "devops",
    "writing",
    "research",
    "data",
    "design",
    "security",
    "media",
    "finance",
    "science",
    "productivity",
    "mobile",
    "web",
];

/// Distinct words the skills' own words are drawn from.
const WORD_POOL: usize = 1_500;

/// A pseudo-word of two or three syllables: distinct enough that a skill's
/// own words rarely belong to another skill.
fn word(rng: &mut Rng) -> String {
    let syllables = 2 + rng.below(2);
    let mut w = String::new();
    for _ in 0..syllables {
        w.push_str(rng.pick(ONSETS));
        w.push_str(rng.pick(VOWELS));
    }
    w.push_str(rng.pick(CODAS));
    w
}

/// `count` skills from `seed`; the same arguments give the same library.
pub fn synthetic_skills(count: usize, seed: u64) -> Vec<SyntheticSkill> {
    let mut rng = Rng(seed ^ 0x5EED_0F5C_A1E5);
    // A shared pool, so at scale each word belongs to many skills and only
    // their combination tells one skill from another.
    let pool: Vec<String> = (0..WORD_POOL).map(|_| word(&mut rng)).collect();
    let mut names = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let own: Vec<String> = (0..7)
            .map(|_| pool[rng.below(pool.len())].clone())
            .collect();
        let mut name = format!("{}-{}", own[0], own[1]);
        if !names.insert(name.clone()) {
            name = format!("{name}-{i}");
            names.insert(name.clone());
        }
        let verb = rng.pick(VERBS);
        let c = |rng: &mut Rng| rng.pick(COMMON);
        let description = format!(
            "Works with {} {} and {} {}. Use when the user asks to {verb} {} {} or a {} {}.",
            own[0],
            c(&mut rng),
            own[2],
            c(&mut rng),
            own[1],
            c(&mut rng),
            own[3],
            c(&mut rng),
        );
        let category = format!("{}-{}", rng.pick(CATEGORY_WORDS), i % 97);
        let tags = vec![rng.pick(CATEGORY_WORDS).to_owned(), own[2].clone()];
        let query = format!(
            "{verb} the {} {} with {} and check the {} {}",
            own[4],
            c(&mut rng),
            own[5],
            own[0],
            c(&mut rng)
        );
        let body = format!(
            "# {}\n\n## When to use\n\nFor {} work on {} {}.\n\n## Steps\n\n1. Open the {} {} and read its {}.\n2. {query}.\n3. Record the {} {} in the {}.\n\n## Pitfalls\n\n- A {} {} may hide a {} {}.\n",
            name,
            own[0],
            own[1],
            c(&mut rng),
            own[3],
            c(&mut rng),
            c(&mut rng),
            own[6],
            c(&mut rng),
            c(&mut rng),
            own[4],
            c(&mut rng),
            own[6],
            c(&mut rng),
        );
        out.push(SyntheticSkill {
            name,
            description,
            tags,
            category,
            body,
            query,
        });
    }
    out
}

/// Writes `skills` under `root` in `layout`; returns each skill's folder.
pub fn write_library(
    root: &Path,
    skills: &[SyntheticSkill],
    layout: Layout,
) -> io::Result<Vec<PathBuf>> {
    let mut dirs = Vec::with_capacity(skills.len());
    for (i, skill) in skills.iter().enumerate() {
        let dir = match layout {
            Layout::Flat => root.join(&skill.name),
            Layout::Nested(per) => root
                .join(format!("group-{:03}", i / per.max(1)))
                .join(&skill.name),
        };
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("SKILL.md"), skill.skill_md())?;
        dirs.push(dir);
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_deterministic_and_names_unique() {
        let a = synthetic_skills(300, 7);
        assert_eq!(a, synthetic_skills(300, 7));
        assert_ne!(a, synthetic_skills(300, 8));
        let names: std::collections::HashSet<&str> = a.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 300);
        for s in &a {
            assert!(s.body.contains(&s.query), "{}", s.name);
            assert!(s.description.contains("Use when"), "{}", s.description);
        }
    }

    #[test]
    fn written_libraries_hold_every_skill() {
        let dir = tempfile::tempdir().expect("tempdir");
        let skills = synthetic_skills(25, 1);
        let dirs = write_library(dir.path(), &skills, Layout::Nested(10)).expect("write");
        assert_eq!(dirs.len(), 25);
        assert!(dir.path().join("group-002").is_dir());
        let text = fs::read_to_string(dirs[3].join("SKILL.md")).expect("read");
        assert!(text.starts_with("---\nname: "));
    }
}
