//! Fuzzes the lenient SKILL.md reader: any text must parse or report `Unclosed`,
//! and the body offset it returns must be a char boundary inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::frontmatter::{
    first_body_line, parse_skill_md, split_frontmatter, strip_bom, top_level_keys,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let stripped = strip_bom(&text);
    if let Ok(Some((yaml, offset))) = split_frontmatter(stripped) {
        assert!(stripped.is_char_boundary(offset) && offset <= stripped.len());
        let _ = top_level_keys(yaml);
    }
    if let Ok(parsed) = parse_skill_md(&text) {
        assert!(parsed.body_offset <= stripped.len());
        assert!(stripped.is_char_boundary(parsed.body_offset));
        let _ = first_body_line(&stripped[parsed.body_offset..]);
    }
});
