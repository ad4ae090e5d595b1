//! The built prompt: an ordered list of named layers, each inspectable on its own,
//! and the one way to join them into the text sent to the model.

use serde::Serialize;
use serde_json::{Value, json};

/// The ten layers, in prompt order. The discriminant is the layer's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayerKind {
    Identity = 1,
    Guidance = 2,
    MemoryProvider = 3,
    SystemMessage = 4,
    Memory = 5,
    UserProfile = 6,
    SkillsIndex = 7,
    ContextFiles = 8,
    Session = 9,
    Platform = 10,
}

impl LayerKind {
    pub const ALL: [LayerKind; 10] = [
        LayerKind::Identity,
        LayerKind::Guidance,
        LayerKind::MemoryProvider,
        LayerKind::SystemMessage,
        LayerKind::Memory,
        LayerKind::UserProfile,
        LayerKind::SkillsIndex,
        LayerKind::ContextFiles,
        LayerKind::Session,
        LayerKind::Platform,
    ];

    pub fn index(self) -> u8 {
        self as u8
    }

    /// The name CONTRACT.md gives the layer in `knack prompt show --json`.
    pub fn name(self) -> &'static str {
        match self {
            LayerKind::Identity => "identity",
            LayerKind::Guidance => "guidance",
            LayerKind::MemoryProvider => "memory_provider",
            LayerKind::SystemMessage => "system_message",
            LayerKind::Memory => "memory",
            LayerKind::UserProfile => "user_profile",
            LayerKind::SkillsIndex => "skills_index",
            LayerKind::ContextFiles => "context_files",
            LayerKind::Session => "session",
            LayerKind::Platform => "platform",
        }
    }
}

/// One non-empty layer of the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptLayer {
    pub index: u8,
    pub name: &'static str,
    pub text: String,
}

impl PromptLayer {
    pub fn new(kind: LayerKind, text: String) -> Self {
        Self {
            index: kind.index(),
            name: kind.name(),
            text,
        }
    }

    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

/// The frozen system prompt of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SystemPrompt {
    /// Non-empty layers only, in index order.
    pub layers: Vec<PromptLayer>,
}

impl SystemPrompt {
    /// The bytes sent as `messages[0]`: layer texts joined by one blank line.
    pub fn text(&self) -> String {
        self.layers
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    pub fn layer(&self, kind: LayerKind) -> Option<&PromptLayer> {
        self.layers.iter().find(|l| l.index == kind.index())
    }

    /// The JSON of `knack prompt show --json` (CONTRACT.md).
    pub fn to_json(&self) -> Value {
        json!({
            "text": self.text(),
            "layers": self.layers.iter().map(|l| json!({
                "index": l.index,
                "name": l.name,
                "chars": l.chars(),
                "text": l.text,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_indices_follow_the_contract() {
        let names: Vec<(u8, &str)> = LayerKind::ALL
            .iter()
            .map(|k| (k.index(), k.name()))
            .collect();
        assert_eq!(names[0], (1, "identity"));
        assert_eq!(names[6], (7, "skills_index"));
        assert_eq!(names[9], (10, "platform"));
        assert!(names.windows(2).all(|w| w[0].0 + 1 == w[1].0));
    }

    #[test]
    fn text_joins_layers_with_one_blank_line() {
        let p = SystemPrompt {
            layers: vec![
                PromptLayer::new(LayerKind::Identity, "a".into()),
                PromptLayer::new(LayerKind::Platform, "b\nc".into()),
            ],
        };
        assert_eq!(p.text(), "a\n\nb\nc");
        let j = p.to_json();
        assert_eq!(j["layers"][1]["chars"], 3);
        assert_eq!(j["layers"][1]["name"], "platform");
        assert_eq!(j["text"], "a\n\nb\nc");
    }
}
