//! Fuzzes the threat scanner over both scopes and a few file kinds; findings must
//! point at lines that exist in the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_guard::{ScanScope, scan_text};

const FILES: [&str; 4] = ["SKILL.md", "scripts/run.sh", "scripts/tool.py", "notes.txt"];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let file = FILES[usize::from(selector) % FILES.len()];
    let scope = if selector & 0x80 == 0 {
        ScanScope::Skill
    } else {
        ScanScope::Context
    };
    let lines = text.lines().count().max(1);
    for finding in scan_text(&text, file, scope) {
        assert!(
            finding.line >= 1 && finding.line <= lines + 1,
            "line {} of {lines}",
            finding.line
        );
    }
});
