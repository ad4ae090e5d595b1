//! The palette over the input: built-in commands and skill commands matching
//! what the user is typing after `/`, or files of the working directory for
//! an `@path` mention being typed; ranked by fuzzy score, completed with Tab.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::skills::SkillEntry;
use super::theme::Theme;
use super::wrap::truncate;

/// Rows the palette shows at once.
pub const MAX_ROWS: usize = 8;

/// A command the TUI handles itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    pub args: &'static str,
    pub description: &'static str,
    /// Enter completes instead of running when the argument is missing.
    pub needs_arg: bool,
}

pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "help",
        args: "",
        description: "keys and commands",
        needs_arg: false,
    },
    Builtin {
        name: "skills",
        args: "",
        description: "browse the skills by category",
        needs_arg: false,
    },
    Builtin {
        name: "skill",
        args: "<id> [text]",
        description: "load a skill by name or id",
        needs_arg: true,
    },
    Builtin {
        name: "new",
        args: "",
        description: "start a new session",
        needs_arg: false,
    },
    Builtin {
        name: "clear",
        args: "",
        description: "start a new session (as /new)",
        needs_arg: false,
    },
    Builtin {
        name: "resume",
        args: "[session-id]",
        description: "continue a stored session (alone: pick one)",
        needs_arg: false,
    },
    Builtin {
        name: "sessions",
        args: "",
        description: "list the recent stored sessions",
        needs_arg: false,
    },
    Builtin {
        name: "model",
        args: "[name]",
        description: "switch the model (alone: pick a provider)",
        needs_arg: false,
    },
    Builtin {
        name: "reload-skills",
        args: "",
        description: "rescan the skill folders now",
        needs_arg: false,
    },
    Builtin {
        name: "review",
        args: "",
        description: "save what was learned as a skill now",
        needs_arg: false,
    },
    Builtin {
        name: "mcp",
        args: "",
        description: "list the MCP servers and their tools",
        needs_arg: false,
    },
    Builtin {
        name: "compact",
        args: "",
        description: "summarise the older history to free the context window",
        needs_arg: false,
    },
    Builtin {
        name: "undo",
        args: "",
        description: "put back the files the last turn changed",
        needs_arg: false,
    },
    Builtin {
        name: "rewind",
        args: "[N]",
        description: "list the turns that changed files; with N, undo the newest N",
        needs_arg: false,
    },
    Builtin {
        name: "quit",
        args: "",
        description: "leave knack",
        needs_arg: false,
    },
];

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind {
    Builtin,
    Skill,
    /// A file for the `@path` mention being typed.
    File,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaletteItem {
    /// What Tab puts into the input.
    pub completion: String,
    /// The name matched against and shown, without the slash.
    pub label: String,
    pub args: String,
    pub description: String,
    pub kind: ItemKind,
    /// Enter runs the line right away (no argument is required).
    pub runs_on_enter: bool,
}

/// The matches for `input`, or `None` when the palette should not be open.
pub fn matches(input: &str, skills: &[SkillEntry]) -> Option<Vec<PaletteItem>> {
    let rest = input.strip_prefix('/')?;
    if rest.contains('\n') {
        return None;
    }
    let (query, items) = if let Some(arg) = rest.strip_prefix("skill ") {
        if arg.contains(char::is_whitespace) {
            return None;
        }
        let items = skills
            .iter()
            .filter(|s| s.user_invocable)
            .map(|s| PaletteItem {
                completion: format!("/skill {} ", s.id),
                label: s.id.clone(),
                args: String::new(),
                description: s.description.clone(),
                kind: ItemKind::Skill,
                runs_on_enter: true,
            })
            .collect::<Vec<_>>();
        (arg, items)
    } else {
        if rest.contains(char::is_whitespace) {
            return None;
        }
        (rest, command_items(skills))
    };
    Some(rank(query, items))
}

fn command_items(skills: &[SkillEntry]) -> Vec<PaletteItem> {
    let mut items: Vec<PaletteItem> = BUILTINS
        .iter()
        .map(|b| PaletteItem {
            completion: if b.args.is_empty() {
                format!("/{}", b.name)
            } else {
                format!("/{} ", b.name)
            },
            label: b.name.to_owned(),
            args: b.args.to_owned(),
            description: b.description.to_owned(),
            kind: ItemKind::Builtin,
            runs_on_enter: !b.needs_arg,
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for s in skills.iter().filter(|s| s.user_invocable) {
        // A skill named like a built-in, or sharing its name with another
        // skill, is offered through `/skill <id>`.
        let clash =
            builtin(&s.name).is_some() || skills.iter().filter(|o| o.name == s.name).count() > 1;
        let (completion, label) = if clash {
            (format!("/skill {} ", s.id), format!("skill {}", s.id))
        } else {
            (format!("/{} ", s.name), s.name.clone())
        };
        if seen.insert(label.clone()) {
            items.push(PaletteItem {
                completion,
                label,
                args: String::new(),
                description: s.description.clone(),
                kind: ItemKind::Skill,
                runs_on_enter: true,
            });
        }
    }
    items
}

/// Fuzzy-ranks `items` by their label; an empty query keeps the given order.
fn rank(query: &str, items: Vec<PaletteItem>) -> Vec<PaletteItem> {
    if query.is_empty() {
        return items;
    }
    let pattern = Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, usize, PaletteItem)> = items
        .into_iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let score = pattern.score(Utf32Str::new(&item.label, &mut buf), &mut matcher)?;
            // An exact prefix beats a scattered match of the same score.
            let bonus = if item.label.starts_with(query) {
                1000
            } else {
                0
            };
            Some((score + bonus, i, item))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, item)| item).collect()
}

/// Most files offered at once for a mention.
const MAX_FILE_ITEMS: usize = 200;

/// The files a mention can complete to, listed once per mention: typing `@`
/// anew walks the working directory again (new files show up), while the
/// letters after it only filter.
#[derive(Debug, Default)]
struct FileIndex {
    root: Option<std::path::PathBuf>,
    files: Option<Vec<String>>,
}

impl FileIndex {
    fn items(&mut self, input: &str) -> Option<Vec<PaletteItem>> {
        let root = self.root.as_ref()?;
        let Some((start, prefix)) = agent_loop::mentions::typing_at_end(input) else {
            self.files = None;
            return None;
        };
        if prefix.is_empty() {
            self.files = None;
        }
        let files = self
            .files
            .get_or_insert_with(|| agent_loop::mentions::candidates(root));
        let head = &input[..start];
        let items = files
            .iter()
            .map(|path| PaletteItem {
                completion: format!("{head}@{path} "),
                label: path.clone(),
                args: String::new(),
                description: String::new(),
                kind: ItemKind::File,
                runs_on_enter: false,
            })
            .collect();
        let mut ranked = rank(prefix, items);
        ranked.truncate(MAX_FILE_ITEMS);
        Some(ranked)
    }
}

/// The open palette: its matches and the highlighted row.
#[derive(Debug, Default)]
pub struct Palette {
    pub items: Vec<PaletteItem>,
    pub selected: usize,
    /// The input text for which the user closed the palette with Esc.
    dismissed_for: Option<String>,
    files: FileIndex,
}

impl Palette {
    /// Where `@` completion lists files; `None` turns it off.
    pub fn set_file_root(&mut self, root: Option<std::path::PathBuf>) {
        self.files = FileIndex { root, files: None };
    }

    /// Recomputes the matches after the input changed.
    pub fn update(&mut self, input: &str, skills: &[SkillEntry]) {
        if self.dismissed_for.as_deref() != Some(input) {
            self.dismissed_for = None;
        }
        let fresh = if self.dismissed_for.is_some() {
            None
        } else {
            matches(input, skills).or_else(|| self.files.items(input))
        };
        let fresh = fresh.unwrap_or_default();
        if fresh != self.items {
            self.selected = 0;
        }
        self.items = fresh;
    }

    pub fn is_open(&self) -> bool {
        !self.items.is_empty()
    }

    pub fn dismiss(&mut self, input: &str) {
        self.dismissed_for = Some(input.to_owned());
        self.items.clear();
    }

    pub fn move_selection(&mut self, down: bool) {
        let n = self.items.len();
        if n == 0 {
            return;
        }
        self.selected = if down {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    pub fn current(&self) -> Option<&PaletteItem> {
        self.items.get(self.selected)
    }

    /// Rows this palette needs, borders included.
    pub fn height(&self) -> u16 {
        (self.items.len().min(MAX_ROWS) + 2) as u16
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border())
            .title(Span::styled(
                if self.items.first().is_some_and(|i| i.kind == ItemKind::File) {
                    " files · tab completes "
                } else {
                    " commands & skills "
                },
                theme.dim(),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = inner.height as usize;
        let first = (self.selected + 1).saturating_sub(rows);
        // Files have no description, so their path may take the whole row.
        let share = if self.items.iter().all(|i| i.kind == ItemKind::File) {
            1
        } else {
            2
        };
        let name_width = self
            .items
            .iter()
            .map(|i| i.label.chars().count() + i.args.chars().count() + 2)
            .max()
            .unwrap_or(0)
            .min((inner.width as usize).saturating_sub(2) / share);
        let lines: Vec<Line<'static>> = self
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, item)| {
                let sigil = if item.kind == ItemKind::File {
                    '@'
                } else {
                    '/'
                };
                let mut name = format!("{sigil}{}", item.label);
                if !item.args.is_empty() {
                    name.push(' ');
                    name.push_str(&item.args);
                }
                let name = truncate(&name, name_width.max(4));
                let pad =
                    name_width.saturating_sub(unicode_width::UnicodeWidthStr::width(name.as_str()));
                let desc_room = (inner.width as usize).saturating_sub(name_width + 4);
                let kind = match item.kind {
                    ItemKind::Builtin => theme.bold(),
                    ItemKind::Skill => theme.accent(),
                    ItemKind::File => theme.text(),
                };
                let marker = if i == self.selected { "› " } else { "  " };
                let line = Line::from(vec![
                    Span::styled(marker, theme.accent()),
                    Span::styled(name, kind),
                    Span::raw(" ".repeat(pad + 2)),
                    Span::styled(truncate(&item.description, desc_room), theme.dim()),
                ]);
                if i == self.selected {
                    line.style(theme.selected())
                } else {
                    line
                }
            })
            .collect();
        Paragraph::new(lines).render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    pub fn skill(name: &str, category: &str) -> SkillEntry {
        SkillEntry {
            name: name.into(),
            id: format!("{category}/{name}"),
            qualified_id: format!("user:{category}/{name}"),
            category: Some(category.into()),
            description: format!("Use when {name} is needed"),
            scope: "user".into(),
            skill_md: format!("/skills/{category}/{name}/SKILL.md").into(),
            skill_dir: format!("/skills/{category}/{name}").into(),
            user_invocable: true,
        }
    }

    fn labels(items: &[PaletteItem]) -> Vec<&str> {
        items.iter().map(|i| i.label.as_str()).collect()
    }

    #[test]
    fn skills_that_are_not_user_invocable_stay_out_of_the_palette() {
        let mut hidden = skill("helper-only", "ops");
        hidden.user_invocable = false;
        let skills = vec![skill("deploy", "ops"), hidden];
        let items = matches("/", &skills).unwrap();
        assert!(labels(&items).contains(&"deploy"));
        assert!(!labels(&items).iter().any(|l| l.contains("helper-only")));
        let items = matches("/skill ", &skills).unwrap();
        assert_eq!(labels(&items), ["ops/deploy"]);
    }

    #[test]
    fn only_a_leading_slash_word_opens_it() {
        assert!(matches("hello", &[]).is_none());
        assert!(matches("/help me", &[]).is_none());
        assert!(matches("/he\nx", &[]).is_none());
        assert_eq!(matches("/", &[]).map(|m| m.len()), Some(BUILTINS.len()));
    }

    #[test]
    fn fuzzy_query_ranks_prefix_matches_first() {
        let skills = [skill("review-pr", "git"), skill("deploy", "devops")];
        let found = matches("/rev", &skills).unwrap();
        assert_eq!(labels(&found)[..2], ["review", "review-pr"]);
        let found = matches("/dpl", &skills).unwrap();
        assert_eq!(labels(&found), vec!["deploy"]);
    }

    #[test]
    fn skills_clashing_with_builtins_go_through_slash_skill() {
        let skills = [skill("help", "meta")];
        let found = matches("/help", &skills).unwrap();
        let clash = found.iter().find(|i| i.kind == ItemKind::Skill).unwrap();
        assert_eq!(clash.completion, "/skill meta/help ");
    }

    #[test]
    fn slash_skill_completes_skill_ids() {
        let skills = [skill("deploy", "devops"), skill("lint", "code")];
        let found = matches("/skill dep", &skills).unwrap();
        assert_eq!(found[0].completion, "/skill devops/deploy ");
        assert!(matches("/skill devops/deploy now", &skills).is_none());
    }
}
