//! Structural checks on a skill's files: escaping symlinks, compiled executables,
//! stray executable bits and size limits. They see bytes and metadata, never meaning.

use std::path::{Component, Path, PathBuf};

use crate::finding::{Finding, Severity, ThreatCategory};

/// More files than this (after `.skillignore`) is reported.
pub const MAX_FILE_COUNT: usize = 50;
/// A single file larger than this is reported.
pub const MAX_SINGLE_FILE_BYTES: u64 = 256 * 1024;
/// A whole skill larger than this is reported (informational).
pub const MAX_TOTAL_BYTES: u64 = 5 * 1024 * 1024;

/// Extensions that may legitimately carry an executable bit.
const SCRIPT_EXTENSIONS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "py", "rb", "pl", "js", "mjs", "ts",
];

/// Extensions of compiled or packaged programs.
const BINARY_EXTENSIONS: &[&str] = &[
    "exe", "dll", "so", "dylib", "bin", "msi", "dmg", "deb", "rpm", "apk", "scr", "jar", "class",
    "wasm", "node", "appimage",
];

pub(crate) fn structural(
    id: &str,
    severity: Severity,
    file: &str,
    matched: String,
    description: String,
) -> Finding {
    Finding {
        pattern_id: id.to_string(),
        severity,
        category: ThreatCategory::Structural,
        file: file.to_string(),
        line: 0,
        matched,
        description,
    }
}

/// Names the executable format when `head` (the first bytes of a file) starts like one.
pub(crate) fn executable_format(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x7f, b'E', b'L', b'F', ..] => Some("ELF"),
        [0xfe, 0xed, 0xfa, 0xce | 0xcf, ..] | [0xce | 0xcf, 0xfa, 0xed, 0xfe, ..] => Some("Mach-O"),
        [0xca, 0xfe, 0xba, 0xbe, ..] | [0xbe, 0xba, 0xfe, 0xca, ..] => Some("Mach-O universal"),
        [0x00, b'a', b's', b'm', ..] => Some("WebAssembly"),
        [b'M', b'Z', ..] => {
            let pe = head
                .get(0x3c..0x40)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .and_then(|off| head.get(off..off + 4))
                .is_some_and(|sig| sig == b"PE\0\0");
            // A DOS stub without a PE header is still a program if it is not text.
            (pe || head.contains(&0)).then_some("PE/DOS")
        }
        _ => None,
    }
}

fn extension(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// Executable magic (critical) or a program's file extension without magic (high).
pub(crate) fn binary_check(rel: &str, head: &[u8]) -> Option<Finding> {
    if let Some(format) = executable_format(head) {
        return Some(structural(
            "binary_executable",
            Severity::Critical,
            rel,
            format!("{format} executable"),
            format!(
                "a compiled {format} program ships inside the skill; its behaviour cannot be reviewed"
            ),
        ));
    }
    let ext = extension(rel);
    BINARY_EXTENSIONS.contains(&ext.as_str()).then(|| {
        structural(
            "binary_file",
            Severity::High,
            rel,
            format!("binary: .{ext}"),
            format!("a .{ext} file usually holds compiled code"),
        )
    })
}

/// An executable bit on something that is neither a script nor starts with `#!`.
pub(crate) fn exec_bit_check(rel: &str, mode_is_executable: bool, head: &[u8]) -> Option<Finding> {
    if !mode_is_executable || head.starts_with(b"#!") || executable_format(head).is_some() {
        return None;
    }
    let ext = extension(rel);
    (!SCRIPT_EXTENSIONS.contains(&ext.as_str())).then(|| {
        structural(
            "unexpected_executable",
            Severity::Medium,
            rel,
            "executable bit set".to_string(),
            "an executable bit on a file that is not a script".to_string(),
        )
    })
}

pub(crate) fn size_check(rel: &str, size: u64) -> Option<Finding> {
    (size > MAX_SINGLE_FILE_BYTES).then(|| {
        structural(
            "oversized_file",
            Severity::Medium,
            rel,
            format!("{} KiB", size.div_ceil(1024)),
            format!(
                "file is {} KiB (limit {} KiB); large files hide content from review",
                size.div_ceil(1024),
                MAX_SINGLE_FILE_BYTES / 1024
            ),
        )
    })
}

pub(crate) fn count_check(count: usize) -> Option<Finding> {
    (count > MAX_FILE_COUNT).then(|| {
        structural(
            "too_many_files",
            Severity::Medium,
            ".",
            format!("{count} files"),
            format!("the skill has {count} files (limit {MAX_FILE_COUNT})"),
        )
    })
}

pub(crate) fn total_size_check(total: u64) -> Option<Finding> {
    (total > MAX_TOTAL_BYTES).then(|| {
        structural(
            "oversized_skill",
            Severity::Low,
            ".",
            format!("{} KiB total", total.div_ceil(1024)),
            format!(
                "the skill holds {} KiB (guideline {} KiB)",
                total.div_ceil(1024),
                MAX_TOTAL_BYTES / 1024
            ),
        )
    })
}

/// Removes `.` and resolves `..` without touching the filesystem (the path
/// may not exist); the hub checks archive entries with the same rule.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A symlink whose target lies outside the skill (critical), or that points nowhere (medium).
/// `root` must be canonical.
pub(crate) fn symlink_check(root: &Path, link: &Path, rel: &str) -> Option<Finding> {
    let written = std::fs::read_link(link).ok();
    let shown = written
        .as_ref()
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    let escape = |target: &Path| {
        structural(
            "symlink_escape",
            Severity::Critical,
            rel,
            format!("symlink -> {shown}"),
            format!(
                "symlink leads outside the skill (to {}); reading it would expose other files",
                target.display()
            ),
        )
    };
    match std::fs::canonicalize(link) {
        Ok(target) => (!target.starts_with(root)).then(|| escape(&target)),
        Err(_) => {
            // Broken: judge the written target lexically from the link's (real) folder.
            let written = written?;
            let parent = link
                .parent()
                .and_then(|p| std::fs::canonicalize(p).ok())
                .unwrap_or_else(|| root.to_path_buf());
            let target = normalize_lexically(&parent.join(&written));
            if target.starts_with(root) {
                Some(structural(
                    "broken_symlink",
                    Severity::Medium,
                    rel,
                    format!("symlink -> {shown}"),
                    "symlink points at nothing".to_string(),
                ))
            } else {
                Some(escape(&target))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executable_magics_are_recognised() {
        assert_eq!(executable_format(b"\x7fELF\x02\x01\x01"), Some("ELF"));
        assert_eq!(
            executable_format(&[0xcf, 0xfa, 0xed, 0xfe, 7, 0]),
            Some("Mach-O")
        );
        assert_eq!(executable_format(&[0xfe, 0xed, 0xfa, 0xce]), Some("Mach-O"));
        let mut pe = vec![0u8; 0x90];
        pe[0] = b'M';
        pe[1] = b'Z';
        pe[0x3c] = 0x80;
        pe[0x80..0x84].copy_from_slice(b"PE\0\0");
        assert_eq!(executable_format(&pe), Some("PE/DOS"));
        assert_eq!(
            executable_format(b"MZ is a postcode prefix, not a program"),
            None
        );
        assert_eq!(executable_format(b"#!/bin/sh\necho hi"), None);
        assert_eq!(executable_format(b"\x89PNG\r\n"), None);
    }

    #[test]
    fn script_extensions_and_shebangs_may_be_executable() {
        assert!(exec_bit_check("scripts/run.sh", true, b"echo").is_none());
        assert!(exec_bit_check("scripts/tool", true, b"#!/usr/bin/env python3\n").is_none());
        assert!(exec_bit_check("notes.md", false, b"# hi").is_none());
        let f = exec_bit_check("notes.md", true, b"# hi").unwrap();
        assert_eq!(f.pattern_id, "unexpected_executable");
        assert_eq!(f.severity, Severity::Medium);
        assert_eq!(f.line, 0);
    }

    #[test]
    fn binary_extension_without_magic_is_high() {
        let f = binary_check("lib/helper.so", b"not really").unwrap();
        assert_eq!(
            (f.pattern_id.as_str(), f.severity),
            ("binary_file", Severity::High)
        );
        assert!(binary_check("assets/logo.png", b"\x89PNG").is_none());
        assert!(
            binary_check(".so", b"x").is_none(),
            "a dotfile has no extension"
        );
    }

    #[test]
    fn limits_are_exclusive() {
        assert!(size_check("a", MAX_SINGLE_FILE_BYTES).is_none());
        assert_eq!(
            size_check("a", MAX_SINGLE_FILE_BYTES + 1)
                .unwrap()
                .pattern_id,
            "oversized_file"
        );
        assert!(count_check(MAX_FILE_COUNT).is_none());
        assert_eq!(
            count_check(MAX_FILE_COUNT + 1).unwrap().pattern_id,
            "too_many_files"
        );
        assert!(total_size_check(MAX_TOTAL_BYTES + 1).is_some());
    }
}
