//! Every style the TUI draws with, decided in one place: ANSI palette colours
//! only (the terminal's theme picks the shades), and no styling under NO_COLOR.

use ratatui::style::{Color, Modifier, Style};

/// The styles of one run. `plain()` drops every colour and modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to a non-empty value (no-color.org).
    pub fn from_env() -> Self {
        Self {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    #[cfg(test)]
    pub fn colored() -> Self {
        Self { color: true }
    }

    #[cfg(test)]
    pub fn plain() -> Self {
        Self { color: false }
    }

    fn pick(&self, style: Style) -> Style {
        if self.color { style } else { Style::default() }
    }

    pub fn text(&self) -> Style {
        Style::default()
    }

    pub fn dim(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::DIM))
    }

    pub fn bold(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::BOLD))
    }

    pub fn italic(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::ITALIC))
    }

    pub fn strike(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::CROSSED_OUT))
    }

    pub fn link(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::UNDERLINED))
    }

    pub fn user(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        )
    }

    pub fn heading(&self, level: usize) -> Style {
        let base = Style::default()
            .fg(Color::Magenta)
            .add_modifier(Modifier::BOLD);
        self.pick(if level == 1 {
            base.add_modifier(Modifier::UNDERLINED)
        } else {
            base
        })
    }

    pub fn inline_code(&self) -> Style {
        self.pick(Style::default().fg(Color::Cyan))
    }

    pub fn code_block(&self) -> Style {
        self.pick(Style::default().fg(Color::Green))
    }

    pub fn gutter(&self) -> Style {
        self.dim()
    }

    pub fn success(&self) -> Style {
        self.pick(Style::default().fg(Color::Green))
    }

    pub fn failure(&self) -> Style {
        self.pick(Style::default().fg(Color::Red))
    }

    pub fn warning(&self) -> Style {
        self.pick(Style::default().fg(Color::Yellow))
    }

    pub fn accent(&self) -> Style {
        self.pick(Style::default().fg(Color::Magenta))
    }

    pub fn tool_name(&self) -> Style {
        self.pick(
            Style::default()
                .fg(Color::Blue)
                .add_modifier(Modifier::BOLD),
        )
    }

    /// The highlighted row of a list and the selected tool card.
    pub fn selected(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::REVERSED))
    }

    pub fn border(&self) -> Style {
        self.dim()
    }

    pub fn status(&self) -> Style {
        self.pick(Style::default().add_modifier(Modifier::REVERSED))
    }

    /// The text cursor stays reversed even without colour: an invisible cursor
    /// would make the input unusable, and reversing is not a colour.
    pub fn cursor(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
