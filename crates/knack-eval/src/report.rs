//! The report files every mode writes: `report.json` (the exact shape scripts
//! read), `report.md` (for people) and `chart.svg`. The honesty notice and the
//! header (provider, model, version, seeds, inputs) are written here, once,
//! for every mode.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::runner::EvalContext;
use crate::{Error, Result};

/// The first line of every report when the provider is the scripted mock.
pub const MOCK_NOTICE: &str = "This report measures the eval harness, not learning: the provider was knack's scripted mock server, whose replies follow fixed rules.";

/// What every report states about how it was made.
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    /// The mock notice, or `null` for a real provider.
    pub notice: Option<String>,
    pub mode: String,
    pub provider: String,
    pub model: String,
    pub base_url: String,
    pub knack_version: String,
    pub seeds: usize,
    pub jobs: usize,
    /// The exact inputs: the families, the tasks file or the triggers file.
    pub inputs: Vec<String>,
    pub started_at: String,
}

impl Header {
    pub fn new(ctx: &EvalContext, mode: &str, inputs: Vec<String>) -> Self {
        Self {
            notice: ctx.provider.scripted_mock.then(|| MOCK_NOTICE.to_owned()),
            mode: mode.to_owned(),
            provider: ctx.provider.provider.clone(),
            model: ctx.provider.model.clone(),
            base_url: ctx.provider.base_url.clone(),
            knack_version: ctx.version.clone(),
            seeds: ctx.seeds,
            jobs: ctx.jobs,
            inputs,
            started_at: skill_core::clock::now_rfc3339(),
        }
    }

    /// The Markdown head: the notice first (when there is one), then the facts.
    pub fn markdown(&self, title: &str) -> String {
        let mut md = String::new();
        if let Some(notice) = &self.notice {
            let _ = writeln!(md, "**{notice}**\n");
        }
        let _ = writeln!(md, "# {title}\n");
        let _ = writeln!(
            md,
            "- provider: `{}` · model: `{}` · {}\n- knack {} · seeds: {} · jobs: {} · started {}\n- inputs: {}\n",
            self.provider,
            self.model,
            self.base_url,
            self.knack_version,
            self.seeds,
            self.jobs,
            self.started_at,
            self.inputs.join(", ")
        );
        md
    }
}

/// Where the three files went.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenReport {
    pub dir: PathBuf,
    pub json: PathBuf,
    pub markdown: PathBuf,
    pub svg: PathBuf,
}

/// Writes `report.json`, `report.md` and `chart.svg` into `dir` (created).
/// The JSON's first key is `notice` so its first line carries it too.
pub fn write_report(dir: &Path, json: &Value, markdown: &str, svg: &str) -> Result<WrittenReport> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let written = WrittenReport {
        dir: dir.to_path_buf(),
        json: dir.join("report.json"),
        markdown: dir.join("report.md"),
        svg: dir.join("chart.svg"),
    };
    let text = serde_json::to_string_pretty(json)?;
    for (path, body) in [
        (&written.json, text.as_str()),
        (&written.markdown, markdown),
        (&written.svg, svg),
    ] {
        std::fs::write(path, body).map_err(|e| Error::io(path, e))?;
    }
    Ok(written)
}

/// One group of bars: a label and a value per series.
#[derive(Debug, Clone)]
pub struct BarGroup {
    pub label: String,
    pub values: Vec<f64>,
}

const COLORS: [&str; 4] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];

/// A grouped bar chart as SVG text: one group per label, one bar per series.
pub fn bar_chart(
    title: &str,
    notice: Option<&str>,
    series: &[&str],
    groups: &[BarGroup],
    unit: &str,
) -> String {
    let group_width = 24.0 * series.len().max(1) as f64 + 24.0;
    let width = (80.0 + group_width * groups.len() as f64).max(420.0);
    let (height, plot_top, plot_bottom) = (320.0, 60.0, 250.0);
    let max = groups
        .iter()
        .flat_map(|g| g.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, "<title>{}</title>", escape(title));
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="18" font-size="13" font-weight="bold">{}</text>"#,
        escape(title)
    );
    if let Some(notice) = notice {
        let _ = writeln!(
            svg,
            r##"<text x="10" y="34" fill="#b00">{}</text>"##,
            escape(notice)
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="60" y1="{plot_bottom}" x2="{:.0}" y2="{plot_bottom}" stroke="#333"/>"##,
        width - 10.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="10" y="{plot_top}">{}</text>"#,
        escape(&format_value(max, unit))
    );
    for (g, group) in groups.iter().enumerate() {
        let x0 = 70.0 + g as f64 * group_width;
        for (s, value) in group.values.iter().enumerate() {
            let value = if value.is_finite() {
                value.max(0.0)
            } else {
                0.0
            };
            let h = (plot_bottom - plot_top) * value / max;
            let x = x0 + s as f64 * 24.0;
            let _ = writeln!(
                svg,
                r#"<rect x="{x:.1}" y="{:.1}" width="20" height="{h:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                plot_bottom - h,
                COLORS[s % COLORS.len()],
                escape(series.get(s).copied().unwrap_or("")),
                escape(&format_value(value, unit))
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{x0:.1}" y="{:.0}">{}</text>"#,
            plot_bottom + 14.0,
            escape(&group.label)
        );
    }
    for (s, name) in series.iter().enumerate() {
        let x = 70.0 + s as f64 * 120.0;
        let _ = writeln!(
            svg,
            r#"<rect x="{x:.0}" y="290" width="12" height="12" fill="{}"/><text x="{:.0}" y="300">{}</text>"#,
            COLORS[s % COLORS.len()],
            x + 16.0,
            escape(name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn format_value(value: f64, unit: &str) -> String {
    if value.fract() == 0.0 && value.abs() < 1e12 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.3} {unit}")
    }
}

/// Escapes text for XML content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown table cell: no pipes or line breaks.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A number for a table, or `–` when unknown.
pub fn num(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_is_well_formed_xml_with_one_bar_per_value() {
        let groups = vec![
            BarGroup {
                label: "rep 1 <&>".into(),
                values: vec![10.0, 12.0],
            },
            BarGroup {
                label: "rep 2".into(),
                values: vec![10.0, 4.0],
            },
        ];
        let svg = bar_chart(
            "tokens \"median\"",
            Some(MOCK_NOTICE),
            &["baseline", "learning"],
            &groups,
            "tokens",
        );
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("width") == Some("20"))
            .count();
        assert_eq!(bars, 4);
        assert!(svg.contains("rep 1 &lt;&amp;&gt;"));
    }
}
