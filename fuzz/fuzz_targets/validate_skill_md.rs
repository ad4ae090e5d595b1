//! Fuzzes write-side validation: no panic, and whatever it accepts has a name
//! and category that pass their own rules and a non-empty description.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::validate::{SkillMdCheck, validate_category, validate_name, validate_skill_md};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for check in [SkillMdCheck::New, SkillMdCheck::Existing] {
        if let Ok(valid) = validate_skill_md(&text, check) {
            assert!(
                validate_name(&valid.name).is_ok(),
                "accepted name {:?}",
                valid.name
            );
            assert!(!valid.description.trim().is_empty());
        }
    }
    // The same bytes as a name and a category exercise the small validators.
    let _ = validate_name(&text);
    let _ = validate_category(&text);
});
