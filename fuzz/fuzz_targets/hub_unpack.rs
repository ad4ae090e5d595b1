//! Fuzzes hub archive unpacking. Input is either a small entry list (even first byte)
//! or raw tar bytes with checksums repaired (odd); nothing may land or point outside.
#![no_main]

use std::io::Write;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use skill_hub::{Limits, fuzz_unpack_tar_gz};

const LIMITS: Limits = Limits {
    max_bytes: 64 * 1024,
    max_files: 64,
};

/// One entry per line: a kind letter, the path, a tab, then content or link target.
/// f = file, x = executable, d = folder, l = symlink, h = hard link, p = fifo.
fn tar_from_entries(text: &[u8]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for line in text.split(|b| *b == b'\n').take(64) {
        let Some((&kind, rest)) = line.split_first() else {
            continue;
        };
        let mut fields = rest.splitn(2, |b| *b == b'\t');
        let path = fields.next().unwrap_or_default();
        let arg = fields.next().unwrap_or_default();
        let mut header = tar::Header::new_gnu();
        let (entry_type, body): (tar::EntryType, &[u8]) = match kind {
            b'f' => (tar::EntryType::Regular, arg),
            b'x' => (tar::EntryType::Regular, arg),
            b'd' => (tar::EntryType::Directory, b""),
            b'l' => (tar::EntryType::Symlink, b""),
            b'h' => (tar::EntryType::Link, b""),
            b'p' => (tar::EntryType::Fifo, b""),
            _ => continue,
        };
        header.set_entry_type(entry_type);
        header.set_mode(if kind == b'x' { 0o755 } else { 0o644 });
        header.set_size(body.len() as u64);
        // Raw name bytes, as a hostile packer would write them (set_path refuses '..').
        let old = header.as_old_mut();
        let n = path.len().min(old.name.len());
        old.name[..n].copy_from_slice(&path[..n]);
        if matches!(kind, b'l' | b'h') {
            let n = arg.len().min(old.linkname.len());
            old.linkname[..n].copy_from_slice(&arg[..n]);
        }
        header.set_cksum();
        if builder.append(&header, body).is_err() {
            break;
        }
    }
    builder.into_inner().unwrap_or_default()
}

/// Rewrites each header's checksum so mutations reach the unpacker instead of
/// dying at the checksum test.
fn repair_checksums(mut tar: Vec<u8>) -> Vec<u8> {
    let mut offset = 0;
    while offset + 512 <= tar.len() {
        let block = &mut tar[offset..offset + 512];
        if block.iter().all(|b| *b == 0) {
            break;
        }
        block[148..156].fill(b' ');
        let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
        let field = format!("{sum:06o}\0 ");
        block[148..156].copy_from_slice(&field.as_bytes()[..8]);
        let size_field = String::from_utf8_lossy(&block[124..136]);
        let size = u64::from_str_radix(size_field.trim_matches(|c: char| c == '\0' || c == ' '), 8)
            .unwrap_or(0)
            .min(1 << 20) as usize;
        offset += 512 + size.div_ceil(512) * 512;
    }
    tar
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = gz.write_all(bytes);
    gz.finish().unwrap_or_default()
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            walk(&path, out);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let tar = if mode & 1 == 0 {
        tar_from_entries(rest)
    } else {
        repair_checksums(rest.to_vec())
    };
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("dest");
    let outside = root.path().join("outside");
    std::fs::create_dir(&dest).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let result = fuzz_unpack_tar_gz(&gzip(&tar)[..], &dest, LIMITS);
    let leaked: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        leaked.is_empty(),
        "wrote outside the destination: {leaked:?}"
    );
    let mut top: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    top.sort();
    assert_eq!(top, ["dest", "outside"], "wrote next to the destination");
    if result.is_ok() {
        let canonical_dest = dest.canonicalize().unwrap();
        let mut all = Vec::new();
        walk(&dest, &mut all);
        for path in all {
            if let Ok(resolved) = path.canonicalize() {
                assert!(
                    resolved.starts_with(&canonical_dest),
                    "{} resolves outside the package to {}",
                    path.display(),
                    resolved.display()
                );
            }
        }
    }
});
