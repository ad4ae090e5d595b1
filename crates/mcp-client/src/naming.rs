//! The names MCP tools get in knack: `mcp__<server>__<tool>`, cut down to the characters and
//! length that every model provider's wire accepts.

/// The longest tool name the providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// `text` with every character outside `[a-zA-Z0-9_-]` replaced by `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model sees for `tool` of `server`, or why there is none:
/// a name over [`MAX_TOOL_NAME_LEN`] is refused rather than cut, since a cut
/// name could silently collide with another tool.
pub fn qualified_name(server: &str, tool: &str) -> Result<String, String> {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "the tool '{tool}' of MCP server '{server}' is left out: its name {name} is longer than {MAX_TOOL_NAME_LEN} characters"
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_and_bounded() {
        assert_eq!(
            qualified_name("fs", "read_file").unwrap(),
            "mcp__fs__read_file"
        );
        assert_eq!(
            qualified_name("a", "get.thing/x y").unwrap(),
            "mcp__a__get_thing_x_y"
        );
        let long = "t".repeat(60);
        let err = qualified_name("srv", &long).unwrap_err();
        assert!(err.contains("longer than 64"), "{err}");
    }
}
