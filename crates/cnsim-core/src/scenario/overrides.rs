//! `--set key=value` overrides, applied to the document before validation.
//!
//! Keys are dotted paths with array selectors: `duration`,
//! `defaults.switch.buffer`, `links[0].rate`, `switches[CORE].latency`
//! (an array element chosen by its `name`, which may contain dots:
//! `hosts[C1.2].egress`; in a file with replicated entries, the name of a
//! template as written: `hosts[C{e}.{j}].egress`). Values are TOML literals
//! (`3`, `0.5`, `true`, `["a", "b"]`); anything else is taken as a string
//! (`20ms`, `150KB`). Missing tables on the way are created.

use super::error::{Applied, FieldPath, ScenarioError};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

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

/// Applies the overrides to a parsed document in place. The document keeps
/// the spans of the file's text, so that errors about the file stay where
/// they are written; what an override puts in gets the span
/// `text_len + 1 + i` (past the text) for override `i`, which
/// `Locator::error_at` attributes to that override.
pub fn apply_toml<'i>(
    doc: &mut DeTable<'i>,
    text_len: usize,
    overrides: &'i [(String, String)],
) -> Result<Vec<Applied>, ScenarioError> {
    let mut applied = Vec::with_capacity(overrides.len());
    for (i, (key, value)) in overrides.iter().enumerate() {
        let steps = parse_path(key)?;
        let span = text_len + 1 + i;
        let (mut path, mut made) = (FieldPath::root(), None);
        set_in_detable(
            doc,
            &steps,
            key,
            de_literal(value, span),
            span,
            &mut path,
            &mut made,
        )?;
        applied.push(Applied::new(key, value, made.unwrap_or(path)));
    }
    Ok(applied)
}

/// An override value as a TOML literal, or else a plain string, with every
/// span (of nested values and keys too) set to `at`.
fn de_literal(value: &str, at: usize) -> Spanned<DeValue<'_>> {
    let v = match DeValue::parse(value) {
        Ok(v) => v.into_inner(),
        Err(_) => DeValue::String(value.into()),
    };
    respan(v, at)
}

fn respan(v: DeValue<'_>, at: usize) -> Spanned<DeValue<'_>> {
    let v = match v {
        DeValue::Array(a) => {
            DeValue::Array(a.into_iter().map(|e| respan(e.into_inner(), at)).collect())
        }
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, e)| {
                    (
                        Spanned::new(at..at, k.into_inner()),
                        respan(e.into_inner(), at),
                    )
                })
                .collect(),
        ),
        v => v,
    };
    Spanned::new(at..at, v)
}

fn set_in_detable<'i>(
    table: &mut DeTable<'i>,
    steps: &[Step],
    key: &str,
    value: Spanned<DeValue<'i>>,
    span: usize,
    path: &mut FieldPath,
    made: &mut Option<FieldPath>,
) -> Result<(), ScenarioError> {
    let Some((Step::Key(k), rest)) = steps.split_first() else {
        return Err(fail(key, "expected a field name"));
    };
    *path = path.key(k);
    let Some((next, after)) = rest.split_first() else {
        table.insert(Spanned::new(span..span, k.clone().into()), value);
        return Ok(());
    };
    if table.get(k.as_str()).is_none() && matches!(next, Step::Key(_)) {
        made.get_or_insert_with(|| path.clone());
        table.insert(
            Spanned::new(span..span, k.clone().into()),
            Spanned::new(span..span, DeValue::Table(DeTable::new())),
        );
    }
    let child = table
        .get_mut(k.as_str())
        .ok_or_else(|| fail(key, format!("there is no '{k}' array to select from")))?
        .get_mut();
    match next {
        Step::Key(_) => match child {
            DeValue::Table(t) => set_in_detable(t, rest, key, value, span, path, made),
            _ => Err(fail(key, format!("'{k}' is not a table"))),
        },
        Step::Index(_) | Step::Named(_) => {
            let DeValue::Array(a) = child else {
                return Err(fail(key, format!("'{k}' is not an array")));
            };
            let n = a.len();
            let i = match next {
                Step::Index(i) if *i < n => *i,
                Step::Index(i) => {
                    return Err(fail(
                        key,
                        format!("index {i} is out of range ('{k}' has {n} entries)"),
                    ))
                }
                Step::Named(name) => (0..n)
                    .find(|&i| de_element_name(a[i].get_ref()).as_deref() == Some(name.as_str()))
                    .ok_or_else(|| fail(key, format!("no entry of '{k}' is named '{name}'")))?,
                Step::Key(_) => unreachable!(),
            };
            if after.is_empty() {
                return Err(fail(
                    key,
                    "cannot replace a whole array entry; set one of its fields",
                ));
            }
            *path = path.index(i);
            match a.as_mut()[i].get_mut() {
                DeValue::Table(t) => set_in_detable(t, after, key, value, span, path, made),
                _ => Err(fail(key, "array entry is not a table")),
            }
        }
    }
}

fn de_element_name(entry: &DeValue) -> Option<String> {
    let DeValue::Table(t) = entry else {
        return None;
    };
    let field = |k: &str| t.get(k).and_then(|v| v.get_ref().as_str());
    entry_name(field("name"), field("host"), field("to"))
}

/// The name an array entry goes by: its `name`, or for a source without
/// one the name validation gives it.
fn entry_name(name: Option<&str>, host: Option<&str>, to: Option<&str>) -> Option<String> {
    match (name, host) {
        (Some(n), _) => Some(n.to_string()),
        (None, Some(h)) => Some(super::names::default_source_name(
            h,
            to.filter(|t| *t != "*"),
        )),
        (None, None) => None,
    }
}

/// Applies the overrides to a JSON document (a scenario given as a dict).
pub fn apply_json(
    text: &str,
    overrides: &[(String, String)],
) -> Result<(String, Vec<Applied>), ScenarioError> {
    if overrides.is_empty() {
        return Ok((text.to_string(), Vec::new()));
    }
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok((text.to_string(), Vec::new()));
    };
    let mut applied = Vec::with_capacity(overrides.len());
    for (key, value) in overrides {
        let steps = parse_path(key)?;
        let v = toml_value_to_json(&toml_literal(value)).map_err(|found| ScenarioError {
            origin: format!("--set {key}={value}"),
            line_col: None,
            field: key.clone(),
            message: format!(
                "expected a finite number, found {found} (NaN and infinities are not numbers here)"
            ),
        })?;
        let mut path = FieldPath::root();
        set_json(&mut doc, &steps, key, v, &mut path)?;
        applied.push(Applied::new(key, value, path));
    }
    Ok((doc.to_string(), applied))
}

/// JSON has no NaN or infinity (serde_json would make them null, read
/// as a missing value): `Err` with the number found.
fn toml_value_to_json(v: &toml_edit::Value) -> Result<serde_json::Value, f64> {
    use toml_edit::Value;
    Ok(match v {
        Value::String(s) => serde_json::Value::from(s.value().as_str()),
        Value::Integer(i) => serde_json::Value::from(*i.value()),
        Value::Float(f) if !f.value().is_finite() => return Err(*f.value()),
        Value::Float(f) => serde_json::Value::from(*f.value()),
        Value::Boolean(b) => serde_json::Value::from(*b.value()),
        Value::Datetime(d) => serde_json::Value::from(d.value().to_string()),
        Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(toml_value_to_json).collect::<Result<_, _>>()?)
        }
        Value::InlineTable(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| Ok::<_, f64>((k.to_string(), toml_value_to_json(v)?)))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn set_json(
    node: &mut serde_json::Value,
    steps: &[Step],
    key: &str,
    value: serde_json::Value,
    path: &mut FieldPath,
) -> Result<(), ScenarioError> {
    use serde_json::Value;
    let (step, rest) = steps.split_first().expect("non-empty path");
    match step {
        Step::Key(k) => {
            *path = path.key(k);
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
            set_json(child, rest, key, value, path)
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
            *path = path.index(i);
            set_json(&mut arr[i], rest, key, value, path)
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
