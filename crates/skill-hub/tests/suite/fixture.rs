//! A temp knack home with a small hub config, a hub over it, and builders for
//! skills, tarballs and git repositories.

use std::io::Write;
use std::path::{Path, PathBuf};

use knack_config::{Config, KnackHome};
use skill_core::{DiscoveryOptions, Scope, SkillRoot};
use skill_hub::Hub;

pub struct Home {
    pub dir: tempfile::TempDir,
    pub config: Config,
}

impl Home {
    pub fn new() -> Self {
        let mut config = Config::default();
        config.hub.fetch_timeout_secs = 2;
        config.hub.max_package_bytes = 64 * 1024;
        config.hub.max_package_files = 20;
        Self {
            dir: tempfile::tempdir().unwrap(),
            config,
        }
    }

    pub fn with_github(mut self, api: &str) -> Self {
        self.config.hub.github_api = api.to_owned();
        self
    }

    pub fn trusting(mut self, repo: &str) -> Self {
        self.config.hub.trusted_repos.push(repo.to_owned());
        self
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn hub(&self) -> Hub {
        let home = KnackHome::at(self.dir.path());
        let discovery = DiscoveryOptions::with_roots(vec![SkillRoot {
            path: home.skills_dir(),
            scope: Scope::User,
        }]);
        Hub::new(
            home,
            &self.config,
            discovery,
            self.dir.path().to_path_buf(),
            true,
        )
        .unwrap()
    }

    /// Installs without a prompt; the error text on failure.
    pub fn install(&self, id: &str, force: bool) -> Result<skill_hub::Installed, String> {
        let hub = self.hub();
        let opts = skill_hub::InstallOptions {
            force,
            ..Default::default()
        };
        let staged = block_on(hub.stage_for_install(id, &opts)).map_err(|e| e.to_string())?;
        hub.install(staged, |_| Ok(())).map_err(|e| e.to_string())
    }

    /// Nothing installed, nothing in the lock, an empty quarantine.
    pub fn assert_clean(&self) {
        let skills = self.path("skills");
        // Versions outlive the skill by design: an uninstall can be undone.
        let history = skills.join(".history");
        let leftovers: Vec<_> = walk_files(&skills)
            .into_iter()
            .filter(|p| !p.starts_with(&history))
            .collect();
        assert!(leftovers.is_empty(), "skills/ holds {leftovers:?}");
        assert!(
            self.hub().lock().unwrap().installed.is_empty(),
            "the lock has entries"
        );
        let quarantine = walk_files(&self.path(".hub/quarantine"));
        assert!(quarantine.is_empty(), "quarantine holds {quarantine:?}");
    }

    pub fn audit_log(&self) -> String {
        std::fs::read_to_string(self.path(".hub/audit.log")).unwrap_or_default()
    }
}

pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

pub fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body}\n")
}

pub fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// A gzip'd tarball of (path, bytes); paths are written raw, as an attacker would.
pub fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, body) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        h.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        b.append(&h, *body).unwrap();
    }
    gzip(&b.into_inner().unwrap())
}

/// A tarball holding one symlink `path` → `target`, plus a SKILL.md beside it.
pub fn tar_gz_with_link(dir: &str, link: &str, target: &str) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let md = skill_md("linky", "Use when testing links", "Steps.");
    let mut h = tar::Header::new_gnu();
    h.set_size(md.len() as u64);
    h.set_mode(0o644);
    h.set_path(format!("{dir}/SKILL.md")).unwrap();
    h.set_cksum();
    b.append(&h, md.as_bytes()).unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_path(format!("{dir}/{link}")).unwrap();
    h.set_link_name(target).unwrap();
    h.set_cksum();
    b.append(&h, std::io::empty()).unwrap();
    gzip(&b.into_inner().unwrap())
}

pub fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(raw).unwrap();
    gz.finish().unwrap()
}

pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

pub use test_support::{git, git_repo};

pub fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

pub fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}
