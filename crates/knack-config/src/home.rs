//! Where knack keeps its files: `$KNACK_HOME`, default `~/.knack`.
//! Every other crate asks this type for a path instead of joining strings.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The resolved home directory and the well-known paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnackHome {
    root: PathBuf,
}

impl KnackHome {
    /// `$KNACK_HOME` when set and non-empty, else `~/.knack`.
    pub fn from_env() -> Result<Self> {
        if let Some(dir) = std::env::var_os("KNACK_HOME").filter(|v| !v.is_empty()) {
            return Ok(Self::at(absolute(PathBuf::from(dir))));
        }
        let home = etcetera::home_dir().map_err(|_| Error::NoHome)?;
        Ok(Self::at(home.join(".knack")))
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.yaml")
    }
    pub fn env_path(&self) -> PathBuf {
        self.root.join(".env")
    }
    pub fn soul_path(&self) -> PathBuf {
        self.root.join("SOUL.md")
    }
    pub fn memories_dir(&self) -> PathBuf {
        self.root.join("memories")
    }
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }
    pub fn hub_dir(&self) -> PathBuf {
        self.root.join(".hub")
    }
    pub fn state_db(&self) -> PathBuf {
        self.root.join("state.db")
    }
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// Where `knack eval` writes its reports unless `--out` says otherwise.
    pub fn evals_dir(&self) -> PathBuf {
        self.root.join("evals")
    }
    /// What each turn changed, for `/undo` and `knack undo` (one folder per session and turn).
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    /// Where the whole output of a long command is saved (0700, files 0600):
    /// inside the home, which commands cannot write.
    pub fn tool_output_dir(&self) -> PathBuf {
        self.root.join("tool-output")
    }

    /// Reads `$KNACK_HOME/.env`; a missing file is an empty one.
    pub fn env_file(&self) -> crate::EnvFile {
        match std::fs::read_to_string(self.env_path()) {
            Ok(text) => crate::parse_env_file(&text),
            Err(_) => crate::EnvFile::default(),
        }
    }
}

fn absolute(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        return path;
    }
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path,
    }
}
