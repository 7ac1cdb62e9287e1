//! `--set key=value` overrides, applied to the document before validation.
//!
//! Keys are dotted paths with array selectors: `duration`,
//! `defaults.switch.buffer`, `links[0].rate`, `switches[CORE].latency`
//! (an array element chosen by its `name`, which may contain dots:
//! `hosts[C1.2].egress`; in a file with replicated entries, the name of a
//! template as written: `hosts[C{e}.{j}].egress`). Values are TOML literals
//! (`3`, `0.5`, `true`, `["a", "b"]`); anything else is taken as a string
//! (`20ms`, `150KB`). Missing tables on the way are created.

use super::error::ScenarioError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    Named(String),
}

fn fail(key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError {
        origin: "--set".into(),
        line_col: None,
        field: key.into(),
        message: msg.into(),
    }
}

/// Splits a key at the dots outside `[...]`.
fn split_parts(key: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_selector) = (0, false);
    for (i, c) in key.char_indices() {
        match c {
            '[' => in_selector = true,
            ']' => in_selector = false,
            '.' if !in_selector => {
                parts.push(&key[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&key[start..]);
    parts
}

fn parse_path(key: &str) -> Result<Vec<Step>, ScenarioError> {
    let mut steps = Vec::new();
    for part in split_parts(key) {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(key, format!("expected a path like 'links[0].rate' or 'switches[CORE].buffer', found '{key}'")));
        }
        steps.push(Step::Key(name.to_string()));
        while let Some(r) = rest.strip_prefix('[') {
            let Some(close) = r.find(']') else {
                return Err(fail(key, "unclosed '['"));
            };
            let sel = &r[..close];
            if sel.is_empty() {
                return Err(fail(key, "empty '[]' selector"));
            }
            steps.push(match sel.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Named(sel.to_string()),
            });
            rest = &r[close + 1..];
        }
        if !rest.is_empty() {
            return Err(fail(key, format!("unexpected '{rest}' in the path")));
        }
    }
    Ok(steps)
}

fn toml_literal(value: &str) -> toml_edit::Value {
    value
        .parse::<toml_edit::Value>()
        .unwrap_or_else(|_| toml_edit::Value::from(value))
}

pub fn apply_toml(text: &str, overrides: &[(String, String)]) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    // Syntax errors are reported (with their location) by the parser proper.
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        return Ok(text.to_string());
    };
    for (key, value) in overrides {
        let steps = parse_path(key)?;
        set_in_table(doc.as_table_mut(), &steps, key, toml_literal(value))?;
    }
    Ok(doc.to_string())
}

fn set_in_table(
    table: &mut dyn toml_edit::TableLike,
    steps: &[Step],
    key: &str,
    value: toml_edit::Value,
) -> Result<(), ScenarioError> {
    use toml_edit::{Item, Table, Value};
    let Some((Step::Key(k), rest)) = steps.split_first() else {
        return Err(fail(key, "expected a field name"));
    };
    let Some((next, after)) = rest.split_first() else {
        table.insert(k, Item::Value(value));
        return Ok(());
    };
    match next {
        Step::Key(_) => {
            if table.get(k).is_none() {
                table.insert(k, Item::Table(Table::new()));
            }
            let child = table
                .get_mut(k)
                .expect("present")
                .as_table_like_mut()
                .ok_or_else(|| fail(key, format!("'{k}' is not a table")))?;
            set_in_table(child, rest, key, value)
        }
        Step::Index(_) | Step::Named(_) => {
            let child = table
                .get_mut(k)
                .ok_or_else(|| fail(key, format!("there is no '{k}' array to select from")))?;
            let n = match &*child {
                Item::ArrayOfTables(a) => a.len(),
                Item::Value(Value::Array(a)) => a.len(),
                _ => return Err(fail(key, format!("'{k}' is not an array"))),
            };
            let i = match next {
                Step::Index(i) if *i < n => *i,
                Step::Index(i) => {
                    return Err(fail(
                        key,
                        format!("index {i} is out of range ('{k}' has {n} entries)"),
                    ))
                }
                Step::Named(name) => (0..n)
                    .find(|&i| element_name(child, i).as_deref() == Some(name.as_str()))
                    .ok_or_else(|| fail(key, format!("no entry of '{k}' is named '{name}'")))?,
                Step::Key(_) => unreachable!(),
            };
            if after.is_empty() {
                return Err(fail(
                    key,
                    "cannot replace a whole array entry; set one of its fields",
                ));
            }
            match child {
                Item::ArrayOfTables(a) => {
                    set_in_table(a.get_mut(i).expect("in range"), after, key, value)
                }
                Item::Value(Value::Array(a)) => {
                    let t = a
                        .get_mut(i)
                        .and_then(Value::as_inline_table_mut)
                        .ok_or_else(|| fail(key, "array entry is not a table"))?;
                    set_in_table(t, after, key, value)
                }
                _ => unreachable!(),
            }
        }
    }
}

fn element_name(item: &toml_edit::Item, i: usize) -> Option<String> {
    let table: &dyn toml_edit::TableLike = match item {
        toml_edit::Item::ArrayOfTables(a) => a.get(i)?,
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => a.get(i)?.as_inline_table()?,
        _ => return None,
    };
    let field = |k: &str| table.get(k).and_then(|v| v.as_str());
    entry_name(field("name"), field("host"), field("to"))
}

/// The name an array entry goes by: its `name`, or for a source without
/// one the name validation gives it.
fn entry_name(name: Option<&str>, host: Option<&str>, to: Option<&str>) -> Option<String> {
    match (name, host) {
        (Some(n), _) => Some(n.to_string()),
        (None, Some(h)) => Some(super::build::default_source_name(
            h,
            to.filter(|t| *t != "*"),
        )),
        (None, None) => None,
    }
}

pub fn apply_json(text: &str, overrides: &[(String, String)]) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(text.to_string());
    };
    for (key, value) in overrides {
        let steps = parse_path(key)?;
        let v = toml_literal(value);
        let v: serde_json::Value =
            serde_json::to_value(toml_value_to_json(&v)).expect("plain values");
        set_json(&mut doc, &steps, key, v)?;
    }
    Ok(doc.to_string())
}

fn toml_value_to_json(v: &toml_edit::Value) -> serde_json::Value {
    use toml_edit::Value;
    match v {
        Value::String(s) => serde_json::Value::from(s.value().as_str()),
        Value::Integer(i) => serde_json::Value::from(*i.value()),
        Value::Float(f) => serde_json::Value::from(*f.value()),
        Value::Boolean(b) => serde_json::Value::from(*b.value()),
        Value::Datetime(d) => serde_json::Value::from(d.value().to_string()),
        Value::Array(a) => serde_json::Value::Array(a.iter().map(toml_value_to_json).collect()),
        Value::InlineTable(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

fn set_json(
    node: &mut serde_json::Value,
    steps: &[Step],
    key: &str,
    value: serde_json::Value,
) -> Result<(), ScenarioError> {
    use serde_json::Value;
    let (step, rest) = steps.split_first().expect("non-empty path");
    match step {
        Step::Key(k) => {
            let obj = node
                .as_object_mut()
                .ok_or_else(|| fail(key, format!("'{k}' is not inside a table")))?;
            if rest.is_empty() {
                obj.insert(k.clone(), value);
                return Ok(());
            }
            let child = obj
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Default::default()));
            set_json(child, rest, key, value)
        }
        Step::Index(_) | Step::Named(_) => {
            let arr = node
                .as_array_mut()
                .ok_or_else(|| fail(key, "a '[...]' selector needs an array"))?;
            let n = arr.len();
            let i = match step {
                Step::Index(i) if *i < n => *i,
                Step::Index(i) => {
                    return Err(fail(
                        key,
                        format!("index {i} is out of range (the array has {n} entries)"),
                    ))
                }
                Step::Named(name) => arr
                    .iter()
                    .position(|e| {
                        let field = |k: &str| e.get(k).and_then(Value::as_str);
                        entry_name(field("name"), field("host"), field("to")).as_deref()
                            == Some(name.as_str())
                    })
                    .ok_or_else(|| fail(key, format!("no entry named '{name}'")))?,
                Step::Key(_) => unreachable!(),
            };
            if rest.is_empty() {
                return Err(fail(
                    key,
                    "cannot replace a whole array entry; set one of its fields",
                ));
            }
            set_json(&mut arr[i], rest, key, value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_may_contain_dots_and_braces() {
        let steps = parse_path("hosts[C{e}.{j}].repeat.e").unwrap();
        assert_eq!(
            steps,
            [
                Step::Key("hosts".into()),
                Step::Named("C{e}.{j}".into()),
                Step::Key("repeat".into()),
                Step::Key("e".into()),
            ]
        );
        assert!(parse_path("hosts[C1.1.egress").is_err());
    }
}
