//! JSON schemas for tool arguments, derived with schemars from the args structs and
//! trimmed to the plain subset every OpenAI-compatible server (and llama.cpp grammars) accept.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The `parameters` object for a tool whose arguments deserialize into `T`.
///
/// Optional fields become plain typed properties that are simply not
/// `required` (no `["string", "null"]` unions), and generator noise
/// (`$schema`, `title`, integer `format`s) is dropped, so the bytes are small
/// and stable.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    simplify_schema(generator.into_root_schema_for::<T>().to_value())
}

/// Normalizes any argument schema the same way (used for schemas other crates derive).
pub fn simplify_schema(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("$schema");
        map.remove("definitions");
        map.remove("$defs");
        map.remove("description");
    }
    simplify(&mut value);
    if let Value::Object(map) = &mut value
        && !map.contains_key("properties")
    {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    value
}

/// Simplifies one schema object; recurses only through keywords that hold
/// schemas, so a property that happens to be named `format` survives.
fn simplify(value: &mut Value) {
    let Value::Object(map) = value else { return };
    map.remove("format");
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if kept.len() == 1 {
            map.insert("type".into(), kept[0].clone());
        }
    }
    // `Option<Enum>` arrives as anyOf [ {enum...}, {type: null} ].
    if let Some(Value::Array(options)) = map.get("anyOf") {
        let kept: Vec<Value> = options
            .iter()
            .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
            .cloned()
            .collect();
        if kept.len() == 1
            && let Value::Object(inner) = &kept[0]
        {
            let inner = inner.clone();
            map.remove("anyOf");
            for (k, v) in inner {
                map.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(variants)) = map.get("enum") {
        let kept: Vec<Value> = variants.iter().filter(|v| !v.is_null()).cloned().collect();
        map.insert("enum".into(), Value::Array(kept));
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(simplify);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = map.get_mut(key) {
            simplify(child);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(simplify);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        #[serde(rename = "a")]
        A,
        #[serde(rename = "b")]
        B,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    /// ignored doc
    struct Args {
        /// The thing.
        name: String,
        /// How many.
        count: Option<u32>,
        mode: Option<Mode>,
        /// A property whose name is also a schema keyword.
        format: Option<String>,
    }

    #[test]
    fn optional_fields_are_plain_and_not_required() {
        let schema = parameters_schema::<Args>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["properties"]["count"]["type"], "integer");
        assert_eq!(schema["properties"]["count"]["description"], "How many.");
        assert!(schema["properties"]["count"].get("format").is_none());
        assert_eq!(schema["properties"]["mode"]["enum"], json!(["a", "b"]));
        assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
        assert_eq!(schema["properties"]["format"]["type"], "string");
    }
}
