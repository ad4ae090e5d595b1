//! `gen-tree`: a deterministic synthetic skills tree for tests and benchmarks.
//! Same skill count and seed give a byte-identical tree; no file depends on time or hashing order.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// What to generate.
#[derive(Debug, Clone)]
pub struct TreeSpec {
    pub skills: usize,
    pub seed: u64,
    /// Also write an external skills dir here, repeating some names.
    pub external: Option<PathBuf>,
}

/// What was written; the bench uses it to check the runtime's answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeSummary {
    pub skills: usize,
    /// Skills a Linux host should list (all minus platform-gated ones).
    pub visible_on_linux: usize,
    pub gated_on_linux: usize,
    /// Distinct category folders, intermediate levels included.
    pub categories: usize,
    pub category_descriptions: usize,
    /// Skills whose bare name another skill in the tree also uses.
    pub duplicate_names: usize,
    pub decoys: usize,
    pub with_scripts: usize,
    pub external_skills: usize,
    /// A visible skill whose bare name is unique in the tree.
    pub sample_unique_name: Option<String>,
}

impl TreeSummary {
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} skills written ({} visible on linux, {} gated), {} categories ({} with DESCRIPTION.md), \
{} sharing a name, {} decoys under references/, {} with scripts/",
            self.skills,
            self.visible_on_linux,
            self.gated_on_linux,
            self.categories,
            self.category_descriptions,
            self.duplicate_names,
            self.decoys,
            self.with_scripts,
        );
        if self.external_skills > 0 {
            line.push_str(&format!(", {} external skills", self.external_skills));
        }
        line
    }
}

/// splitmix64: tiny, fast, and good enough to vary a fixture; its output
/// depends only on the seed, which is what makes the tree reproducible.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant for fixtures.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TOPS: &[&str] = &[
    "data",
    "devops",
    "mlops",
    "web",
    "security",
    "research",
    "writing",
    "media",
    "cloud",
    "mobile",
    "testing",
    "finance",
    "productivity",
    "databases",
    "networking",
    "design",
    "docs",
    "gaming",
    "hardware",
    "science",
];

const SUBS: &[&str] = &[
    "etl",
    "pipelines",
    "training",
    "serving",
    "kubernetes",
    "ci",
    "monitoring",
    "frontend",
    "backend",
    "auth",
    "audits",
    "papers",
    "notes",
    "video",
    "audio",
    "aws",
    "gcp",
    "android",
    "ios",
    "fuzzing",
    "e2e",
    "reporting",
    "tax",
    "calendar",
    "postgres",
    "sqlite",
    "dns",
    "vpn",
    "mockups",
    "api",
    "sdk",
    "shaders",
    "firmware",
    "biology",
    "chemistry",
    "streaming",
    "storage",
    "compliance",
    "localization",
    "analytics",
];

const LEAVES: &[&str] = &[
    "advanced",
    "legacy",
    "internal",
    "community",
    "experimental",
    "recipes",
    "basics",
    "migration",
    "tooling",
    "playbooks",
    "ops",
    "review",
    "templates",
    "edge",
    "batch",
    "realtime",
    "onprem",
    "hosted",
    "vendor",
    "archive",
];

const VERBS: &[&str] = &[
    "build",
    "deploy",
    "audit",
    "profile",
    "migrate",
    "sync",
    "review",
    "export",
    "import",
    "tune",
    "trace",
    "bench",
    "index",
    "render",
    "summarize",
    "lint",
    "package",
    "backup",
    "restore",
    "scan",
    "plan",
    "draft",
    "convert",
    "debug",
    "label",
    "shard",
    "rotate",
    "archive",
    "fetch",
    "parse",
    "compose",
    "validate",
    "schedule",
    "triage",
    "patch",
    "provision",
    "visualize",
    "benchmark",
];

const NOUNS: &[&str] = &[
    "pipeline",
    "cluster",
    "dataset",
    "model",
    "notebook",
    "schema",
    "report",
    "invoice",
    "container",
    "image",
    "query",
    "cache",
    "queue",
    "endpoint",
    "webhook",
    "secret",
    "certificate",
    "log",
    "metric",
    "dashboard",
    "release",
    "changelog",
    "manuscript",
    "slide",
    "podcast",
    "transcript",
    "playlist",
    "shader",
    "sprite",
    "sensor",
    "ledger",
    "budget",
    "contract",
    "ticket",
    "backlog",
    "roadmap",
    "survey",
    "genome",
    "protein",
    "spectrum",
    "graph",
    "embedding",
    "prompt",
    "checkpoint",
    "adapter",
    "tokenizer",
    "migration",
    "replica",
    "bucket",
    "runbook",
];

const ADJECTIVES: &[&str] = &[
    "large",
    "flaky",
    "nightly",
    "private",
    "shared",
    "remote",
    "local",
    "slow",
    "noisy",
    "sparse",
    "stale",
    "versioned",
    "encrypted",
    "partitioned",
    "incremental",
    "offline",
    "multi-region",
    "read-only",
    "long-running",
    "unfamiliar",
];

const TOOLSETS: &[&str] = &["web", "terminal", "browser", "files", "vision", "code"];
const TOOLS: &[&str] = &[
    "web_search",
    "browser_open",
    "terminal",
    "image_generate",
    "read_file",
    "python",
];
const AUTHORS: &[&str] = &["knack-bench", "fixture-bot", "ops team", "Ada", "Lin"];
const LICENSES: &[&str] = &["MIT", "Apache-2.0", "CC-BY-4.0"];

const OPENERS: &[&str] = &[
    "Use when you need to",
    "Helps the agent",
    "Guides you to",
    "Step-by-step way to",
    "Checklist to",
    "Proven routine to",
];

const PREPOSITIONS: &[&str] = &["for", "across", "inside", "against", "behind", "without"];

/// One skill folder to write.
struct PlannedSkill {
    category: Option<String>,
    name: String,
    gated: bool,
}

/// Writes the tree under `out` (which must be missing or empty).
pub fn generate(out: &Path, spec: &TreeSpec) -> Result<TreeSummary> {
    ensure_empty(out)?;
    let mut rng = SplitMix64::new(spec.seed);
    let categories = plan_categories(&mut rng, spec.skills);
    let mut summary = TreeSummary::default();
    let mut names_used: HashSet<String> = HashSet::new();
    let mut placed: HashSet<(Option<String>, String)> = HashSet::new();
    let mut planned: Vec<PlannedSkill> = Vec::with_capacity(spec.skills);
    let mut text = String::with_capacity(8 * 1024);

    for index in 0..spec.skills {
        let category = if rng.percent(2) || categories.is_empty() {
            None
        } else {
            Some(categories[rng.below(categories.len())].clone())
        };
        // About 3% reuse an earlier name in another folder: a collision on purpose.
        let reused = if index > 10 && rng.percent(3) {
            let earlier = &planned[rng.below(planned.len())];
            let key = (category.clone(), earlier.name.clone());
            (earlier.category != category && !placed.contains(&key)).then(|| earlier.name.clone())
        } else {
            None
        };
        let name = match reused {
            Some(name) => name,
            None => fresh_name(&mut rng, &mut names_used),
        };
        placed.insert((category.clone(), name.clone()));
        let skill_dir = match &category {
            Some(c) => out.join(c).join(&name),
            None => out.join(&name),
        };
        let features = write_skill(&mut rng, &skill_dir, &name, &planned, &mut text)?;
        summary.decoys += usize::from(features.decoy);
        summary.with_scripts += usize::from(features.scripts);
        planned.push(PlannedSkill {
            category,
            name,
            gated: features.gated,
        });
    }

    let mut all_categories: BTreeSet<String> = BTreeSet::new();
    for skill in &planned {
        if let Some(c) = &skill.category {
            let mut prefix = String::new();
            for part in c.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                all_categories.insert(prefix.clone());
            }
        }
    }
    for category in &all_categories {
        if rng.percent(30) {
            let desc = description(&mut rng, 40, 160);
            let body = format!(
                "---\ndescription: {desc}\n---\n\nSkills about {}.\n",
                category.replace('/', " / ")
            );
            write(&out.join(category).join("DESCRIPTION.md"), &body)?;
            summary.category_descriptions += 1;
        }
    }

    // Ambiguity is judged among visible skills only, as discovery does.
    let mut all_counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut visible_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for skill in &planned {
        *all_counts.entry(skill.name.as_str()).or_default() += 1;
        if !skill.gated {
            *visible_counts.entry(skill.name.as_str()).or_default() += 1;
        }
    }
    summary.skills = planned.len();
    summary.gated_on_linux = planned.iter().filter(|s| s.gated).count();
    summary.visible_on_linux = summary.skills - summary.gated_on_linux;
    summary.categories = all_categories.len();
    summary.duplicate_names = planned
        .iter()
        .filter(|s| !s.gated && visible_counts[s.name.as_str()] > 1)
        .count();
    summary.sample_unique_name = planned
        .iter()
        .cycle()
        .skip(planned.len() / 2)
        .take(planned.len())
        .find(|s| !s.gated && all_counts[s.name.as_str()] == 1)
        .map(|s| s.name.clone());

    if let Some(external) = &spec.external {
        summary.external_skills =
            write_external(&mut rng, external, &planned, &mut names_used, &mut text)?;
    }
    Ok(summary)
}

fn ensure_empty(out: &Path) -> Result<()> {
    if out.exists() {
        let mut entries =
            fs::read_dir(out).with_context(|| format!("cannot read {}", out.display()))?;
        if entries.next().is_some() {
            bail!(
                "{} is not empty; gen-tree writes only into a new or empty folder",
                out.display()
            );
        }
    }
    fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))
}

/// Category paths 1–3 levels deep, about one per twenty skills.
fn plan_categories(rng: &mut SplitMix64, skills: usize) -> Vec<String> {
    let wanted = (skills / 20).clamp(3, 8000);
    let mut seen = BTreeSet::new();
    let mut list = Vec::with_capacity(wanted);
    let mut attempts = 0;
    while list.len() < wanted && attempts < wanted * 20 {
        attempts += 1;
        let depth = match rng.below(10) {
            0..=2 => 1,
            3..=7 => 2,
            _ => 3,
        };
        let mut path = rng.pick(TOPS).to_owned();
        if depth >= 2 {
            path.push('/');
            path.push_str(rng.pick(SUBS));
        }
        if depth == 3 {
            path.push('/');
            path.push_str(rng.pick(LEAVES));
        }
        if seen.insert(path.clone()) {
            list.push(path);
        }
    }
    list
}

fn fresh_name(rng: &mut SplitMix64, used: &mut HashSet<String>) -> String {
    let base = match rng.below(4) {
        0 => format!("{}-{}", rng.pick(NOUNS), rng.pick(VERBS)),
        1 => format!(
            "{}-{}-{}",
            rng.pick(VERBS),
            rng.pick(NOUNS),
            rng.pick(NOUNS)
        ),
        _ => format!("{}-{}", rng.pick(VERBS), rng.pick(NOUNS)),
    };
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    used.insert(name.clone());
    name
}

/// A description of `lo..=hi` chars, free of characters that YAML plain scalars dislike.
fn description(rng: &mut SplitMix64, lo: usize, hi: usize) -> String {
    let target = rng.between(lo, hi);
    let mut text = format!(
        "{} {} {} {}",
        rng.pick(OPENERS),
        rng.pick(VERBS),
        rng.pick(ADJECTIVES),
        plural(rng.pick(NOUNS))
    );
    while text.len() < target {
        let clause = match rng.below(4) {
            0 => format!(
                ", {} {} {}",
                rng.pick(PREPOSITIONS),
                rng.pick(ADJECTIVES),
                plural(rng.pick(NOUNS))
            ),
            1 => format!(" and {} the {}", rng.pick(VERBS), rng.pick(NOUNS)),
            2 => format!(
                ". Covers {} {}",
                rng.pick(ADJECTIVES),
                plural(rng.pick(NOUNS))
            ),
            _ => format!(
                " before you {} any {} {}",
                rng.pick(VERBS),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS)
            ),
        };
        text.push_str(&clause);
    }
    // One char is kept for the closing period.
    if text.len() >= hi {
        let cut = text[..hi - 1].rfind(' ').unwrap_or(hi - 1);
        text.truncate(cut);
        while text.ends_with([',', '.', ' ']) {
            text.pop();
        }
    }
    text.push('.');
    text
}

fn plural(noun: &str) -> String {
    if noun.ends_with('s') || noun.ends_with('x') {
        format!("{noun}es")
    } else if let Some(stem) = noun.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{noun}s")
    }
}

fn title(name: &str) -> String {
    name.split('-')
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn tag_list(rng: &mut SplitMix64) -> Vec<&'static str> {
    let mut tags: Vec<&str> = Vec::new();
    for _ in 0..rng.between(1, 4) {
        let tag = if rng.percent(50) {
            rng.pick(NOUNS)
        } else {
            rng.pick(SUBS)
        };
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

struct Features {
    gated: bool,
    decoy: bool,
    scripts: bool,
}

fn write_skill(
    rng: &mut SplitMix64,
    dir: &Path,
    name: &str,
    earlier: &[PlannedSkill],
    text: &mut String,
) -> Result<Features> {
    text.clear();
    let desc = description(rng, 40, 300);
    text.push_str("---\n");
    // A few rely on the folder name, as hand-written skills often do.
    if !rng.percent(3) {
        text.push_str(&format!("name: {name}\n"));
    }
    match rng.below(10) {
        0 | 1 => text.push_str(&format!("description: \"{desc}\"\n")),
        2 => {
            text.push_str("description: >-\n");
            for line in wrap(&desc, 70) {
                text.push_str(&format!("  {line}\n"));
            }
        }
        _ => text.push_str(&format!("description: {desc}\n")),
    }
    text.push_str(&format!(
        "version: {}.{}.{}\n",
        rng.below(3),
        rng.below(10),
        rng.below(20)
    ));
    if rng.percent(40) {
        text.push_str(&format!("author: {}\n", rng.pick(AUTHORS)));
    }
    if rng.percent(30) {
        text.push_str(&format!("license: {}\n", rng.pick(LICENSES)));
    }

    let gated = match rng.below(100) {
        0..=7 => {
            text.push_str("platforms: [linux]\n");
            false
        }
        8..=10 => {
            text.push_str("platforms: [linux, macos]\n");
            false
        }
        11 | 12 => {
            text.push_str("platforms: [windows]\n");
            true
        }
        13 => {
            text.push_str("platforms: macos\n");
            true
        }
        _ => false,
    };

    let tags = tag_list(rng);
    let tags_in_metadata = rng.percent(25);
    if !tags_in_metadata {
        if rng.percent(50) {
            text.push_str(&format!("tags: [{}]\n", tags.join(", ")));
        } else {
            text.push_str(&format!("tags: \"{}\"\n", tags.join(", ")));
        }
    }
    let related = (!earlier.is_empty() && rng.percent(15))
        .then(|| earlier[rng.below(earlier.len())].name.clone());
    let requires_toolsets = rng.percent(8).then(|| rng.pick(TOOLSETS));
    let fallback_for_tools = rng.percent(6).then(|| rng.pick(TOOLS));
    if tags_in_metadata
        || related.is_some()
        || requires_toolsets.is_some()
        || fallback_for_tools.is_some()
    {
        text.push_str("metadata:\n  knack:\n");
        if tags_in_metadata {
            text.push_str(&format!("    tags: [{}]\n", tags.join(", ")));
        }
        if let Some(r) = &related {
            text.push_str(&format!("    related_skills: [{r}]\n"));
        }
        if let Some(t) = requires_toolsets {
            text.push_str(&format!("    requires_toolsets: [{t}]\n"));
        }
        if let Some(t) = fallback_for_tools {
            text.push_str(&format!("    fallback_for_tools: [{t}]\n"));
        }
    }
    text.push_str("---\n\n");
    write_body(rng, name, text);
    write(&dir.join("SKILL.md"), text)?;

    let decoy = rng.percent(3);
    if decoy {
        let old = format!(
            "---\nname: {name}\ndescription: Older copy of this skill kept for reference.\n---\n\n# {}\n\nSuperseded by the parent SKILL.md.\n",
            title(name)
        );
        write(&dir.join("references/previous-version/SKILL.md"), &old)?;
    }
    if decoy || rng.percent(10) {
        let mut notes = format!("# Notes on {}\n\n", title(name));
        for _ in 0..rng.between(2, 5) {
            notes.push_str(&paragraph(rng));
            notes.push_str("\n\n");
        }
        write(&dir.join("references/notes.md"), &notes)?;
    }
    let scripts = rng.percent(10);
    if scripts {
        let verb = rng.pick(VERBS);
        let noun = rng.pick(NOUNS);
        let script = format!(
            "#!/usr/bin/env bash\n# Runs the {verb} step of {name}.\nset -euo pipefail\ntarget=\"${{1:-.}}\"\necho \"{verb} {noun} in $target\"\nfind \"$target\" -maxdepth 2 -name '*.{noun}' | sort | head -n 20\n"
        );
        let path = dir.join(format!("scripts/{verb}.sh"));
        write(&path, &script)?;
        make_executable(&path)?;
        if rng.percent(40) {
            let py = format!(
                "\"\"\"Summarises {} files for {name}.\"\"\"\nimport sys\n\nfor arg in sys.argv[1:]:\n    print(arg, len(open(arg).read()))\n",
                plural(noun)
            );
            write(&dir.join("scripts/summarize.py"), &py)?;
        }
    }
    Ok(Features {
        gated,
        decoy,
        scripts,
    })
}

/// Headings, paragraphs, lists and a code block; 1–4 KB in all.
fn write_body(rng: &mut SplitMix64, name: &str, text: &mut String) {
    let start = text.len();
    // The last paragraph may overshoot by ~600 bytes; stop early enough to stay under 4 KB.
    let target = rng.between(1024, 3400);
    text.push_str(&format!("# {}\n\n", title(name)));
    text.push_str(&paragraph(rng));
    text.push_str("\n\n## When to use\n\n");
    for _ in 0..rng.between(2, 4) {
        text.push_str(&format!(
            "- You have to {} {} {} {} the {}.\n",
            rng.pick(VERBS),
            rng.pick(ADJECTIVES),
            plural(rng.pick(NOUNS)),
            rng.pick(PREPOSITIONS),
            rng.pick(NOUNS)
        ));
    }
    text.push_str("\n## Steps\n\n");
    for step in 1..=rng.between(3, 6) {
        text.push_str(&format!(
            "{step}. {} the {} {}, then check the {}.\n",
            title(rng.pick(VERBS)),
            rng.pick(ADJECTIVES),
            rng.pick(NOUNS),
            rng.pick(NOUNS)
        ));
    }
    text.push_str(&format!(
        "\n```bash\n{} --{} ./{} --{}\n```\n",
        name,
        rng.pick(NOUNS),
        plural(rng.pick(NOUNS)),
        rng.pick(ADJECTIVES)
    ));
    let sections = ["Pitfalls", "Verification", "Background", "Variations"];
    let mut next = 0;
    while text.len() - start < target {
        if next < sections.len() && rng.percent(60) {
            text.push_str(&format!("\n## {}\n", sections[next]));
            next += 1;
        }
        text.push('\n');
        text.push_str(&paragraph(rng));
        text.push('\n');
    }
}

fn paragraph(rng: &mut SplitMix64) -> String {
    let mut sentences = Vec::new();
    for _ in 0..rng.between(3, 6) {
        let sentence = match rng.below(4) {
            0 => format!(
                "{} every {} {} before touching the {}",
                title(rng.pick(VERBS)),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(NOUNS)
            ),
            1 => format!(
                "A {} {} usually means the {} needs another look",
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(NOUNS)
            ),
            2 => format!(
                "Keep the {} small and {} it {} the {} {}",
                rng.pick(NOUNS),
                rng.pick(VERBS),
                rng.pick(PREPOSITIONS),
                rng.pick(ADJECTIVES),
                plural(rng.pick(NOUNS))
            ),
            _ => format!(
                "When the {} looks {}, {} the {} first and write down what changed",
                rng.pick(NOUNS),
                rng.pick(ADJECTIVES),
                rng.pick(VERBS),
                rng.pick(NOUNS)
            ),
        };
        sentences.push(sentence);
    }
    sentences.join(". ") + "."
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let line = lines.last_mut().map_or(0, |l| l.len());
        if line > 0 && line + word.len() + 1 > width {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(word);
        }
    }
    lines
}

/// An external root: half its skills reuse names from the main tree.
fn write_external(
    rng: &mut SplitMix64,
    root: &Path,
    main: &[PlannedSkill],
    names_used: &mut HashSet<String>,
    text: &mut String,
) -> Result<usize> {
    ensure_empty(root)?;
    let count = (main.len() / 10).max(5);
    let mut placed: HashSet<(String, String)> = HashSet::new();
    let mut written = 0;
    for _ in 0..count {
        let category = format!("imported/{}", rng.pick(TOPS));
        let name = if !main.is_empty() && rng.percent(50) {
            main[rng.below(main.len())].name.clone()
        } else {
            fresh_name(rng, names_used)
        };
        if !placed.insert((category.clone(), name.clone())) {
            continue;
        }
        write_skill(rng, &root.join(&category).join(&name), &name, main, text)?;
        written += 1;
    }
    Ok(written)
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot chmod {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `root`, by relative path, with its bytes.
    fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(root).unwrap().to_path_buf();
                    files.insert(rel, fs::read(&path).unwrap());
                }
            }
        }
        files
    }

    fn spec(skills: usize, seed: u64, external: Option<PathBuf>) -> TreeSpec {
        TreeSpec {
            skills,
            seed,
            external,
        }
    }

    #[test]
    fn same_seed_gives_byte_identical_trees() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let sum_a = generate(&a, &spec(300, 7, Some(tmp.path().join("ext-a")))).unwrap();
        let sum_b = generate(&b, &spec(300, 7, Some(tmp.path().join("ext-b")))).unwrap();
        assert_eq!(sum_a, sum_b);
        let snap_a = snapshot(&a);
        assert!(snap_a.len() >= 300, "only {} files", snap_a.len());
        assert_eq!(snap_a, snapshot(&b));
        assert_eq!(
            snapshot(&tmp.path().join("ext-a")),
            snapshot(&tmp.path().join("ext-b"))
        );
    }

    #[test]
    fn another_seed_gives_another_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        generate(&a, &spec(100, 1, None)).unwrap();
        generate(&b, &spec(100, 2, None)).unwrap();
        assert_ne!(snapshot(&a), snapshot(&b));
    }

    #[test]
    fn refuses_a_non_empty_folder() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("keep.txt"), "mine").unwrap();
        let err = generate(tmp.path(), &spec(10, 1, None)).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
        assert_eq!(
            fs::read_to_string(tmp.path().join("keep.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn tree_has_the_promised_shapes() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("skills");
        let summary = generate(&out, &spec(2000, 42, None)).unwrap();
        assert_eq!(summary.skills, 2000);
        assert!(summary.gated_on_linux > 0 && summary.duplicate_names > 0);
        assert!(summary.decoys > 0 && summary.with_scripts > 0);
        assert!(summary.category_descriptions > 0);
        let snap = snapshot(&out);
        let skill_mds: Vec<_> = snap
            .iter()
            .filter(|(p, _)| p.ends_with("SKILL.md"))
            .filter(|(p, _)| !p.components().any(|c| c.as_os_str() == "references"))
            .collect();
        assert_eq!(skill_mds.len(), 2000);
        let mut depths = BTreeSet::new();
        for (path, bytes) in &skill_mds {
            // category levels = components minus the skill folder and SKILL.md
            depths.insert(path.components().count() - 2);
            let text = std::str::from_utf8(bytes).unwrap();
            let body = text.splitn(3, "---\n").nth(2).unwrap();
            assert!(
                (1024..=4096).contains(&body.len()),
                "{}: {}",
                path.display(),
                body.len()
            );
        }
        assert_eq!(depths, BTreeSet::from([0, 1, 2, 3]));
        let all: String = skill_mds
            .iter()
            .map(|(_, b)| std::str::from_utf8(b).unwrap())
            .collect();
        for shape in [
            "tags: [",
            "tags: \"",
            "platforms: [windows]",
            "requires_toolsets:",
            "fallback_for_tools:",
            "description: >-",
        ] {
            assert!(all.contains(shape), "no skill has {shape}");
        }
    }

    /// The runtime's own discovery must agree with what the generator claims.
    #[test]
    fn discovery_sees_what_the_summary_promises() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("skills");
        let summary = generate(&out, &spec(600, 9, None)).unwrap();
        let mut options = skill_core::DiscoveryOptions::with_roots(vec![skill_core::SkillRoot {
            path: out,
            scope: skill_core::Scope::User,
        }]);
        options.platform = "linux".into();
        options.max_dirs = 100_000;
        let (set, _) = skill_core::discover(&options);
        assert_eq!(set.skills.len(), summary.skills);
        assert_eq!(set.visible().len(), summary.visible_on_linux);
        assert_eq!(
            set.category_descriptions.len(),
            summary.category_descriptions
        );
        let ambiguous: usize = set.skills.iter().filter(|s| set.is_ambiguous(s)).count();
        assert_eq!(ambiguous, summary.duplicate_names);
        let decoys = skill_core::doctor_report(&set)
            .iter()
            .filter(|e| e.reason.contains("support folder"))
            .count();
        assert_eq!(decoys, summary.decoys);
        let sample = summary.sample_unique_name.unwrap();
        assert!(matches!(
            set.resolve(&sample),
            skill_core::Resolution::Found(_)
        ));
        for skill in &set.skills {
            // Only the warnings the generator means to provoke: long descriptions, missing names.
            for w in &skill.warnings {
                assert!(
                    w.contains("the index shows the first")
                        || w.contains("no name in the frontmatter"),
                    "{}: {w}",
                    skill.id
                );
            }
            assert!(
                (40..=300).contains(&skill.description.len()),
                "{}",
                skill.description
            );
        }
    }
}
