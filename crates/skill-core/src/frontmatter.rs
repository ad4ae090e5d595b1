//! Lenient SKILL.md parsing: fences, BOM, typed fields in their common shapes,
//! and a `key: value` fallback when the YAML does not parse.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod simple_yaml;

/// One declared environment variable a skill needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvRequirement {
    pub name: String,
    pub prompt: Option<String>,
    pub help: Option<String>,
    pub optional: bool,
}

/// Activation conditions for the skills index (read from `metadata.knack`,
/// then `metadata.hermes`, then the top level).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Conditions {
    pub requires_toolsets: Vec<String>,
    pub fallback_for_toolsets: Vec<String>,
    pub requires_tools: Vec<String>,
    pub fallback_for_tools: Vec<String>,
}

impl Conditions {
    pub fn is_empty(&self) -> bool {
        self.requires_toolsets.is_empty()
            && self.fallback_for_toolsets.is_empty()
            && self.requires_tools.is_empty()
            && self.fallback_for_tools.is_empty()
    }
}

/// The frontmatter fields knack understands, already normalised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Frontmatter {
    pub name: Option<String>,
    pub description: Option<String>,
    pub version: Option<String>,
    pub author: Option<String>,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub platforms: Vec<String>,
    pub tags: Vec<String>,
    pub related_skills: Vec<String>,
    pub category: Option<String>,
    pub required_environment_variables: Vec<EnvRequirement>,
    pub conditions: Conditions,
    /// Who created the skill (`user`, `agent`, `hub`, `bundled`), when recorded.
    pub created_by: Option<String>,
    /// Claude Code's `disable-model-invocation: true`: only the user may
    /// invoke the skill (`/name`); the model's index and tools leave it out.
    pub disable_model_invocation: bool,
    /// `user-invocable: false`: the slash palette leaves the skill out.
    pub user_hidden: bool,
    /// `allowed-tools`: the tools the model may call while this skill
    /// drives the turn (empty: no narrowing).
    pub allowed_tools: Vec<String>,
    /// `requires.mcp`: MCP servers the skill expects to be configured.
    pub requires_mcp: Vec<String>,
    /// `dependencies`: packages or tools the skill relies on, as written.
    pub dependencies: Vec<String>,
    /// Commands that must be on PATH (`prerequisites.commands`).
    pub required_commands: Vec<String>,
    /// Codex's `metadata.short-description`.
    pub short_description: Option<String>,
    /// The raw `metadata` map; only read while parsing, so never stored in
    /// the discovery snapshot (which also cannot hold untyped values).
    #[serde(skip)]
    pub metadata: Option<Value>,
}

impl Frontmatter {
    /// Whether the model may be offered the skill (index, search, list, view).
    pub fn model_invocable(&self) -> bool {
        !self.disable_model_invocation
    }

    /// Whether the slash palette offers the skill.
    pub fn user_invocable(&self) -> bool {
        !self.user_hidden
    }
}

/// Top-level frontmatter keys knack reads (in some spelling); any other key
/// draws a validation note. Claude Code's `argument-hint`, `model`, `context`
/// and `when_to_use` are read by no part of knack and are noted too.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "version",
    "author",
    "license",
    "compatibility",
    "platforms",
    "tags",
    "related_skills",
    "category",
    "required_environment_variables",
    "setup",
    "requires_toolsets",
    "fallback_for_toolsets",
    "requires_tools",
    "fallback_for_tools",
    "created_by",
    "metadata",
    "disable-model-invocation",
    "user-invocable",
    "allowed-tools",
    "requires",
    "dependencies",
    "prerequisites",
];

/// The result of splitting and parsing one SKILL.md text.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkillMd {
    pub frontmatter: Frontmatter,
    /// Byte offset in the (BOM-stripped) text where the body starts.
    pub body_offset: usize,
    pub has_frontmatter: bool,
    pub warnings: Vec<String>,
    /// Problems in frontmatter that parsed (a declared variable name no
    /// environment can hold): what was wrong was left out, and validation
    /// reports it.
    pub lints: Vec<String>,
}

/// Why a frontmatter block could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterProblem {
    /// The text starts with `---` but no closing fence follows.
    Unclosed,
}

pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Splits `text` into (yaml, body_offset). `Ok(None)` means no frontmatter.
pub fn split_frontmatter(text: &str) -> Result<Option<(&str, usize)>, FrontmatterProblem> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok(None);
    };
    if first.trim_end() != "---" {
        return Ok(None);
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(Some((&text[yaml_start..offset], offset + line.len())));
        }
        offset += line.len();
    }
    Err(FrontmatterProblem::Unclosed)
}

/// Parses a SKILL.md text. Never fails: problems become warnings, and the
/// caller decides whether what is left is a usable skill.
pub fn parse_skill_md(text: &str) -> Result<ParsedSkillMd, FrontmatterProblem> {
    let text = strip_bom(text);
    let Some((yaml, body_offset)) = split_frontmatter(text)? else {
        return Ok(ParsedSkillMd {
            frontmatter: Frontmatter::default(),
            body_offset: 0,
            has_frontmatter: false,
            warnings: vec!["no frontmatter: SKILL.md should start with a '---' line".into()],
            lints: Vec::new(),
        });
    };
    let mut warnings = Vec::new();
    let raw = match parse_yaml(yaml) {
        Ok(raw) => raw,
        Err(message) => {
            warnings.push(format!(
                "frontmatter is not valid YAML ({}); read it line by line as 'key: value'",
                first_line(&message)
            ));
            fallback_key_values(yaml)
        }
    };
    let lints = raw.env_lints();
    Ok(ParsedSkillMd {
        frontmatter: raw.normalise(),
        body_offset,
        has_frontmatter: true,
        warnings,
        lints,
    })
}

fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

fn parse_yaml(yaml: &str) -> Result<RawFrontmatter, String> {
    if yaml.trim().is_empty() {
        return Ok(RawFrontmatter::default());
    }
    // Most frontmatter is simple enough for a reader that costs a small
    // fraction of serde-saphyr; it declines whenever it could disagree.
    if let Some(raw) = simple_yaml::parse(yaml) {
        return Ok(raw);
    }
    parse_yaml_with_saphyr(yaml)
}

/// The full YAML parser: the reference the fast path must agree with.
fn parse_yaml_with_saphyr(yaml: &str) -> Result<RawFrontmatter, String> {
    let options = serde_saphyr::options! {
        strict_booleans: true,
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<RawFrontmatter>(yaml, options).map_err(|e| e.to_string())
}

/// Keys given more than once in the frontmatter of `text`, as sentences
/// naming the key and its lines. Reading keeps the last value (as YAML
/// readers commonly do), so the first is lost without a word; validation
/// reports it. Top-level keys are named with their lines; a duplicate deeper
/// down is reported as the full YAML parser words it.
pub fn duplicate_keys(text: &str) -> Vec<String> {
    let text = strip_bom(text);
    let Ok(Some((yaml, _))) = split_frontmatter(text) else {
        return Vec::new();
    };
    let mut seen: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, line) in yaml.lines().enumerate() {
        if line.starts_with([' ', '\t', '-', '#']) {
            continue;
        }
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        if key.is_empty() || key.contains(' ') {
            continue;
        }
        // Line 1 is the opening `---`.
        match seen.iter_mut().find(|(k, _)| k == key) {
            Some((_, lines)) => lines.push(i + 2),
            None => seen.push((key.to_owned(), vec![i + 2])),
        }
    }
    let mut found: Vec<String> = seen
        .into_iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(key, lines)| {
            let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
            format!(
                "the frontmatter key '{key}' is given {} times (lines {}); only the last is used, so keep one",
                lines.len(),
                shown.join(", ")
            )
        })
        .collect();
    if found.is_empty() {
        let options = serde_saphyr::options! {
            duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::Error,
            with_snippet: false,
        };
        if let Err(e) = serde_saphyr::from_str_with_options::<serde_json::Value>(yaml, options) {
            let message = e.to_string();
            if message.to_lowercase().contains("duplicate") {
                found.push(format!("the frontmatter repeats a key: {message}"));
            }
        }
    }
    found
}

/// Reads `key: value` lines when the YAML is broken, so a skill with one bad
/// line still has its name and description.
fn fallback_key_values(yaml: &str) -> RawFrontmatter {
    let mut raw = RawFrontmatter::default();
    for line in yaml.lines() {
        if line.starts_with([' ', '\t', '-', '#']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        if value.is_empty() {
            continue;
        }
        let text = Some(Scalar(value.to_owned()));
        match key.trim() {
            "name" => raw.name = text,
            "description" => raw.description = text,
            "version" => raw.version = text,
            "author" => raw.author = text,
            "license" => raw.license = text,
            "category" => raw.category = text,
            "platforms" => raw.platforms = StringList::from_text(value),
            "tags" => raw.tags = StringList::from_text(value),
            "related_skills" => raw.related_skills = StringList::from_text(value),
            _ => {}
        }
    }
    raw
}

/// The frontmatter exactly as written, before fallbacks are applied.
#[derive(Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
struct RawFrontmatter {
    name: Option<Scalar>,
    description: Option<Scalar>,
    version: Option<Scalar>,
    author: Option<Scalar>,
    license: Option<Scalar>,
    compatibility: Option<Scalar>,
    platforms: StringList,
    tags: StringList,
    related_skills: StringList,
    category: Option<Scalar>,
    required_environment_variables: EnvList,
    /// Hermes' `setup: {help, collect_secrets: [...]}`, merged into the
    /// required variables.
    setup: Option<Value>,
    requires_toolsets: StringList,
    fallback_for_toolsets: StringList,
    requires_tools: StringList,
    fallback_for_tools: StringList,
    created_by: Option<Scalar>,
    metadata: Option<Value>,
    /// Read as text, so `true` stays on the fast path; see `truthy`.
    #[serde(rename = "disable-model-invocation")]
    disable_model_invocation: Option<Scalar>,
    #[serde(rename = "user-invocable")]
    user_invocable: Option<Scalar>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<Value>,
    /// `requires: {mcp: [...]}` (and whatever else a collection puts there).
    requires: Option<Value>,
    dependencies: Option<Value>,
    /// Hermes' `prerequisites: {env_vars: [...], commands: [...]}`.
    prerequisites: Option<Value>,
}

impl RawFrontmatter {
    /// Every declared variable: `required_environment_variables`, then
    /// `setup.collect_secrets` (with `setup.help` as the default help). The
    /// first declaration of a name wins; names no environment can hold are
    /// left out and returned as warnings.
    fn declared_env(&self) -> (Vec<EnvRequirement>, Vec<String>) {
        let setup = self.setup.as_ref();
        let secrets = setup
            .and_then(|s| s.get("collect_secrets"))
            .cloned()
            .map(EnvList::from_value)
            .unwrap_or_default();
        let default_help = setup
            .and_then(|s| s.get("help"))
            .and_then(scalar_text)
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty());
        let prerequisites = self
            .prerequisites
            .as_ref()
            .and_then(|p| p.get("env_vars"))
            .cloned()
            .map(EnvList::from_value)
            .unwrap_or_default();
        let mut out: Vec<EnvRequirement> = Vec::new();
        let mut lints = Vec::new();
        for mut req in self
            .required_environment_variables
            .0
            .iter()
            .cloned()
            .chain(secrets.0)
            .chain(prerequisites.0)
        {
            if !knack_config::is_env_name(&req.name) {
                lints.push(crate::setup::bad_name_warning(&req.name));
                continue;
            }
            if crate::setup::is_knack_setting(&req.name) {
                lints.push(crate::setup::knack_setting_warning(&req.name));
                continue;
            }
            if out.iter().any(|r| r.name == req.name) {
                continue;
            }
            if req.help.is_none() {
                req.help.clone_from(&default_help);
            }
            out.push(req);
        }
        (out, lints)
    }

    fn env_lints(&self) -> Vec<String> {
        self.declared_env().1
    }

    fn normalise(self) -> Frontmatter {
        let scoped = |key: &str| -> Option<&Value> {
            let meta = self.metadata.as_ref()?;
            ["knack", "hermes"]
                .iter()
                .find_map(|ns| meta.get(ns).and_then(|m| m.get(key)))
        };
        let list = |key: &str, top: &StringList| -> Vec<String> {
            match scoped(key) {
                Some(value) => StringList::from_value(value).0,
                None => top.0.clone(),
            }
        };
        let text = |v: &Option<Scalar>| v.as_ref().map(|s| s.0.clone()).filter(|s| !s.is_empty());
        Frontmatter {
            name: text(&self.name),
            description: text(&self.description).map(|d| d.trim().to_owned()),
            version: text(&self.version),
            author: text(&self.author),
            license: text(&self.license),
            compatibility: text(&self.compatibility),
            platforms: self.platforms.0.clone(),
            tags: list("tags", &self.tags),
            related_skills: list("related_skills", &self.related_skills),
            category: scoped("category")
                .and_then(scalar_text)
                .or_else(|| text(&self.category)),
            required_environment_variables: self.declared_env().0,
            conditions: Conditions {
                requires_toolsets: list("requires_toolsets", &self.requires_toolsets),
                fallback_for_toolsets: list("fallback_for_toolsets", &self.fallback_for_toolsets),
                requires_tools: list("requires_tools", &self.requires_tools),
                fallback_for_tools: list("fallback_for_tools", &self.fallback_for_tools),
            },
            created_by: scoped("created_by")
                .and_then(scalar_text)
                .or_else(|| text(&self.created_by)),
            disable_model_invocation: self
                .disable_model_invocation
                .as_ref()
                .and_then(|v| truthy(&v.0))
                .unwrap_or(false),
            user_hidden: self.user_invocable.as_ref().and_then(|v| truthy(&v.0)) == Some(false),
            allowed_tools: self
                .allowed_tools
                .as_ref()
                .map(tool_list)
                .unwrap_or_default(),
            requires_mcp: self
                .requires
                .as_ref()
                .and_then(|r| r.get("mcp"))
                .map(|v| StringList::from_value(v).0)
                .unwrap_or_default(),
            dependencies: self
                .dependencies
                .as_ref()
                .map(dependency_list)
                .unwrap_or_default(),
            required_commands: self
                .prerequisites
                .as_ref()
                .and_then(|p| p.get("commands"))
                .map(|v| StringList::from_value(v).0)
                .unwrap_or_default(),
            short_description: self
                .metadata
                .as_ref()
                .and_then(|m| {
                    m.get("short-description")
                        .or_else(|| m.get("short_description"))
                })
                .and_then(scalar_text)
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty()),
            metadata: self.metadata,
        }
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// `true`/`false` as written (`"true"`, `yes`, `no` too); anything else
/// is no answer.
fn truthy(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Some(true),
        "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `allowed-tools` as a list, or as one text separated by commas or spaces
/// (`Read, Grep` and `Bash(git add:*) Read` both); spaces inside brackets
/// belong to the entry.
fn tool_list(value: &Value) -> Vec<String> {
    let Value::String(text) = value else {
        return StringList::from_value(value).0;
    };
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let split_on_space = !text.contains(',');
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let separator = depth == 0 && (c == ',' || (split_on_space && c.is_whitespace()));
        if separator {
            let entry = current.trim();
            if !entry.is_empty() {
                out.push(entry.to_owned());
            }
            current.clear();
        } else {
            current.push(c);
        }
    }
    let entry = current.trim();
    if !entry.is_empty() {
        out.push(entry.to_owned());
    }
    out
}

/// `dependencies` as a list of names, or a map of names to versions
/// (`name version`).
fn dependency_list(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) => map
            .iter()
            .map(|(name, version)| match scalar_text(version) {
                Some(v) if !v.is_empty() => format!("{name} {v}"),
                _ => name.clone(),
            })
            .collect(),
        other => StringList::from_value(other).0,
    }
}

/// Any YAML scalar, kept as the text the author wrote where possible.
#[derive(Debug, Clone, Default, PartialEq)]
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Asking for a string makes the parser hand over the raw scalar, so
        // `no`, `on` and `1.10` survive as written.
        d.deserialize_string(ScalarVisitor).map(Scalar)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a text value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Ok(String::new())
    }
    // A list or map where text was expected keeps its items' text, so a
    // description written as a list is not lost.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        let mut parts = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            if let Some(t) = scalar_text(&item) {
                parts.push(t);
            }
        }
        Ok(parts.join(", "))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        while map.next_entry::<Value, Value>()?.is_some() {}
        Ok(String::new())
    }
}

/// A list given as `[a, b]`, as `"a, b"`, or as a single scalar.
#[derive(Debug, Clone, Default, PartialEq)]
struct StringList(Vec<String>);

impl StringList {
    fn from_text(text: &str) -> Self {
        let text = text.trim();
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        StringList(
            inner
                .split(',')
                .map(|s| s.trim().trim_matches(['"', '\'']).trim())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }

    fn from_value(value: &Value) -> Self {
        match value {
            Value::Array(items) => StringList(items.iter().filter_map(scalar_text).collect()),
            Value::String(s) => Self::from_text(s),
            other => StringList(scalar_text(other).into_iter().collect()),
        }
    }
}

impl<'de> Deserialize<'de> for StringList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(Self::from_value(&value))
    }
}

/// `required_environment_variables` as names or as `{name, prompt, help, optional}`
/// (Hermes' spellings too: `env_var` for the name, `provider_url` or `url` for the help).
#[derive(Debug, Clone, Default, PartialEq)]
struct EnvList(Vec<EnvRequirement>);

impl<'de> Deserialize<'de> for EnvList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Self::from_value)
    }
}

impl EnvList {
    fn from_value(value: Value) -> Self {
        let items = match value {
            Value::Array(items) => items,
            Value::Null => Vec::new(),
            other => vec![other],
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                Value::String(s) => out.extend(StringList::from_text(&s).0.into_iter().map(
                    |name| EnvRequirement {
                        name,
                        prompt: None,
                        help: None,
                        optional: false,
                    },
                )),
                Value::Object(map) => {
                    let field = |k: &str| map.get(k).and_then(scalar_text);
                    let name = field("name").or_else(|| field("env_var"));
                    if let Some(name) = name.filter(|n| !n.is_empty()) {
                        out.push(EnvRequirement {
                            name,
                            prompt: field("prompt"),
                            help: field("help")
                                .or_else(|| field("provider_url"))
                                .or_else(|| field("url")),
                            optional: matches!(map.get("optional"), Some(Value::Bool(true)))
                                || field("optional").is_some_and(|v| v == "yes" || v == "true"),
                        });
                    }
                }
                _ => {}
            }
        }
        EnvList(out)
    }
}

/// First body line that is not blank and not a heading, used when a skill has
/// no description.
pub fn first_body_line(body: &str) -> Option<&str> {
    body.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
}

/// A map of every top-level frontmatter key to its text, for diagnostics.
pub fn top_level_keys(yaml: &str) -> BTreeMap<String, ()> {
    yaml.lines()
        .filter(|l| !l.starts_with([' ', '\t', '-', '#']))
        .filter_map(|l| l.split_once(':').map(|(k, _)| (k.trim().to_owned(), ())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> ParsedSkillMd {
        parse_skill_md(text).unwrap()
    }

    #[test]
    fn reads_basic_fields_and_body_offset() {
        let text = "---\nname: demo\ndescription: Use when testing\n---\n# Title\nBody\n";
        let p = parse(text);
        assert_eq!(p.frontmatter.name.as_deref(), Some("demo"));
        assert_eq!(
            p.frontmatter.description.as_deref(),
            Some("Use when testing")
        );
        assert_eq!(&text[p.body_offset..], "# Title\nBody\n");
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn strips_one_bom_and_allows_trailing_blanks_on_fences() {
        let p = parse("\u{feff}---  \nname: x\n---\t\nbody");
        assert_eq!(p.frontmatter.name.as_deref(), Some("x"));
        assert!(p.has_frontmatter);
    }

    #[test]
    fn closing_fence_is_the_first_dash_line() {
        let text = "---\nname: a\n---\nbody\n---\nmore\n";
        let p = parse(text);
        assert_eq!(&text[p.body_offset..], "body\n---\nmore\n");
    }

    #[test]
    fn unclosed_fence_is_reported() {
        assert_eq!(
            parse_skill_md("---\nname: a\nbody"),
            Err(FrontmatterProblem::Unclosed)
        );
    }

    #[test]
    fn no_frontmatter_is_a_warning_not_an_error() {
        let p = parse("# Just a body\ntext\n");
        assert!(!p.has_frontmatter);
        assert_eq!(p.body_offset, 0);
        assert_eq!(p.warnings.len(), 1);
    }

    #[test]
    fn tags_accept_list_and_comma_string() {
        assert_eq!(
            parse("---\ntags: [a, b]\n---\n").frontmatter.tags,
            vec!["a", "b"]
        );
        assert_eq!(
            parse("---\ntags: \"a, b\"\n---\n").frontmatter.tags,
            vec!["a", "b"]
        );
        assert_eq!(
            parse("---\ntags:\n  - a\n  - b\n---\n").frontmatter.tags,
            vec!["a", "b"]
        );
    }

    #[test]
    fn platforms_accept_list_or_string() {
        assert_eq!(
            parse("---\nplatforms: linux\n---\n").frontmatter.platforms,
            vec!["linux"]
        );
        assert_eq!(
            parse("---\nplatforms: [macos, linux]\n---\n")
                .frontmatter
                .platforms,
            vec!["macos", "linux"]
        );
    }

    #[test]
    fn yaml_11_words_stay_strings() {
        let p = parse(
            "---\nname: no\ndescription: on\nversion: 1.10\nauthor: y\ntags: [yes, off]\n---\n",
        );
        assert_eq!(p.frontmatter.name.as_deref(), Some("no"));
        assert_eq!(p.frontmatter.description.as_deref(), Some("on"));
        assert_eq!(p.frontmatter.version.as_deref(), Some("1.10"));
        assert_eq!(p.frontmatter.author.as_deref(), Some("y"));
        assert_eq!(p.frontmatter.tags, vec!["yes", "off"]);
    }

    #[test]
    fn metadata_knack_wins_over_hermes_and_top_level() {
        let p = parse(
            "---\ntags: [top]\nrequires_tools: [t0]\nmetadata:\n  hermes:\n    tags: [hermes]\n    related_skills: [r1]\n    fallback_for_toolsets: [web]\n  knack:\n    tags: [knack]\n---\n",
        );
        assert_eq!(p.frontmatter.tags, vec!["knack"]);
        assert_eq!(p.frontmatter.related_skills, vec!["r1"]);
        assert_eq!(p.frontmatter.conditions.fallback_for_toolsets, vec!["web"]);
        assert_eq!(p.frontmatter.conditions.requires_tools, vec!["t0"]);
    }

    #[test]
    fn broken_yaml_falls_back_to_key_value_lines() {
        let p = parse(
            "---\nname: broken\ndescription: has: colons: everywhere\ntags: [a, b\n---\nbody\n",
        );
        assert_eq!(p.frontmatter.name.as_deref(), Some("broken"));
        assert_eq!(
            p.frontmatter.description.as_deref(),
            Some("has: colons: everywhere")
        );
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(p.warnings[0].contains("not valid YAML"));
    }

    #[test]
    fn env_requirements_accept_names_and_maps() {
        let p = parse(
            "---\nrequired_environment_variables:\n  - API_TOKEN\n  - name: REGION\n    prompt: Which region?\n    optional: true\n---\n",
        );
        let env = &p.frontmatter.required_environment_variables;
        assert_eq!(env.len(), 2);
        assert_eq!(env[0].name, "API_TOKEN");
        assert!(!env[0].optional);
        assert_eq!(env[1].name, "REGION");
        assert_eq!(env[1].prompt.as_deref(), Some("Which region?"));
        assert!(env[1].optional);
    }

    fn env_names(fm: &Frontmatter) -> Vec<(&str, Option<&str>)> {
        fm.required_environment_variables
            .iter()
            .map(|r| (r.name.as_str(), r.help.as_deref()))
            .collect()
    }

    #[test]
    fn setup_collect_secrets_is_an_alias_on_both_parser_paths() {
        // Names only: the fast path reads this; it must agree with serde-saphyr.
        let simple = "name: s\nsetup:\n  help: See the provider's site\n  collect_secrets:\n    - FIRST_KEY\n    - SECOND_KEY\n";
        let fast = simple_yaml::parse(simple).expect("in the fast path's subset");
        let slow = parse_yaml_with_saphyr(simple).unwrap();
        assert_eq!(fast, slow);
        let expected = vec![
            ("FIRST_KEY", Some("See the provider's site")),
            ("SECOND_KEY", Some("See the provider's site")),
        ];
        assert_eq!(env_names(&fast.normalise()), expected);

        // Hermes' own shape: maps in a list, left to serde-saphyr.
        let hermes = "---\nname: gif-search\nrequired_environment_variables:\n  - TENOR_API_KEY\nsetup:\n  help: Create a key first\n  collect_secrets:\n    - env_var: TENOR_API_KEY\n      prompt: ignored, declared above\n    - env_var: GIPHY_API_KEY\n      prompt: Giphy API key\n      provider_url: https://example.test/giphy\n      secret: true\n    - env_var: OTHER_KEY\n---\nbody\n";
        let (yaml, _) = split_frontmatter(hermes).unwrap().unwrap();
        assert!(
            simple_yaml::parse(yaml).is_none(),
            "maps in lists are declined"
        );
        let p = parse(hermes);
        assert_eq!(
            env_names(&p.frontmatter),
            vec![
                ("TENOR_API_KEY", Some("Create a key first")),
                ("GIPHY_API_KEY", Some("https://example.test/giphy")),
                ("OTHER_KEY", Some("Create a key first")),
            ],
            "the first declaration wins; setup.help fills in missing help"
        );
        let giphy = &p.frontmatter.required_environment_variables[1];
        assert_eq!(giphy.prompt.as_deref(), Some("Giphy API key"));
        assert!(p.lints.is_empty(), "{:?}", p.lints);
    }

    #[test]
    fn names_no_environment_can_hold_are_left_out_with_a_lint() {
        let p = parse(
            "---\nname: x\nrequired_environment_variables: [GOOD_ONE, my-key, 2FA]\nsetup:\n  collect_secrets: [\"with space\"]\n---\nbody\n",
        );
        assert_eq!(env_names(&p.frontmatter), vec![("GOOD_ONE", None)]);
        assert_eq!(p.lints.len(), 3, "{:?}", p.lints);
        assert!(
            p.lints[0].contains("'my-key' is not a valid variable name"),
            "{:?}",
            p.lints
        );
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn a_skill_cannot_ask_for_knacks_own_settings() {
        for text in [
            "---\nname: x\nrequired_environment_variables: [KNACK_BASE_URL, WEATHER_TOKEN]\n---\nbody\n",
            "---\nname: x\nsetup:\n  collect_secrets:\n    - env_var: KNACK_API_KEY\n    - env_var: WEATHER_TOKEN\n---\nbody\n",
        ] {
            let p = parse(text);
            assert_eq!(
                env_names(&p.frontmatter),
                vec![("WEATHER_TOKEN", None)],
                "{text}"
            );
            assert_eq!(p.lints.len(), 1, "{:?}", p.lints);
            assert!(
                p.lints[0].contains("one of knack's own settings"),
                "{:?}",
                p.lints
            );
        }
    }

    #[test]
    fn claude_codex_and_hermes_fields_are_read_on_both_parser_paths() {
        let yaml = "name: x\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\nallowed-tools: Read, Grep, Bash(git add:*)\nrequires:\n  mcp: [composio, github]\ndependencies: [pandas, \"python>=3.10\"]\nprerequisites:\n  env_vars: [NOTION_API_KEY]\n  commands: [jq, curl]\nmetadata:\n  short-description: Short one\n";
        let fast = simple_yaml::parse(yaml).expect("in the fast path's subset");
        let slow = parse_yaml_with_saphyr(yaml).unwrap();
        assert_eq!(fast, slow);
        let fm = fast.normalise();
        assert!(fm.disable_model_invocation && !fm.model_invocable());
        assert!(fm.user_hidden && !fm.user_invocable());
        assert_eq!(fm.allowed_tools, ["Read", "Grep", "Bash(git add:*)"]);
        assert_eq!(fm.requires_mcp, ["composio", "github"]);
        assert_eq!(fm.dependencies, ["pandas", "python>=3.10"]);
        assert_eq!(fm.required_commands, ["jq", "curl"]);
        assert_eq!(fm.short_description.as_deref(), Some("Short one"));
        assert_eq!(env_names(&fm), vec![("NOTION_API_KEY", None)]);
    }

    #[test]
    fn field_spellings_and_shapes_vary() {
        let fm = parse("---\nname: x\ndisable-model-invocation: \"yes\"\nallowed-tools: Bash(git status) Read\ndependencies:\n  numpy: \"1.26\"\n  rich: null\n---\nb\n").frontmatter;
        assert!(fm.disable_model_invocation);
        assert!(fm.user_invocable());
        assert_eq!(fm.allowed_tools, ["Bash(git status)", "Read"]);
        assert_eq!(fm.dependencies, ["numpy 1.26", "rich"]);
        let plain = parse("---\nname: x\n---\nb\n").frontmatter;
        assert!(plain.model_invocable() && plain.user_invocable());
        assert!(plain.allowed_tools.is_empty() && plain.short_description.is_none());
    }

    #[test]
    fn first_body_line_skips_headings_and_blanks() {
        assert_eq!(first_body_line("\n# H\n\n  text here\n"), Some("text here"));
        assert_eq!(first_body_line("# only\n## headings\n"), None);
    }

    proptest::proptest! {
        #[test]
        fn parser_never_panics(text in "\\PC{0,400}") {
            let _ = parse_skill_md(&text);
        }

        #[test]
        fn parser_never_panics_on_fenced_noise(yaml in "[a-z:\\[\\]{}\"' ,\\n\\-#&*!|>]{0,300}") {
            let _ = parse_skill_md(&format!("---\n{yaml}\n---\nbody"));
        }
    }
}
