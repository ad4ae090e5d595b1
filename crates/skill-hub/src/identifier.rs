//! Skill identifiers: the text a user types (`official/…`, `git+…`, `github:…`,
//! `well-known:…`, a URL or a path), parsed into one canonical form kept in the lock.

use std::fmt;
use std::path::{Path, PathBuf};

use knack_config::HubConfig;
use skill_guard::TrustLevel;

use crate::{Error, Result};

/// Where a skill (or a collection of skills) lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identifier {
    /// `official`, `official/<category>` or `official/<category>/<name>`: the optional skills built into knack.
    Official { path: Option<String> },
    /// A skill folder, a SKILL.md, a `.tar.gz`, or a folder holding skills.
    Local { path: PathBuf },
    /// `git+<url>[@ref][#subdir]`.
    Git {
        url: String,
        reference: Option<String>,
        subdir: Option<String>,
    },
    /// `well-known:<base>[#name]`.
    WellKnown { base: String, name: Option<String> },
    /// A direct `http(s)://…/SKILL.md` or `…/x.tar.gz` URL.
    Url { url: String },
    /// `github:owner/repo[/path][@ref]`.
    GitHub {
        owner: String,
        repo: String,
        path: Option<String>,
        reference: Option<String>,
    },
    /// `marketplace:<repository>[::<plugin>[/<skill>]]`: a Claude Code plugin
    /// marketplace (`.claude-plugin/marketplace.json`) in a folder, a git
    /// repository or a GitHub repository; one of its plugins; one skill of
    /// a plugin, by its folder name.
    Marketplace {
        repository: Box<Identifier>,
        plugin: Option<String>,
        skill: Option<String>,
    },
}

/// What separates a marketplace's repository from the plugin it names.
pub const PLUGIN_SEPARATOR: &str = "::";

impl Identifier {
    /// Parses what the user typed. Relative paths are taken from `cwd`.
    /// `Ok(None)` means "not an identifier": a bare name to look up by search.
    pub fn parse(text: &str, cwd: &Path) -> Result<Option<Identifier>> {
        let text = text.trim();
        if text.is_empty() {
            return Err(Error::Identifier("the skill identifier is empty".into()));
        }
        if text == "official" {
            return Ok(Some(Identifier::Official { path: None }));
        }
        if let Some(rest) = text.strip_prefix("official/") {
            let rest = rest.trim_matches('/');
            let path = (!rest.is_empty()).then(|| rest.to_owned());
            if let Some(p) = &path {
                relative_path(p, text)?;
            }
            return Ok(Some(Identifier::Official { path }));
        }
        if let Some(rest) = text.strip_prefix("git+") {
            return parse_git(rest, text).map(Some);
        }
        if let Some(rest) = text.strip_prefix("well-known:") {
            return parse_well_known(rest, text).map(Some);
        }
        if let Some(rest) = text.strip_prefix("github:") {
            return parse_github(rest, text).map(Some);
        }
        if let Some(rest) = text.strip_prefix("marketplace:") {
            return parse_marketplace(rest, text, cwd).map(Some);
        }
        if let Some(rest) = text.strip_prefix("file://") {
            if !rest.starts_with('/') {
                return Err(Error::Identifier(format!(
                    "'{text}': a file:// URL needs an absolute path (file:///abs/path)"
                )));
            }
            return Ok(Some(Identifier::Local {
                path: skill_guard::normalize_lexically(Path::new(rest)),
            }));
        }
        if text.starts_with("https://") || text.starts_with("http://") {
            let path = text.split(['?', '#']).next().unwrap_or(text);
            let direct =
                path.ends_with("/SKILL.md") || path.ends_with(".tar.gz") || path.ends_with(".tgz");
            if !direct {
                return Err(Error::Identifier(format!(
                    "'{text}' is not a SKILL.md or .tar.gz URL; for a site that publishes an index use well-known:{}",
                    origin(text)
                )));
            }
            return Ok(Some(Identifier::Url {
                url: text.to_owned(),
            }));
        }
        let looks_like_path = text.starts_with('/')
            || text.starts_with("./")
            || text.starts_with("../")
            || text == "."
            || text == ".."
            || text.starts_with("~/");
        if looks_like_path || cwd.join(text).exists() {
            let expanded = match text.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default()
                    .join(rest),
                None => cwd.join(text),
            };
            return Ok(Some(Identifier::Local {
                path: skill_guard::normalize_lexically(&expanded),
            }));
        }
        if text.contains(':') {
            return Err(Error::Identifier(format!(
                "'{text}' is not an identifier knack understands; see `knack skills install --help` for the forms"
            )));
        }
        Ok(None)
    }

    /// `official`, `local`, `git`, `well-known`, `url` or `github`.
    pub fn source_kind(&self) -> &'static str {
        match self {
            Identifier::Official { .. } => "official",
            Identifier::Local { .. } => "local",
            Identifier::Git { .. } => "git",
            Identifier::WellKnown { .. } => "well-known",
            Identifier::Url { .. } => "url",
            Identifier::GitHub { .. } => "github",
            Identifier::Marketplace { .. } => "marketplace",
        }
    }

    /// The trust a skill from here gets: builtin for official skills, trusted for
    /// repositories listed in `hub.trusted_repos`, community for everything else.
    pub fn trust(&self, config: &HubConfig) -> TrustLevel {
        let listed = |candidates: &[String]| {
            config.trusted_repos.iter().any(|t| {
                let t = repo_key(t);
                candidates.iter().any(|c| repo_key(c) == t)
            })
        };
        match self {
            Identifier::Official { .. } => TrustLevel::Builtin,
            Identifier::Git { url, .. } if listed(std::slice::from_ref(url)) => TrustLevel::Trusted,
            Identifier::GitHub { owner, repo, .. }
                if listed(&[
                    format!("{owner}/{repo}"),
                    format!("https://github.com/{owner}/{repo}"),
                ]) =>
            {
                TrustLevel::Trusted
            }
            Identifier::WellKnown { base, .. } if listed(std::slice::from_ref(base)) => {
                TrustLevel::Trusted
            }
            // The marketplace's own repository decides: listing a
            // marketplace vouches for what it lists, as a tap does.
            Identifier::Marketplace { repository, .. } => repository.trust(config),
            _ => TrustLevel::Community,
        }
    }

    /// The identifier of a skill found at `rel` inside this collection, when the
    /// source can name a sub-path.
    pub fn child(&self, rel: &str) -> Option<Identifier> {
        let join = |base: &Option<String>| match base {
            Some(b) if !rel.is_empty() => Some(format!("{}/{rel}", b.trim_end_matches('/'))),
            Some(b) => Some(b.clone()),
            None if rel.is_empty() => None,
            None => Some(rel.to_owned()),
        };
        match self {
            Identifier::Official { path } => Some(Identifier::Official { path: join(path) }),
            // A path cannot point inside an archive or a lone SKILL.md.
            Identifier::Local { path } if !rel.is_empty() && !is_folder_path(path) => None,
            Identifier::Local { path } => Some(Identifier::Local {
                path: if rel.is_empty() {
                    path.clone()
                } else {
                    path.join(rel)
                },
            }),
            Identifier::Git {
                url,
                reference,
                subdir,
            } => Some(Identifier::Git {
                url: url.clone(),
                reference: reference.clone(),
                subdir: join(subdir),
            }),
            Identifier::GitHub {
                owner,
                repo,
                path,
                reference,
            } => Some(Identifier::GitHub {
                owner: owner.clone(),
                repo: repo.clone(),
                path: join(path),
                reference: reference.clone(),
            }),
            Identifier::WellKnown { .. } | Identifier::Url { .. } => None,
            // A marketplace names its skills by plugin, not by path.
            Identifier::Marketplace { .. } => None,
        }
    }

    /// A short slug for quarantine folder names.
    pub(crate) fn slug(&self) -> String {
        let text = self.to_string();
        let tail = text
            .trim_end_matches('/')
            .rsplit(['/', '#', ':'])
            .next()
            .unwrap_or("skill");
        let slug: String = tail
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(40)
            .collect();
        if slug.is_empty() {
            "skill".into()
        } else {
            slug
        }
    }
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identifier::Official { path: None } => f.write_str("official"),
            Identifier::Official { path: Some(p) } => write!(f, "official/{p}"),
            Identifier::Local { path } => write!(f, "file://{}", path.display()),
            Identifier::Git {
                url,
                reference,
                subdir,
            } => {
                write!(f, "git+{url}")?;
                if let Some(r) = reference {
                    write!(f, "@{r}")?;
                }
                if let Some(s) = subdir {
                    write!(f, "#{s}")?;
                }
                Ok(())
            }
            Identifier::WellKnown { base, name } => {
                write!(f, "well-known:{base}")?;
                if let Some(n) = name {
                    write!(f, "#{n}")?;
                }
                Ok(())
            }
            Identifier::Url { url } => f.write_str(url),
            Identifier::GitHub {
                owner,
                repo,
                path,
                reference,
            } => {
                write!(f, "github:{owner}/{repo}")?;
                if let Some(p) = path {
                    write!(f, "/{p}")?;
                }
                if let Some(r) = reference {
                    write!(f, "@{r}")?;
                }
                Ok(())
            }
            Identifier::Marketplace {
                repository,
                plugin,
                skill,
            } => {
                write!(f, "marketplace:{repository}")?;
                if let Some(p) = plugin {
                    write!(f, "{PLUGIN_SEPARATOR}{p}")?;
                    if let Some(s) = skill {
                        write!(f, "/{s}")?;
                    }
                }
                Ok(())
            }
        }
    }
}

fn parse_marketplace(rest: &str, text: &str, cwd: &Path) -> Result<Identifier> {
    // The plugin part follows the last `::` when what follows holds no other
    // colon (an IPv6 host such as `[::1]:8080` is part of the repository).
    let (repo_text, tail) = match rest.rsplit_once(PLUGIN_SEPARATOR) {
        Some((r, t)) if !t.contains(':') => (r, Some(t)),
        _ => (rest, None),
    };
    let repository = match Identifier::parse(repo_text, cwd)? {
        Some(
            id @ (Identifier::Local { .. } | Identifier::Git { .. } | Identifier::GitHub { .. }),
        ) => id,
        _ => {
            return Err(Error::Identifier(format!(
                "'{text}': a marketplace lives in a folder, a git+ repository or a github:owner/repo, which holds .claude-plugin/marketplace.json"
            )));
        }
    };
    let (plugin, skill) = match tail.map(|t| t.trim_matches('/')) {
        None | Some("") => (None, None),
        Some(t) => match t.split_once('/') {
            Some((p, s)) => (Some(p), Some(s)),
            None => (Some(t), None),
        },
    };
    let checked = |part: Option<&str>, what: &str| -> Result<Option<String>> {
        match part {
            None => Ok(None),
            Some(p) if is_plugin_part(p) => Ok(Some(p.to_owned())),
            Some(p) => Err(Error::Identifier(format!(
                "'{text}': '{p}' is not a {what} name (letters, digits, '.', '_' and '-')"
            ))),
        }
    };
    if let Some(p) = plugin
        && skill_core::validate::validate_name(p).is_err()
    {
        return Err(Error::Identifier(format!(
            "'{text}': '{p}' is not a plugin name (lowercase letters, digits, '.', '_' and '-')"
        )));
    }
    Ok(Identifier::Marketplace {
        repository: Box::new(repository),
        plugin: checked(plugin, "plugin")?,
        skill: checked(skill, "skill")?,
    })
}

/// A plugin or skill folder name as marketplaces write them: one path
/// segment of letters, digits, `.`, `_` and `-`, not `.` or `..`.
pub(crate) fn is_plugin_part(p: &str) -> bool {
    !p.is_empty()
        && p != "."
        && p != ".."
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn parse_git(rest: &str, text: &str) -> Result<Identifier> {
    let (rest, subdir) = match rest.split_once('#') {
        Some((r, s)) => (r, Some(s.trim_matches('/'))),
        None => (rest, None),
    };
    let Some((scheme, after)) = rest.split_once("://") else {
        return Err(Error::Identifier(format!(
            "'{text}': expected git+https://…, git+http://…, git+ssh://… or git+file://…"
        )));
    };
    if !matches!(scheme, "https" | "http" | "file" | "ssh") {
        return Err(Error::Identifier(format!(
            "'{text}': the git transport '{scheme}' is not allowed (use https, http, ssh or file)"
        )));
    }
    // A ref follows the last '@' of the path part; an '@' in the host part is a user name.
    let path_start = if scheme == "file" {
        0
    } else {
        after.find('/').unwrap_or(after.len())
    };
    let (location, reference) = match after[path_start..].rfind('@') {
        Some(at) => {
            let at = path_start + at;
            (&after[..at], Some(after[at + 1..].to_owned()))
        }
        None => (after, None),
    };
    if location.is_empty() || location == "/" {
        return Err(Error::Identifier(format!("'{text}' names no repository")));
    }
    if let Some(r) = &reference
        && (r.is_empty() || r.starts_with('-') || r.contains(char::is_whitespace))
    {
        return Err(Error::Identifier(format!(
            "'{text}': '{r}' is not a usable git ref"
        )));
    }
    let subdir = match subdir {
        Some("") | None => None,
        Some(s) => {
            relative_path(s, text)?;
            Some(s.to_owned())
        }
    };
    Ok(Identifier::Git {
        url: format!("{scheme}://{location}"),
        reference,
        subdir,
    })
}

fn parse_well_known(rest: &str, text: &str) -> Result<Identifier> {
    let (base, name) = match rest.split_once('#') {
        Some((b, n)) => (b, Some(n)),
        None => (rest, None),
    };
    let base = if base.starts_with("https://") || base.starts_with("http://") {
        base.to_owned()
    } else {
        format!("https://{base}")
    };
    let base = base.trim_end_matches('/').to_owned();
    if base
        .split_once("://")
        .is_none_or(|(_, host)| host.is_empty())
    {
        return Err(Error::Identifier(format!("'{text}' names no host")));
    }
    let name = match name {
        None | Some("") => None,
        Some(n) => {
            skill_core::validate::validate_name(n).map_err(|v| {
                Error::Identifier(format!(
                    "'{text}': '{n}' is not a skill name ({})",
                    v.message
                ))
            })?;
            Some(n.to_owned())
        }
    };
    Ok(Identifier::WellKnown { base, name })
}

fn parse_github(rest: &str, text: &str) -> Result<Identifier> {
    let (location, reference) = match rest.rsplit_once('@') {
        Some((l, r)) if !r.is_empty() => (l, Some(r.to_owned())),
        _ => (rest, None),
    };
    let mut parts = location.trim_matches('/').splitn(3, '/');
    let owner = parts.next().unwrap_or_default();
    let repo = parts.next().unwrap_or_default();
    let valid = |s: &str| {
        !s.is_empty()
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    if !valid(owner) || !valid(repo) {
        return Err(Error::Identifier(format!(
            "'{text}': expected github:owner/repo[/path][@ref]"
        )));
    }
    let path = match parts.next().map(|p| p.trim_matches('/')) {
        None | Some("") => None,
        Some(p) => {
            relative_path(p, text)?;
            Some(p.to_owned())
        }
    };
    Ok(Identifier::GitHub {
        owner: owner.to_owned(),
        repo: repo.to_owned(),
        path,
        reference,
    })
}

/// Whether a local identifier's path names a folder rather than a file the
/// hub reads whole (an archive or a SKILL.md), judged by its name alone.
fn is_folder_path(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    !(name.ends_with(".tar.gz") || name.ends_with(".tgz") || name == "SKILL.md")
}

/// Refuses sub-paths that could leave the repository.
fn relative_path(p: &str, text: &str) -> Result<()> {
    let bad = p.starts_with('/')
        || p.contains('\\')
        || p.split('/').any(|s| s.is_empty() || s == ".." || s == ".");
    if bad {
        return Err(Error::Identifier(format!(
            "'{text}': the path '{p}' must be relative, without '.', '..' or empty segments"
        )));
    }
    Ok(())
}

/// `scheme://host` of a URL.
fn origin(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest)),
        None => url.to_owned(),
    }
}

/// Lower-cased, without `git+`, `github:`, a trailing `.git` or `/`, for comparing repositories.
fn repo_key(text: &str) -> String {
    let t = text.trim();
    let t = t.strip_prefix("git+").unwrap_or(t);
    let t = t.strip_prefix("github:").unwrap_or(t);
    let t = t.strip_prefix("well-known:").unwrap_or(t);
    let t = t.trim_end_matches('/');
    let t = t.strip_suffix(".git").unwrap_or(t);
    t.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Identifier {
        Identifier::parse(text, Path::new("/work"))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn canonical_forms_round_trip() {
        for text in [
            "official/databases/duckdb-parquet-queries",
            "git+https://example.com/org/skills.git@v1.2#tools/lint",
            "git+file:///tmp/repo@main",
            "well-known:https://skills.example.com#pdf-tools",
            "github:acme/skills/devops@main",
            "https://example.com/a/SKILL.md",
            "file:///tmp/x",
        ] {
            assert_eq!(parse(text).to_string(), text);
        }
    }

    #[test]
    fn git_refs_and_users_are_told_apart() {
        match parse("git+https://me@host.com/o/r.git@feature/x#sub") {
            Identifier::Git {
                url,
                reference,
                subdir,
            } => {
                assert_eq!(url, "https://me@host.com/o/r.git");
                assert_eq!(reference.as_deref(), Some("feature/x"));
                assert_eq!(subdir.as_deref(), Some("sub"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn paths_and_bare_names() {
        assert_eq!(
            parse("./a/../b"),
            Identifier::Local {
                path: PathBuf::from("/work/b")
            }
        );
        assert!(
            Identifier::parse("kubernetes-rollout", Path::new("/nonexistent"))
                .unwrap()
                .is_none()
        );
        assert_eq!(
            parse("well-known:skills.example.com").to_string(),
            "well-known:https://skills.example.com"
        );
    }

    #[test]
    fn hostile_forms_are_refused() {
        for bad in [
            "git+ext::sh -c evil",
            "git+https://h/r#../../etc",
            "github:o/r/../x",
            "github:../r",
            "official/../secrets",
            "https://example.com/page.html",
            "git+https://h/r@-uupload-pack=evil",
            "ftp:thing",
        ] {
            assert!(
                Identifier::parse(bad, Path::new("/work")).is_err(),
                "{bad} should be refused"
            );
        }
    }

    #[test]
    fn children_name_a_folder_inside_the_collection() {
        assert_eq!(
            parse("git+https://h/r.git@v1#skills")
                .child(".curated/gh-fix-ci")
                .unwrap()
                .to_string(),
            "git+https://h/r.git@v1#skills/.curated/gh-fix-ci"
        );
        assert_eq!(
            parse("/srv/skills").child("a/b").unwrap().to_string(),
            "file:///srv/skills/a/b"
        );
        assert_eq!(parse("/srv/pack.tar.gz").child("a"), None);
        assert_eq!(
            parse("/srv/pack.tar.gz").child("").unwrap().to_string(),
            "file:///srv/pack.tar.gz"
        );
        assert_eq!(parse("https://h/x.tar.gz").child("a"), None);
    }

    #[test]
    fn trust_follows_the_config() {
        let config = HubConfig {
            trusted_repos: vec!["Acme/Skills".into(), "git+file:///srv/repo.git".into()],
            ..HubConfig::default()
        };
        assert_eq!(parse("official/a/b").trust(&config), TrustLevel::Builtin);
        assert_eq!(
            parse("github:acme/skills/x").trust(&config),
            TrustLevel::Trusted
        );
        assert_eq!(
            parse("github:other/skills").trust(&config),
            TrustLevel::Community
        );
        assert_eq!(
            parse("git+file:///srv/repo#a").trust(&config),
            TrustLevel::Trusted
        );
        assert_eq!(parse("/srv/repo").trust(&config), TrustLevel::Community);
    }
}
