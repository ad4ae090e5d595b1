//! Which folders discovery walks, in precedence order: project (trusted repos
//! only), user, external, plugin. Roots are resolved here and nowhere else.

use std::path::{Path, PathBuf};

use knack_config::{Config, KnackHome};

use crate::skill::Scope;

/// The folder under the user skills folder where the hub installs plugin
/// skills from a marketplace, one sub-folder per plugin. It starts with a dot
/// so the user root's walk passes over it; it is a root of its own.
pub const INSTALLED_PLUGINS_DIR: &str = ".plugins";

/// The namespace of installed plugin skills: `plugin:<plugin>/<skill>`.
pub const PLUGIN_NAMESPACE: &str = "plugin";

/// One folder discovery walks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    pub path: PathBuf,
    pub scope: Scope,
}

/// Everything discovery needs, resolved from config and environment once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryOptions {
    pub roots: Vec<SkillRoot>,
    pub max_depth: usize,
    pub max_dirs: usize,
    pub disabled: Vec<String>,
    /// The platform skills are matched against (`linux`, `macos`, `windows`).
    pub platform: String,
    /// Notices found while resolving roots (missing external dirs, untrusted repos).
    pub notices: Vec<String>,
}

/// Gives every external root after the first a numbered namespace
/// (`external-2`, `external-3`, in config order), and every project root
/// after the first one too (`project-2`, … from the repository root down to
/// the working directory), so a skill's qualified id is unique even when two
/// roots hold the same folder names.
pub fn number_shared_scopes(roots: &mut [SkillRoot]) {
    let mut seen: Vec<(Scope, usize)> = Vec::new();
    for root in roots.iter_mut() {
        let nth = match seen.iter_mut().find(|(s, _)| *s == root.scope) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((root.scope.clone(), 1));
                1
            }
        };
        root.scope = root.scope.nth(nth);
    }
}

impl DiscoveryOptions {
    /// Only the given roots, with default limits; useful for tests and tools.
    pub fn with_roots(mut roots: Vec<SkillRoot>) -> Self {
        number_shared_scopes(&mut roots);
        let defaults = knack_config::SkillsConfig::default();
        Self {
            roots,
            max_depth: defaults.scan_max_depth,
            max_dirs: defaults.scan_max_dirs,
            disabled: Vec::new(),
            platform: current_platform().to_owned(),
            notices: Vec::new(),
        }
    }

    /// Roots for a session running in `cwd` with this home and config.
    pub fn resolve(home: &KnackHome, config: &Config, cwd: &Path) -> Self {
        let skills = &config.skills;
        let mut roots = Vec::new();
        let mut notices = Vec::new();

        if skills.project_discovery
            && let Some(repo) = find_git_root(cwd)
        {
            let candidates = project_skill_dirs(&repo, cwd);
            let present: Vec<PathBuf> = candidates.into_iter().filter(|p| p.is_dir()).collect();
            if !present.is_empty() {
                if is_trusted(&repo, &skills.trusted_projects) {
                    roots.extend(present.into_iter().map(|path| SkillRoot {
                        path,
                        scope: Scope::Project,
                    }));
                } else {
                    notices.push(format!(
                        "project skills in {} are ignored because this repository is not trusted; run `knack skills trust` there to use them",
                        repo.display()
                    ));
                }
            }
        }

        let user_root = home.skills_dir();
        roots.push(SkillRoot {
            path: user_root.clone(),
            scope: Scope::User,
        });

        for entry in &skills.external_dirs {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let path = expand_path(entry, home.root());
            if path == user_root || roots.iter().any(|r| r.path == path) {
                continue;
            }
            if !path.is_dir() {
                notices.push(format!(
                    "external skills dir '{entry}' ({}) does not exist; remove it from skills.external_dirs or create it",
                    path.display()
                ));
                continue;
            }
            // A Codex skills repository keeps its skills in dot-folders the
            // walk passes over; each becomes a root of its own, as the hub
            // reads such a repository.
            let folders = codex_collection_folders(&path);
            if folders.is_empty() {
                roots.push(SkillRoot {
                    path,
                    scope: Scope::External,
                });
            } else {
                roots.extend(folders.into_iter().map(|path| SkillRoot {
                    path,
                    scope: Scope::External,
                }));
            }
        }

        for (namespace, dir) in &skills.plugins {
            if Scope::is_reserved_namespace(namespace)
                || namespace.is_empty()
                || !namespace
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                notices.push(format!(
                    "plugin namespace '{namespace}' is not allowed (reserved or not [a-zA-Z0-9_-]); rename it in skills.plugins"
                ));
                continue;
            }
            let path = expand_path(dir, home.root());
            if !path.is_dir() {
                notices.push(format!(
                    "plugin '{namespace}' skills dir {} does not exist",
                    path.display()
                ));
                continue;
            }
            roots.push(SkillRoot {
                path,
                scope: Scope::Plugin(namespace.clone()),
            });
        }

        // Plugin skills the hub installed from a marketplace: each plugin is
        // a category of this root, so their qualified ids are
        // `plugin:<plugin>/<skill>` and two plugins may share a skill name.
        let installed_plugins = user_root.join(INSTALLED_PLUGINS_DIR);
        if installed_plugins.is_dir() {
            roots.push(SkillRoot {
                path: installed_plugins,
                scope: Scope::Plugin(PLUGIN_NAMESPACE.to_owned()),
            });
        }

        number_shared_scopes(&mut roots);
        Self {
            roots,
            max_depth: skills.scan_max_depth,
            max_dirs: skills.scan_max_dirs,
            disabled: skills.disabled.clone(),
            platform: current_platform().to_owned(),
            notices,
        }
    }
}

pub fn current_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "macos",
        "windows" => "windows",
        other => other,
    }
}

/// Whether a `platforms` list admits `platform`. Empty means every platform.
pub fn platform_matches(platforms: &[String], platform: &str) -> bool {
    if platforms.is_empty() {
        return true;
    }
    platforms.iter().any(|entry| {
        let entry = entry.trim().to_lowercase();
        let mapped = match entry.as_str() {
            "darwin" | "osx" | "mac" => "macos",
            "win32" | "win" | "win64" => "windows",
            other => other,
        };
        !mapped.is_empty() && (platform.starts_with(mapped) || mapped.starts_with(platform))
    })
}

/// The nearest ancestor of `start` (inclusive) holding `.git` (dir or file).
pub fn find_git_root(start: &Path) -> Option<PathBuf> {
    let home = etcetera_home();
    start
        .ancestors()
        // The sandbox's mask of a missing `.git` (there while a command runs) is no
        // repository.
        .find(|dir| {
            let git = dir.join(".git");
            git.exists() && !knack_sandbox::is_mask(&git)
        })
        // A dotfiles repository at $HOME is not a project.
        .filter(|dir| home.as_deref() != Some(*dir))
        .map(Path::to_path_buf)
}

fn etcetera_home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// Where a project keeps skills, relative to the repository root or any
/// folder below it down to the working directory. The one list: discovery
/// walks these, the file tools refuse to write them, the sandbox protects them.
pub const PROJECT_SKILL_DIRS: [&str; 2] = [".knack/skills", ".agents/skills"];

/// [`PROJECT_SKILL_DIRS`] in the repo root and every directory from there
/// down to `cwd`, root first.
pub fn project_skill_dirs(repo: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(repo))
        .collect();
    dirs.reverse();
    if dirs.is_empty() {
        dirs.push(repo);
    }
    dirs.iter()
        .flat_map(|d| PROJECT_SKILL_DIRS.map(|rel| d.join(rel)))
        .collect()
}

/// The dot-folders a Codex skills repository keeps its skills in, in the
/// order Codex ranks them.
pub const CODEX_DOT_FOLDERS: [&str; 3] = [".system", ".curated", ".experimental"];

/// The Codex dot-folders of `dir` (or of `dir/skills`, for the repository's
/// root) that hold skills, when no plain folder there holds one: then the
/// dot-folders are the collection. Empty for any other layout.
pub fn codex_collection_folders(dir: &Path) -> Vec<PathBuf> {
    for base in [dir.to_path_buf(), dir.join("skills")] {
        let found: Vec<PathBuf> = CODEX_DOT_FOLDERS
            .iter()
            .map(|name| base.join(name))
            .filter(|p| p.is_dir())
            .collect();
        if found.is_empty() {
            continue;
        }
        let plain_skill = std::fs::read_dir(&base)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                !name.to_string_lossy().starts_with('.') && e.path().join("SKILL.md").is_file()
            });
        if plain_skill || base.join("SKILL.md").is_file() {
            return Vec::new();
        }
        return found;
    }
    Vec::new()
}

/// A repository is trusted when its root (canonicalised) is listed. Entries
/// are read as `skills.external_dirs` are (`~` and `$VAR` expanded).
pub fn is_trusted(repo: &Path, trusted: &[String]) -> bool {
    trusted.iter().any(|t| names_repo(t, repo))
}

/// Whether the `skills.trusted_projects` entry `entry` names `repo`.
pub fn names_repo(entry: &str, repo: &Path) -> bool {
    let canonical = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    let listed = expand_path(entry.trim(), Path::new("/"));
    listed == repo || listed.canonicalize().is_ok_and(|c| c == canonical)
}

/// Expands `~` and `$VAR`/`${VAR}`, resolving relative paths against `base`.
pub fn expand_path(raw: &str, base: &Path) -> PathBuf {
    let mut text = String::new();
    let mut rest = raw;
    if let Some(after) = rest.strip_prefix('~')
        && (after.is_empty() || after.starts_with('/'))
        && let Some(home) = etcetera_home()
    {
        text.push_str(&home.to_string_lossy());
        rest = after;
    }
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            text.push(c);
            continue;
        }
        let tail = &rest[i + 1..];
        let (name, consumed) = if let Some(inner) = tail.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => (&inner[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = tail
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(tail.len());
            (&tail[..end], end)
        };
        match std::env::var(name) {
            Ok(value) if !name.is_empty() => {
                text.push_str(&value);
                for _ in 0..consumed {
                    chars.next();
                }
            }
            _ => text.push(c),
        }
    }
    let path = PathBuf::from(text);
    if path.is_absolute() {
        path
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_matching() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(platform_matches(&[], "linux"));
        assert!(platform_matches(&l(&["linux"]), "linux"));
        assert!(platform_matches(&l(&["MacOS", "linux"]), "linux"));
        assert!(platform_matches(&l(&["darwin"]), "macos"));
        assert!(!platform_matches(&l(&["darwin"]), "linux"));
        assert!(!platform_matches(&l(&["windows"]), "linux"));
        assert!(!platform_matches(&l(&["freebsd"]), "linux"));
    }

    #[test]
    fn relative_paths_resolve_against_base() {
        assert_eq!(
            expand_path("skills2", Path::new("/h")),
            PathBuf::from("/h/skills2")
        );
        assert_eq!(expand_path("/abs", Path::new("/h")), PathBuf::from("/abs"));
    }

    #[test]
    fn project_dirs_run_from_repo_root_to_cwd() {
        let dirs = project_skill_dirs(Path::new("/r"), Path::new("/r/a/b"));
        assert_eq!(dirs.len(), 6);
        assert_eq!(dirs[0], PathBuf::from("/r/.knack/skills"));
        assert_eq!(dirs[5], PathBuf::from("/r/a/b/.agents/skills"));
    }
}
