//! The hub's operations: stage (fetch, unpack, validate, scan, judge) into the
//! quarantine, install by one rename, and uninstall, check, update, audit, search.

use std::path::{Path, PathBuf};
use std::time::Duration;

use knack_config::{Config, HubConfig, KnackHome};
use serde::Serialize;
use skill_core::{DiscoveryOptions, Resolution};
use skill_guard::{
    PolicyDecision, ScanReport, SkillIgnore, TrustLevel, Verdict, decide, scan_skill_dir_with,
};

use crate::audit_log::{AuditAction, append_audit_line};
use crate::identifier::Identifier;
use crate::lock::{HubLock, LockEntry, check_install_path};
use crate::net::Net;
use crate::quarantine::Quarantine;
use crate::safe_tree::{Limits, copy_tree, file_list, tree_hash};
use crate::search::{SearchOutcome, SourceProblem, merge};
use crate::source::{FetchContext, Fetched, Member, members_of, open};
use crate::taps::Taps;
use crate::{Error, Result};

/// Lines of SKILL.md `inspect` shows.
const HEAD_LINES: usize = 20;

/// Choices the user makes for an install.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Install under `skills/<category>/`.
    pub category: Option<String>,
    /// Accept a skill the policy would block (never a dangerous outside skill).
    pub force: bool,
    /// Accept even a dangerous verdict, for a source the user named
    /// themselves (see [`Hub::accepts_dangerous_from`]); recorded in the
    /// audit log with the findings.
    pub accept_dangerous: bool,
}

/// A fetched, validated and scanned skill waiting in the quarantine.
/// Dropping it removes the quarantine folder.
pub struct Staged {
    quarantine: Quarantine,
    /// The skill folder inside the quarantine, named after the skill.
    pub dir: PathBuf,
    pub name: String,
    pub description: String,
    pub identifier: String,
    /// `official`, `local`, `git`, `well-known`, `url` or `github`.
    pub source: String,
    pub trust: TrustLevel,
    pub category: Option<String>,
    /// The marketplace plugin the skill belongs to: it is installed under
    /// `skills/.plugins/<plugin>/` and locked as `<plugin>:<name>`.
    pub plugin: Option<String>,
    pub report: ScanReport,
    pub decision: PolicyDecision,
    /// The policy refused a dangerous verdict and `--accept-dangerous`
    /// lifted that refusal.
    pub dangerous_accepted: bool,
    /// Rule warnings from validation (not fatal).
    pub warnings: Vec<String>,
    pub content_hash: String,
    pub files: Vec<String>,
    pub skill_md: String,
}

impl Staged {
    /// `<category>/<name>` or `<name>` (`.plugins/<plugin>/<name>` for a
    /// plugin skill), relative to `skills/`.
    pub fn install_path(&self) -> String {
        match (&self.plugin, &self.category) {
            (Some(p), _) => format!("{}/{p}/{}", skill_core::INSTALLED_PLUGINS_DIR, self.name),
            (None, Some(c)) => format!("{c}/{}", self.name),
            (None, None) => self.name.clone(),
        }
    }

    /// The name the lock, `update` and `uninstall` know the skill by:
    /// `<plugin>:<name>` for a plugin skill (two plugins may share a name).
    pub fn lock_name(&self) -> String {
        match &self.plugin {
            Some(p) => format!("{p}:{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The first lines of SKILL.md.
    pub fn head(&self) -> String {
        let mut out: Vec<&str> = self.skill_md.lines().take(HEAD_LINES).collect();
        if self.skill_md.lines().count() > HEAD_LINES {
            out.push("…");
        }
        out.join("\n")
    }
}

/// One skill of a collection, staged on its own (or why it could not be).
pub struct StagedMember {
    pub member: Member,
    pub staged: Result<Staged>,
}

/// A finished install.
#[derive(Debug, Clone)]
pub struct Installed {
    pub name: String,
    pub path: PathBuf,
    pub entry: LockEntry,
}

/// Result of comparing an installed skill with its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "detail")]
pub enum CheckStatus {
    UpToDate,
    UpdateAvailable,
    /// The source could not be read.
    Unavailable(String),
    /// The lock entry is unusable.
    InvalidInstall(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct UpdateStatus {
    pub name: String,
    pub identifier: String,
    pub source: String,
    #[serde(flatten)]
    pub status: CheckStatus,
}

/// What `update` did for one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "detail")]
pub enum UpdateOutcome {
    Updated { verdict: String },
    UpToDate,
    Failed(String),
}

/// `audit` for one installed skill.
#[derive(Debug, Clone, Serialize)]
pub struct AuditResult {
    pub name: String,
    pub install_path: String,
    pub locked_verdict: String,
    /// `None` when the folder could not be scanned.
    pub verdict: Option<Verdict>,
    pub changed: bool,
    /// The files differ from what was installed.
    pub modified: bool,
    pub error: Option<String>,
    #[serde(skip)]
    pub report: Option<ScanReport>,
}

/// The hub for one knack home.
pub struct Hub {
    home: KnackHome,
    config: HubConfig,
    discovery: DiscoveryOptions,
    cwd: PathBuf,
    net: Net,
}

impl Hub {
    /// `quiet` hides progress bars (for `--json`).
    pub fn new(
        home: KnackHome,
        config: &Config,
        discovery: DiscoveryOptions,
        cwd: PathBuf,
        quiet: bool,
    ) -> Result<Self> {
        let hub = config.hub.clone();
        let token = home.env_file().lookup("GITHUB_TOKEN");
        let net = Net::new(
            Duration::from_secs(hub.fetch_timeout_secs.max(1)),
            hub.max_package_bytes,
            quiet,
            token,
        )?;
        Ok(Self {
            home,
            config: hub,
            discovery,
            cwd,
            net,
        })
    }

    pub fn hub_dir(&self) -> PathBuf {
        self.home.hub_dir()
    }

    /// The lock; an error naming it when it is damaged (never an empty lock).
    pub fn lock(&self) -> Result<HubLock> {
        HubLock::load(&self.hub_dir())
    }

    pub fn taps(&self) -> Taps {
        Taps::new(&self.hub_dir())
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn limits(&self) -> Limits {
        Limits {
            max_bytes: self.config.max_package_bytes,
            max_files: self.config.max_package_files,
        }
    }

    fn ctx(&self, scratch: PathBuf) -> FetchContext<'_> {
        FetchContext {
            net: &self.net,
            limits: self.limits(),
            config: &self.config,
            scratch,
        }
    }

    // ---- search -------------------------------------------------------------

    /// The collections a search asks: `None`/`all` = official + taps;
    /// `official`; `taps`; or any collection identifier.
    fn search_sources(&self, source: Option<&str>) -> Result<Vec<Identifier>> {
        let official = Identifier::Official { path: None };
        let taps = || -> Result<Vec<Identifier>> {
            Ok(self
                .taps()
                .list()?
                .iter()
                .filter_map(|t| Identifier::parse(&t.repo, &self.cwd).ok().flatten())
                .collect())
        };
        match source.map(str::trim) {
            None | Some("") | Some("all") => {
                let mut ids = vec![official];
                ids.extend(taps()?);
                Ok(ids)
            }
            Some("taps") => taps(),
            Some(text) => match Identifier::parse(text, &self.cwd)? {
                Some(id) => Ok(vec![id]),
                None => Err(Error::Identifier(format!(
                    "unknown source '{text}'; use all, official, taps, or a repository such as github:owner/repo, git+<url> or well-known:<site>"
                ))),
            },
        }
    }

    /// Searches the sources concurrently (each within the fetch timeout);
    /// `query` empty lists everything.
    pub async fn search(&self, query: &str, source: Option<&str>) -> Result<SearchOutcome> {
        let ids = self.search_sources(source)?;
        let quarantine = Quarantine::new(&self.hub_dir(), "search")?;
        let timeout = Duration::from_secs(self.config.fetch_timeout_secs.max(1));
        let jobs = ids.iter().enumerate().map(|(i, id)| {
            let scratch = quarantine.sub(&format!("source-{i}"));
            async move {
                let label = id.to_string();
                let scratch = match scratch {
                    Ok(s) => s,
                    Err(e) => return (label, Err(e)),
                };
                let ctx = self.ctx(scratch);
                let source = open(id.clone());
                let found = match tokio::time::timeout(timeout, source.search(&ctx, query)).await {
                    Ok(r) => r,
                    Err(_) => Err(Error::Fetch(format!(
                        "no answer within {}s (hub.fetch_timeout_secs)",
                        timeout.as_secs()
                    ))),
                };
                (label, found)
            }
        });
        let answers = futures::future::join_all(jobs).await;
        let mut lists = Vec::new();
        let mut problems = Vec::new();
        for (label, answer) in answers {
            match answer {
                Ok(list) => lists.push(list),
                Err(e) => problems.push(SourceProblem {
                    source: label,
                    error: e.to_string(),
                }),
            }
        }
        drop(quarantine);
        if !ids.is_empty() && problems.len() == ids.len() {
            let all: Vec<String> = problems
                .iter()
                .map(|p| format!("{}: {}", p.source, p.error))
                .collect();
            return Err(Error::Fetch(format!(
                "no source could be searched: {}",
                all.join("; ")
            )));
        }
        Ok(SearchOutcome {
            results: merge(lists),
            problems,
            sources: ids.len(),
        })
    }

    /// Parses `text`; a bare skill name is looked up by exact name in the
    /// official skills and the taps (the most trusted match wins).
    pub async fn resolve_identifier(&self, text: &str) -> Result<Identifier> {
        if let Some(id) = Identifier::parse(text, &self.cwd)? {
            return Ok(id);
        }
        let name = text.trim();
        skill_core::validate::validate_name(name).map_err(|_| {
            Error::Identifier(format!(
                "'{name}' is neither a skill name nor an identifier (official/…, git+…, github:…, well-known:…, a URL or a path)"
            ))
        })?;
        let outcome = self.search(name, None).await?;
        let hit = outcome
            .results
            .into_iter()
            .find(|m| m.name == name)
            .ok_or_else(|| {
                Error::Fetch(format!(
                    "no skill named '{name}' in the official skills or the taps; try `knack skills search {name}`"
                ))
            })?;
        Identifier::parse(&hit.identifier, &self.cwd)?
            .ok_or_else(|| Error::Identifier(format!("bad identifier {}", hit.identifier)))
    }

    // ---- staging ------------------------------------------------------------

    /// Fetches, unpacks, validates, scans and judges a skill without
    /// installing it (for `inspect`).
    pub async fn inspect(&self, text: &str) -> Result<Staged> {
        let id = self.resolve_identifier(text).await?;
        self.stage(&id, &InstallOptions::default()).await
    }

    /// Whether `--accept-dangerous` may be used with what the user typed:
    /// only with an identifier that names its source (a path, `git+…`,
    /// `github:…`, `well-known:…` or a URL), which the user chose and can
    /// read. A bare name is found by search among the official skills and
    /// the taps, so the user never saw which package it picks.
    pub fn accepts_dangerous_from(&self, text: &str) -> Result<()> {
        match Identifier::parse(text, &self.cwd)? {
            Some(_) => Ok(()),
            None => Err(Error::Declined(format!(
                "--accept-dangerous is only for a source you name yourself (a path, git+URL, github:owner/repo, well-known:SITE or a URL); '{}' would be found by search. Run `knack skills search {}`, read the skill, then install it by its identifier",
                text.trim(),
                text.trim()
            ))),
        }
    }

    /// [`inspect`](Self::inspect) for an install: a package refused while
    /// unpacking or validating is recorded in the audit log.
    pub async fn stage_for_install(&self, text: &str, opts: &InstallOptions) -> Result<Staged> {
        if opts.accept_dangerous {
            self.accepts_dangerous_from(text)?;
        }
        let id = self.resolve_identifier(text).await?;
        self.stage(&id, opts)
            .await
            .inspect_err(|e| self.audit_refused_package(&id, e))
    }

    /// Stages every skill of the collection `text` names, each on its own
    /// quarantine, validation, scan and policy, from one fetch when the
    /// source allows it. An identifier that names one skill is a collection
    /// of one. `--accept-dangerous` is refused here: a dangerous skill is
    /// accepted one at a time, after its findings were read.
    pub async fn stage_collection(
        &self,
        text: &str,
        opts: &InstallOptions,
    ) -> Result<Vec<StagedMember>> {
        if opts.accept_dangerous {
            return Err(Error::Declined(
                "--accept-dangerous cannot be combined with --all; install a dangerous skill on its own, by its identifier, after reading its findings".into(),
            ));
        }
        check_category(opts)?;
        let id = self.resolve_identifier(text).await?;
        let quarantine = Quarantine::new(&self.hub_dir(), &format!("all-{}", id.slug()))?;
        let ctx = self.ctx(quarantine.sub("fetch")?);
        let source = open(id.clone());
        let mut out = Vec::new();
        if let Some(members) = source
            .fetch_members(&ctx)
            .await
            .inspect_err(|e| self.audit_refused_package(&id, e))?
        {
            if members.is_empty() {
                return Err(Error::Invalid(format!("{id} holds no SKILL.md")));
            }
            for (member, dir) in members {
                let staged = match member.identifier.as_deref() {
                    Some(text) => self.parse_listed(text).and_then(|member_id| {
                        let fetched = Fetched {
                            dir,
                            category: None,
                        };
                        self.stage_member(&member_id, fetched, opts)
                    }),
                    None => Err(Error::Identifier(format!(
                        "{} has no identifier of its own",
                        member.name
                    ))),
                };
                out.push(StagedMember { member, staged });
            }
            return Ok(out);
        }
        let root = source
            .fetch_root(&ctx)
            .await
            .inspect_err(|e| self.audit_refused_package(&id, e))?;
        match root {
            Some(root) => {
                let members = members_of(&root, &id);
                if members.is_empty() {
                    return Err(Error::Invalid(format!("{id} holds no SKILL.md")));
                }
                for member in members {
                    let staged = match member.identifier.as_deref() {
                        None => Err(Error::Identifier(format!(
                            "{} sits inside {id}, which cannot name one skill of several; unpack it and install the folder",
                            member.path
                        ))),
                        Some(text) => self.parse_listed(text).and_then(|member_id| {
                            let fetched = Fetched {
                                dir: root.join(&member.path),
                                category: None,
                            };
                            self.stage_member(&member_id, fetched, opts)
                        }),
                    };
                    out.push(StagedMember { member, staged });
                }
            }
            None => {
                let listed = source.list(&ctx).await?;
                if listed.is_empty() {
                    return Err(Error::Invalid(format!("{id} lists no skills")));
                }
                for meta in listed {
                    let member = Member {
                        name: meta.name,
                        description: meta.description,
                        path: String::new(),
                        identifier: Some(meta.identifier.clone()),
                        tags: meta.tags,
                    };
                    let staged = match self.parse_listed(&meta.identifier) {
                        Ok(member_id) => self
                            .stage(&member_id, opts)
                            .await
                            .inspect_err(|e| self.audit_refused_package(&member_id, e)),
                        Err(e) => Err(e),
                    };
                    out.push(StagedMember { member, staged });
                }
            }
        }
        Ok(out)
    }

    /// An identifier a source listed (never a bare name).
    fn parse_listed(&self, text: &str) -> Result<Identifier> {
        Identifier::parse(text, &self.cwd)?.ok_or_else(|| {
            Error::Identifier(format!("the source listed a bad identifier '{text}'"))
        })
    }

    /// Stages one skill of an already fetched collection in a quarantine of its own.
    fn stage_member(
        &self,
        id: &Identifier,
        fetched: Fetched,
        opts: &InstallOptions,
    ) -> Result<Staged> {
        let quarantine = Quarantine::new(&self.hub_dir(), &id.slug())?;
        self.stage_fetched(quarantine, id, fetched, opts)
            .inspect_err(|e| self.audit_refused_package(id, e))
    }

    /// Records a package refused while unpacking or validating.
    fn audit_refused_package(&self, id: &Identifier, e: &Error) {
        if matches!(e, Error::Unsafe(_) | Error::Invalid(_)) {
            let trust = id.trust(&self.config);
            let _ = append_audit_line(
                &self.hub_dir(),
                AuditAction::Blocked,
                &id.slug(),
                id.source_kind(),
                trust.as_str(),
                "invalid_package",
                &e.to_string(),
            );
        }
    }

    async fn stage(&self, id: &Identifier, opts: &InstallOptions) -> Result<Staged> {
        check_category(opts)?;
        let quarantine = Quarantine::new(&self.hub_dir(), &id.slug())?;
        let scratch = quarantine.sub("fetch")?;
        let ctx = self.ctx(scratch);
        let source = open(id.clone());
        let fetched = source.fetch(&ctx).await?;
        self.stage_fetched(quarantine, id, fetched, opts)
    }

    /// Copies, validates, scans and judges a fetched skill inside `quarantine`.
    fn stage_fetched(
        &self,
        quarantine: Quarantine,
        id: &Identifier,
        fetched: Fetched,
        opts: &InstallOptions,
    ) -> Result<Staged> {
        // Copy the skill alone out of whatever was fetched (leaving `.git` and
        // knack's private files behind), under the caps.
        let package = quarantine.path().join("package");
        std::fs::create_dir_all(&package).map_err(|e| Error::io(&package, e))?;
        let incoming = package.join("incoming");
        copy_tree(&fetched.dir, &incoming, self.limits())?;
        let skill_md_path = incoming.join("SKILL.md");
        let skill_md = std::fs::read_to_string(&skill_md_path).map_err(|e| {
            Error::Invalid(format!("{id}: SKILL.md is missing or not UTF-8 text ({e})"))
        })?;
        // An install writes nothing into SKILL.md, so a legacy name (spaced,
        // capitals, too long) is kept as written; only the folder it is
        // installed under must follow the name rule.
        let adopted = skill_core::validate::SkillMdCheck::Adopted;
        let valid = skill_core::validate::validate_skill_md(&skill_md, adopted).map_err(|v| {
            Error::Invalid(format!("{id}: SKILL.md breaks the rules: {}", v.message))
        })?;
        let name = install_name(&valid.name, &fetched.dir).ok_or_else(|| {
            Error::Invalid(format!(
                "{id}: neither the name '{}' nor the folder name can be made into a skill folder name",
                valid.name
            ))
        })?;
        let dir = package.join(&name);
        std::fs::rename(&incoming, &dir).map_err(|e| Error::io(&dir, e))?;
        let mut validation = skill_core::validate::validate_skill_dir_as(&dir, adopted);
        if name != valid.name {
            validation.warnings.push(format!(
                "the name '{}' breaks knack's name rule; installed as '{name}' (the SKILL.md is kept as written)",
                valid.name
            ));
        }
        if !validation.is_valid() {
            return Err(Error::Invalid(format!(
                "{id}: the skill breaks the rules: {}",
                validation.errors.join("; ")
            )));
        }
        let report = scan_package(&dir)?;
        let trust = id.trust(&self.config);
        // `--accept-dangerous` is the stronger `--force`: it lifts every
        // block, the dangerous one included (callers checked the source).
        let lifted = opts.force || opts.accept_dangerous;
        let mut decision = decide(trust, report.verdict, lifted);
        let dangerous_accepted =
            opts.accept_dangerous && report.verdict == Verdict::Dangerous && !decision.is_allowed();
        if dangerous_accepted {
            decision = PolicyDecision::Allow;
        }
        let frontmatter_category = skill_core::frontmatter::parse_skill_md(&skill_md)
            .ok()
            .and_then(|p| p.frontmatter.category)
            .filter(|c| skill_core::validate::validate_category(c).is_ok());
        // A plugin skill lives in its plugin's folder, never in a category.
        let plugin = match id {
            Identifier::Marketplace {
                plugin: Some(p),
                skill: Some(_),
                ..
            } => Some(p.clone()),
            _ => None,
        };
        let category = if plugin.is_some() {
            None
        } else {
            opts.category
                .clone()
                .or(fetched.category)
                .or(frontmatter_category)
        };
        let content_hash = tree_hash(&dir)?;
        let files = file_list(&dir);
        Ok(Staged {
            quarantine,
            dir,
            name,
            description: valid.description,
            identifier: id.to_string(),
            source: id.source_kind().to_owned(),
            trust,
            category,
            plugin,
            report,
            decision,
            dangerous_accepted,
            warnings: validation.warnings,
            content_hash,
            files,
            skill_md,
        })
    }

    // ---- install ------------------------------------------------------------

    /// Refuses a name that the lock or the discovery engine already knows.
    fn check_free(&self, staged: &Staged) -> Result<()> {
        let lock = self.lock()?;
        let lock_name = staged.lock_name();
        if let Some(entry) = lock.installed.get(&lock_name) {
            return Err(Error::Collision(format!(
                "'{lock_name}' is already installed from {}; run `knack skills update {lock_name}` to refresh it",
                entry.identifier
            )));
        }
        let (set, _) = skill_core::discover(&self.discovery);
        // A plugin skill only has to be new in its plugin: its bare name may
        // be shared (and is then ambiguous, as every shared name is).
        let wanted = match &staged.plugin {
            Some(p) => format!("{}:{p}/{}", skill_core::PLUGIN_NAMESPACE, staged.name),
            None => staged.name.clone(),
        };
        let taken: Vec<String> = match set.resolve(&wanted) {
            Resolution::NotFound => Vec::new(),
            Resolution::Found(s) | Resolution::Gated(s, _) => vec![s.qualified_id()],
            Resolution::Ambiguous(list) => list.iter().map(|s| s.qualified_id()).collect(),
        };
        if !taken.is_empty() {
            return Err(Error::Collision(format!(
                "a skill named '{}' already exists ({}); remove or rename it first",
                staged.name,
                taken.join(", ")
            )));
        }
        let target = self.home.skills_dir().join(staged.install_path());
        if std::fs::symlink_metadata(&target).is_ok() {
            return Err(Error::Collision(format!(
                "{} already exists; remove it first",
                target.display()
            )));
        }
        self.check_not_inside_skill(&staged.install_path())
    }

    /// A category folder must not itself be a skill.
    fn check_not_inside_skill(&self, install_path: &str) -> Result<()> {
        let skills = self.home.skills_dir();
        let mut dir = skills;
        let parts: Vec<&str> = install_path.split('/').collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            dir.push(part);
            if dir.join("SKILL.md").exists() {
                return Err(Error::Collision(format!(
                    "{} is a skill; choose another --category",
                    dir.display()
                )));
            }
        }
        Ok(())
    }

    /// Applies the policy, asks `confirm`, and moves the staged skill into
    /// `skills/`. Nothing is left behind when any step fails.
    pub fn install(
        &self,
        staged: Staged,
        confirm: impl FnOnce(&Staged) -> Result<()>,
    ) -> Result<Installed> {
        self.check_free(&staged)?;
        if let PolicyDecision::Block { reason } = &staged.decision {
            self.audit_blocked(&staged);
            return Err(Error::Blocked {
                reason: reason.clone(),
            });
        }
        confirm(&staged)?;
        let target = self.home.skills_dir().join(staged.install_path());
        self.place(&staged, &target)?;
        let now = skill_core::clock::now_rfc3339();
        let entry = LockEntry {
            source: staged.source.clone(),
            identifier: staged.identifier.clone(),
            trust_level: staged.trust.as_str().to_owned(),
            scan_verdict: staged.report.verdict.as_str().to_owned(),
            content_hash: staged.content_hash.clone(),
            install_path: staged.install_path(),
            files: staged.files.clone(),
            installed_at: now.clone(),
            updated_at: now,
        };
        let lock_name = staged.lock_name();
        let saved = self.lock().and_then(|mut lock| {
            lock.installed.insert(lock_name.clone(), entry.clone());
            lock.save(&self.hub_dir())
        });
        if let Err(e) = saved {
            remove_tree(&target);
            return Err(e);
        }
        self.record_history(&lock_name, &entry.install_path, None, "install");
        if staged.dangerous_accepted {
            let _ = append_audit_line(
                &self.hub_dir(),
                AuditAction::Override,
                &lock_name,
                &staged.source,
                staged.trust.as_str(),
                staged.report.verdict.as_str(),
                &override_details(&staged.report),
            );
        }
        let _ = append_audit_line(
            &self.hub_dir(),
            AuditAction::Install,
            &lock_name,
            &staged.source,
            staged.trust.as_str(),
            staged.report.verdict.as_str(),
            &staged.content_hash,
        );
        skill_core::snapshot::invalidate(&self.home.cache_dir());
        Ok(Installed {
            name: lock_name,
            path: target,
            entry,
        })
    }

    fn audit_blocked(&self, staged: &Staged) {
        let _ = append_audit_line(
            &self.hub_dir(),
            AuditAction::Blocked,
            &staged.lock_name(),
            &staged.source,
            staged.trust.as_str(),
            staged.report.verdict.as_str(),
            &format!("{}_findings", staged.report.findings.len()),
        );
    }

    /// Versions a hub write in the skill's history (actor `hub`), so it can
    /// be seen and rolled back like any other write. The skill is in place
    /// and locked already; a history that cannot be written is logged, not
    /// fatal.
    fn record_history(&self, name: &str, install_path: &str, before: Option<&Path>, action: &str) {
        if let Err(e) = skill_core::history::record_outside_write(
            &self.home,
            name,
            install_path,
            before,
            action,
            skill_core::manage::Actor::Hub,
        ) {
            tracing::warn!("the {action} of {name} was not recorded in its history: {e}");
        }
    }

    /// Marks the staged skill as hub-installed and renames it to `target`.
    fn place(&self, staged: &Staged, target: &Path) -> Result<()> {
        let parent = target
            .parent()
            .ok_or_else(|| Error::Collision(format!("{} has no parent", target.display())))?;
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        skill_core::manage::record_provenance(&staged.dir, "hub")
            .map_err(|e| Error::io(&staged.dir, e))?;
        match std::fs::rename(&staged.dir, target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                // Another file system: copy beside the target, then rename there.
                let temp = tempfile::Builder::new()
                    .prefix(".hub-incoming-")
                    .tempdir_in(parent)
                    .map_err(|e| Error::io(parent, e))?;
                let copy = temp.path().join(&staged.name);
                copy_tree(&staged.dir, &copy, self.limits())?;
                skill_core::manage::record_provenance(&copy, "hub")
                    .map_err(|e| Error::io(&copy, e))?;
                std::fs::rename(&copy, target).map_err(|e| Error::io(target, e))
            }
            Err(e) => Err(Error::io(target, e)),
        }
    }

    // ---- uninstall ----------------------------------------------------------

    /// The lock entry of a hub-installed skill, or a message saying what the name is.
    pub fn installed(&self, name: &str) -> Result<LockEntry> {
        if let Some(entry) = self.lock()?.installed.get(name) {
            return Ok(entry.clone());
        }
        let (set, _) = skill_core::discover(&self.discovery);
        let message = match set.resolve(name) {
            Resolution::Found(s) | Resolution::Gated(s, _) => {
                let who = skill_core::manage::provenance(&s.skill_dir).created_by;
                let hint = if who == "bundled" {
                    "bundled skills come back on sync unless you run `knack skills opt-out`; delete the folder or use `knack skills reset`".to_owned()
                } else {
                    format!("delete {} yourself if you mean to", s.skill_dir.display())
                };
                format!(
                    "'{name}' was not installed by the hub ({}, created by {who}); {hint}",
                    s.qualified_id()
                )
            }
            _ => format!(
                "'{name}' is not a hub-installed skill; `knack skills check` lists what the hub installed"
            ),
        };
        Err(Error::NotInstalled(message))
    }

    /// Removes a hub-installed skill, its lock entry, and logs it.
    pub fn uninstall(&self, name: &str) -> Result<LockEntry> {
        let entry = self.installed(name)?;
        let target = self.safe_target(name, &entry)?;
        if target.exists() {
            // Move out of `skills/` first so discovery never sees half a folder.
            let quarantine = Quarantine::new(&self.hub_dir(), &format!("uninstall-{name}"))?;
            let parked = quarantine.path().join(name);
            if std::fs::rename(&target, &parked).is_err() {
                std::fs::remove_dir_all(&target).map_err(|e| Error::io(&target, e))?;
            }
            drop(quarantine);
            prune_empty_parents(&target, &self.home.skills_dir());
        }
        let mut lock = self.lock()?;
        lock.installed.remove(name);
        lock.save(&self.hub_dir())?;
        let _ = append_audit_line(
            &self.hub_dir(),
            AuditAction::Uninstall,
            name,
            &entry.source,
            &entry.trust_level,
            "n/a",
            "user_request",
        );
        skill_core::snapshot::invalidate(&self.home.cache_dir());
        Ok(entry)
    }

    /// The folder a lock entry points at, refused unless it is strictly inside
    /// `skills/` once links are resolved.
    fn safe_target(&self, name: &str, entry: &LockEntry) -> Result<PathBuf> {
        check_install_path(name, &entry.install_path)?;
        let skills = self.home.skills_dir();
        let target = skills.join(&entry.install_path);
        if let (Ok(root), Ok(real)) = (skills.canonicalize(), target.canonicalize())
            && (!real.starts_with(&root) || real == root)
        {
            return Err(Error::Unsafe(format!(
                "{} resolves outside {}; refusing to touch it",
                target.display(),
                skills.display()
            )));
        }
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Unsafe(format!(
                "{} is a link; refusing to touch it",
                target.display()
            )));
        }
        Ok(target)
    }

    // ---- check / update -----------------------------------------------------

    fn entries(&self, name: Option<&str>) -> Result<Vec<(String, LockEntry)>> {
        let lock = self.lock()?;
        match name {
            Some(n) => Ok(vec![(n.to_owned(), self.installed(n)?)]),
            None => Ok(lock.installed.into_iter().collect()),
        }
    }

    async fn upstream_hash(&self, name: &str, entry: &LockEntry) -> CheckStatus {
        match self.upstream_hash_inner(name, entry).await {
            Ok(hash) if hash == entry.content_hash => CheckStatus::UpToDate,
            Ok(_) => CheckStatus::UpdateAvailable,
            Err(e @ (Error::Identifier(_) | Error::Unsafe(_))) => {
                CheckStatus::InvalidInstall(e.to_string())
            }
            Err(e) => CheckStatus::Unavailable(e.to_string()),
        }
    }

    async fn upstream_hash_inner(&self, name: &str, entry: &LockEntry) -> Result<String> {
        check_install_path(name, &entry.install_path)?;
        let id = Identifier::parse(&entry.identifier, &self.cwd)?.ok_or_else(|| {
            Error::Identifier(format!(
                "the lock's identifier '{}' is not valid",
                entry.identifier
            ))
        })?;
        let quarantine = Quarantine::new(&self.hub_dir(), &format!("check-{name}"))?;
        let ctx = self.ctx(quarantine.sub("fetch")?);
        open(id).content_hash(&ctx).await
    }

    /// Compares installed skills with their sources (only the recorded source
    /// is asked). Skills from one repository are checked from one fetch of
    /// it; at most `CHECK_CONCURRENCY` sources are fetched at once. Results
    /// come in lock order.
    pub async fn check(&self, name: Option<&str>) -> Result<Vec<UpdateStatus>> {
        use futures::StreamExt as _;
        let entries = self.entries(name)?;
        let mut groups: Vec<(Option<Identifier>, Vec<usize>)> = Vec::new();
        for (i, (_, entry)) in entries.iter().enumerate() {
            let repo = Identifier::parse(&entry.identifier, &self.cwd)
                .ok()
                .flatten()
                .and_then(|id| repository_of(&id));
            match groups.iter_mut().find(|(r, _)| r.is_some() && *r == repo) {
                Some((_, members)) => members.push(i),
                None => groups.push((repo, vec![i])),
            }
        }
        let bar = self.net.count_bar("checking sources", groups.len() as u64);
        let entries = &entries;
        let bar_ref = &bar;
        let mut statuses: Vec<(usize, CheckStatus)> = futures::stream::iter(groups)
            .map(|(repo, members)| async move {
                let out = match (repo, members.len()) {
                    (Some(repo), n) if n > 1 => self.check_group(&repo, entries, &members).await,
                    _ => {
                        let mut out = Vec::new();
                        for i in members {
                            let (name, entry) = &entries[i];
                            out.push((i, self.upstream_hash(name, entry).await));
                        }
                        out
                    }
                };
                bar_ref.inc(1);
                out
            })
            .buffer_unordered(CHECK_CONCURRENCY)
            .flat_map(futures::stream::iter)
            .collect()
            .await;
        bar.finish_and_clear();
        statuses.sort_by_key(|(i, _)| *i);
        Ok(statuses
            .into_iter()
            .map(|(i, status)| {
                let (name, entry) = &entries[i];
                UpdateStatus {
                    name: name.clone(),
                    identifier: entry.identifier.clone(),
                    source: entry.source.clone(),
                    status,
                }
            })
            .collect())
    }

    /// The skills `members` of `entries`, all from `repo`, checked against
    /// one fetch of it; a skill the fetched tree cannot answer for is asked
    /// on its own.
    async fn check_group(
        &self,
        repo: &Identifier,
        entries: &[(String, LockEntry)],
        members: &[usize],
    ) -> Vec<(usize, CheckStatus)> {
        let fetched = async {
            let quarantine = Quarantine::new(&self.hub_dir(), "check-source")?;
            let ctx = self.ctx(quarantine.sub("fetch")?);
            let source = open(repo.clone());
            let root = source.fetch_root(&ctx).await?;
            Ok::<_, Error>((quarantine, ctx.limits, root))
        }
        .await;
        let mut out = Vec::new();
        for &i in members {
            let (name, entry) = &entries[i];
            let status = match &fetched {
                Ok((quarantine, limits, Some(root))) => {
                    match self.hash_in_tree(name, entry, root, quarantine, *limits) {
                        Ok(hash) if hash == entry.content_hash => CheckStatus::UpToDate,
                        Ok(_) => CheckStatus::UpdateAvailable,
                        Err(_) => self.upstream_hash(name, entry).await,
                    }
                }
                Ok((_, _, None)) => self.upstream_hash(name, entry).await,
                Err(e) => CheckStatus::Unavailable(e.to_string()),
            };
            out.push((i, status));
        }
        out
    }

    /// The content hash of one installed skill as `root` (a fetched
    /// repository) holds it now.
    fn hash_in_tree(
        &self,
        name: &str,
        entry: &LockEntry,
        root: &std::path::Path,
        quarantine: &Quarantine,
        limits: crate::safe_tree::Limits,
    ) -> Result<String> {
        check_install_path(name, &entry.install_path)?;
        let id = Identifier::parse(&entry.identifier, &self.cwd)?.ok_or_else(|| {
            Error::Identifier(format!(
                "the lock's identifier '{}' is not valid",
                entry.identifier
            ))
        })?;
        let dir = crate::source::sub_dir(root, subdir_of(&id), &id)?;
        let dir = crate::source::select_skill(&dir, &id)?;
        let staged =
            tempfile::tempdir_in(quarantine.path()).map_err(|e| Error::io(quarantine.path(), e))?;
        let copy = staged.path().join("copy");
        crate::safe_tree::copy_tree(&dir, &copy, limits)?;
        crate::safe_tree::tree_hash(&copy)
    }

    /// Re-installs skills whose source changed, from the same identifier and
    /// into the same category, under the same policy as an install.
    pub async fn update(
        &self,
        name: Option<&str>,
        force: bool,
    ) -> Result<Vec<(String, UpdateOutcome)>> {
        // The grouped check (one fetch per repository) decides which skills
        // changed; only those are fetched again to be installed, so a large
        // library that is mostly current costs one fetch per source.
        let statuses = self.check(name).await?;
        let entries: std::collections::BTreeMap<String, LockEntry> =
            self.entries(name)?.into_iter().collect();
        let mut out = Vec::new();
        for status in statuses {
            let outcome = match (&status.status, entries.get(&status.name)) {
                (CheckStatus::UpToDate, _) if !force => UpdateOutcome::UpToDate,
                (CheckStatus::Unavailable(why) | CheckStatus::InvalidInstall(why), _) => {
                    UpdateOutcome::Failed(why.clone())
                }
                (_, Some(entry)) => match self.update_one(&status.name, entry, force).await {
                    Ok(o) => o,
                    Err(e) => UpdateOutcome::Failed(e.to_string()),
                },
                (_, None) => UpdateOutcome::Failed("no longer in the lock".into()),
            };
            out.push((status.name, outcome));
        }
        Ok(out)
    }

    async fn update_one(
        &self,
        name: &str,
        entry: &LockEntry,
        force: bool,
    ) -> Result<UpdateOutcome> {
        let target = self.safe_target(name, entry)?;
        let id = Identifier::parse(&entry.identifier, &self.cwd)?.ok_or_else(|| {
            Error::Identifier(format!(
                "the lock's identifier '{}' is not valid",
                entry.identifier
            ))
        })?;
        // An update never carries `--accept-dangerous` over: a new version
        // that scans dangerous is refused like any other.
        let plugin_skill = matches!(id, Identifier::Marketplace { .. });
        let opts = InstallOptions {
            category: if plugin_skill {
                None
            } else {
                entry.category().map(str::to_owned)
            },
            force,
            accept_dangerous: false,
        };
        let mut staged = match self.stage(&id, &opts).await {
            Ok(s) => s,
            Err(e) => {
                if matches!(e, Error::Unsafe(_) | Error::Invalid(_)) {
                    let _ = append_audit_line(
                        &self.hub_dir(),
                        AuditAction::Blocked,
                        name,
                        &entry.source,
                        &entry.trust_level,
                        "invalid_package",
                        &e.to_string(),
                    );
                }
                return Err(e);
            }
        };
        staged.category = opts.category;
        if staged.content_hash == entry.content_hash {
            return Ok(UpdateOutcome::UpToDate);
        }
        if staged.lock_name() != name {
            return Err(Error::Invalid(format!(
                "the source now names the skill '{}', not '{name}'; uninstall and install it anew",
                staged.lock_name()
            )));
        }
        if let PolicyDecision::Block { reason } = &staged.decision {
            self.audit_blocked(&staged);
            return Err(Error::Blocked {
                reason: reason.clone(),
            });
        }
        // Swap: park the old folder in the quarantine, move the new one in,
        // and put the old one back if that fails.
        let parked = staged.quarantine.path().join("previous");
        let had_old = target.exists();
        if had_old {
            std::fs::rename(&target, &parked).map_err(|e| Error::io(&target, e))?;
        }
        if let Err(e) = self.place(&staged, &target) {
            if had_old {
                let _ = std::fs::rename(&parked, &target);
            }
            return Err(e);
        }
        let updated = LockEntry {
            scan_verdict: staged.report.verdict.as_str().to_owned(),
            trust_level: staged.trust.as_str().to_owned(),
            content_hash: staged.content_hash.clone(),
            files: staged.files.clone(),
            updated_at: skill_core::clock::now_rfc3339(),
            ..entry.clone()
        };
        let saved = self.lock().and_then(|mut lock| {
            lock.installed.insert(name.to_owned(), updated);
            lock.save(&self.hub_dir())
        });
        if let Err(e) = saved {
            remove_tree(&target);
            if had_old {
                let _ = std::fs::rename(&parked, &target);
            }
            return Err(e);
        }
        let before = had_old.then_some(parked.as_path());
        self.record_history(name, &entry.install_path, before, "update");
        let _ = append_audit_line(
            &self.hub_dir(),
            AuditAction::Update,
            name,
            &staged.source,
            staged.trust.as_str(),
            staged.report.verdict.as_str(),
            &staged.content_hash,
        );
        skill_core::snapshot::invalidate(&self.home.cache_dir());
        Ok(UpdateOutcome::Updated {
            verdict: staged.report.verdict.as_str().to_owned(),
        })
    }

    // ---- audit --------------------------------------------------------------

    /// Rescans installed hub skills and compares with the verdicts in the lock.
    pub fn audit(&self, name: Option<&str>) -> Result<Vec<AuditResult>> {
        let mut results = Vec::new();
        for (name, entry) in self.entries(name)? {
            let base = AuditResult {
                name: name.clone(),
                install_path: entry.install_path.clone(),
                locked_verdict: entry.scan_verdict.clone(),
                verdict: None,
                changed: false,
                modified: false,
                error: None,
                report: None,
            };
            let target = match self.safe_target(&name, &entry) {
                Ok(t) => t,
                Err(e) => {
                    results.push(AuditResult {
                        error: Some(e.to_string()),
                        ..base
                    });
                    continue;
                }
            };
            match scan_package(&target) {
                Ok(mut report) => {
                    // The scan reads knack's own sidecars too (they could be
                    // tampered with), but the hash and count shown must be the
                    // package's, as lock.json records them.
                    let hash = tree_hash(&target);
                    if let Ok(h) = &hash {
                        report.content_hash.clone_from(h);
                    }
                    report.files_scanned = file_list(&target).len();
                    let modified = hash.is_ok_and(|h| h != entry.content_hash);
                    results.push(AuditResult {
                        verdict: Some(report.verdict),
                        changed: report.verdict.as_str() != entry.scan_verdict,
                        modified,
                        report: Some(report),
                        ..base
                    });
                }
                Err(e) => results.push(AuditResult {
                    error: Some(e.to_string()),
                    ..base
                }),
            }
        }
        Ok(results)
    }
}

/// The folder (and lock) name an adopted skill is installed under: its own
/// name when that follows the rule, else one made from it (`Gmail
/// Automation` → `gmail-automation`), else one made from its source folder's
/// name (a name of symbols only).
fn install_name(written: &str, source_dir: &Path) -> Option<String> {
    if skill_core::validate::validate_name(written).is_ok() {
        return Some(written.to_owned());
    }
    skill_core::validate::name_from(written).or_else(|| {
        source_dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(skill_core::validate::name_from)
    })
}

fn check_category(opts: &InstallOptions) -> Result<()> {
    if let Some(c) = &opts.category {
        skill_core::validate::validate_category(c)
            .map_err(|v| Error::Identifier(format!("--category '{c}': {}", v.message)))?;
    }
    Ok(())
}

/// Most findings an `OVERRIDE` line of the audit log lists.
const OVERRIDE_FINDINGS: usize = 50;

/// The details of an `OVERRIDE` line: what the user accepted, finding by
/// finding (`severity category pattern file:line`), most severe first.
fn override_details(report: &ScanReport) -> String {
    let mut findings: Vec<_> = report.findings.iter().collect();
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    let listed: Vec<String> = findings
        .iter()
        .take(OVERRIDE_FINDINGS)
        .map(|f| {
            format!(
                "{} {} {} {}:{}",
                f.severity.as_str(),
                f.category.as_str(),
                f.pattern_id,
                f.file,
                f.line
            )
        })
        .collect();
    let more = findings.len().saturating_sub(OVERRIDE_FINDINGS);
    format!(
        "accept-dangerous {} {}: {}{}",
        report.content_hash,
        plural(findings.len(), "finding"),
        listed.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Scans a hub package (staged or installed) with no ignore rules at all.
///
/// A package's `.skillignore` was written by the same hand as its scripts:
/// honouring it let a package hide `scripts/` from the very scan that decides
/// whether it may be installed. The user's own ignore rules are the
/// `.skillignore` files of the skills the user (or the agent, for them) writes
/// in their own skills folder; skill-core's write guard and `scan_skill_dir`
/// still honour those. The hub has no ignore rules of the user's to apply: a
/// package arrives as a whole from outside, so here every file is scanned.
/// `audit` rescans installed packages the same way, so its verdict compares
/// like for like with the one recorded at install.
fn scan_package(dir: &Path) -> Result<ScanReport> {
    Ok(scan_skill_dir_with(dir, &SkillIgnore::default())?)
}

fn remove_tree(path: &Path) {
    let _ = std::fs::remove_dir_all(path);
}

/// Removes empty category folders left by an uninstall (never `skills/` itself).
fn prune_empty_parents(target: &Path, skills: &Path) {
    let mut dir = target.parent();
    while let Some(d) = dir {
        if d == skills || !d.starts_with(skills) {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Sources fetched at once by `check`: enough to overlap network waits, few
/// enough that a large library does not open dozens of clones together.
const CHECK_CONCURRENCY: usize = 4;

/// The repository an identifier's skill lives in (the identifier without
/// its path), for the sources that fetch a whole repository at once; `None`
/// for the others, which are checked skill by skill.
fn repository_of(id: &Identifier) -> Option<Identifier> {
    match id {
        Identifier::Git { url, reference, .. } => Some(Identifier::Git {
            url: url.clone(),
            reference: reference.clone(),
            subdir: None,
        }),
        Identifier::GitHub {
            owner,
            repo,
            reference,
            ..
        } => Some(Identifier::GitHub {
            owner: owner.clone(),
            repo: repo.clone(),
            path: None,
            reference: reference.clone(),
        }),
        _ => None,
    }
}

/// The path of a skill inside its repository.
fn subdir_of(id: &Identifier) -> Option<&str> {
    match id {
        Identifier::Git { subdir, .. } => subdir.as_deref(),
        Identifier::GitHub { path, .. } => path.as_deref(),
        _ => None,
    }
}
