//! `$KNACK_HOME/state.db`: every session (with its frozen system prompt and tool specs) and
//! every message as it happens, plus an FTS5 index over message text for `session_search`.
//!
//! SQLite in WAL mode with a busy timeout, so a TUI session, a headless run and
//! `knack sessions` can use the file at once. The schema moves forward through
//! numbered migrations recorded in `PRAGMA user_version`.

use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use knack_config::KnackHome;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::model::{ChatMessage, RequestPurpose, Role, ToolCall, Usage};
use crate::tools::lock;
use crate::{Error, Result};

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Characters of the first user message kept as a session's title.
pub const TITLE_CHARS: usize = 60;
/// Tokens of context FTS5 shows around a hit.
const SNIPPET_TOKENS: i64 = 16;

/// Schema steps; step `i` brings the database to version `i + 1`. Append only.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, messages, and the full-text index kept in sync by triggers.
    // Only user and assistant text is indexed: tool output is mostly noise for recall.
    r"
    CREATE TABLE sessions (
        id            TEXT PRIMARY KEY,
        started_at    TEXT NOT NULL,
        title         TEXT,
        model         TEXT NOT NULL DEFAULT '',
        system_prompt TEXT NOT NULL DEFAULT '',
        tools_json    TEXT,
        platform      TEXT NOT NULL DEFAULT '',
        cwd           TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE messages (
        id              INTEGER PRIMARY KEY,
        session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq             INTEGER NOT NULL,
        role            TEXT NOT NULL,
        content         TEXT,
        tool_calls_json TEXT,
        tool_call_id    TEXT,
        created_at      TEXT NOT NULL,
        UNIQUE (session_id, seq)
    );
    CREATE INDEX sessions_by_start ON sessions(started_at);
    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content,
        content = 'messages',
        content_rowid = 'id',
        tokenize = 'porter unicode61'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
    WHEN new.role IN ('user', 'assistant') AND new.content IS NOT NULL BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
    WHEN old.role IN ('user', 'assistant') AND old.content IS NOT NULL BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    ",
    // 2: the skills the model was last told about (JSON list of qualified
    // ids), so a resumed session announces what changed while it was away.
    r"
    ALTER TABLE sessions ADD COLUMN catalog_json TEXT;
    ",
    // 3: compactions. The messages table keeps the whole conversation (for
    // search and `sessions show`); a resumed session starts from the newest
    // compaction's head (its summary and carried skills) followed by the
    // messages from `first_kept_seq` on.
    r"
    CREATE TABLE compactions (
        id             INTEGER PRIMARY KEY,
        session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at     TEXT NOT NULL,
        before_tokens  INTEGER NOT NULL,
        after_tokens   INTEGER NOT NULL,
        summary        TEXT NOT NULL,
        head_json      TEXT NOT NULL,
        first_kept_seq INTEGER NOT NULL
    );
    CREATE INDEX compactions_by_session ON compactions(session_id, id);
    ",
    // 4: what each model request used (turn, review, compact), so
    // `sessions show` can total tokens and cost. Token columns follow the
    // usage record: prompt tokens include cache reads and writes; the cost is
    // NULL when no prices were configured for the request's provider.
    r"
    CREATE TABLE request_usage (
        id                 INTEGER PRIMARY KEY,
        session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at         TEXT NOT NULL,
        purpose            TEXT NOT NULL,
        prompt_tokens      INTEGER NOT NULL,
        cache_read_tokens  INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        output_tokens      INTEGER NOT NULL,
        reasoning_tokens   INTEGER NOT NULL,
        cost_usd           REAL
    );
    CREATE INDEX request_usage_by_session ON request_usage(session_id);
    ",
    // 5: how each skill is used (see `skill_usage`): one row per qualified
    // id with its counts and the last time of each (Unix seconds), and the
    // patches split by who made them.
    r"
    CREATE TABLE skill_usage (
        qualified_id TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        created_by   TEXT,
        created_at   INTEGER,
        views        INTEGER NOT NULL DEFAULT 0,
        last_viewed  INTEGER,
        uses         INTEGER NOT NULL DEFAULT 0,
        last_used    INTEGER,
        patches      INTEGER NOT NULL DEFAULT 0,
        last_patched INTEGER
    ) WITHOUT ROWID;
    CREATE TABLE skill_patches (
        qualified_id TEXT NOT NULL,
        actor        TEXT NOT NULL,
        patches      INTEGER NOT NULL DEFAULT 0,
        last_at      INTEGER,
        PRIMARY KEY (qualified_id, actor)
    ) WITHOUT ROWID;
    ",
];

/// What a session's model requests used, summed over every recorded request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct UsageTotals {
    /// Model requests that reported usage.
    pub requests: u64,
    /// Prompt tokens neither read from nor written to the cache.
    pub fresh_input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    /// The summed cost of the requests that had prices; `None` when none had.
    pub cost_usd: Option<f64>,
    /// How many requests carried a cost (fewer than `requests` when a
    /// provider without prices was used for some of them).
    pub priced_requests: u64,
}

/// The sums a usage total is read from, in the order [`usage_totals_at`] reads them.
const USAGE_SUMS: &str =
    "COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(cache_read_tokens), 0),
    COALESCE(SUM(cache_write_tokens), 0), COALESCE(SUM(output_tokens), 0),
    COALESCE(SUM(reasoning_tokens), 0), SUM(cost_usd), COUNT(cost_usd)";

/// A usage total from the [`USAGE_SUMS`] columns of `r`, starting at column `at`.
fn usage_totals_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<UsageTotals> {
    let n = |i: usize| {
        r.get::<_, i64>(at + i)
            .map(|v| u64::try_from(v).unwrap_or(0))
    };
    let (prompt, read, write) = (n(1)?, n(2)?, n(3)?);
    Ok(UsageTotals {
        requests: n(0)?,
        fresh_input_tokens: prompt.saturating_sub(read).saturating_sub(write),
        cache_read_tokens: read,
        cache_write_tokens: write,
        output_tokens: n(4)?,
        reasoning_tokens: n(5)?,
        cost_usd: r.get::<_, Option<f64>>(at + 6)?,
        priced_requests: n(7)?,
    })
}

/// One compaction of a session's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionRecord {
    pub created_at: String,
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub summary: String,
    /// The messages that stand in for everything before `first_kept_seq`.
    #[serde(skip)]
    pub head: Vec<ChatMessage>,
    pub first_kept_seq: i64,
}

/// What a new session starts with.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Use this id (the prompt may already name it); `None` makes a fresh one.
    pub id: Option<String>,
    pub model: String,
    /// The frozen system prompt, sent unchanged on every request (and on resume).
    pub system_prompt: String,
    /// The frozen `tools` array as JSON text.
    pub tools_json: Option<String>,
    /// `tui`, `cli`, ...
    pub platform: String,
    pub cwd: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionMeta {
    pub id: String,
    pub started_at: String,
    pub title: Option<String>,
    pub model: String,
    pub system_prompt: String,
    pub tools_json: Option<String>,
    pub platform: String,
    pub cwd: String,
    /// Qualified ids of the skills the model knows of (see [`SessionStore::set_catalog`]).
    pub catalog: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub started_at: String,
    pub title: Option<String>,
    pub model: String,
    pub message_count: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredMessage {
    pub seq: i64,
    pub created_at: String,
    #[serde(flatten)]
    pub message: ChatMessage,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredSession {
    pub meta: SessionMeta,
    pub messages: Vec<StoredMessage>,
    /// Oldest first.
    pub compactions: Vec<CompactionRecord>,
    /// Tokens and cost of every request the session made.
    pub usage: UsageTotals,
    /// The same, split by what each request was for: `turn`, `review`,
    /// `compaction` (only purposes that made a request appear).
    pub usage_by_purpose: BTreeMap<&'static str, UsageTotals>,
}

/// The name a request purpose has in `sessions show`.
pub fn purpose_label(purpose: RequestPurpose) -> &'static str {
    match purpose {
        RequestPurpose::Turn => "turn",
        RequestPurpose::Review => "review",
        RequestPurpose::Compact => "compaction",
    }
}

impl StoredSession {
    /// The conversation to resume (the system prompt comes from `meta`):
    /// after a compaction, its head and the messages it kept.
    pub fn chat_messages(&self) -> Vec<ChatMessage> {
        let (head, first_seq) = self.resume_point();
        let mut out: Vec<ChatMessage> = head.to_vec();
        out.extend(
            self.messages
                .iter()
                .filter(|m| m.seq >= first_seq)
                .map(|m| m.message.clone()),
        );
        out
    }

    /// The newest compaction's head and the first stored message after it
    /// (no head and 0 without a compaction).
    pub fn resume_point(&self) -> (&[ChatMessage], i64) {
        match self.compactions.last() {
            Some(c) => (&c.head, c.first_kept_seq),
            None => (&[], 0),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    pub session_id: String,
    pub role: String,
    pub snippet: String,
}

/// The open database. `Sync` (one connection behind a mutex), so a session and
/// its tools can share it through an `Arc`.
pub struct SessionStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SessionStore {
    /// Opens (creating if needed) `state.db` under the home and brings its schema up to date.
    pub fn open(home: &KnackHome) -> Result<Self> {
        Self::open_path(&home.state_db())
    }

    /// The file, its `-wal` and `-shm` are 0600 (conversations and tool
    /// output are private): the database file is created 0600 before SQLite
    /// opens it, SQLite gives its side files the database file's mode, and
    /// files left wider by older versions are narrowed.
    pub fn open_path(path: &Path) -> Result<Self> {
        use knack_config::private;
        private::touch_private(path).map_err(|e| Error::io(path, e))?;
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            let side = PathBuf::from(side);
            private::set_private(&side).map_err(|e| Error::io(&side, e))?;
        }
        let store_error = |source| Error::Store {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(store_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(store_error)?;
        // journal_mode answers with the mode it ended up in; WAL is best effort
        // (some file systems cannot do it) and the store works without it.
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(store_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(store_error)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(store_error)?;
        migrate(&mut conn, path)?;
        Ok(Self {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a new session and returns its id.
    pub fn create_session(&self, new: &NewSession) -> Result<String> {
        let conn = lock(&self.conn);
        let started_at = skill_core::clock::now_rfc3339();
        let mut attempts = 0;
        loop {
            let id = match &new.id {
                Some(id) => id.clone(),
                None => new_session_id(),
            };
            let inserted = conn.execute(
                "INSERT INTO sessions (id, started_at, model, system_prompt, tools_json, platform, cwd)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    started_at,
                    new.model,
                    new.system_prompt,
                    new.tools_json,
                    new.platform,
                    new.cwd
                ],
            );
            match inserted {
                Ok(_) => return Ok(id),
                // A fresh id collided (same second, same random suffix): draw again.
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::ConstraintViolation
                        && new.id.is_none()
                        && attempts < 5 =>
                {
                    attempts += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Appends one message in its own transaction. The first user message also
    /// becomes the session's title when it has none.
    pub fn append_message(&self, session_id: &str, message: &ChatMessage) -> Result<i64> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: Option<i64> = tx
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [session_id], |r| {
                r.get(0)
            })
            .optional()?;
        if exists.is_none() {
            return Err(Error::SessionNotFound(session_id.to_owned()));
        }
        let seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )?;
        let tool_calls_json = match &message.tool_calls {
            Some(calls) => Some(serde_json::to_string(calls)?),
            None => None,
        };
        tx.execute(
            "INSERT INTO messages (session_id, seq, role, content, tool_calls_json, tool_call_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session_id,
                seq,
                role_name(message.role),
                message.content,
                tool_calls_json,
                message.tool_call_id,
                skill_core::clock::now_rfc3339()
            ],
        )?;
        if message.role == Role::User
            && let Some(text) = message.content.as_deref()
            && let Some(title) = title_from(text)
        {
            tx.execute(
                "UPDATE sessions SET title = ?1 WHERE id = ?2 AND title IS NULL",
                params![title, session_id],
            )?;
        }
        tx.commit()?;
        Ok(seq)
    }

    /// Sets the title (cut to [`TITLE_CHARS`]), replacing any earlier one.
    pub fn set_title(&self, session_id: &str, title: &str) -> Result<()> {
        let conn = lock(&self.conn);
        let changed = conn.execute(
            "UPDATE sessions SET title = ?1 WHERE id = ?2",
            params![title_from(title), session_id],
        )?;
        if changed == 0 {
            return Err(Error::SessionNotFound(session_id.to_owned()));
        }
        Ok(())
    }

    /// Records the skills the model now knows of (qualified ids).
    pub fn set_catalog(&self, session_id: &str, catalog: &[String]) -> Result<()> {
        let conn = lock(&self.conn);
        conn.execute(
            "UPDATE sessions SET catalog_json = ?1 WHERE id = ?2",
            params![serde_json::to_string(catalog)?, session_id],
        )?;
        Ok(())
    }

    /// Records the model the session now talks to (`/model`, or a resume
    /// with another model), so listings show the model in use rather than
    /// the one it started with. The `model` column exists since schema 1.
    pub fn set_model(&self, session_id: &str, model: &str) -> Result<()> {
        let conn = lock(&self.conn);
        let changed = conn.execute(
            "UPDATE sessions SET model = ?1 WHERE id = ?2",
            params![model, session_id],
        )?;
        if changed == 0 {
            return Err(Error::SessionNotFound(session_id.to_owned()));
        }
        Ok(())
    }

    /// The full id of the session `id` names: itself, or the one stored id
    /// it is a prefix of (`2026120` for `20261201-…`). None or several is an error.
    pub fn resolve_id(&self, id: &str) -> Result<String> {
        let conn = lock(&self.conn);
        let exact: Option<String> = conn
            .query_row("SELECT id FROM sessions WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        if let Some(found) = exact {
            return Ok(found);
        }
        if id.is_empty() {
            return Err(Error::SessionNotFound(id.to_owned()));
        }
        // substr() rather than LIKE: an id may hold `_`, which LIKE treats as a wildcard.
        let mut stmt = conn.prepare(
            "SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT 6",
        )?;
        let matches = stmt
            .query_map([id], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        match matches.as_slice() {
            [] => Err(Error::SessionNotFound(id.to_owned())),
            [only] => Ok(only.clone()),
            _ => Err(Error::SessionAmbiguous {
                prefix: id.to_owned(),
                matches,
            }),
        }
    }

    /// The stored session `session_id` names (a full id or a unique prefix).
    pub fn load_session(&self, session_id: &str) -> Result<StoredSession> {
        let full_id = self.resolve_id(session_id)?;
        let session_id = full_id.as_str();
        let conn = lock(&self.conn);
        let meta = conn
            .query_row(
                "SELECT id, started_at, title, model, system_prompt, tools_json, platform, cwd, catalog_json
                 FROM sessions WHERE id = ?1",
                [session_id],
                |r| {
                    Ok(SessionMeta {
                        id: r.get(0)?,
                        started_at: r.get(1)?,
                        title: r.get(2)?,
                        model: r.get(3)?,
                        system_prompt: r.get(4)?,
                        tools_json: r.get(5)?,
                        platform: r.get(6)?,
                        cwd: r.get(7)?,
                        catalog: r
                            .get::<_, Option<String>>(8)?
                            .and_then(|json| serde_json::from_str(&json).ok()),
                    })
                },
            )
            .optional()?
            .ok_or_else(|| Error::SessionNotFound(session_id.to_owned()))?;
        let mut stmt = conn.prepare(
            "SELECT seq, created_at, role, content, tool_calls_json, tool_call_id
             FROM messages WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([session_id], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })?;
        let mut messages = Vec::new();
        for row in rows {
            let (seq, created_at, role, content, calls, tool_call_id) = row?;
            let role = parse_role(&role).ok_or_else(|| {
                Error::Corrupt(format!("message {seq} has unknown role '{role}'"))
            })?;
            let tool_calls = match calls {
                Some(text) => Some(serde_json::from_str::<Vec<ToolCall>>(&text).map_err(|e| {
                    Error::Corrupt(format!("message {seq} has unreadable tool calls: {e}"))
                })?),
                None => None,
            };
            messages.push(StoredMessage {
                seq,
                created_at,
                message: ChatMessage {
                    role,
                    content,
                    tool_calls,
                    tool_call_id,
                    // Provider reasoning is kept for the live session only.
                    reasoning: None,
                },
            });
        }
        drop(stmt);
        let compactions = Self::load_compactions(&conn, session_id)?;
        let usage = Self::usage_totals_in(&conn, session_id)?;
        let usage_by_purpose = Self::usage_by_purpose_in(&conn, session_id)?;
        Ok(StoredSession {
            meta,
            messages,
            compactions,
            usage,
            usage_by_purpose,
        })
    }

    /// Records what one model request of the session used.
    pub fn record_usage(
        &self,
        session_id: &str,
        purpose: RequestPurpose,
        usage: &Usage,
    ) -> Result<()> {
        let conn = lock(&self.conn);
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        conn.execute(
            "INSERT INTO request_usage (session_id, created_at, purpose, prompt_tokens, cache_read_tokens,
                                        cache_write_tokens, output_tokens, reasoning_tokens, cost_usd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                session_id,
                skill_core::clock::now_rfc3339(),
                purpose.as_str(),
                count(usage.prompt_tokens),
                count(usage.cached_tokens.unwrap_or(0)),
                count(usage.cache_write_tokens.unwrap_or(0)),
                count(usage.completion_tokens),
                count(usage.reasoning_tokens.unwrap_or(0)),
                usage.cost_usd,
            ],
        )?;
        Ok(())
    }

    /// The session's usage summed over every recorded request.
    pub fn usage_totals(&self, session_id: &str) -> Result<UsageTotals> {
        let conn = lock(&self.conn);
        Self::usage_totals_in(&conn, session_id)
    }

    /// The session's usage summed over its requests of one purpose (the
    /// conversation, the review, or compaction): what `knack eval` charges to each.
    pub fn usage_totals_for(
        &self,
        session_id: &str,
        purpose: RequestPurpose,
    ) -> Result<UsageTotals> {
        let conn = lock(&self.conn);
        Self::usage_totals_where(&conn, session_id, Some(purpose))
    }

    fn usage_totals_in(conn: &Connection, session_id: &str) -> Result<UsageTotals> {
        Self::usage_totals_where(conn, session_id, None)
    }

    fn usage_totals_where(
        conn: &Connection,
        session_id: &str,
        purpose: Option<RequestPurpose>,
    ) -> Result<UsageTotals> {
        let totals = conn.query_row(
            &format!(
                "SELECT {USAGE_SUMS} FROM request_usage WHERE session_id = ?1 AND (?2 IS NULL OR purpose = ?2)"
            ),
            params![session_id, purpose.map(RequestPurpose::as_str)],
            |r| usage_totals_at(r, 0),
        )?;
        Ok(totals)
    }

    /// The session's usage summed per request purpose.
    pub fn usage_by_purpose(
        &self,
        session_id: &str,
    ) -> Result<BTreeMap<&'static str, UsageTotals>> {
        let conn = lock(&self.conn);
        Self::usage_by_purpose_in(&conn, session_id)
    }

    fn usage_by_purpose_in(
        conn: &Connection,
        session_id: &str,
    ) -> Result<BTreeMap<&'static str, UsageTotals>> {
        let mut stmt = conn.prepare(&format!(
            "SELECT purpose, {USAGE_SUMS} FROM request_usage WHERE session_id = ?1 GROUP BY purpose"
        ))?;
        let rows = stmt.query_map([session_id], |r| {
            Ok((r.get::<_, String>(0)?, usage_totals_at(r, 1)?))
        })?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (purpose, totals) = row?;
            // Rows are written from `RequestPurpose::as_str`; one this
            // version does not know is skipped rather than mislabelled.
            if let Some(purpose) = RequestPurpose::parse(&purpose) {
                out.insert(purpose_label(purpose), totals);
            }
        }
        Ok(out)
    }

    /// Records a compaction; a resume starts from it.
    pub fn record_compaction(&self, session_id: &str, record: &CompactionRecord) -> Result<()> {
        let conn = lock(&self.conn);
        conn.execute(
            "INSERT INTO compactions (session_id, created_at, before_tokens, after_tokens, summary, head_json, first_kept_seq)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session_id,
                record.created_at,
                i64::try_from(record.before_tokens).unwrap_or(i64::MAX),
                i64::try_from(record.after_tokens).unwrap_or(i64::MAX),
                record.summary,
                serde_json::to_string(&record.head)?,
                record.first_kept_seq,
            ],
        )?;
        Ok(())
    }

    /// The next message's sequence number in `session_id`.
    pub fn next_seq(&self, session_id: &str) -> Result<i64> {
        let conn = lock(&self.conn);
        Ok(conn.query_row(
            "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?1",
            [session_id],
            |r| r.get(0),
        )?)
    }

    fn load_compactions(conn: &Connection, session_id: &str) -> Result<Vec<CompactionRecord>> {
        let mut stmt = conn.prepare(
            "SELECT created_at, before_tokens, after_tokens, summary, head_json, first_kept_seq
         FROM compactions WHERE session_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([session_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (created_at, before, after, summary, head_json, first_kept_seq) = row?;
            let head: Vec<ChatMessage> = serde_json::from_str(&head_json).map_err(|e| {
                Error::Corrupt(format!(
                    "a compaction of {session_id} has an unreadable head: {e}"
                ))
            })?;
            out.push(CompactionRecord {
                created_at,
                before_tokens: u64::try_from(before).unwrap_or(0),
                after_tokens: u64::try_from(after).unwrap_or(0),
                summary,
                head,
                first_kept_seq,
            });
        }
        Ok(out)
    }

    /// The session `--continue` picks: the one whose latest message is the
    /// newest, among the conversations started in `cwd` (anywhere when `None`).
    /// Sessions without messages and review sessions are never picked.
    pub fn latest_session(&self, cwd: Option<&str>) -> Result<Option<String>> {
        let conn = lock(&self.conn);
        // Message ids grow with every insert, so the largest one is the most
        // recent activity, with no ties even within one second.
        let found = conn
            .query_row(
                "SELECT s.id FROM sessions s JOIN messages m ON m.session_id = s.id
                 WHERE (?1 IS NULL OR s.cwd = ?1) AND s.platform <> 'review'
                 GROUP BY s.id ORDER BY MAX(m.id) DESC LIMIT 1",
                [cwd],
                |r| r.get::<_, String>(0),
            )
            .optional()?;
        Ok(found)
    }

    /// Every session, newest first. `started_at` has whole seconds, so
    /// sessions started within one second are ordered by when they were
    /// stored (the rowid), not by their ids' random suffixes.
    pub fn list(&self) -> Result<Vec<SessionSummary>> {
        let conn = lock(&self.conn);
        let mut stmt = conn.prepare(
            "SELECT s.id, s.started_at, s.title, s.model,
                    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)
             FROM sessions s ORDER BY s.started_at DESC, s.rowid DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SessionSummary {
                id: r.get(0)?,
                started_at: r.get(1)?,
                title: r.get(2)?,
                model: r.get(3)?,
                message_count: r.get::<_, i64>(4)?.try_into().unwrap_or(0),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Messages matching every word of `query`, best first, outside `exclude`.
    ///
    /// The query is never handed to FTS5 as syntax: each word is quoted, so
    /// quotes, stars, colons and keywords like `NOT` are just text.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        exclude: Option<&str>,
    ) -> Result<Vec<SearchHit>> {
        let Some(fts_query) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let conn = lock(&self.conn);
        let mut stmt = conn.prepare(
            "SELECT m.session_id, m.role,
                    snippet(messages_fts, 0, '**', '**', '…', ?4)
             FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
             WHERE messages_fts MATCH ?1 AND m.session_id IS NOT ?2
             ORDER BY bm25(messages_fts), m.id DESC
             LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![fts_query, exclude, limit, SNIPPET_TOKENS], |r| {
            Ok(SearchHit {
                session_id: r.get(0)?,
                role: r.get(1)?,
                snippet: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Deletes a session and its messages (and their index entries).
    pub fn delete(&self, session_id: &str) -> Result<()> {
        let mut conn = lock(&self.conn);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute("DELETE FROM messages WHERE session_id = ?1", [session_id])?;
        let removed = tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
        if removed == 0 {
            return Err(Error::SessionNotFound(session_id.to_owned()));
        }
        tx.commit()?;
        Ok(())
    }

    /// The connection, for the modules that keep their own tables in this
    /// database (`skill_usage`).
    pub(crate) fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        lock(&self.conn)
    }

    pub fn schema_version(&self) -> Result<i64> {
        let conn = lock(&self.conn);
        Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
    }
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let known = i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX);
    let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if found > known {
        return Err(Error::StoreTooNew {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    for (step, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(found).unwrap_or(0))
    {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let now: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if now > i64::try_from(step).unwrap_or(i64::MAX) {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(step + 1).unwrap_or(i64::MAX),
        )?;
        tx.commit()?;
    }
    Ok(())
}

/// A fresh id: `YYYYMMDD-HHMMSS-xxxxxx` (UTC, then 6 random hex digits), sortable by start time.
pub fn new_session_id() -> String {
    let now = SystemTime::now();
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        now.duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    let suffix = hasher.finish() & 0x00ff_ffff;
    format!("{}-{suffix:06x}", skill_core::clock::session_stamp(now))
}

/// The title for a first message: whitespace collapsed, cut to [`TITLE_CHARS`].
pub fn title_from(text: &str) -> Option<String> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return None;
    }
    Some(
        flat.chars()
            .take(TITLE_CHARS)
            .collect::<String>()
            .trim_end()
            .to_owned(),
    )
}

/// Each word quoted as an FTS5 string (`"` doubled inside), joined by spaces (AND).
fn fts_query(query: &str) -> Option<String> {
    let terms: Vec<String> = query
        .split_whitespace()
        .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn parse_role(name: &str) -> Option<Role> {
    match name {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_sortable_and_distinct() {
        let a = new_session_id();
        let b = new_session_id();
        assert_eq!(a.len(), "20250131-120005-abcdef".len(), "{a}");
        assert_ne!(a, b);
        assert!(a[16..].chars().all(|c| c.is_ascii_hexdigit()), "{a}");
    }

    #[test]
    fn fts_queries_quote_every_word() {
        assert_eq!(
            fts_query("deploy k8s").as_deref(),
            Some(r#""deploy" "k8s""#)
        );
        assert_eq!(
            fts_query(r#"say "hi""#).as_deref(),
            Some(r#""say" """hi""""#)
        );
        assert_eq!(fts_query("   "), None);
    }

    #[test]
    fn the_latest_session_is_the_last_active_one_in_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open_path(&dir.path().join("state.db")).unwrap();
        let new = |cwd: &str, platform: &str| {
            store
                .create_session(&NewSession {
                    id: None,
                    model: "m".into(),
                    system_prompt: "s".into(),
                    tools_json: None,
                    platform: platform.into(),
                    cwd: cwd.into(),
                })
                .unwrap()
        };
        assert_eq!(store.latest_session(None).unwrap(), None);
        let older = new("/p/a", "cli");
        let newer = new("/p/a", "tui");
        let elsewhere = new("/p/b", "cli");
        let _empty = new("/p/a", "cli");
        let review = new("/p/a", "review");
        store
            .append_message(&newer, &ChatMessage::user("1"))
            .unwrap();
        store
            .append_message(&older, &ChatMessage::user("2"))
            .unwrap();
        // Started first, but the last one used in /p/a.
        assert_eq!(
            store.latest_session(Some("/p/a")).unwrap(),
            Some(older.clone())
        );
        store
            .append_message(&elsewhere, &ChatMessage::user("3"))
            .unwrap();
        store
            .append_message(&review, &ChatMessage::user("4"))
            .unwrap();
        assert_eq!(store.latest_session(Some("/p/a")).unwrap(), Some(older));
        assert_eq!(store.latest_session(None).unwrap(), Some(elsewhere));
        assert_eq!(store.latest_session(Some("/p/c")).unwrap(), None);
    }

    #[test]
    fn titles_are_flattened_and_cut() {
        assert_eq!(
            title_from("  fix\nthe   build ").as_deref(),
            Some("fix the build")
        );
        let long = "x".repeat(100);
        assert_eq!(
            title_from(&long).map(|t| t.chars().count()),
            Some(TITLE_CHARS)
        );
        assert_eq!(title_from(" \n "), None);
    }
}
