//! Fuzzes the fuzzy patch engine with (content, old, new, replace_all) taken from
//! one input split at 0xFF bytes. Checks what an exact match must produce.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::fuzzy_patch::{Strategy, apply_detailed, similarity};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.split(|b| *b == 0xFF);
    let content = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let old = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let new = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let replace_all = flags & 1 == 1;
    match apply_detailed(&content, &old, &new, replace_all) {
        Ok(patched) => {
            assert!(patched.replacements >= 1);
            if patched.strategy == Strategy::Exact {
                let expected = if replace_all {
                    content.replace(old.as_ref(), &new)
                } else {
                    content.replacen(old.as_ref(), &new, 1)
                };
                assert_eq!(patched.content, expected);
            }
        }
        Err(err) => {
            let _ = err.to_string();
        }
    }
    let score = similarity(&old, &new);
    assert!((0.0..=1.0).contains(&score), "similarity {score}");
});
