//! The JSON Schema of the scenario format, generated from the serde types
//! of `schema.rs` (`scenario::scenario_schema`; schemars reads their serde attributes: unknown keys are
//! refused, enums are their snake_case names). Editors use it to complete
//! and check scenario files; `cnsim schema` prints it, and the package
//! ships a copy (python/cnsim/data/scenario.schema.json) that a test keeps
//! equal to what this build generates.
//!
//! Quantities stay strings in `schema.rs` and are parsed by `build`; here
//! each is described as a string of its kind with a pattern that accepts
//! everything `units` parses (spaces, exponents, `Gb/s`), so that an
//! editor never flags a value cnsim takes. The schema does not check what
//! needs the whole scenario (names, ranges, XON below XOFF): `cnsim
//! validate` does.

use schemars::transform::{transform_subschemas, Transform};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;
use std::borrow::Cow;

/// A decimal number as `units` reads it: digits and a point, and an
/// optional exponent ("1e3", "1.5e-3").
const NUMBER: &str = r"[0-9.]+([eE][+-]?[0-9]+)?";
const TIME_UNITS: &str = "(ps|ns|us|µs|ms|s)";
const RATE_UNITS: &str = "([KkMGT]?(bps|b/s))";
const SIZE_UNITS: &str = "(B|KB|kB|MB|KiB|MiB|pages?)";

fn quantity(units: &str) -> String {
    format!(r"\s*{NUMBER}\s*{units}\s*")
}

/// A string schema matching `body` whole, or one of the words `alternatives`.
fn text_schema(body: &str, alternatives: &[&str], description: &str) -> Schema {
    let choices: Vec<String> = alternatives
        .iter()
        .map(|w| w.to_string())
        .chain([body.to_string()])
        .collect();
    json_schema!({
        "type": "string",
        "pattern": format!("^({})$", choices.join("|")),
        "description": description,
    })
}

/// Declares a type that stands for a kind of quantity text in the schema.
macro_rules! quantity_text {
    ($name:ident, $units:expr, [$($word:literal),*], $description:literal) => {
        #[doc = $description]
        pub struct $name;
        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                text_schema(&quantity($units), &[$($word),*], $description)
            }
        }
    };
}

quantity_text!(
    Time,
    TIME_UNITS,
    [],
    "A time with its unit (ps, ns, us or µs, ms, s), e.g. \"5us\", \"0.5 ms\", \"1.5e-3s\"."
);
quantity_text!(
    Rate,
    RATE_UNITS,
    [],
    "A rate with its unit (bps, Kbps, Mbps, Gbps, Tbps; Gb/s too), e.g. \"10Gbps\", \"10 Gb/s\"."
);
quantity_text!(
    Size,
    SIZE_UNITS,
    [],
    "A size with its unit (B, KB, MB, KiB, MiB, pages of 64 B), e.g. \"1500B\", \"150KB\". KB and MB are 1000 and 1000² bytes unless the file sets kilobyte = 1024."
);
quantity_text!(
    SizeOrUnlimited,
    SIZE_UNITS,
    ["unlimited"],
    "A size with its unit (B, KB, MB, KiB, MiB, pages), e.g. \"150KB\", or \"unlimited\"."
);
quantity_text!(
    SizeOrAuto,
    SIZE_UNITS,
    ["auto"],
    "A size with its unit (B, KB, MB, KiB, MiB, pages), e.g. \"100KB\", or \"auto\"."
);
quantity_text!(
    TimeOrRandom,
    TIME_UNITS,
    ["random"],
    "\"random\", or a time with its unit (ps, ns, us, ms, s), e.g. \"0ns\"."
);

/// A count of `repeat` or a size of `[topology]`: an integer, or the name
/// of one in `[params]`.
pub struct Count;

impl JsonSchema for Count {
    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An integer, or the name of an integer in [params].",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string" }
            ]
        })
    }
}

/// `crate::net::ecn::MarkAt` as a file writes it (the test below keeps the
/// two in step).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum MarkAt {
    /// As the frame joins the queue, on the bytes ahead of it.
    Enqueue,
    /// As the frame leaves, on the bytes behind it.
    Dequeue,
}

/// Takes null out of the schemas of `Option` fields: TOML has no null (a
/// key left out is how a file says "none"), and an editor should not offer it.
#[derive(Clone)]
struct NoNull;

impl Transform for NoNull {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(obj) = schema.as_object_mut() else {
            return;
        };
        if let Some(Value::Array(types)) = obj.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                obj.insert("type".into(), only);
            }
        }
        if let Some(Value::Array(any_of)) = obj.get_mut("anyOf") {
            any_of.retain(|s| s.get("type").is_none_or(|t| t != "null"));
            if any_of.len() == 1 {
                let Some(Value::Object(only)) = any_of.pop() else {
                    unreachable!("a subschema is an object")
                };
                obj.remove("anyOf");
                obj.extend(only);
            }
        }
    }
}

/// The JSON Schema (draft 7, which Taplo and VS Code read) of `T`, the
/// scenario file's type (`scenario::scenario_schema`), as pretty-printed
/// JSON ending with a newline.
pub fn schema_of<T: JsonSchema>() -> String {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.transforms.insert(0, Box::new(NoNull)))
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.insert("title".into(), "cnsim scenario".into());
    schema.insert(
        "$comment".into(),
        "Generated from cnsim's scenario types by `cnsim schema`; see docs/scenario-format.md."
            .into(),
    );
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema is JSON");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::scenario_schema;

    #[test]
    fn the_shipped_schema_is_this_builds() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../python/cnsim/data/scenario.schema.json"
        );
        let shipped = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            shipped == scenario_schema(),
            "{path} is not the schema this build generates: run `cnsim schema --out` on a new file and copy it there"
        );
    }

    /// The names the schema lists are those `MarkAt` accepts, and no other:
    /// serde's message for an unknown variant lists the ones it expects.
    #[test]
    fn mark_at_names_match_the_engines() {
        let schema = serde_json::to_value(schemars::schema_for!(MarkAt)).unwrap();
        let mut listed: Vec<String> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|v| match v.get("const") {
                Some(c) => vec![c.clone()],
                None => v["enum"].as_array().cloned().unwrap_or_default(),
            })
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        listed.sort();
        for name in &listed {
            serde_json::from_value::<crate::net::ecn::MarkAt>(name.as_str().into()).unwrap();
        }
        let err = serde_json::from_value::<crate::net::ecn::MarkAt>("?".into())
            .unwrap_err()
            .to_string();
        let mut expected: Vec<String> = err
            .split('`')
            .skip(3)
            .step_by(2)
            .map(String::from)
            .collect();
        expected.sort();
        assert_eq!(listed, expected, "{err}");
    }
}
